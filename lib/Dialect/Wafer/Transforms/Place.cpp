//===- Place.cpp - wafer-place --------------------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/Analysis/MemoryModel.h"
#include "cgpt/Dialect/Wafer/Analysis/Placer.h"
#include "cgpt/Dialect/Wafer/Transforms/Passes.h"
#include "cgpt/Support/Debug.h"

#include "llvm/ADT/StringExtras.h"

#define DEBUG_TYPE "wafer-place"

namespace cgpt::wafer {
#define GEN_PASS_DEF_WAFERPLACE
#include "cgpt/Dialect/Wafer/Transforms/Passes.h.inc"
} // namespace cgpt::wafer

using namespace mlir;
using namespace cgpt::wafer;

namespace {

struct WaferPlace : cgpt::wafer::impl::WaferPlaceBase<WaferPlace> {
  using WaferPlaceBase::WaferPlaceBase;

  void runOnOperation() override {
    if (failed(place(getOperation())))
      signalPassFailure();
  }

  LogicalResult place(DeviceOp device) {
    std::string name = !placer.empty()
                           ? placer
                           : device.getPlacer().value_or("whole-mesh").str();
    std::unique_ptr<Placer> chosen = createPlacer(name);
    if (!chosen)
      return device.emitOpError()
             << "names unknown placer '" << name << "'; the placers are "
             << llvm::join(getPlacerNames(), ", ");
    FailureOr<StepProgram> program = StepProgram::build(device);
    if (failed(program))
      return failure();
    // Laid out for the planned micro-batch, or for one sequence before.
    int64_t microBatch = std::max<int64_t>(1, device.getMicroBatch());
    std::string whyNot;
    std::optional<Placement> placement =
        chosen->place(*program, microBatch, whyNot);
    if (!placement)
      return device.emitOpError()
             << "cannot be placed by the " << name << " placer: " << whyNot;
    // Planned, the weight kernels block their sums to what the policy
    // leaves each core.
    if (CheckpointAttr checkpoint = device.getCheckpointAttr();
        checkpoint && device.getMicroBatch() > 0)
      placement = withSumBlocks(*program, std::move(*placement), microBatch,
                                CheckpointPolicy::fromAttr(checkpoint));
    CGPT_DEBUG({
      for (auto [s, stage] : llvm::enumerate(program->getStages()))
        for (auto [r, region] : llvm::enumerate(placement->regions[s]))
          CGPT_DBGS() << "@" << stage.name << " @"
                      << stage.regions[r].op.getSymName() << ": "
                      << region.rect.w << " x " << region.rect.h << " at ("
                      << region.rect.x << ", " << region.rect.y << "), "
                      << region.layout.tokenGroups << " token x "
                      << region.layout.featureGroups << " feature groups, wave "
                      << region.wave << "\n";
    });
    placement->writeTo(*program);
    return success();
  }
};

} // namespace
