//===- Simulator.cpp - event-driven simulation of a training step ---------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Simulator.h"

#include "cgpt/Support/Format.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace cgpt::wafer;

namespace cgpt::sim {
namespace {

/// What a stage costs, computed once and reused for every pass.
struct StagePlan {
  std::string name;
  std::optional<int64_t> layer;
  struct Region {
    std::string track; // the kernel class: "matmul"
    std::string label; // "h.0.forward @matmul.1"
    double busy;       // computing all its waves
    double firstWave;  // its first wave, after which consumers can start
    /// Incoming flows: producer index, whole transfer, first-byte latency.
    SmallVector<std::tuple<size_t, double, double>> inputs;
    bool readsWeights = false;
  };
  std::vector<Region> regions;
  double weightBytesIn = 0;
  /// (region index, bytes) of each gradient leaving.
  SmallVector<std::pair<size_t, double>> gradients;
  int64_t events = 0;
};

/// The costs of `stage` at `microBatch`. Fails, naming the flow, when a
/// flow does not run forward in the order the regions are listed: the
/// simulator runs a stage's regions in that (dataflow) order.
FailureOr<StagePlan> planStage(StageOp stage,
                               const target::WaferTargetModel &target,
                               int64_t microBatch) {
  StagePlan plan{stage.getSymName().str(), stage.getLayer(), {}, 0, {}, 0};
  llvm::DenseMap<StringAttr, size_t> index;
  for (auto region : stage.getBody().front().getOps<RegionOp>()) {
    double busy = regionSeconds(region, target, microBatch);
    index[region.getSymNameAttr()] = plan.regions.size();
    plan.regions.push_back({region.getKernel().split('.').second.str(),
                            plan.name + " @" + region.getSymName().str(),
                            busy,
                            busy / regionWaves(region, microBatch),
                            {},
                            false});
  }
  for (Operation &op : stage.getBody().front()) {
    if (auto flow = dyn_cast<FlowOp>(op)) {
      size_t source = index[flow.getSourceAttr().getAttr()];
      size_t dest = index[flow.getDestAttr().getAttr()];
      if (source >= dest)
        return flow.emitOpError()
               << "runs from " << flow.getSourceAttr() << " back to "
               << flow.getDestAttr()
               << ", which is listed before it; a stage's flows must follow "
                  "the order of its regions";
      plan.regions[dest].inputs.push_back(
          {source, flowSeconds(flow, stage, target, microBatch),
           flowLatencySeconds(flow, target)});
    } else if (auto ingress = dyn_cast<IngressOp>(op)) {
      plan.weightBytesIn += static_cast<double>(ingress.getBytes());
      plan.regions[index[ingress.getDestAttr().getAttr()]].readsWeights = true;
    } else if (auto egress = dyn_cast<EgressOp>(op)) {
      plan.gradients.push_back({index[egress.getSourceAttr().getAttr()],
                                static_cast<double>(egress.getBytes())});
    }
  }
  plan.events =
      static_cast<int64_t>(stage.getBody().front().getOperations().size());
  return plan;
}

/// The two directions of a system's I/O: weights (and token ids) come in
/// while gradients go out; each is busy until its last transfer ends.
struct Channels {
  double inFree = 0;
  double outFree = 0;
};

struct PassRecorder {
  bool record;
  SimulationResult &result;
};

/// Runs one stage from `start`; returns its end. The stage's weights may
/// stream in from `prefetchFrom` (while the stage before computes).
double runStage(const StagePlan &plan, double start, double prefetchFrom,
                double tokenBytes, double inRate, double outRate, Channels &io,
                PassRecorder &recorder) {
  double weightsStart = std::max(io.inFree, prefetchFrom);
  double weightsEnd = weightsStart + (plan.weightBytesIn + tokenBytes) / inRate;
  io.inFree = weightsEnd;

  SmallVector<std::pair<double, double>> spans; // start, end per region
  double end = start, slowestBusy = 0, slowestFlow = 0;
  for (const StagePlan::Region &region : plan.regions) {
    double begin = start, finish = 0;
    for (auto [producer, transfer, latency] : region.inputs) {
      auto [producerStart, producerEnd] = spans[producer];
      double producerFirst = plan.regions[producer].firstWave;
      // Start on the producer's first wave; finish after its last wave and
      // after the whole stream has crossed.
      begin = std::max(begin, producerStart + producerFirst + latency);
      finish = std::max({finish, producerEnd + region.firstWave + latency,
                         producerStart + transfer});
      slowestFlow = std::max(slowestFlow, transfer);
    }
    if (region.readsWeights)
      finish = std::max(finish, weightsEnd);
    finish = std::max(finish, begin + region.busy);
    slowestBusy = std::max(slowestBusy, region.busy);
    spans.push_back({begin, finish});
    end = std::max(end, finish);
    if (recorder.record)
      recorder.result.trace.push_back(
          {region.track, region.label, begin, finish - begin});
  }
  for (auto [producer, bytes] : plan.gradients) {
    double outStart = std::max(io.outFree, spans[producer].second);
    io.outFree = outStart + bytes / outRate;
    if (recorder.record)
      recorder.result.trace.push_back(
          {"gradients out", plan.name, outStart, bytes / outRate});
  }
  if (recorder.record) {
    if (weightsEnd > weightsStart)
      recorder.result.trace.push_back(
          {"weights in", plan.name, weightsStart, weightsEnd - weightsStart});
    // What held the stage up: the longest of its parts.
    std::pair<double, const char *> parts[] = {
        {slowestBusy, "compute"},
        {slowestFlow, "fabric"},
        {weightsEnd - start, "weights in"}};
    auto bound = std::max_element(
        std::begin(parts), std::end(parts),
        [](const auto &a, const auto &b) { return a.first < b.first; });
    recorder.result.stages.push_back(
        {plan.name, plan.layer, start, end, bound->second});
  }
  return end;
}

} // namespace

double reduceSeconds(const target::WaferTargetModel &target, int64_t systems,
                     double bytes) {
  if (systems <= 1)
    return 0;
  double levels = std::ceil(std::log2(static_cast<double>(systems)));
  return levels * target.getReduceLevelLatencySeconds() +
         bytes / target.getReduceBytesPerSecond();
}

/// Runs `passes` micro-batch passes of `microBatch` sequences on one
/// system, then the reduce and the optimizer; records the first pass's
/// stages and timeline when `record` is set.
static FailureOr<SimulationResult>
simulate(DeviceOp device, const target::WaferTargetModel &target,
         int64_t microBatch, int64_t passes, bool record) {
  std::vector<StagePlan> stages;
  SimulationResult result;
  result.numCsx = device.getNumCsx();
  result.passes = passes;
  int64_t eventsPerPass = 0;
  for (auto stage : device.getBody().front().getOps<StageOp>()) {
    FailureOr<StagePlan> plan = planStage(stage, target, microBatch);
    if (failed(plan))
      return failure();
    stages.push_back(std::move(*plan));
    eventsPerPass += stages.back().events;
  }
  if (eventsPerPass * result.passes > kMaxEvents)
    return device.emitOpError()
           << "would take " << formatGrouped(eventsPerPass * result.passes)
           << " events to simulate (" << formatGrouped(result.passes)
           << " passes of " << formatGrouped(eventsPerPass)
           << "); the limit is " << formatGrouped(kMaxEvents)
           << ": use a larger micro-batch (--micro-batch-size) or more "
              "systems (--num-csx) for fewer passes";

  // Weights come from the weight servers through the broadcast tree: each
  // system receives them at the slower of its I/O and the servers.
  double inRate = std::min(target.getIoBytesPerSecond(),
                           target.getWeightServerBytesPerSecond());
  double outRate = target.getIoBytesPerSecond();
  // Token ids and labels (i32) from the activation workers, each pass.
  double tokenBytes = 2.0 * 4 * microBatch * device.getSeqLen();

  Channels io;
  double time = 0;
  for (int64_t pass = 0; pass < result.passes; ++pass) {
    PassRecorder recorder{record && pass == 0, result};
    double passStart = time, prefetchFrom = time;
    for (auto [i, stage] : llvm::enumerate(stages)) {
      double stageStart = time;
      time = runStage(stage, stageStart, prefetchFrom, i == 0 ? tokenBytes : 0,
                      inRate, outRate, io, recorder);
      prefetchFrom = stageStart;
    }
    if (pass == 0)
      result.firstPassSeconds = time - passStart;
  }
  if (record && result.passes > 1)
    result.trace.push_back(
        {"passes", "passes 2 to " + std::to_string(result.passes),
         result.firstPassSeconds, time - result.firstPassSeconds});
  result.systemSeconds = std::max(time, io.outFree);

  // The last stage's gradients are the last to reach the reduce tree; the
  // earlier ones were reduced while later stages ran. The optimizer then
  // updates what the next step reads first: the tensors whose gradients
  // came last. The servers read and write f32 weights and both Adam
  // moments: 24 bytes per parameter.
  double lastGradients = 0, allGradients = 0;
  for (auto [producer, bytes] : stages.back().gradients)
    lastGradients += bytes;
  for (const StagePlan &stage : stages)
    for (auto [producer, bytes] : stage.gradients)
      allGradients += bytes;
  result.reduceSeconds = reduceSeconds(target, result.numCsx, lastGradients);
  double lastParameters =
      allGradients > 0 ? lastGradients / allGradients * device.getParameters()
                       : 0;
  result.optimizerSeconds =
      lastParameters * 24 / target.getWeightServerBytesPerSecond();
  if (record && result.reduceSeconds > 0)
    result.trace.push_back({"reduce", "gradients across systems",
                            result.systemSeconds, result.reduceSeconds});
  if (record)
    result.trace.push_back({"optimizer", "AdamW on the weight servers",
                            result.systemSeconds + result.reduceSeconds,
                            result.optimizerSeconds});
  result.stepSeconds =
      result.systemSeconds + result.reduceSeconds + result.optimizerSeconds;
  return result;
}

FailureOr<SimulationResult>
simulateStep(DeviceOp device, const target::WaferTargetModel &target) {
  if (device.getMicroBatch() == 0)
    return device.emitOpError()
           << "is not planned; the runtime needs the placed, planned wafer "
              "IR of cgpt-lower-to-wafer";
  // Every op must be one the timing model knows; regions must be placed.
  for (Operation &op : device.getBody().front()) {
    auto stage = dyn_cast<StageOp>(op);
    if (!stage)
      return op.emitOpError()
             << "is not a wafer.stage; the runtime cannot model it";
    for (Operation &inner : stage.getBody().front()) {
      if (!isa<RegionOp, FlowOp, IngressOp, EgressOp>(inner))
        return inner.emitOpError()
               << "in stage @" << stage.getSymName()
               << " is not a region, flow, ingress or egress; the runtime "
                  "cannot model it";
      if (auto region = dyn_cast<RegionOp>(inner);
          region && !region.getPlacementAttr())
        return region.emitOpError()
               << "is not placed; the runtime needs the placed, planned "
                  "wafer IR of cgpt-lower-to-wafer";
    }
  }

  return simulate(device, target, device.getMicroBatch(),
                  device.getGradAccumSteps(), /*record=*/true);
}

FailureOr<StepCost> stepCost(DeviceOp device,
                             const target::WaferTargetModel &target,
                             int64_t microBatch) {
  StepCost cost;
  cost.passes = device.getPerSystemBatch() / microBatch;
  // One pass has no more events than the device has ops: within the limit.
  FailureOr<SimulationResult> onePass =
      simulate(device, target, microBatch, /*passes=*/1, /*record=*/false);
  if (failed(onePass))
    return failure();
  cost.passSeconds = onePass->firstPassSeconds;
  cost.stepSeconds = onePass->stepSeconds +
                     static_cast<double>(cost.passes - 1) * cost.passSeconds;
  cost.samplesPerSecond =
      static_cast<double>(device.getGlobalBatch()) / cost.stepSeconds;
  return cost;
}

} // namespace cgpt::sim
