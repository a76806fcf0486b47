//===- Placement.cpp - the placement picture ------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Report/Report.h"

#include "cgpt/Support/Format.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace cgpt::wafer;
using llvm::ArrayRef;
using llvm::SmallVector;

namespace cgpt::report {
namespace {

/// Pixels for the larger side of one mesh panel.
constexpr double kPanelPixels = 560;
constexpr double kMargin = 24;
constexpr double kTitleHeight = 48;
constexpr double kLegendRow = 18;

/// A fixed color per kernel kind, so every picture reads the same.
std::string kernelColor(llvm::StringRef kernel) {
  static const llvm::StringMap<const char *> colors = {
      {"dataflow.matmul", "#4e79a7"},
      {"dataflow.softmax", "#f28e2b"},
      {"dataflow.softmax_grad", "#ffbe7d"},
      {"dataflow.layer_norm", "#59a14f"},
      {"dataflow.layer_norm_grad", "#8cd17d"},
      {"dataflow.map", "#b07aa1"},
      {"dataflow.gather", "#9c755f"},
      {"dataflow.scatter_add", "#c9a383"},
      {"dataflow.cross_entropy", "#e15759"},
      {"dataflow.cross_entropy_grad", "#ff9d9a"},
      {"dataflow.add_positions", "#76b7b2"},
      {"dataflow.position_grad", "#a0cbe8"},
      {"dataflow.rotary", "#edc948"},
      {"dataflow.rotary_angles", "#f1ce63"},
      {"dataflow.sum_batch", "#bab0ac"},
  };
  auto it = colors.find(kernel);
  return it != colors.end() ? it->second : "#d4d4d4"; // heads: data movement
}

/// Green (empty) through yellow to red (full) for a share of SRAM.
std::string heatColor(double share) {
  share = std::clamp(share, 0.0, 1.0);
  int red = share < 0.5 ? static_cast<int>(510 * share) : 255;
  int green = share < 0.5 ? 200 : static_cast<int>(200 * (2 - 2 * share));
  return llvm::formatv("#{0:x-2}{1:x-2}{2:x-2}", red, green, 60).str();
}

std::string escape(llvm::StringRef text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

class SvgWriter {
public:
  SvgWriter(llvm::raw_ostream &os, DeviceOp device, StageOp stage)
      : os(os), device(device), stage(stage) {
    double w = static_cast<double>(device.getWidth());
    double h = static_cast<double>(device.getHeight());
    scale = kPanelPixels / std::max(w, h);
    panelW = w * scale;
    panelH = h * scale;
  }

  void write();

private:
  double px(int64_t cores) const { return static_cast<double>(cores) * scale; }
  void writeRegions(double left, bool heat);
  void writeRoutes(double left);
  void writeLegend(double top);

  llvm::raw_ostream &os;
  DeviceOp device;
  StageOp stage;
  double scale, panelW, panelH;
};

void SvgWriter::write() {
  SmallVector<RegionOp> regions(stage.getBody().front().getOps<RegionOp>());
  llvm::SmallVector<std::string> kinds;
  for (RegionOp region : regions)
    if (!llvm::is_contained(kinds, region.getKernel().str()))
      kinds.push_back(region.getKernel().str());
  double width = 3 * kMargin + 2 * panelW;
  double legendTop = kTitleHeight + panelH + kMargin;
  double tableTop = legendTop + kLegendRow * (kinds.size() + 2);
  double height = tableTop + kLegendRow * (regions.size() + 2) + kMargin;
  os << llvm::formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" "
                      "width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
                      "font-family=\"sans-serif\">\n",
                      static_cast<int>(width), static_cast<int>(height));
  os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  os << llvm::formatv(
      "<text x=\"{0}\" y=\"20\" font-size=\"15\" font-weight=\"bold\">{1} on "
      "{2} ({3} x {4} cores): stage @{5} at micro-batch {6}</text>\n",
      kMargin, escape(device.getSymName()), escape(device.getTarget()),
      device.getWidth(), device.getHeight(), escape(stage.getSymName()),
      device.getMicroBatch());
  os << llvm::formatv("<text x=\"{0}\" y=\"40\" font-size=\"12\">Kernels "
                      "by region, with their flows</text>\n",
                      kMargin);
  os << llvm::formatv("<text x=\"{0}\" y=\"40\" font-size=\"12\">SRAM used "
                      "per core (of {1} B)</text>\n",
                      2 * kMargin + panelW,
                      formatGrouped(device.getSramBytes()));
  writeRegions(kMargin, /*heat=*/false);
  writeRoutes(kMargin);
  writeRegions(2 * kMargin + panelW, /*heat=*/true);

  // Legend: kernel colors, then the heat scale.
  double y = legendTop;
  for (const std::string &kind : kinds) {
    os << llvm::formatv("<rect x=\"{0}\" y=\"{1}\" width=\"12\" height=\"12\" "
                        "fill=\"{2}\"/><text x=\"{3}\" y=\"{4}\" "
                        "font-size=\"11\">{5}</text>\n",
                        kMargin, y, kernelColor(kind), kMargin + 18, y + 10,
                        escape(kind));
    y += kLegendRow;
  }
  os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"11\">Lines: "
                      "flows between regions. Ticks on the left and right "
                      "edges: weights in, gradients out.</text>\n",
                      kMargin, y + 10);
  double heatLeft = 2 * kMargin + panelW;
  for (int i = 0; i <= 10; ++i)
    os << llvm::formatv("<rect x=\"{0}\" y=\"{1}\" width=\"20\" "
                        "height=\"12\" fill=\"{2}\"/>\n",
                        heatLeft + 20 * i, legendTop, heatColor(i / 10.0));
  os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"11\">0 B</text>"
                      "<text x=\"{2}\" y=\"{1}\" font-size=\"11\">{3} B "
                      "(full)</text>\n",
                      heatLeft, legendTop + 26, heatLeft + 190,
                      formatGrouped(device.getSramBytes()));

  // Every region in a table: the small ones are hard to see above.
  static const char *headers[] = {"region", "kernel", "cores (x, y, w x h)",
                                  "SRAM per core"};
  static const double columns[] = {0, 150, 400, 620};
  y = tableTop;
  for (size_t c = 0; c < 4; ++c)
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"11\" "
                        "font-weight=\"bold\">{2}</text>\n",
                        kMargin + columns[c], y, headers[c]);
  for (RegionOp region : regions) {
    y += kLegendRow;
    RectAttr r = region.getPlacementAttr();
    std::string cells[] = {
        "@" + region.getSymName().str(), region.getKernel().str(),
        r ? llvm::formatv("({0}, {1}) {2} x {3} = {4}", r.getX(), r.getY(),
                          r.getW(), r.getH(), formatGrouped(r.getCores()))
                .str()
          : std::string("unplaced"),
        formatGrouped(region.getSramBytes().value_or(0)) + " B"};
    for (size_t c = 0; c < 4; ++c)
      os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"11\">{2}"
                          "</text>\n",
                          kMargin + columns[c], y, escape(cells[c]));
  }
  os << "</svg>\n";
}

void SvgWriter::writeRegions(double left, bool heat) {
  double top = kTitleHeight;
  os << llvm::formatv("<rect x=\"{0}\" y=\"{1}\" width=\"{2}\" height=\"{3}\" "
                      "fill=\"#f4f4f4\" stroke=\"black\"/>\n",
                      left, top, panelW, panelH);
  for (auto region : stage.getBody().front().getOps<RegionOp>()) {
    RectAttr r = region.getPlacementAttr();
    if (!r)
      continue;
    double x = left + px(r.getX()), y = top + px(r.getY());
    double w = px(r.getW()), h = px(r.getH());
    double share = static_cast<double>(region.getSramBytes().value_or(0)) /
                   static_cast<double>(device.getSramBytes());
    os << llvm::formatv("<rect x=\"{0}\" y=\"{1}\" width=\"{2}\" "
                        "height=\"{3}\" fill=\"{4}\" stroke=\"white\" "
                        "stroke-width=\"0.5\"><title>@{5} {6}: {7} x {8} "
                        "cores at ({9}, {10}), {11} B SRAM per core</title>"
                        "</rect>\n",
                        x, y, w, h,
                        heat ? heatColor(share)
                             : kernelColor(region.getKernel()),
                        escape(region.getSymName()),
                        escape(region.getKernel()), r.getW(), r.getH(),
                        r.getX(), r.getY(),
                        formatGrouped(region.getSramBytes().value_or(0)));
    // Label what has room: the region's name, and on the heat map its use.
    std::string label =
        heat ? llvm::formatv("{0}%", static_cast<int>(100 * share)).str()
             : region.getSymName().str();
    double size = std::min({11.0, h * 0.6, w / (0.62 * label.size())});
    if (size >= 5)
      os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"{2}\" "
                          "text-anchor=\"middle\" dominant-baseline=\"middle\">"
                          "{3}</text>\n",
                          x + w / 2, y + h / 2, size, escape(label));
  }
}

void SvgWriter::writeRoutes(double left) {
  double top = kTitleHeight;
  auto centre = [&](int64_t cx, int64_t cy) {
    return std::make_pair(left + px(cx) + scale / 2, top + px(cy) + scale / 2);
  };
  for (auto flow : stage.getBody().front().getOps<FlowOp>()) {
    std::optional<ArrayRef<int64_t>> route = flow.getRoute();
    if (!route)
      continue;
    os << "<polyline fill=\"none\" stroke=\"#222\" stroke-width=\"1\" "
          "stroke-opacity=\"0.6\" points=\"";
    for (size_t i = 0; i + 1 < route->size(); i += 2) {
      auto [x, y] = centre((*route)[i], (*route)[i + 1]);
      os << llvm::formatv("{0},{1} ", x, y);
    }
    os << "\"/>\n";
  }
  auto tick = [&](ArrayRef<int64_t> at, const char *color) {
    auto [x, y] = centre(at[0], at[1]);
    os << llvm::formatv("<circle cx=\"{0}\" cy=\"{1}\" r=\"3\" "
                        "fill=\"{2}\"/>\n",
                        x, y, color);
  };
  for (auto ingress : stage.getBody().front().getOps<IngressOp>())
    if (std::optional<ArrayRef<int64_t>> at = ingress.getAt())
      tick(*at, "#1f77b4");
  for (auto egress : stage.getBody().front().getOps<EgressOp>())
    if (std::optional<ArrayRef<int64_t>> at = egress.getAt())
      tick(*at, "#d62728");
}

} // namespace

llvm::Error writePlacementSvg(llvm::StringRef path, DeviceOp device,
                              StageOp stage) {
  return llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
    SvgWriter(os, device, stage).write();
    return llvm::Error::success();
  });
}

} // namespace cgpt::report
