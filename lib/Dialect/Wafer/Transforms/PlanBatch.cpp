//===- PlanBatch.cpp - wafer-plan-batch and wafer-check-memory ------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/Transforms/Passes.h"
#include "cgpt/Dialect/Wafer/Transforms/Placer.h"
#include "cgpt/Sim/Simulator.h"
#include "cgpt/Sim/WaferModel.h"
#include "cgpt/Support/Format.h"

#include "llvm/Support/FormatVariadic.h"

namespace cgpt::wafer {
#define GEN_PASS_DEF_WAFERPLANBATCH
#define GEN_PASS_DEF_WAFERCHECKMEMORY
#include "cgpt/Dialect/Wafer/Transforms/Passes.h.inc"
} // namespace cgpt::wafer

using namespace mlir;
using namespace cgpt;
using namespace cgpt::wafer;
using cgpt::transformer::MicroBatchMode;

namespace {

/// f32 weights and two f32 Adam moments per parameter on the weight servers.
constexpr int64_t kServerBytesPerParameter = 12;

bool allPlaced(DeviceOp device) {
  bool placed = true;
  device.walk([&](RegionOp region) {
    placed &= static_cast<bool>(region.getPlacementAttr());
  });
  return placed;
}

/// One micro-batch the planner weighed.
struct Candidate {
  int64_t microBatch;
  sim::MemoryPeak peak;
  sim::StepCost cost;
  bool fits;
  /// Where the peak is, described while the candidate's placement stands.
  std::string peakWhere;
};

struct WaferPlanBatch : cgpt::wafer::impl::WaferPlanBatchBase<WaferPlanBatch> {
  void runOnOperation() override {
    getOperation().walk([&](DeviceOp device) {
      if (failed(plan(device)))
        signalPassFailure();
    });
  }

  LogicalResult plan(DeviceOp device);
};

LogicalResult WaferPlanBatch::plan(DeviceOp device) {
  FailureOr<target::WaferTargetModel> target =
      target::WaferTargetModel::load(device.getTarget(), &getContext());
  if (failed(target))
    return failure();

  int64_t serverBytes = device.getParameters() * kServerBytesPerParameter;
  auto capacity =
      static_cast<int64_t>(target->getWeightServerCapacityBytes());
  if (serverBytes > capacity)
    return device.emitOpError()
           << "needs " << formatGrouped(serverBytes)
           << " B on the weight servers (" << kServerBytesPerParameter
           << " B for each of " << formatGrouped(device.getParameters())
           << " parameters: f32 weights and two Adam moments), but target '"
           << device.getTarget() << "' holds " << formatGrouped(capacity)
           << " B: " << formatGrouped(serverBytes - capacity) << " B short";

  int64_t perSystem = device.getPerSystemBatch();
  int64_t sram = device.getSramBytes();
  auto request = device.getMicroBatchRequest();
  // Each candidate is placed for itself: region sizes follow the memory
  // its micro-batch needs.
  SerpentinePlacer placer;
  auto evaluate = [&](int64_t micro) -> FailureOr<Candidate> {
    if (failed(placeDevice(device, placer, micro)))
      return failure();
    FailureOr<sim::StepCost> cost = sim::stepCost(device, *target, micro);
    if (failed(cost))
      return failure();
    Candidate c{micro, sim::memoryPeak(device, micro), *cost, false, ""};
    c.fits = c.peak.memory.total() <= sram;
    c.peakWhere = sim::describeRegion(c.peak.region);
    return c;
  };
  auto tooBig = [&](const Candidate &c, StringRef what) {
    RegionOp region = c.peak.region;
    InFlightDiagnostic diag =
        region.emitOpError()
        << what << " " << c.microBatch << " does not fit: "
        << sim::describeRegion(c.peak.region) << " needs "
        << formatGrouped(c.peak.memory.total()) << " B per core; the core has "
        << formatGrouped(sram) << " B";
    diag.attachNote() << "memory map per core: "
                      << sim::describeMemory(c.peak.memory, c.microBatch);
    return diag;
  };

  SmallVector<int64_t> divisors;
  for (int64_t d = 1; d <= perSystem; ++d)
    if (perSystem % d == 0)
      divisors.push_back(d);

  Candidate chosen;
  std::string reason;
  switch (request.getMode()) {
  case MicroBatchMode::fixed:
  case MicroBatchMode::none: {
    bool fixed = request.getMode() == MicroBatchMode::fixed;
    int64_t micro = fixed ? request.getSize() : perSystem;
    if (perSystem % micro != 0)
      return device.emitOpError()
             << "micro_batch_size " << micro
             << " does not divide the per-system batch " << perSystem
             << " (global " << device.getGlobalBatch() << " / "
             << device.getNumCsx() << " systems)";
    FailureOr<Candidate> candidate = evaluate(micro);
    if (failed(candidate))
      return failure();
    chosen = *candidate;
    if (!chosen.fits)
      return tooBig(chosen, fixed ? "micro-batch" : "the whole per-system "
                                                    "batch of");
    reason = fixed ? "as given" : "none: the whole per-system batch";
    break;
  }
  case MicroBatchMode::automatic:
  case MicroBatchMode::explore: {
    bool explore = request.getMode() == MicroBatchMode::explore;
    int64_t low = explore ? request.getMin() : 0;
    int64_t high = explore && request.getMax() ? request.getMax() : perSystem;
    SmallVector<Candidate> candidates;
    for (int64_t d : divisors) {
      if (d < low || d > high)
        continue;
      FailureOr<Candidate> candidate = evaluate(d);
      if (failed(candidate))
        return failure();
      candidates.push_back(*candidate);
    }
    if (candidates.empty())
      return device.emitOpError()
             << "no divisor of the per-system batch " << perSystem
             << " lies in the explore range " << low << ".." << high;
    if (explore) {
      llvm::outs() << llvm::formatv("{0,12} {1,5} {2,16} {3,18}\n",
                                    "micro-batch", "fits",
                                    "SRAM peak (B)", "samples/s");
      for (const Candidate &c : candidates)
        llvm::outs() << llvm::formatv(
            "{0,12} {1,5} {2,16} {3,18}\n", c.microBatch,
            c.fits ? "yes" : "no", formatGrouped(c.peak.memory.total()),
            c.fits ? formatExactDouble(std::round(c.cost.samplesPerSecond *
                                                  100) / 100)
                   : std::string("-"));
    }
    const Candidate *best = nullptr;
    for (const Candidate &c : candidates)
      if (c.fits && (!best || c.cost.samplesPerSecond >=
                                  best->cost.samplesPerSecond))
        best = &c;
    if (!best) {
      const Candidate &first = candidates.front();
      RegionOp region = first.peak.region;
      InFlightDiagnostic diag =
          region.emitOpError()
          << "cannot fit even micro-batch " << first.microBatch << ": "
          << first.peakWhere << " needs "
          << formatGrouped(first.peak.memory.total())
          << " B per core; the core has " << formatGrouped(sram) << " B, "
          << formatGrouped(first.peak.memory.total() - sram) << " B short";
      diag.attachNote() << "memory map per core: "
                        << sim::describeMemory(first.peak.memory,
                                               first.microBatch);
      return diag;
    }
    chosen = *best;
    reason = (explore ? "explore" : "auto") + std::string(": of ") +
             std::to_string(candidates.size()) + " divisors of " +
             std::to_string(perSystem) + ", " +
             std::to_string(chosen.microBatch) +
             " fits and predicts the most samples per second";
    auto larger = llvm::find_if(candidates, [&](const Candidate &c) {
      return c.microBatch > chosen.microBatch && !c.fits;
    });
    if (larger != candidates.end())
      reason += "; " + std::to_string(larger->microBatch) + " needs " +
                formatGrouped(larger->peak.memory.total()) +
                " B per core in " + larger->peakWhere;
    break;
  }
  }
  reason += llvm::formatv(" (SRAM peak {0} of {1} B per core, {2} "
                          "samples/s predicted)",
                          formatGrouped(chosen.peak.memory.total()),
                          formatGrouped(sram),
                          formatExactDouble(
                              std::round(chosen.cost.samplesPerSecond * 100) /
                              100))
                .str();

  if (failed(placeDevice(device, placer, chosen.microBatch)))
    return failure();
  Builder builder(&getContext());
  device.setMicroBatch(chosen.microBatch);
  device.setGradAccumSteps(perSystem / chosen.microBatch);
  device.setPlanAttr(builder.getStringAttr(reason));
  return success();
}

struct WaferCheckMemory
    : cgpt::wafer::impl::WaferCheckMemoryBase<WaferCheckMemory> {
  void runOnOperation() override {
    getOperation().walk([&](DeviceOp device) {
      if (device.getMicroBatch() == 0 || !allPlaced(device)) {
        device.emitOpError() << "is not placed and planned; run wafer-place "
                                "and wafer-plan-batch before "
                                "wafer-check-memory";
        return signalPassFailure();
      }
      Builder builder(&getContext());
      device.walk([&](RegionOp region) {
        sim::CoreMemory memory =
            sim::regionMemory(region, device.getMicroBatch());
        region.setSramBytesAttr(builder.getI64IntegerAttr(memory.total()));
        if (memory.total() <= device.getSramBytes())
          return;
        InFlightDiagnostic diag =
            region.emitOpError()
            << "needs " << formatGrouped(memory.total())
            << " B per core on cores " << region.getPlacementAttr()
            << " at micro-batch " << device.getMicroBatch()
            << ", over the " << formatGrouped(device.getSramBytes())
            << " B of SRAM a core of target '" << device.getTarget()
            << "' has";
        diag.attachNote() << "memory map per core: "
                          << sim::describeMemory(memory,
                                                 device.getMicroBatch());
        signalPassFailure();
      });
    });
  }
};

} // namespace
