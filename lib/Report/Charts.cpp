//===- Charts.cpp - the sweep and loss-curve charts -----------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Report/Report.h"

#include "SweepGroups.h"
#include "cgpt/Support/Format.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <fmt/format.h>
#include <set>

namespace cgpt::report {

using detail::speedUp;
using detail::VaryingAxes;
namespace {
/// An axis from zero with round ticks: a step of 1, 2 or 5 times a power of
/// ten, giving about `ticks` intervals, and the first multiple of it at or
/// above the data's maximum as the axis' end.
struct RoundAxis {
  double step, top;
  /// Decimals that show every tick exactly.
  int decimals;

  RoundAxis(double dataMax, int ticks) {
    double raw = dataMax > 0 ? dataMax / ticks : 1;
    double power = std::pow(10.0, std::floor(std::log10(raw)));
    double mantissa = raw / power;
    step = (mantissa <= 1   ? 1
            : mantissa <= 2 ? 2
            : mantissa <= 5 ? 5
                            : 10) *
           power;
    top = std::max(step, std::ceil(dataMax / step - 1e-9) * step);
    decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step))));
  }
  std::string label(double value) const {
    return fmt::format("{:.{}f}", value, decimals);
  }
  /// The ticks, 0 included.
  llvm::SmallVector<double> values() const {
    llvm::SmallVector<double> out;
    for (int i = 0; i * step <= top * (1 + 1e-9); ++i)
      out.push_back(i * step);
    return out;
  }
};

/// The frame of a line chart from zero: title, axes, grid lines at round
/// values of y from 0, and the axis names. Data maps to pixels with x() and
/// y().
struct ChartFrame {
  static constexpr double width = 640, height = 420, left = 80, right = 50,
                          top = 40, bottom = 50;
  double xMax;
  RoundAxis yAxis;

  ChartFrame(double xMax, double yDataMax) : xMax(xMax), yAxis(yDataMax, 5) {}

  double x(double value) const {
    return left + (width - left - right) * value / xMax;
  }
  double y(double value) const {
    return height - bottom - (height - top - bottom) * value / yAxis.top;
  }
  /// Opens the SVG with the title, the axes and y's grid.
  void open(llvm::raw_ostream &os, const llvm::Twine &title) const {
    os << llvm::formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" "
                        "width=\"{0}\" height=\"{1}\" "
                        "font-family=\"sans-serif\">\n",
                        width, height);
    os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    os << llvm::formatv("<text x=\"{0}\" y=\"24\" font-size=\"15\" "
                        "font-weight=\"bold\">{1}</text>\n",
                        left, escapeXml(title.str()));
    os << llvm::formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" "
                        "y2=\"{1}\" stroke=\"black\"/>\n<line "
                        "x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{1}\" "
                        "stroke=\"black\"/>\n",
                        left, height - bottom, width - right, top);
    for (double value : yAxis.values()) {
      if (value > 0)
        os << llvm::formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" "
                            "y2=\"{1}\" stroke=\"#ddd\"/>\n",
                            left, y(value), width - right);
      os << llvm::formatv("<text class=\"y-tick\" x=\"{0}\" y=\"{1}\" "
                          "font-size=\"10\" text-anchor=\"end\">{2}</text>\n",
                          left - 6, y(value) + 4, yAxis.label(value));
    }
  }
  /// A label under the x axis at `value`.
  void xTick(llvm::raw_ostream &os, double value,
             const std::string &label) const {
    os << llvm::formatv("<text class=\"x-tick\" x=\"{0}\" y=\"{1}\" "
                        "font-size=\"11\" text-anchor=\"middle\">{2}</text>\n",
                        x(value), height - bottom + 16, label);
  }
  /// Names the axes and closes the SVG.
  void close(llvm::raw_ostream &os, llvm::StringRef xName,
             llvm::StringRef yName) const {
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"12\" "
                        "text-anchor=\"middle\">{2}</text>\n",
                        (left + width - right) / 2, height - 12, xName);
    os << llvm::formatv("<text x=\"14\" y=\"{0}\" font-size=\"12\" "
                        "transform=\"rotate(-90 14 {0})\" "
                        "text-anchor=\"middle\">{1}</text>\n",
                        (top + height - bottom) / 2, yName);
    os << "</svg>\n";
  }
};
} // namespace

void printSweepPlot(llvm::raw_ostream &os, llvm::ArrayRef<SweepRow> rows) {
  static constexpr llvm::StringLiteral kColours[] = {
      "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  VaryingAxes varying(rows);
  // The groups by their first row, in order.
  std::vector<size_t> groups;
  double maxSystems = 0, maxRate = 0;
  for (auto [index, row] : llvm::enumerate(rows)) {
    if (row.groupFirst == index)
      groups.push_back(index);
    maxSystems = std::max(maxSystems, static_cast<double>(row.systems));
    const SweepRow &first = rows[row.groupFirst];
    double ideal = first.samplesPerSecond / first.systems * row.systems;
    maxRate = std::max({maxRate, row.samplesPerSecond, ideal});
  }
  ChartFrame frame(maxSystems, maxRate);
  std::string title = groups.size() == 1
                          ? rows.front().model + ": samples/s by number of "
                                                 "systems"
                          : std::string("samples/s by number of systems");
  frame.open(os, title);
  frame.xTick(os, 0, "0");
  std::set<int64_t> ticks;
  for (auto [series, first] : llvm::enumerate(groups)) {
    llvm::StringRef colour = kColours[series % std::size(kColours)];
    llvm::SmallVector<const SweepRow *> points;
    for (const SweepRow &row : rows)
      if (row.groupFirst == first)
        points.push_back(&row);
    double ideal = rows[first].samplesPerSecond / rows[first].systems;
    double lastSystems = static_cast<double>(points.back()->systems);
    os << llvm::formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" "
                        "y2=\"{3}\" stroke=\"{4}\" stroke-opacity=\"0.5\" "
                        "stroke-dasharray=\"4 4\"/>\n",
                        frame.x(0), frame.y(0), frame.x(lastSystems),
                        frame.y(ideal * lastSystems), colour);
    os << llvm::formatv("<polyline fill=\"none\" stroke=\"{0}\" "
                        "stroke-width=\"2\" points=\"",
                        colour);
    for (const SweepRow *row : points)
      os << llvm::formatv("{0},{1} ", frame.x(row->systems),
                          frame.y(row->samplesPerSecond));
    os << "\"/>\n";
    for (const SweepRow *row : points) {
      double x = frame.x(row->systems), y = frame.y(row->samplesPerSecond);
      os << llvm::formatv("<circle cx=\"{0}\" cy=\"{1}\" r=\"4\" "
                          "fill=\"{2}\"/>\n",
                          x, y, colour);
      if (ticks.insert(row->systems).second)
        frame.xTick(os, static_cast<double>(row->systems),
                    std::to_string(row->systems));
      os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"10\" "
                          "text-anchor=\"middle\">{2:f1}</text>\n",
                          x, y - 9, row->samplesPerSecond);
    }
    if (groups.size() > 1)
      os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"11\" "
                          "fill=\"{2}\">{3}</text>\n",
                          ChartFrame::left + 10,
                          ChartFrame::top + 14 * (series + 1), colour,
                          escapeXml(varying.label(rows[first])));
  }
  frame.close(os, "systems (dashed: linear from each line's first point)",
              "samples/s");
}

void printLossCurve(llvm::raw_ostream &os, llvm::StringRef model,
                    llvm::ArrayRef<double> losses) {
  double maxLoss = 0;
  for (double loss : losses)
    maxLoss = std::max(maxLoss, loss);
  // Steps on round ticks too: the x axis ends at the last of them.
  RoundAxis steps(static_cast<double>(losses.size()), 4);
  ChartFrame frame(steps.top, maxLoss);
  frame.open(os, model + ": training loss by step");
  os << "<polyline fill=\"none\" stroke=\"#e15759\" stroke-width=\"1.5\" "
        "points=\"";
  for (auto [index, loss] : llvm::enumerate(losses))
    os << llvm::formatv("{0:f1},{1:f1} ", frame.x(index + 1.0), frame.y(loss));
  os << "\"/>\n";
  for (double step : steps.values())
    frame.xTick(os, step, steps.label(step));
  frame.close(os, "optimizer step", "loss");
}

} // namespace cgpt::report
