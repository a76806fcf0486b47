//===- Route.cpp - wafer-route --------------------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/Analysis/KernelCost.h"
#include "cgpt/Dialect/Wafer/IR/Wafer.h"
#include "cgpt/Dialect/Wafer/Transforms/Passes.h"
#include "cgpt/Support/Debug.h"
#include "cgpt/Target/WaferTargetModel.h"

#include "llvm/ADT/DenseMap.h"

#define DEBUG_TYPE "wafer-route"

namespace cgpt::wafer {
#define GEN_PASS_DEF_WAFERROUTE
#include "cgpt/Dialect/Wafer/Transforms/Passes.h.inc"
} // namespace cgpt::wafer

using namespace mlir;
using namespace cgpt::wafer;

namespace {

/// Colors 0 and 1 carry activations between the bands of a layer-pipelined
/// step: forward to the next slot, backward to the previous one.
constexpr int64_t kPipelineColors = 2;

/// The rows of its rectangle a region's token groups occupy.
int64_t tokenRowsOf(RegionOp region) {
  return tokenRowsOn(region.getPlacementAttr().getRect(),
                     region.getLayoutAttr().getTokenGroups());
}

/// The streams a kernel's cores send and receive while it runs: its
/// weights' (or, resident, its tokens') multicast, and two alternating
/// colors for each chain of partial sums, gathered operands or row
/// statistics (so a core can receive on one while it sends on the other,
/// as the SDK's checkerboard examples do).
int64_t streamsOf(RegionOp region) {
  LayoutAttr layout = region.getLayoutAttr();
  int64_t streams = layout.getWeights() != Edge::none ? 1 : 0;
  if (layout.getPartials() != ReduceAxis::none)
    streams += 2;
  switch (region.getKind()) {
  case KernelKind::weight_matmul:
    // A reduce-scatter chains each block west as well as east.
    if (layout.getFeatureGroups() > 1 &&
        reducesScattered(shapeOf(region), layout.getLayout()))
      streams += 2;
    break;
  case KernelKind::weight_grad:
    if (layout.getFeatureGroups() > 1)
      streams += 2; // the output gradient gathered along each row
    break;
  case KernelKind::attention:
    streams += 2; // queries down columns, keys and values along rows
    break;
  case KernelKind::reduction: {
    RowFunction function = shapeOf(region).function;
    // The loss gradient reads the statistics the forward pass saved.
    if (layout.getFeatureGroups() > 1 &&
        layout.getPartials() == ReduceAxis::none &&
        function != RowFunction::crossEntropyGrad)
      streams += 2; // statistics along the row and back
    // A norm gradient's gain gradient passes down its rows of token groups.
    if (isNormGradient(function) && tokenRowsOf(region) > 1)
      streams += 2;
    break;
  }
  default:
    break;
  }
  return streams;
}

struct WaferRoute : cgpt::wafer::impl::WaferRouteBase<WaferRoute> {
  void runOnOperation() override {
    if (failed(route(getOperation())))
      signalPassFailure();
  }

  LogicalResult route(DeviceOp device);
};

LogicalResult WaferRoute::route(DeviceOp device) {
  FailureOr<const cgpt::target::WaferTargetModel *> target =
      device.getTargetModel();
  if (failed(target))
    return failure();
  Builder builder(&getContext());
  int64_t colors = (*target)->getNumColors();
  int64_t firstColor = device.getExecution() == ExecutionMode::layer_pipelined
                           ? kPipelineColors
                           : 0;
  for (auto stage : device.getBody().front().getOps<StageOp>()) {
    // The regions of the current wave, with the colors they took.
    SmallVector<std::pair<RegionOp, int64_t>> wave;
    for (auto region : stage.getBody().front().getOps<RegionOp>()) {
      RectAttr rect = region.getPlacementAttr();
      if (!rect || !region.getLayoutAttr())
        return region.emitOpError() << "@" << region.getSymName()
                                    << " has no layout; run wafer-place "
                                       "before wafer-route";
      if (!wave.empty() && wave.front().first.getWave() != region.getWave())
        wave.clear();
      // Weights come down the columns from the north edge: a region takes
      // colors after those of the regions of its wave on the same columns.
      int64_t first = firstColor;
      for (auto [other, end] : wave) {
        RectAttr theirs = other.getPlacementAttr();
        if (rect.getX() < theirs.getX() + theirs.getW() &&
            theirs.getX() < rect.getX() + rect.getW())
          first = std::max(first, end);
      }
      int64_t streams = streamsOf(region);
      CGPT_DEBUG(CGPT_DBGS()
                 << "@" << stage.getSymName() << " @" << region.getSymName()
                 << ": " << streams << " stream(s) from color " << first
                 << " of " << colors << "\n");
      if (first + streams > colors) {
        InFlightDiagnostic diag = region.emitOpError()
                                  << "needs " << streams << " routing colors";
        if (first > 0)
          diag << " after the " << first
               << " its wave's other regions and the pipeline use on its "
                  "columns";
        return diag << "; target '" << device.getTarget() << "' has " << colors;
      }
      SmallVector<int64_t> taken;
      for (int64_t color = first; color < first + streams; ++color)
        taken.push_back(color);
      region.setColorsAttr(builder.getDenseI64ArrayAttr(taken));
      wave.push_back({region, first + streams});
    }
    // Weights enter at the north edge above their region and are multicast
    // down its columns; weight gradients, reduced down the columns, leave
    // at the south-east corner of the rows the region's token groups
    // occupy.
    SymbolTable symbols(stage);
    for (auto ingress : stage.getBody().front().getOps<IngressOp>()) {
      RectAttr rect = symbols.lookup<RegionOp>(ingress.getDestAttr().getAttr())
                          .getPlacementAttr();
      ingress.setAtAttr(builder.getDenseI64ArrayAttr({rect.getX(), 0}));
    }
    for (auto egress : stage.getBody().front().getOps<EgressOp>()) {
      auto source = symbols.lookup<RegionOp>(egress.getSourceAttr().getAttr());
      RectAttr rect = source.getPlacementAttr();
      egress.setAtAttr(builder.getDenseI64ArrayAttr(
          {rect.getX() + rect.getW() - 1,
           rect.getY() + tokenRowsOf(source) - 1}));
    }
  }
  return success();
}

} // namespace
