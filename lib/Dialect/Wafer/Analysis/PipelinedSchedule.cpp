//===- PipelinedSchedule.cpp - a layer-pipelined step as a timeline -------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Under layer-pipelined execution every slot (the embedding, each layer,
// the loss) holds its weights on its own rectangle and all slots work at
// once: micro-batches flow forward through the slots and back, one forward
// and one backward at a time in each slot. A step takes the pipeline's
// fill and drain plus one slowest slot per further micro-batch; the
// weights arrive once per step, and each slot's summed gradients leave once
// its last backward is done (docs/runtime.md).
//
//===----------------------------------------------------------------------===//

#include "ScheduleTail.h"

namespace cgpt::wafer {

StepEstimate detail::estimatePipelinedStep(const StepProgram &program,
                                           const TimedPlacement &timed,
                                           ScheduleObserver *observer) {
  const target::WaferTargetModel &t = program.getTarget();
  double clock = t.getClockHz();
  Cluster cluster = Cluster::of(t, program.getNumCsx());
  const Placement &placement = timed.placement;
  llvm::ArrayRef<ProgramStage> stages = program.getStages();
  auto numSlots = static_cast<size_t>(placement.numSlots());

  // Per stage: its time for one micro-batch (waves one after another, the
  // regions of a wave at once) and its slowest region's bound.
  auto stageSecondsOf = [&](const std::vector<std::vector<KernelTime>> &times,
                            std::vector<const char *> *bounds) {
    std::vector<double> seconds(stages.size());
    for (size_t s = 0; s < stages.size(); ++s) {
      double waveLongest = 0, slowest = 0;
      for (size_t r = 0; r < stages[s].regions.size(); ++r) {
        if (r > 0 &&
            placement.regions[s][r].wave != placement.regions[s][r - 1].wave) {
          seconds[s] += waveLongest;
          waveLongest = 0;
        }
        double regionSeconds = times[s][r].cycles() / clock;
        waveLongest = std::max(waveLongest, regionSeconds);
        if (bounds && regionSeconds > slowest) {
          slowest = regionSeconds;
          (*bounds)[s] = times[s][r].bound();
        }
      }
      seconds[s] += waveLongest;
    }
    return seconds;
  };
  std::vector<const char *> stageBound(stages.size(), "compute");
  std::vector<double> stageSeconds = stageSecondsOf(timed.times, &stageBound);
  // The slowest slot's forward and backward of one micro-batch: what each
  // further micro-batch adds once the pipeline is full.
  auto slowestSlotOf = [&](llvm::ArrayRef<double> seconds) {
    std::vector<double> perSlot(numSlots);
    for (size_t s = 0; s < stages.size(); ++s)
      perSlot[static_cast<size_t>(*placement.slots[s])] += seconds[s];
    return *std::max_element(perSlot.begin(), perSlot.end());
  };
  // Per slot: forward (the loss turn-around counts as the forward of its
  // slot) and backward time per micro-batch, resident weights, and the
  // gradients it sums over the step.
  std::vector<double> forward(numSlots), backward(numSlots);
  std::vector<double> weights(numSlots), gradients(numSlots);
  for (auto [s, stage] : llvm::enumerate(stages)) {
    auto slot = static_cast<size_t>(*placement.slots[s]);
    (stage.phase == "backward" ? backward : forward)[slot] += stageSeconds[s];
    weights[slot] =
        std::max(weights[slot], static_cast<double>(stage.weightBytes));
    for (const ProgramRegion &region : stage.regions)
      gradients[slot] += static_cast<double>(region.egressBytes);
  }

  StepEstimate estimate;
  const PassSplit &split = timed.split;
  estimate.passes = split.passes;
  // The weights arrive once per step, slot by slot, after the tree's
  // latency; a slot's first forward waits for its weights.
  double inFree = cluster.treeLatency, fill = 0, sumCycle = 0;
  std::vector<double> arrived(numSlots), forwardStart(numSlots);
  for (size_t p = 0; p < numSlots; ++p) {
    double start = inFree;
    inFree += weights[p] / cluster.inRate;
    arrived[p] = inFree;
    if (observer && inFree > start)
      observer->interval("weights in", "slot " + std::to_string(p), start,
                         inFree - start, {0, weights[p]});
    forwardStart[p] = std::max(fill, arrived[p]);
    fill = forwardStart[p] + forward[p];
    sumCycle += forward[p] + backward[p];
  }
  double sumForward = 0;
  for (double f : forward)
    sumForward += f;
  // What waiting for weights added to the first micro-batch's way in.
  double delay = fill - sumForward;
  estimate.firstPassSeconds = delay + sumCycle;
  // The full micro-batches first, then the short ones of an uneven split.
  double passesEnd =
      estimate.firstPassSeconds +
      static_cast<double>(split.fullPasses - 1) * slowestSlotOf(stageSeconds);
  if (!split.isEven())
    passesEnd += static_cast<double>(split.shortPasses()) *
                 slowestSlotOf(stageSecondsOf(timed.shortTimes, nullptr));

  if (observer) {
    // The first micro-batch: forward through the slots, then back.
    double backwardAt = fill;
    std::vector<double> backwardStart(numSlots);
    for (size_t p = numSlots; p-- > 0;) {
      backwardStart[p] = backwardAt;
      backwardAt += backward[p];
    }
    for (auto [s, stage] : llvm::enumerate(stages)) {
      auto slot = static_cast<size_t>(*placement.slots[s]);
      bool isBackward = stage.phase == "backward";
      double start = isBackward ? backwardStart[slot] : forwardStart[slot];
      // Stages of a slot and direction run one after another.
      for (size_t other = 0; other < s; ++other)
        if (*placement.slots[other] == *placement.slots[s] &&
            (stages[other].phase == "backward") == isBackward)
          start += stageSeconds[other];
      for (auto [r, region] : llvm::enumerate(stage.regions))
        observer->interval(
            stringifyKernelKind(region.shape.kind),
            kernelIntervalName(stage.name, region.op.getSymName()), start,
            timed.times[s][r].cycles() / clock,
            {static_cast<double>(region.shape.flops) *
                 static_cast<double>(split.microBatch),
             0, timed.times[s][r].bound()});
      double ready =
          slot > 0 ? forwardStart[slot - 1] + forward[slot - 1] : 0.0;
      bool waited = !isBackward && arrived[slot] > ready;
      observer->stage({stage.name, stage.layer, stage.phase, start,
                       start + stageSeconds[s],
                       waited ? "weights in" : stageBound[s]});
    }
    if (estimate.passes > 1)
      observer->interval(
          "passes", "micro-batches 2 to " + std::to_string(estimate.passes),
          estimate.firstPassSeconds, passesEnd - estimate.firstPassSeconds, {});
  }

  // Each slot's gradients leave after its last backward; the last
  // micro-batch's backward reaches the first slot last.
  double outFree = 0, end = passesEnd;
  for (size_t p = 0; p + 1 < numSlots; ++p)
    end -= backward[p];
  std::vector<std::pair<double, double>> lastGradients;
  // From the last slot, whose last backward ends first.
  for (size_t p = numSlots; p-- > 0;) {
    if (p + 1 < numSlots)
      end += backward[p];
    if (gradients[p] > 0) {
      double outStart = std::max(outFree, end);
      outFree = outStart + gradients[p] / cluster.outRate;
      if (observer)
        observer->interval("gradients out", "slot " + std::to_string(p),
                           outStart, outFree - outStart, {0, gradients[p]});
      lastGradients.push_back({outFree + cluster.treeLatency, gradients[p]});
    }
  }
  finishStep(program, passesEnd, outFree, lastGradients, estimate, observer);
  return estimate;
}

} // namespace cgpt::wafer
