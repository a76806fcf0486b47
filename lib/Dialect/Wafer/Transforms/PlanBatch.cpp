//===- PlanBatch.cpp - wafer-plan-batch and wafer-check-memory ------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/Analysis/ExecutionModel.h"
#include "cgpt/Dialect/Wafer/Transforms/Passes.h"
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
using cgpt::training::MicroBatchMode;

namespace {

/// f32 weights and two f32 Adam moments per parameter on the weight servers.
constexpr int64_t kServerBytesPerParameter = 12;

/// One (micro-batch, checkpoint policy) the planner weighed.
struct Candidate {
  int64_t microBatch = 0;
  CheckpointPolicy policy;
  mutable MemoryPeak peak;
  StepEstimate cost;
  bool fits = false;
};

/// Where a region is, for diagnostics: "@matmul.1 (dataflow.matmul) of
/// stage @h.0.forward (layer 0)".
std::string describeRegion(RegionOp region) {
  auto stage = region->getParentOfType<StageOp>();
  std::string where = "@" + region.getSymName().str() + " (" +
                      region.getKernel().str() + ") of stage @" +
                      stage.getSymName().str();
  if (std::optional<int64_t> layer = stage.getLayer())
    where += " (layer " + std::to_string(*layer) + ")";
  return where;
}

std::string rounded(double value) {
  return formatExactDouble(std::round(value * 100) / 100);
}

struct WaferPlanBatch : cgpt::wafer::impl::WaferPlanBatchBase<WaferPlanBatch> {
  void runOnOperation() override {
    getOperation().walk([&](DeviceOp device) {
      if (failed(plan(device)))
        signalPassFailure();
    });
  }

  LogicalResult plan(DeviceOp device);
};

/// Of the candidates, the one that fits and predicts the most samples per
/// second; on a tie, the larger micro-batch, then the earlier policy.
const Candidate *best(ArrayRef<Candidate> candidates) {
  const Candidate *chosen = nullptr;
  for (const Candidate &c : candidates) {
    if (!c.fits)
      continue;
    if (!chosen || c.cost.samplesPerSecond > chosen->cost.samplesPerSecond ||
        (c.cost.samplesPerSecond == chosen->cost.samplesPerSecond &&
         c.microBatch > chosen->microBatch))
      chosen = &c;
  }
  return chosen;
}

/// Of the candidates, the one that needs the least memory per core.
const Candidate &leanest(ArrayRef<Candidate> candidates) {
  const Candidate *lean = &candidates.front();
  for (const Candidate &c : candidates)
    if (c.peak.memory.total() < lean->peak.memory.total())
      lean = &c;
  return *lean;
}

LogicalResult WaferPlanBatch::plan(DeviceOp device) {
  FailureOr<ExecutionModel> model = ExecutionModel::build(device);
  if (failed(model))
    return failure();
  const target::WaferTargetModel &target = model->getTarget();

  int64_t serverBytes = device.getParameters() * kServerBytesPerParameter;
  auto capacity = static_cast<int64_t>(target.getWeightServerCapacityBytes());
  if (serverBytes > capacity)
    return device.emitOpError()
           << "needs " << formatGrouped(serverBytes)
           << " B on the weight servers (" << kServerBytesPerParameter
           << " B for each of " << formatGrouped(device.getParameters())
           << " parameters: f32 weights and two Adam moments), but target '"
           << device.getTarget() << "' holds " << formatGrouped(capacity)
           << " B: " << formatGrouped(serverBytes - capacity) << " B short";

  int64_t perSystem = device.getPerSystemBatch();
  int64_t sram = target.getCoreSramBytes();
  auto request = device.getMicroBatchRequest();
  std::vector<CheckpointPolicy> policies =
      CheckpointPolicy::candidates(model->getLayers());
  // Every policy at one micro-batch; only one that fits is worth a
  // simulated step (one that does not is never chosen nor shown with a
  // rate).
  auto evaluate = [&](int64_t micro) {
    SmallVector<Candidate> candidates;
    for (CheckpointPolicy policy : policies) {
      Candidate c{micro, policy, model->memoryPeak(micro, policy), {}, false};
      c.fits = c.peak.memory.total() <= sram;
      if (c.fits)
        c.cost = model->estimate(micro, policy);
      candidates.push_back(c);
    }
    return candidates;
  };
  auto tooBig = [&](const Candidate &c, StringRef what) {
    InFlightDiagnostic diag =
        c.peak.region.emitOpError()
        << what << " " << c.microBatch
        << " does not fit with any checkpoint policy: even with '"
        << c.policy.str() << "', " << describeRegion(c.peak.region)
        << " needs " << formatGrouped(c.peak.memory.total())
        << " B per core; the core has " << formatGrouped(sram) << " B, "
        << formatGrouped(c.peak.memory.total() - sram) << " B short";
    diag.attachNote() << "memory map per core: " << c.peak.memory.describe();
    return diag;
  };

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
    SmallVector<Candidate> candidates = evaluate(micro);
    const Candidate *fitting = best(candidates);
    if (!fitting)
      return tooBig(leanest(candidates),
                    fixed ? "micro-batch" : "the whole per-system batch of");
    chosen = *fitting;
    reason = (fixed ? "as given" : "none: the whole per-system batch") +
             std::string(", checkpoints '") + chosen.policy.str() +
             "', the fastest policy that fits";
    break;
  }
  case MicroBatchMode::automatic:
  case MicroBatchMode::explore: {
    bool explore = request.getMode() == MicroBatchMode::explore;
    int64_t low = explore ? request.getMin() : 0;
    int64_t high = explore && request.getMax() ? request.getMax() : perSystem;
    SmallVector<Candidate> all;
    // Per micro-batch: its best fitting policy, or its leanest.
    SmallVector<Candidate> rows;
    for (int64_t d = 1; d <= perSystem; ++d) {
      if (perSystem % d != 0 || d < low || d > high)
        continue;
      SmallVector<Candidate> candidates = evaluate(d);
      const Candidate *fitting = best(candidates);
      rows.push_back(fitting ? *fitting : leanest(candidates));
      all.append(candidates.begin(), candidates.end());
    }
    if (rows.empty())
      return device.emitOpError()
             << "no divisor of the per-system batch " << perSystem
             << " lies in the explore range " << low << ".." << high;
    if (explore) {
      SmallVector<Attribute> explored;
      for (const Candidate &c : rows)
        explored.push_back(CandidateAttr::get(
            &getContext(), c.microBatch, c.policy.toAttr(&getContext()),
            c.fits, c.peak.memory.total(),
            APFloat(c.fits ? c.cost.samplesPerSecond : 0.0)));
      device.setExploredAttr(ArrayAttr::get(&getContext(), explored));
    }
    const Candidate *fitting = best(rows);
    if (!fitting)
      return tooBig(leanest(all), "even micro-batch");
    chosen = *fitting;
    reason = (explore ? "explore" : "auto") + std::string(": of ") +
             std::to_string(rows.size()) + " divisors of " +
             std::to_string(perSystem) + " and " +
             std::to_string(policies.size()) + " checkpoint policies, " +
             std::to_string(chosen.microBatch) + " with '" +
             chosen.policy.str() +
             "' fits and predicts the most samples per second";
    auto larger = llvm::find_if(rows, [&](const Candidate &c) {
      return c.microBatch > chosen.microBatch && !c.fits;
    });
    if (larger != rows.end())
      reason += "; " + std::to_string(larger->microBatch) + " needs " +
                formatGrouped(larger->peak.memory.total()) +
                " B per core even with '" + larger->policy.str() + "', in " +
                describeRegion(larger->peak.region);
    break;
  }
  }
  reason += llvm::formatv(" (SRAM peak {0} of {1} B per core, {2} "
                          "samples/s predicted)",
                          formatGrouped(chosen.peak.memory.total()),
                          formatGrouped(sram),
                          rounded(chosen.cost.samplesPerSecond))
                .str();

  Builder builder(&getContext());
  device.setMicroBatch(chosen.microBatch);
  device.setGradAccumSteps(perSystem / chosen.microBatch);
  device.setCheckpointAttr(chosen.policy.toAttr(&getContext()));
  device.setPlanAttr(builder.getStringAttr(reason));
  return success();
}

struct WaferCheckMemory
    : cgpt::wafer::impl::WaferCheckMemoryBase<WaferCheckMemory> {
  void runOnOperation() override {
    getOperation().walk([&](DeviceOp device) {
      if (device.getMicroBatch() == 0 || !device.getCheckpoint()) {
        device.emitOpError() << "is not planned; run wafer-plan-batch "
                                "before wafer-check-memory";
        return signalPassFailure();
      }
      FailureOr<ExecutionModel> model = ExecutionModel::build(device);
      if (failed(model))
        return signalPassFailure();
      int64_t sram = model->getTarget().getCoreSramBytes();
      int64_t micro = device.getMicroBatch();
      CheckpointPolicy policy =
          CheckpointPolicy::fromAttr(*device.getCheckpoint());
      Builder builder(&getContext());
      std::vector<std::vector<CoreMemory>> memories =
          model->memories(micro, policy);
      size_t stageIndex = 0;
      for (auto stage : device.getBody().front().getOps<StageOp>()) {
        size_t index = 0;
        for (auto region : stage.getBody().front().getOps<RegionOp>()) {
          const CoreMemory &memory = memories[stageIndex][index++];
          if (memory.total() <= sram) {
            region.setSramBytesAttr(builder.getI64IntegerAttr(memory.total()));
            continue;
          }
          InFlightDiagnostic diag =
              region.emitOpError()
              << "needs " << formatGrouped(memory.total())
              << " B per core at micro-batch " << micro << " with checkpoints '"
              << policy.str() << "', over the " << formatGrouped(sram)
              << " B of SRAM a core of target '" << device.getTarget()
              << "' has";
          diag.attachNote() << "memory map per core: " << memory.describe();
          signalPassFailure();
        }
        ++stageIndex;
      }
    });
  }
};

} // namespace
