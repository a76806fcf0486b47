//===- CheckMemory.cpp - wafer-check-memory -------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/Analysis/MemoryModel.h"
#include "cgpt/Dialect/Wafer/Transforms/Passes.h"
#include "cgpt/Support/Debug.h"
#include "cgpt/Support/Format.h"

#define DEBUG_TYPE "wafer-check-memory"

namespace cgpt::wafer {
#define GEN_PASS_DEF_WAFERCHECKMEMORY
#include "cgpt/Dialect/Wafer/Transforms/Passes.h.inc"
} // namespace cgpt::wafer

using namespace mlir;
using namespace cgpt;
using namespace cgpt::wafer;

namespace {

/// Regions over SRAM reported with their memory map; the rest are counted.
constexpr int64_t kRegionsInFull = 3;

struct WaferCheckMemory
    : cgpt::wafer::impl::WaferCheckMemoryBase<WaferCheckMemory> {
  void runOnOperation() override {
    if (failed(check(getOperation())))
      signalPassFailure();
  }

  LogicalResult check(DeviceOp device);
};

LogicalResult WaferCheckMemory::check(DeviceOp device) {
  if (device.getMicroBatch() == 0 || !device.getCheckpoint())
    return device.emitOpError() << "is not planned; run wafer-plan-batch "
                                   "before wafer-check-memory";
  FailureOr<PlacedStep> placed = PlacedStep::read(device);
  if (failed(placed))
    return failure();
  const StepProgram *program = &placed->program;
  const Placement *placement = &placed->placement;
  int64_t sram = program->getTarget().getCoreSramBytes();
  int64_t micro = device.getMicroBatch();
  CheckpointPolicy policy = CheckpointPolicy::fromAttr(*device.getCheckpoint());
  Builder builder(&getContext());
  std::vector<std::vector<CoreMemory>> memories =
      regionMemories(*program, *placement, micro, policy);
  // The first few regions over SRAM in full, then how many more: one edit
  // can put every region of a step over.
  int64_t over = 0;
  RegionOp largest;
  int64_t largestBytes = 0;
  for (auto [s, stage] : llvm::enumerate(program->getStages())) {
    for (auto [r, region] : llvm::enumerate(stage.regions)) {
      const CoreMemory &memory = memories[s][r];
      CGPT_DEBUG(CGPT_DBGS()
                 << "@" << stage.name << " @" << region.op.getSymName() << ": "
                 << memory.total() << " of " << sram
                 << " B per core: " << memory.describe() << "\n");
      if (memory.total() <= sram) {
        region.op.setSramBytesAttr(builder.getI64IntegerAttr(memory.total()));
        continue;
      }
      if (memory.total() > largestBytes) {
        largest = region.op;
        largestBytes = memory.total();
      }
      if (over++ >= kRegionsInFull)
        continue;
      InFlightDiagnostic diag =
          region.op.emitOpError()
          << "@" << region.op.getSymName() << " needs "
          << formatGrouped(memory.total()) << " B per core on its "
          << formatGrouped(placement->regions[s][r].rect.cores())
          << " cores at micro-batch " << micro << " with checkpoints '"
          << policy.str() << "', over the " << formatGrouped(sram)
          << " B of SRAM a core of target '" << device.getTarget() << "' has";
      diag.attachNote() << "memory map per core: " << memory.describe();
    }
  }
  if (over > kRegionsInFull)
    device.emitOpError() << "has " << over - kRegionsInFull
                         << " more regions over the " << formatGrouped(sram)
                         << " B of SRAM a core has; the largest, @"
                         << largest.getSymName() << ", needs "
                         << formatGrouped(largestBytes) << " B per core";
  return success(over == 0);
}

} // namespace
