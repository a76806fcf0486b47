//===- PlanBatch.cpp - wafer-plan-batch -----------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/Analysis/MemoryModel.h"
#include "cgpt/Dialect/Wafer/Analysis/Placer.h"
#include "cgpt/Dialect/Wafer/Analysis/Schedule.h"
#include "cgpt/Dialect/Wafer/Transforms/Passes.h"
#include "cgpt/Support/Debug.h"
#include "cgpt/Support/Format.h"
#include "cgpt/Support/MicroBatches.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#define DEBUG_TYPE "wafer-plan-batch"

namespace cgpt::wafer {
#define GEN_PASS_DEF_WAFERPLANBATCH
#include "cgpt/Dialect/Wafer/Transforms/Passes.h.inc"
} // namespace cgpt::wafer

using namespace mlir;
using namespace cgpt;
using namespace cgpt::wafer;
using cgpt::training::MicroBatchMode;

namespace {

/// One (micro-batch, placer, checkpoint policy) the planner weighed.
struct Candidate {
  int64_t microBatch = 0;
  std::string placer;
  CheckpointPolicy policy;
  MemoryPeak peak;
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

/// Of the candidates, the one that fits and predicts the most samples per
/// second; on a tie, the larger micro-batch, then the earlier placer and
/// policy.
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

/// Weighs micro-batches, placers and checkpoint policies for one device.
class Planner {
public:
  Planner(const StepProgram &program,
          std::vector<std::unique_ptr<Placer>> placers)
      : program(program), scheduler(program), placers(std::move(placers)),
        streamingPolicies(CheckpointPolicy::candidates(program.getLayers())) {}

  /// Every placer and policy at `microBatch`, in that order: only a
  /// placement that fits is worth a scheduled step (one that does not is
  /// never chosen nor shown with a rate).
  SmallVector<Candidate> evaluate(int64_t microBatch) {
    SmallVector<Candidate> candidates;
    for (const std::unique_ptr<Placer> &placer : placers) {
      std::string whyNot;
      std::optional<Placement> placement =
          placer->place(program, microBatch, whyNot);
      if (!placement) {
        CGPT_DEBUG(CGPT_DBGS()
                   << "micro-batch " << microBatch << ", " << placer->getName()
                   << ": cannot place: " << whyNot << "\n");
        refusals[placer->getName().str()] = whyNot;
        continue;
      }
      // Timed once; each policy changes only the sum blocks of a few
      // weight kernels, which are timed again.
      PlacedMemory memory(program, *placement, microBatch);
      std::optional<TimedPlacement> timed;
      // The sum blocks `timed` has: a policy's that equal them are not set
      // again, sparing a walk over the placement.
      std::vector<PlacedMemory::SumBlock> timedBlocks;
      for (CheckpointPolicy policy : policiesOf(placer->getMode())) {
        // What the policy leaves each core decides how the weight kernels
        // block their sums, and so their time.
        MemoryPeak peak;
        std::vector<PlacedMemory::SumBlock> blocks =
            memory.sumBlocks(policy, &peak);
        Candidate c{microBatch, placer->getName().str(), policy, peak, {},
                    false};
        c.fits =
            c.peak.memory.total() <= program.getTarget().getCoreSramBytes();
        if (c.fits) {
          if (!timed)
            timed = TimedPlacement::of(program, *placement, microBatch);
          for (auto [i, block] : llvm::enumerate(blocks))
            if (timedBlocks.empty() || !(timedBlocks[i].layout == block.layout))
              timed->setLayout(program, block.stage, block.region,
                               block.layout);
          timedBlocks = std::move(blocks);
          c.cost = scheduler.estimate(*timed, policy);
        }
        CGPT_DEBUG({
          CGPT_DBGS() << "micro-batch " << microBatch << ", " << c.placer
                      << ", " << policy.str() << ": SRAM peak "
                      << c.peak.memory.total() << " of "
                      << program.getTarget().getCoreSramBytes()
                      << " B per core in @" << c.peak.region.getSymName();
          if (c.fits)
            llvm::dbgs() << ", "
                         << llvm::formatv("{0:f2}", c.cost.samplesPerSecond)
                         << " samples/s\n";
          else
            llvm::dbgs() << ", does not fit\n";
        });
        candidates.push_back(c);
      }
    }
    return candidates;
  }

  size_t numPlacers() const { return placers.size(); }
  size_t numPolicies() const { return streamingPolicies.size(); }
  /// Why each placer that could not place the step could not.
  const std::map<std::string, std::string> &getRefusals() const {
    return refusals;
  }

private:
  /// Layer pipelining keeps its micro-batches' checkpoints in flight on
  /// the wafer: it has no other policy.
  std::vector<CheckpointPolicy> policiesOf(ExecutionMode mode) const {
    if (mode == ExecutionMode::layer_pipelined)
      return {CheckpointPolicy{}};
    return streamingPolicies;
  }

  const StepProgram &program;
  StepScheduler scheduler;
  std::vector<std::unique_ptr<Placer>> placers;
  std::vector<CheckpointPolicy> streamingPolicies;
  std::map<std::string, std::string> refusals;
};

struct WaferPlanBatch : cgpt::wafer::impl::WaferPlanBatchBase<WaferPlanBatch> {
  using WaferPlanBatchBase::WaferPlanBatchBase;

  void runOnOperation() override {
    if (failed(plan(getOperation())))
      signalPassFailure();
  }

  LogicalResult plan(DeviceOp device);
};

LogicalResult WaferPlanBatch::plan(DeviceOp device) {
  FailureOr<StepProgram> program = StepProgram::build(device);
  if (failed(program))
    return failure();
  const target::WaferTargetModel &target = program->getTarget();

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

  auto request = device.getMicroBatchRequest();
  bool explore = request.getMode() == MicroBatchMode::explore;
  std::vector<std::unique_ptr<Placer>> placers;
  if (placer == "auto") {
    for (StringRef name : explore ? getPlacerNames() : getDefaultPlacerNames())
      placers.push_back(createPlacer(name));
  } else if (std::unique_ptr<Placer> named = createPlacer(placer)) {
    placers.push_back(std::move(named));
  } else {
    return device.emitOpError()
           << "cannot be planned with unknown placer '" << placer
           << "'; the placers are auto, " << llvm::join(getPlacerNames(), ", ");
  }
  Planner planner(*program, std::move(placers));

  int64_t perSystem = device.getPerSystemBatch();
  int64_t sram = target.getCoreSramBytes();
  // ", 2 placers and 10 checkpoint policies", or " and 10 checkpoint
  // policies" for one placer.
  std::string weighed =
      (planner.numPlacers() > 1
           ? ", " + std::to_string(planner.numPlacers()) + " placers and "
           : std::string(" and ")) +
      std::to_string(planner.numPolicies()) + " checkpoint policies";
  auto tooBig = [&](ArrayRef<Candidate> candidates,
                    StringRef what) -> LogicalResult {
    if (candidates.empty()) {
      InFlightDiagnostic diag = device.emitOpError() << "cannot be placed: ";
      llvm::interleave(
          planner.getRefusals(), diag,
          [&](const auto &refusal) {
            diag << "the " << refusal.first << " placer: " << refusal.second;
          },
          "; ");
      return diag;
    }
    Candidate c = leanest(candidates);
    InFlightDiagnostic diag =
        c.peak.region.emitOpError()
        << what << " " << c.microBatch
        << " does not fit with any checkpoint policy: even with '"
        << c.policy.str() << "' on the " << c.placer << " placer, "
        << describeRegion(c.peak.region) << " needs "
        << formatGrouped(c.peak.memory.total()) << " B per core; the core has "
        << formatGrouped(sram) << " B, "
        << formatGrouped(c.peak.memory.total() - sram) << " B short";
    diag.attachNote() << "memory map per core: " << c.peak.memory.describe();
    return diag;
  };

  Candidate chosen;
  std::string reason;
  SmallVector<Candidate> weighedAtChosen;
  switch (request.getMode()) {
  case MicroBatchMode::fixed:
  case MicroBatchMode::none: {
    bool fixed = request.getMode() == MicroBatchMode::fixed;
    int64_t requested = fixed ? request.getSize() : perSystem;
    // As Model Zoo 2.5+ does: the fewest passes of at most the request,
    // then sizes as even as they go.
    int64_t micro = PassSplit::atMost(perSystem, requested).microBatch;
    SmallVector<Candidate> candidates = planner.evaluate(micro);
    const Candidate *fitting = best(candidates);
    if (!fitting)
      return tooBig(candidates,
                    fixed ? "micro-batch" : "the whole per-system batch of");
    chosen = *fitting;
    weighedAtChosen = candidates;
    reason = !fixed ? "none: the whole per-system batch"
             : micro == requested
                 ? std::string("as given")
                 : llvm::formatv("{0} requested, {1} run: the fewest passes "
                                 "of at most {0} split {2} evenly",
                                 requested, micro, perSystem)
                       .str();
    reason += ", checkpoints '" + chosen.policy.str() + "' on the " +
              chosen.placer + " placer, the fastest that fits";
    break;
  }
  case MicroBatchMode::automatic:
  case MicroBatchMode::explore: {
    int64_t low = explore ? request.getMin() : 0;
    int64_t high = explore && request.getMax() ? request.getMax() : perSystem;
    SmallVector<Candidate> all;
    // Per micro-batch and placer: its best fitting policy, or its leanest.
    SmallVector<Candidate> rows;
    int64_t splits = 0;
    for (int64_t size : evenMicroBatches(perSystem)) {
      if (size < low || size > high)
        continue;
      ++splits;
      SmallVector<Candidate> candidates = planner.evaluate(size);
      for (auto begin = candidates.begin(); begin != candidates.end();) {
        auto end =
            std::find_if(begin, candidates.end(), [&](const Candidate &c) {
              return c.placer != begin->placer;
            });
        ArrayRef<Candidate> ofPlacer(&*begin, end - begin);
        const Candidate *fitting = best(ofPlacer);
        rows.push_back(fitting ? *fitting : leanest(ofPlacer));
        begin = end;
      }
      all.append(candidates.begin(), candidates.end());
    }
    if (!splits)
      return device.emitOpError()
             << "no even split of the per-system batch " << perSystem
             << " has its largest micro-batch in the explore range " << low
             << ".." << high;
    if (explore) {
      SmallVector<Attribute> explored;
      for (const Candidate &c : rows)
        explored.push_back(CandidateAttr::get(
            &getContext(), c.microBatch, c.placer,
            c.policy.toAttr(&getContext()), c.fits, c.peak.memory.total(),
            APFloat(c.fits ? c.cost.samplesPerSecond : 0.0)));
      device.setExploredAttr(ArrayAttr::get(&getContext(), explored));
    }
    const Candidate *fitting = best(rows);
    if (!fitting)
      return tooBig(all, "even micro-batch");
    chosen = *fitting;
    weighedAtChosen = rows;
    reason = (explore ? "explore" : "auto") + std::string(": of ") +
             std::to_string(splits) + " even splits of " +
             std::to_string(perSystem) + weighed + ", " +
             std::to_string(chosen.microBatch) + " with '" +
             chosen.policy.str() + "' on the " + chosen.placer +
             " placer fits and predicts the most samples per second";
    auto larger = llvm::find_if(rows, [&](const Candidate &c) {
      return c.microBatch > chosen.microBatch && !c.fits &&
             c.placer == chosen.placer;
    });
    if (larger != rows.end())
      reason += "; " + std::to_string(larger->microBatch) + " needs " +
                formatGrouped(larger->peak.memory.total()) +
                " B per core even with '" + larger->policy.str() + "', in " +
                describeRegion(larger->peak.region);
    break;
  }
  }
  // Why this placer: the best the others predict.
  for (const Candidate &c : weighedAtChosen) {
    if (c.placer == chosen.placer)
      continue;
    const Candidate *other = nullptr;
    for (const Candidate &d : weighedAtChosen)
      if (d.placer == c.placer && d.fits &&
          (!other || d.cost.samplesPerSecond > other->cost.samplesPerSecond))
        other = &d;
    std::string said = "; the " + c.placer + " placer: ";
    if (reason.find(said) != std::string::npos)
      continue;
    reason += said + (other ? rounded(other->cost.samplesPerSecond) +
                                  " samples/s at best"
                            : std::string("does not fit"));
  }
  for (const auto &[name, whyNot] : planner.getRefusals())
    reason += "; the " + name + " placer cannot place it: " + whyNot;
  reason +=
      llvm::formatv(" (SRAM peak {0} of {1} B per core, {2} "
                    "samples/s predicted)",
                    formatGrouped(chosen.peak.memory.total()),
                    formatGrouped(sram), rounded(chosen.cost.samplesPerSecond))
          .str();

  Builder builder(&getContext());
  CGPT_DEBUG(CGPT_DBGS() << "@" << device.getSymName() << ": micro-batch "
                         << chosen.microBatch << " on the " << chosen.placer
                         << " placer with '" << chosen.policy.str()
                         << "': " << reason << "\n");
  device.setMicroBatch(chosen.microBatch);
  device.setGradAccumSteps(
      PassSplit::atMost(perSystem, chosen.microBatch).passes);
  device.setCheckpointAttr(chosen.policy.toAttr(&getContext()));
  device.setPlacerAttr(builder.getStringAttr(chosen.placer));
  device.setPlanAttr(builder.getStringAttr(reason));
  // Each routed kernel's passes are laid out for the expected load of the
  // most loaded expert at the chosen micro-batch: stated in the IR, so that
  // what runs is what was planned.
  device.walk([&](RegionOp region) {
    KernelShape shape = shapeOf(region);
    if (shape.experts < 2)
      return;
    shape.expertRows = 0;
    KernelShape pass = expertPass(shape, chosen.microBatch);
    region.setExpertRowsAttr(builder.getI64IntegerAttr(
        shape.kind == KernelKind::weight_grad ? pass.contracted : pass.rows));
  });
  return success();
}

} // namespace
