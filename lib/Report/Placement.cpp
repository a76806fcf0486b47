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
#include <array>
#include <map>

using namespace cgpt::wafer;
using llvm::ArrayRef;
using llvm::SmallVector;

namespace cgpt::report {
namespace {

/// The picture's width: readable at a glance at 1,000 pixels.
constexpr double kWidth = 1000;
constexpr double kMargin = 24;
constexpr double kTitleHeight = 80;
constexpr double kLegendRow = 22;
/// Wave panels side by side, and the gap between them.
constexpr int kPanelsPerRow = 6;
constexpr double kPanelGap = 16;
/// Above a panel: its caption and the room for the weights' arrows.
constexpr double kPanelCaption = 30;

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

/// Pixels per row of the region table.
constexpr double kRowHeight = 20;
constexpr double kBarWidth = 180;
/// The narrowest bar drawn for a region that holds any SRAM, so that a
/// small share stays visible rather than vanishing to a hairline.
constexpr double kMinBarWidth = 2;

/// One region as the picture draws it: what the IR says of it.
struct Drawn {
  // Reading an op's attributes is not const in MLIR's API.
  mutable RegionOp op;
  RectAttr rect;
  LayoutAttr layout;
  int64_t wave;
  int64_t sramBytes;
};

class SvgWriter {
public:
  SvgWriter(llvm::raw_ostream &os, DeviceOp device, StageOp stage,
            const target::WaferTargetModel &target)
      : os(os), device(device), stage(stage), target(target),
        meshW(static_cast<double>(target.getMeshWidth())),
        meshH(static_cast<double>(target.getMeshHeight())) {
    panelW = (kWidth - 2 * kMargin - (kPanelsPerRow - 1) * kPanelGap) /
             kPanelsPerRow;
    // Panels keep the mesh's aspect, within reason for a very tall mesh.
    panelH = std::min(panelW * meshH / meshW, 2.0 * panelW);
    for (auto [index, region] :
         llvm::enumerate(stage.getBody().front().getOps<RegionOp>()))
      regions.push_back({region, region.getPlacementAttr(),
                         region.getLayoutAttr(),
                         region.getWave().value_or(static_cast<int64_t>(index)),
                         region.getSramBytes().value_or(0)});
    for (const Drawn &region : regions)
      if (waves.empty() || waves.back().front().wave != region.wave)
        waves.push_back({region});
      else
        waves.back().push_back(region);
  }

  void write();

private:
  void writeWave(ArrayRef<Drawn> wave, double left, double top);
  void writeOtherSlots(double left, double top);
  void writeLegend(double top);
  void writeTable(double top);
  /// The part of a panel at (left, top) that `rect` covers.
  std::array<double, 4> toPanel(RectAttr rect, double left, double top) const {
    double sx = panelW / meshW, sy = panelH / meshH;
    return {left + rect.getX() * sx, top + rect.getY() * sy, rect.getW() * sx,
            rect.getH() * sy};
  }
  std::string sramText(int64_t bytes) const {
    return formatGrouped(bytes) + " B (" +
           llvm::formatv("{0:f0}", 100.0 * bytes / target.getCoreSramBytes())
               .str() +
           "%)";
  }

  llvm::raw_ostream &os;
  DeviceOp device;
  StageOp stage;
  const target::WaferTargetModel &target;
  double meshW, meshH, panelW, panelH;
  SmallVector<Drawn> regions;
  SmallVector<SmallVector<Drawn>> waves;
};

void SvgWriter::write() {
  size_t panelRows = (waves.size() + kPanelsPerRow - 1) / kPanelsPerRow;
  double wavesTop = kTitleHeight;
  double wavesHeight =
      static_cast<double>(panelRows) * (kPanelCaption + panelH + kPanelGap);
  double legendTop = wavesTop + wavesHeight + kLegendRow;
  double tableTop = legendTop + kLegendRow;
  double height = tableTop + kRowHeight * (regions.size() + 1) + kMargin;
  os << llvm::formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" "
                      "width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
                      "font-family=\"sans-serif\" font-size=\"12\">\n",
                      kWidth, height);
  os << llvm::formatv("<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n",
                      kWidth, height);
  bool pipelined = device.getExecution() == ExecutionMode::layer_pipelined;
  os << llvm::formatv(
      "<text x=\"{0}\" y=\"22\" font-size=\"15\">{1}: stage @{2}, {3} "
      "x {4} mesh of {5}</text>\n",
      kMargin, escapeXml(device.getSymName()), escapeXml(stage.getSymName()),
      target.getMeshWidth(), target.getMeshHeight(),
      escapeXml(target.getName()));
  os << llvm::formatv(
      "<text x=\"{0}\" y=\"40\">{1} placer, {2}, micro-batch {3}: {4} "
      "wave(s) one after another, the regions of a wave at once, each on its "
      "rectangle, to scale</text>\n",
      kMargin, escapeXml(device.getPlacer().value_or("?")),
      pipelined ? "layer pipelined" : "weight streaming",
      device.getMicroBatch(), waves.size());
  os << llvm::formatv(
      "<text x=\"{0}\" y=\"58\" font-size=\"11\"><tspan "
      "fill=\"#d62728\">red: weights enter at the north edge</tspan>; "
      "<tspan fill=\"#1f77b4\">blue: partial sums are reduced along the "
      "rows or down the columns</tspan>; W: weights held in the "
      "rectangle{1}</text>\n",
      kMargin,
      pipelined ? "; grey: the other slots, at work at the same time" : "");
  os << llvm::formatv(
      "<text x=\"{0}\" y=\"72\" font-size=\"11\">in each rectangle: "
      "the region, its token x feature groups, and its SRAM per core (share "
      "of the core's {1} B)</text>\n",
      kMargin, formatGrouped(target.getCoreSramBytes()));
  for (auto [index, wave] : llvm::enumerate(waves)) {
    double left = kMargin + static_cast<double>(index % kPanelsPerRow) *
                                (panelW + kPanelGap);
    double top = wavesTop + static_cast<double>(index / kPanelsPerRow) *
                                (kPanelCaption + panelH + kPanelGap);
    writeWave(wave, left, top);
  }
  writeLegend(legendTop);
  writeTable(tableTop);
  os << "</svg>\n";
}

/// Under layer pipelining, the other slots' bands, all at work.
void SvgWriter::writeOtherSlots(double left, double top) {
  std::optional<int64_t> own = stage.getSlot();
  if (!own)
    return;
  std::map<int64_t, RectAttr> bands;
  for (auto other : device.getBody().front().getOps<StageOp>()) {
    std::optional<int64_t> slot = other.getSlot();
    if (!slot || *slot == *own || bands.count(*slot))
      continue;
    for (auto region : other.getBody().front().getOps<RegionOp>())
      if (RectAttr rect = region.getPlacementAttr()) {
        bands[*slot] = rect;
        break;
      }
  }
  for (auto [slot, rect] : bands) {
    auto [x, y, w, h] = toPanel(rect, left, top);
    os << llvm::formatv("<rect data-slot=\"{0}\" x=\"{1}\" y=\"{2}\" "
                        "width=\"{3}\" height=\"{4}\" fill=\"#e0e0e0\" "
                        "stroke=\"#bbb\" stroke-width=\"0.5\"/>\n",
                        slot, x, y, w, h);
  }
}

void SvgWriter::writeWave(ArrayRef<Drawn> wave, double left, double top) {
  double meshTop = top + kPanelCaption;
  os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-weight=\"bold\">wave "
                      "{2}</text>\n",
                      left, top + 11, wave.front().wave);
  os << llvm::formatv("<rect data-mesh=\"{0}\" x=\"{1}\" y=\"{2}\" "
                      "width=\"{3}\" height=\"{4}\" fill=\"#f7f7f7\" "
                      "stroke=\"#333\"/>\n",
                      wave.front().wave, left, meshTop, panelW, panelH);
  writeOtherSlots(left, meshTop);
  for (const Drawn &region : wave) {
    if (!region.rect)
      continue;
    auto [x, y, w, h] = toPanel(region.rect, left, meshTop);
    os << llvm::formatv(
        "<rect data-kernel=\"{0}\" data-at=\"{1} {2} {3} {4}\" x=\"{5}\" "
        "y=\"{6}\" width=\"{7}\" height=\"{8}\" fill=\"{9}\" "
        "fill-opacity=\"0.75\" stroke=\"#222\"/>\n",
        escapeXml(region.op.getSymName()), region.rect.getX(),
        region.rect.getY(), region.rect.getW(), region.rect.getH(), x, y, w, h,
        kernelColor(region.op.getKernel()));
    LayoutAttr layout = region.layout;
    double cx = x + w / 2;
    if (layout && layout.getWeights() == Edge::north)
      // Weights come down from the north edge onto the rectangle.
      os << llvm::formatv(
          "<path data-weights=\"{0}\" d=\"M{1},{2} L{1},{3} M{4},{5} "
          "L{1},{3} L{6},{5}\" stroke=\"#d62728\" stroke-width=\"2\" "
          "fill=\"none\"/>\n",
          escapeXml(region.op.getSymName()), cx, meshTop - 12, y + 2, cx - 4,
          y - 4, cx + 4);
    if (layout && layout.getPartials() != ReduceAxis::none) {
      // Partial sums along the rows (west to east) or down the columns.
      bool rows = layout.getPartials() == ReduceAxis::rows;
      double x0 = rows ? x + 3 : x + w - 8, y0 = rows ? y + h - 8 : y + 3;
      double x1 = rows ? x + w - 3 : x0, y1 = rows ? y0 : y + h - 3;
      os << llvm::formatv(
          "<path data-partials=\"{0}\" d=\"M{1},{2} L{3},{4}\" "
          "stroke=\"#1f77b4\" stroke-width=\"2\" fill=\"none\"/>\n"
          "<path d=\"M{5},{6} L{3},{4} L{7},{8}\" stroke=\"#1f77b4\" "
          "stroke-width=\"2\" fill=\"none\"/>\n",
          escapeXml(stringifyReduceAxis(layout.getPartials())), x0, y0, x1, y1,
          rows ? x1 - 5 : x1 - 4, rows ? y1 - 4 : y1 - 5,
          rows ? x1 - 5 : x1 + 4, rows ? y1 + 4 : y1 - 5);
    }
    // What the region is, where it has room for it: on a narrow band only
    // its name, the rest in the table.
    std::vector<std::string> lines = {"@" + region.op.getSymName().str()};
    if (layout)
      lines.push_back(std::to_string(layout.getTokenGroups()) + " x " +
                      std::to_string(layout.getFeatureGroups()) +
                      (layout.getWeights() == Edge::resident ? " W" : ""));
    lines.push_back(sramText(region.sramBytes));
    size_t fits = w >= 95 ? lines.size() : w >= 40 ? 1 : 0;
    for (size_t i = 0; i < fits && (i + 1) * 13 + 4 < h; ++i)
      os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"10\">"
                          "{2}</text>\n",
                          x + 3, y + 13 + 12 * static_cast<double>(i),
                          escapeXml(lines[i]));
  }
}

/// One swatch per kernel that this stage runs (nothing it does not), then
/// the SRAM bars' scale.
void SvgWriter::writeLegend(double top) {
  llvm::SmallVector<llvm::StringRef> kernels;
  for (const Drawn &region : regions)
    if (!llvm::is_contained(kernels, region.op.getKernel()))
      kernels.push_back(region.op.getKernel());
  double x = kMargin;
  for (llvm::StringRef kernel : kernels) {
    os << llvm::formatv("<rect data-legend=\"{0}\" x=\"{1}\" y=\"{2}\" "
                        "width=\"10\" height=\"10\" fill=\"{3}\"/>\n",
                        escapeXml(kernel), x, top - 9, kernelColor(kernel));
    llvm::StringRef shortName = kernel.split('.').second;
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"10\">{2}"
                        "</text>\n",
                        x + 13, top, escapeXml(shortName));
    x += 13 + 6.5 * static_cast<double>(shortName.size()) + 12;
  }
  double barLeft = kWidth - kMargin - kBarWidth;
  os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"10\">SRAM: "
                      "</text>\n",
                      barLeft - 40, top);
  for (int step = 0; step <= 4; ++step)
    os << llvm::formatv("<rect x=\"{0}\" y=\"{1}\" width=\"20\" "
                        "height=\"10\" fill=\"{2}\"/>\n",
                        barLeft + 20 * step, top - 9, heatColor(step / 4.0));
  os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"10\">empty "
                      "to full</text>\n",
                      barLeft + 106, top);
}

void SvgWriter::writeTable(double top) {
  double sram = static_cast<double>(target.getCoreSramBytes());
  os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-weight=\"bold\">"
                      "regions in order: wave, kind, kernels, cores, token x "
                      "feature groups, SRAM per core</text>\n",
                      kMargin, top);
  double y = top + kRowHeight;
  double barLeft = kWidth - kMargin - kBarWidth;
  for (const Drawn &region : regions) {
    std::string kernels = region.op.getKernel().split('.').second.str();
    if (size_t fused = region.op.getFused().size())
      kernels += " + " + std::to_string(fused) + " fused";
    std::string where = "-";
    if (region.rect)
      where = llvm::formatv("{0} x {1} at ({2}, {3})", region.rect.getW(),
                            region.rect.getH(), region.rect.getX(),
                            region.rect.getY())
                  .str();
    std::string layout = "-";
    if (region.layout)
      layout = std::to_string(region.layout.getTokenGroups()) + " x " +
               std::to_string(region.layout.getFeatureGroups()) +
               (region.layout.getWeights() == Edge::resident ? " W" : "");
    double share = static_cast<double>(region.sramBytes) / sram;
    os << llvm::formatv("<rect data-region=\"{0}\" x=\"{1}\" y=\"{2}\" "
                        "width=\"12\" height=\"12\" fill=\"{3}\"/>\n",
                        escapeXml(region.op.getSymName()), kMargin, y - 11,
                        kernelColor(region.op.getKernel()));
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"11\">{2} "
                        "@{3} {4}: {5}; {6}; {7}</text>\n",
                        kMargin + 18, y, region.wave,
                        escapeXml(region.op.getSymName()),
                        stringifyKernelKind(region.op.getKind()),
                        escapeXml(kernels), where, layout);
    os << llvm::formatv(
        "<rect data-sram=\"{0}\" x=\"{1}\" y=\"{2}\" "
        "width=\"{3}\" height=\"12\" fill=\"{4}\"/>\n",
        region.sramBytes, barLeft, y - 11,
        region.sramBytes > 0
            ? std::max(kMinBarWidth, kBarWidth * std::clamp(share, 0.0, 1.0))
            : 0.0,
        heatColor(share));
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"10\" "
                        "text-anchor=\"end\">{2}</text>\n",
                        barLeft - 4, y, sramText(region.sramBytes));
    y += kRowHeight;
  }
}

} // namespace

void printPlacementSvg(llvm::raw_ostream &os, DeviceOp device, StageOp stage,
                       const target::WaferTargetModel &target) {
  SvgWriter(os, device, stage, target).write();
}

} // namespace cgpt::report
