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

/// Pixels per row of the kernel table.
constexpr double kRowHeight = 22;
constexpr double kBarWidth = 220;
/// The narrowest bar drawn for a region that holds any SRAM, so that a
/// small share stays visible rather than vanishing to a hairline.
constexpr double kMinBarWidth = 2;

class SvgWriter {
public:
  SvgWriter(llvm::raw_ostream &os, DeviceOp device, StageOp stage,
            const target::WaferTargetModel &target)
      : os(os), device(device), stage(stage), target(target) {
    double w = static_cast<double>(target.getMeshWidth());
    double h = static_cast<double>(target.getMeshHeight());
    scale = kPanelPixels / std::max(w, h);
    panelW = w * scale;
    panelH = h * scale;
  }

  void write();

private:
  void writeMesh(RegionOp region, double left, double top);
  void writeLegend(double top);
  void writeTable(double top);

  llvm::raw_ostream &os;
  DeviceOp device;
  StageOp stage;
  const target::WaferTargetModel &target;
  double scale, panelW, panelH;
};

/// The kernel whose layout the mesh panel draws: the first that streams
/// weights, else the first.
RegionOp drawnRegion(StageOp stage) {
  RegionOp first;
  for (auto region : stage.getBody().front().getOps<RegionOp>()) {
    if (!first)
      first = region;
    if (region.getWeightBytes() && region.getKind() != KernelKind::embedding)
      return region;
  }
  return first;
}

void SvgWriter::write() {
  SmallVector<RegionOp> regions(stage.getBody().front().getOps<RegionOp>());
  double width = std::max(panelW + 2 * kMargin, 900.0);
  double height = kTitleHeight + panelH + 2 * kMargin + kLegendRow +
                  kRowHeight * static_cast<double>(regions.size() + 1);
  os << llvm::formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" "
                      "width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
                      "font-family=\"sans-serif\" font-size=\"12\">\n",
                      width, height);
  os << llvm::formatv(
      "<text x=\"{0}\" y=\"22\" font-size=\"15\">{1}: stage @{2} on the {3} "
      "x {4} mesh of {5}, micro-batch {6}</text>\n",
      kMargin, escape(device.getSymName()), escape(stage.getSymName()),
      target.getMeshWidth(), target.getMeshHeight(), escape(target.getName()),
      device.getMicroBatch());
  os << llvm::formatv("<text x=\"{0}\" y=\"40\">Each kernel runs over the "
                      "whole mesh, one after another; the mesh shows the "
                      "layout of the first that streams weights.</text>\n",
                      kMargin);
  if (RegionOp region = drawnRegion(stage))
    writeMesh(region, kMargin, kTitleHeight);
  writeLegend(kTitleHeight + panelH + kMargin);
  writeTable(kTitleHeight + panelH + kMargin + kLegendRow);
  os << "</svg>\n";
}

void SvgWriter::writeMesh(RegionOp region, double left, double top) {
  os << llvm::formatv("<rect data-kernel=\"{0}\" x=\"{1}\" y=\"{2}\" "
                      "width=\"{3}\" height=\"{4}\" fill=\"{5}\" "
                      "fill-opacity=\"0.35\" stroke=\"#333\"/>\n",
                      escape(region.getSymName()), left, top, panelW, panelH,
                      kernelColor(region.getKernel()));
  LayoutAttr layout = region.getLayoutAttr();
  if (!layout)
    return;
  // Group boundaries, at most 16 lines a side so that they stay visible.
  auto lines = [&](int64_t groups, bool vertical) {
    int64_t drawn = std::min<int64_t>(groups, 16);
    for (int64_t i = 1; i < drawn; ++i) {
      double at = static_cast<double>(i) / static_cast<double>(drawn);
      if (vertical)
        os << llvm::formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" "
                            "y2=\"{2}\" stroke=\"#555\" stroke-width=\"0.5\"/>\n",
                            left + at * panelW, top, top + panelH);
      else
        os << llvm::formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" "
                            "y2=\"{1}\" stroke=\"#555\" stroke-width=\"0.5\"/>\n",
                            left, top + at * panelH, left + panelW);
    }
  };
  lines(layout.getFeatureGroups(), /*vertical=*/true);
  lines(std::max<int64_t>(1, layout.getTokenGroups() /
                                 std::max<int64_t>(1, target.getMeshWidth() /
                                                          layout.getFeatureGroups())),
        /*vertical=*/false);
  if (layout.getWeights() == Edge::north)
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" fill=\"#d62728\">weights "
                        "enter along the north edge and run down the "
                        "columns</text>\n",
                        left + 4, top + 14);
  if (layout.getPartials() != ReduceAxis::none)
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" fill=\"#1f77b4\">partial "
                        "sums reduced along the {2}</text>\n",
                        left + 4, top + 30,
                        stringifyReduceAxis(layout.getPartials()));
  os << llvm::formatv("<text x=\"{0}\" y=\"{1}\">@{2} ({3}): {4} token "
                      "groups x {5} feature groups</text>\n",
                      left + 4, top + panelH - 6, escape(region.getSymName()),
                      escape(region.getKernel()), layout.getTokenGroups(),
                      layout.getFeatureGroups());
}

/// One swatch per kernel that this stage runs (nothing it does not), then
/// the SRAM bars' scale.
void SvgWriter::writeLegend(double top) {
  llvm::SmallVector<llvm::StringRef> kernels;
  for (auto region : stage.getBody().front().getOps<RegionOp>())
    if (!llvm::is_contained(kernels, region.getKernel()))
      kernels.push_back(region.getKernel());
  double x = kMargin;
  for (llvm::StringRef kernel : kernels) {
    os << llvm::formatv("<rect data-legend=\"{0}\" x=\"{1}\" y=\"{2}\" "
                        "width=\"10\" height=\"10\" fill=\"{3}\"/>\n",
                        escape(kernel), x, top - 9, kernelColor(kernel));
    llvm::StringRef shortName = kernel.split('.').second;
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"10\">{2}"
                        "</text>\n",
                        x + 13, top, escape(shortName));
    x += 13 + 6.5 * static_cast<double>(shortName.size()) + 12;
  }
  double barLeft = std::max(panelW + 2 * kMargin, 900.0) - kMargin - kBarWidth;
  os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"10\">SRAM "
                      "bars: </text>\n",
                      barLeft, top);
  for (int step = 0; step <= 4; ++step)
    os << llvm::formatv("<rect x=\"{0}\" y=\"{1}\" width=\"20\" "
                        "height=\"10\" fill=\"{2}\"/>\n",
                        barLeft + 60 + 20 * step, top - 9,
                        heatColor(step / 4.0));
  os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"10\">empty "
                      "to full</text>\n",
                      barLeft + 166, top);
}

void SvgWriter::writeTable(double top) {
  double sram = static_cast<double>(target.getCoreSramBytes());
  os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-weight=\"bold\">kernels "
                      "in order: kind, kernels, layout, SRAM per core at the "
                      "peak (share of {2} B)</text>\n",
                      kMargin, top, formatGrouped(target.getCoreSramBytes()));
  double y = top + kRowHeight;
  for (auto region : stage.getBody().front().getOps<RegionOp>()) {
    std::string kernels = region.getKernel().str();
    for (mlir::Attribute fused : region.getFused())
      kernels += " + " + mlir::cast<mlir::StringAttr>(fused).getValue().split('.').second.str();
    std::string layout = "-";
    if (LayoutAttr l = region.getLayoutAttr())
      layout = std::to_string(l.getTokenGroups()) + " x " +
               std::to_string(l.getFeatureGroups());
    int64_t bytes = region.getSramBytes().value_or(0);
    double share = static_cast<double>(bytes) / sram;
    os << llvm::formatv("<rect data-region=\"{0}\" x=\"{1}\" y=\"{2}\" "
                        "width=\"12\" height=\"12\" fill=\"{3}\"/>\n",
                        escape(region.getSymName()), kMargin, y - 11,
                        kernelColor(region.getKernel()));
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\">@{2} {3}: {4}; {5}</text>\n",
                        kMargin + 18, y, escape(region.getSymName()),
                        stringifyKernelKind(region.getKind()), escape(kernels),
                        layout);
    double barLeft = std::max(panelW + 2 * kMargin, 900.0) - kMargin - kBarWidth;
    os << llvm::formatv("<rect data-sram=\"{0}\" x=\"{1}\" y=\"{2}\" "
                        "width=\"{3}\" height=\"12\" fill=\"{4}\"/>\n",
                        bytes, barLeft, y - 11,
                        bytes > 0 ? std::max(kMinBarWidth,
                                             kBarWidth *
                                                 std::clamp(share, 0.0, 1.0))
                                  : 0.0,
                        heatColor(share));
    y += kRowHeight;
  }
}

} // namespace

void printPlacementSvg(llvm::raw_ostream &os, DeviceOp device, StageOp stage,
                       const target::WaferTargetModel &target) {
  SvgWriter(os, device, stage, target).write();
}

} // namespace cgpt::report
