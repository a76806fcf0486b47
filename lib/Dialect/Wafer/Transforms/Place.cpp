//===- Place.cpp - wafer-place and wafer-route ----------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/Transforms/Passes.h"
#include "cgpt/Dialect/Wafer/Transforms/Placer.h"
#include "cgpt/Dialect/Wafer/Transforms/Router.h"
#include "cgpt/Sim/WaferModel.h"
#include "cgpt/Target/WaferTargetModel.h"

namespace cgpt::wafer {
#define GEN_PASS_DEF_WAFERPLACE
#define GEN_PASS_DEF_WAFERROUTE
#include "cgpt/Dialect/Wafer/Transforms/Passes.h.inc"
} // namespace cgpt::wafer

using namespace mlir;
using namespace cgpt::wafer;

LogicalResult cgpt::wafer::placeDevice(DeviceOp device, const Placer &placer,
                                       int64_t microBatch) {
  int64_t cores = device.getNumCores();
  for (auto stage : device.getBody().front().getOps<StageOp>()) {
    SmallVector<RegionOp> regions(stage.getBody().front().getOps<RegionOp>());
    // Every region first gets the cores its data needs at this micro-batch;
    // the cores left over are shared in proportion to work.
    SmallVector<int64_t> wanted;
    int64_t reserved = 0;
    double flops = 0;
    for (RegionOp region : regions) {
      wanted.push_back(cgpt::sim::minimumCores(region, microBatch));
      reserved += wanted.back();
      flops += static_cast<double>(region.getFlops());
    }
    int64_t spare = std::max<int64_t>(0, cores - reserved);
    for (auto [region, want] : llvm::zip(regions, wanted))
      if (flops > 0)
        want += static_cast<int64_t>(static_cast<double>(spare) *
                                     (static_cast<double>(region.getFlops()) /
                                      flops));
    FailureOr<SmallVector<Rect>> rects =
        placer.place(wanted, device.getWidth(), device.getHeight());
    if (failed(rects))
      return stage.emitOpError()
             << "has " << regions.size() << " kernels, more than the "
             << device.getWidth() << " x " << device.getHeight()
             << " mesh of target '" << device.getTarget()
             << "' can give one core each";
    for (auto [region, rect] : llvm::zip(regions, *rects))
      region.setPlacementAttr(RectAttr::get(device.getContext(), rect.x,
                                            rect.y, rect.w, rect.h));
  }
  return success();
}

namespace {

struct WaferPlace : cgpt::wafer::impl::WaferPlaceBase<WaferPlace> {
  using WaferPlaceBase::WaferPlaceBase;

  void runOnOperation() override {
    if (placer != "serpentine") {
      getOperation().emitError()
          << "wafer-place: unknown placer '" << placer
          << "'; allowed: serpentine";
      return signalPassFailure();
    }
    SerpentinePlacer serpentine;
    getOperation().walk([&](DeviceOp device) {
      // Placed for the planned micro-batch, or for one sequence before.
      int64_t microBatch = std::max<int64_t>(1, device.getMicroBatch());
      if (failed(placeDevice(device, serpentine, microBatch)))
        signalPassFailure();
    });
  }
};

/// The centre core of region `name` in `stage`.
Point centreOf(StageOp stage, FlatSymbolRefAttr name) {
  auto region =
      cast<RegionOp>(mlir::SymbolTable::lookupSymbolIn(stage, name));
  auto [x, y] = region.getPlacementAttr().getCentre();
  return {x, y};
}

struct WaferRoute : cgpt::wafer::impl::WaferRouteBase<WaferRoute> {
  void runOnOperation() override {
    getOperation().walk([&](DeviceOp device) {
      FailureOr<cgpt::target::WaferTargetModel> target =
          cgpt::target::WaferTargetModel::load(device.getTarget(),
                                               &getContext());
      if (failed(target))
        return signalPassFailure();
      Router router(target->getNumColors());
      Builder builder(&getContext());
      for (auto stage : device.getBody().front().getOps<StageOp>()) {
        if (llvm::any_of(stage.getBody().front().getOps<RegionOp>(),
                         [](RegionOp r) { return !r.getPlacementAttr(); })) {
          stage.emitOpError() << "has unplaced regions; run wafer-place "
                                 "before wafer-route";
          return signalPassFailure();
        }
        SmallVector<FlowOp> flows(stage.getBody().front().getOps<FlowOp>());
        SmallVector<std::pair<Point, Point>> ends;
        for (FlowOp flow : flows)
          ends.push_back({centreOf(stage, flow.getSourceAttr()),
                          centreOf(stage, flow.getDestAttr())});
        size_t failedFlow = 0;
        std::optional<SmallVector<Route>> routes =
            router.route(ends, failedFlow);
        if (!routes) {
          FlowOp flow = flows[failedFlow];
          flow.emitOpError()
              << "finds no free routing color in stage @"
              << stage.getSymName() << ": the target '" << device.getTarget()
              << "' has " << target->getNumColors()
              << " and every one is taken by a flow sharing a link with it";
          return signalPassFailure();
        }
        for (auto [flow, route] : llvm::zip(flows, *routes)) {
          flow.setColorAttr(builder.getI64IntegerAttr(route.color));
          flow.setRouteAttr(builder.getDenseI64ArrayAttr(route.points));
        }
        // Weights enter at the west edge and gradients leave at the east
        // edge, in the row of their region.
        for (auto ingress : stage.getBody().front().getOps<IngressOp>())
          ingress.setAtAttr(builder.getDenseI64ArrayAttr(
              {0, centreOf(stage, ingress.getDestAttr()).y}));
        for (auto egress : stage.getBody().front().getOps<EgressOp>())
          egress.setAtAttr(builder.getDenseI64ArrayAttr(
              {device.getWidth() - 1,
               centreOf(stage, egress.getSourceAttr()).y}));
      }
    });
  }
};

} // namespace
