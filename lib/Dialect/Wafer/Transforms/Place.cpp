//===- Place.cpp - wafer-place and wafer-route ----------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/Analysis/ExecutionModel.h"
#include "cgpt/Dialect/Wafer/Transforms/Passes.h"

namespace cgpt::wafer {
#define GEN_PASS_DEF_WAFERPLACE
#define GEN_PASS_DEF_WAFERROUTE
#include "cgpt/Dialect/Wafer/Transforms/Passes.h.inc"
} // namespace cgpt::wafer

using namespace mlir;
using namespace cgpt::wafer;

namespace {

struct WaferPlace : cgpt::wafer::impl::WaferPlaceBase<WaferPlace> {
  void runOnOperation() override {
    getOperation().walk([&](DeviceOp device) {
      FailureOr<ExecutionModel> model = ExecutionModel::build(device);
      if (failed(model))
        return signalPassFailure();
      // Laid out for the planned micro-batch, or for one sequence before.
      model->annotateLayouts(std::max<int64_t>(1, device.getMicroBatch()));
    });
  }
};

/// The colors a kernel's streams take while it runs: its weights'
/// multicast, and two alternating colors for each chain of partial sums,
/// gathered operands or row statistics (so a core can receive on one while
/// it sends on the other, as the SDK's checkerboard examples do).
SmallVector<int64_t> streamsOf(RegionOp region) {
  LayoutAttr layout = region.getLayoutAttr();
  int64_t streams = layout.getWeights() != Edge::none ? 1 : 0;
  if (layout.getPartials() != ReduceAxis::none)
    streams += 2;
  switch (region.getKind()) {
  case KernelKind::weight_grad:
    if (layout.getFeatureGroups() > 1)
      streams += 2; // the output gradient gathered along each row
    break;
  case KernelKind::attention:
    streams += 2; // queries down columns, keys and values along rows
    break;
  case KernelKind::reduction:
    if (layout.getFeatureGroups() > 1 &&
        layout.getPartials() == ReduceAxis::none)
      streams += 2; // statistics along the row and back
    break;
  default:
    break;
  }
  SmallVector<int64_t> colors;
  for (int64_t color = 0; color < streams; ++color)
    colors.push_back(color);
  return colors;
}

struct WaferRoute : cgpt::wafer::impl::WaferRouteBase<WaferRoute> {
  void runOnOperation() override {
    getOperation().walk([&](DeviceOp device) {
      FailureOr<const cgpt::target::WaferTargetModel *> target =
          device.getTargetModel();
      if (failed(target))
        return signalPassFailure();
      Builder builder(&getContext());
      int64_t width = (*target)->getMeshWidth();
      int64_t height = (*target)->getMeshHeight();
      for (auto stage : device.getBody().front().getOps<StageOp>()) {
        for (auto region : stage.getBody().front().getOps<RegionOp>()) {
          if (!region.getLayoutAttr()) {
            region.emitOpError() << "has no layout; run wafer-place before "
                                    "wafer-route";
            return signalPassFailure();
          }
          // Kernels run one after another, so each may use every color.
          SmallVector<int64_t> colors = streamsOf(region);
          if (static_cast<int64_t>(colors.size()) > (*target)->getNumColors()) {
            region.emitOpError()
                << "needs " << colors.size() << " routing colors; target '"
                << device.getTarget() << "' has "
                << (*target)->getNumColors();
            return signalPassFailure();
          }
          region.setColorsAttr(builder.getDenseI64ArrayAttr(colors));
        }
        // Weights enter along the north edge (from its first core) and are
        // multicast down the columns; weight gradients, reduced down the
        // columns, leave at the south-east corner.
        for (auto ingress : stage.getBody().front().getOps<IngressOp>())
          ingress.setAtAttr(builder.getDenseI64ArrayAttr({0, 0}));
        for (auto egress : stage.getBody().front().getOps<EgressOp>())
          egress.setAtAttr(
              builder.getDenseI64ArrayAttr({width - 1, height - 1}));
      }
    });
  }
};

} // namespace
