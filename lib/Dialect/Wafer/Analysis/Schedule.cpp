//===- Schedule.cpp - a placed step as a timeline -------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "ScheduleTail.h"
#include "cgpt/Support/Debug.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"

#define DEBUG_TYPE "wafer-schedule"

using namespace mlir;

namespace cgpt::wafer {

/// The weight servers read and write an f32 weight and two f32 Adam
/// moments per parameter, and read its f32 gradient: 28 bytes.
constexpr double kOptimizerBytesPerParameter = 28;

//===----------------------------------------------------------------------===//
// The cluster and the step's tail
//===----------------------------------------------------------------------===//

detail::Cluster detail::Cluster::of(const target::WaferTargetModel &t,
                                    int64_t systems) {
  Cluster cluster;
  // The broadcast/reduce tree between the weight servers and the systems.
  int64_t depth = 0;
  for (int64_t reach = 1; reach < systems; reach *= t.getReduceFanout())
    ++depth;
  cluster.treeLatency = depth * t.getReduceLevelLatencySeconds();
  cluster.inRate = std::min(
      {t.getIoBytesPerSecond(), t.getWeightServerBytesPerSecond(),
       systems > 1 ? t.getReduceBytesPerSecond() : t.getIoBytesPerSecond()});
  cluster.outRate = std::min(t.getIoBytesPerSecond(),
                             systems > 1 ? t.getReduceBytesPerSecond()
                                         : t.getIoBytesPerSecond());
  return cluster;
}

void detail::finishStep(const StepProgram &program, double passesEnd,
                        double outFree,
                        llvm::ArrayRef<std::pair<double, double>> lastGradients,
                        StepEstimate &estimate, ScheduleObserver *observer) {
  const target::WaferTargetModel &t = program.getTarget();
  estimate.passesSeconds = passesEnd;
  estimate.systemSeconds = std::max(passesEnd, outFree);
  estimate.drainSeconds = estimate.systemSeconds - passesEnd;
  if (observer && estimate.drainSeconds > 0)
    observer->interval("gradient drain",
                       "gradients still leaving after the last pass", passesEnd,
                       estimate.drainSeconds, {});

  // The weight servers update each tensor once its reduced gradient has
  // arrived, one tensor after another at their bandwidth. Clipped
  // gradients are scaled by the norm of all of them, which is known only
  // once the last has arrived (each server sums its share of the squares
  // as they come): then every tensor is updated. Either way the next step
  // streams its first weights once the update is done: the iteration
  // boundary is where weight fetches cannot run ahead (docs/runtime.md).
  double parametersPerByte =
      program.getTotalGradientBytes()
          ? static_cast<double>(program.getParameters()) /
                static_cast<double>(program.getTotalGradientBytes())
          : 0;
  double serverFree = 0, lastArrival = estimate.systemSeconds;
  for (auto [arrival, bytes] : lastGradients)
    lastArrival = std::max(lastArrival, arrival);
  if (program.clipsGradients())
    serverFree = lastArrival;
  for (auto [arrival, bytes] : lastGradients) {
    double start = std::max(serverFree, arrival);
    serverFree = start + bytes * parametersPerByte *
                             kOptimizerBytesPerParameter /
                             t.getOptimizerBytesPerSecond();
  }
  estimate.reduceSeconds = lastArrival - estimate.systemSeconds;
  estimate.optimizerSeconds = std::max(0.0, serverFree - lastArrival);
  estimate.stepSeconds = estimate.systemSeconds + estimate.reduceSeconds +
                         estimate.optimizerSeconds;
  if (observer) {
    if (estimate.reduceSeconds > 0)
      observer->interval("reduce", "gradients through the tree",
                         estimate.systemSeconds, estimate.reduceSeconds, {});
    if (estimate.optimizerSeconds > 0)
      observer->interval("optimizer",
                         program.clipsGradients()
                             ? "AdamW on the weight servers, after the "
                               "clipping norm"
                             : "AdamW on the weight servers",
                         lastArrival, estimate.optimizerSeconds, {});
  }
  estimate.samplesPerSecond =
      static_cast<double>(program.getGlobalBatch()) / estimate.stepSeconds;
}

//===----------------------------------------------------------------------===//
// Weight streaming
//===----------------------------------------------------------------------===//

StepScheduler::StepScheduler(const StepProgram &program) : program(program) {
  detail::Cluster cluster =
      detail::Cluster::of(program.getTarget(), program.getNumCsx());
  treeLatency = cluster.treeLatency;
  inRate = cluster.inRate;
  outRate = cluster.outRate;
  for (auto [index, stage] : llvm::enumerate(program.getStages())) {
    bool forward = stage.layer && stage.phase == "forward";
    if (forward)
      forwardOfLayer[*stage.layer] = index;
    stages.push_back({static_cast<double>(stage.weightBytes),
                      static_cast<double>(stage.checkpointBytes),
                      static_cast<double>(stage.forwardCheckpointBytes),
                      stage.layer, forward,
                      stage.layer && stage.phase == "backward", regions.size(),
                      stage.regions.size()});
    for (const ProgramRegion &region : stage.regions) {
      auto ingress = static_cast<double>(region.ingressBytes);
      auto egress = static_cast<double>(region.egressBytes);
      regions.push_back({ingress, egress, ingress / inRate, egress / outRate});
    }
  }
}

std::vector<std::pair<size_t, bool>>
StepScheduler::passSchedule(CheckpointPolicy policy) const {
  std::vector<std::pair<size_t, bool>> schedule;
  for (auto [index, stage] : llvm::enumerate(stages)) {
    bool runTop = policy.kind == CheckpointPolicy::Kind::every &&
                  stage.backward &&
                  (*stage.layer % policy.interval == policy.interval - 1 ||
                   *stage.layer == program.getLayers() - 1);
    if (runTop) {
      // Rebuild the run's checkpoints from the one kept at its first layer.
      int64_t first = *stage.layer / policy.interval * policy.interval;
      for (int64_t layer = first; layer < *stage.layer; ++layer)
        if (auto it = forwardOfLayer.find(layer); it != forwardOfLayer.end())
          schedule.push_back({it->second, true});
    }
    schedule.push_back({index, false});
  }
  return schedule;
}

namespace {

/// A region's kernel, from one set of kernel times.
struct KernelStep {
  double seconds;
  const char *bound;
};

std::vector<KernelStep>
kernelSteps(const std::vector<std::vector<KernelTime>> &times, double clock) {
  std::vector<KernelStep> steps;
  for (const std::vector<KernelTime> &stage : times)
    for (const KernelTime &time : stage)
      steps.push_back({time.cycles() / clock, time.bound()});
  return steps;
}

} // namespace

StepEstimate
StepScheduler::estimateStreaming(const TimedPlacement &timed,
                                 CheckpointPolicy policy,
                                 ScheduleObserver *observer) const {
  double clock = program.getTarget().getClockHz();
  bool offload = policy.kind == CheckpointPolicy::Kind::offload;
  llvm::ArrayRef<ProgramStage> programStages = program.getStages();

  std::vector<std::pair<size_t, bool>> schedule = passSchedule(policy);
  // Where the placement starts a wave: at a region whose wave differs from
  // the region's before it.
  std::vector<bool> newWave(regions.size(), false);
  for (auto [s, placed] : llvm::enumerate(timed.placement.regions))
    for (size_t r = 1; r < placed.size(); ++r)
      newWave[stages[s].firstRegion + r] = placed[r].wave != placed[r - 1].wave;
  StepEstimate estimate;
  estimate.passes = timed.split.passes;

  // The two directions of the system's I/O; each is busy until its last
  // transfer ends. The step's first weights cannot be prefetched: they are
  // the last the optimizer updated.
  double inFree = treeLatency, outFree = 0, time = 0;
  // When the last pass's gradients reach the weight servers, in order.
  std::vector<std::pair<double, double>> lastGradients; // arrival, bytes
  // One pass of `sequences` whose kernels take `kernels`.
  auto runPass = [&](const std::vector<KernelStep> &kernels, int64_t sequences,
                     bool first, bool last) {
    auto microBatch = static_cast<double>(sequences);
    // Token ids and labels (i32) from the activation workers.
    double tokenBytes =
        2.0 * 4 * microBatch * static_cast<double>(program.getSeqLen());
    double prefetchFrom = time;
    for (auto [position, entry] : llvm::enumerate(schedule)) {
      auto [s, rerun] = entry;
      const Stage &stage = stages[s];
      double stageStart = time;
      // What the stage's first kernel reads before any weight: the token
      // ids, or the layer's offloaded checkpoint coming back.
      double inputBytes = position == 0 ? tokenBytes : 0;
      if (offload && stage.backward)
        inputBytes += microBatch * stage.forwardCheckpointBytes;
      double inBytes = inputBytes + stage.weightBytes;
      double weightsStart = std::max(inFree, prefetchFrom);
      double weightsEnd = weightsStart + inBytes / inRate;
      inFree = weightsEnd;
      // Waves run one after another, the regions of a wave at once; the
      // first region cannot end before its inputs have arrived, and one
      // that reads a weight not before the stage's weights up to its own.
      double arrived = weightsStart + inputBytes / inRate, slowest = 0;
      double waveStart = time, waveEnd = time;
      const char *bound = "compute";
      bool ioBound = false;
      for (size_t r = 0; r < stage.regions; ++r) {
        const Region &region = regions[stage.firstRegion + r];
        const KernelStep &kernel = kernels[stage.firstRegion + r];
        if (newWave[stage.firstRegion + r])
          waveStart = waveEnd;
        double seconds = kernel.seconds;
        double begin = waveStart;
        double end = begin + seconds;
        arrived += region.ingressSeconds;
        if ((r == 0 || region.ingressBytes != 0) && arrived > end) {
          end = arrived;
          ioBound = true;
        }
        if (seconds > slowest) {
          slowest = seconds;
          bound = kernel.bound;
        }
        if (first && observer) {
          const ProgramRegion &ir = programStages[s].regions[r];
          observer->interval(
              stringifyKernelKind(ir.shape.kind),
              kernelIntervalName(programStages[s].name, ir.op.getSymName()),
              begin, end - begin,
              {static_cast<double>(ir.shape.flops) * microBatch,
               region.ingressBytes,
               end > begin + seconds ? "weights in" : kernel.bound});
        }
        waveEnd = std::max(waveEnd, end);
        if (region.egressBytes != 0 && !rerun) {
          double outStart = std::max(outFree, end);
          outFree = outStart + region.egressSeconds;
          if (first && observer)
            observer->interval("gradients out", programStages[s].name, outStart,
                               outFree - outStart, {0, region.egressBytes});
          if (last)
            lastGradients.push_back(
                {outFree + treeLatency, region.egressBytes});
        }
      }
      time = waveEnd;
      if (offload && stage.forward && !rerun && stage.checkpointBytes != 0) {
        double outStart = std::max(outFree, time);
        outFree = outStart + microBatch * stage.checkpointBytes / outRate;
        if (first && observer)
          observer->interval("checkpoints out", programStages[s].name, outStart,
                             outFree - outStart,
                             {0, microBatch * stage.checkpointBytes});
      }
      if (first && observer) {
        if (weightsEnd > weightsStart)
          observer->interval("weights in", programStages[s].name, weightsStart,
                             weightsEnd - weightsStart, {0, inBytes});
        observer->stage({programStages[s].name, programStages[s].layer,
                         rerun ? "recompute" : programStages[s].phase,
                         stageStart, time, ioBound ? "weights in" : bound});
      }
      prefetchFrom = stageStart;
    }
  };
  // The full passes, then the short ones of an uneven split. Within each
  // run of equal passes, every pass after the second repeats the second in
  // the steady state: run two to learn its length, skip to the run's last,
  // and run that one too, to place its gradients when it ends the step.
  const PassSplit &split = timed.split;
  bool started = false;
  auto runPasses = [&](const std::vector<std::vector<KernelTime>> &times,
                       int64_t sequences, int64_t count, bool endsStep) {
    std::vector<KernelStep> kernels = kernelSteps(times, clock);
    for (int64_t pass = 0; pass < count; ++pass) {
      bool last = endsStep && pass == count - 1;
      double passStart = time;
      runPass(kernels, sequences, /*first=*/!started, last);
      if (!started)
        estimate.firstPassSeconds = time;
      started = true;
      if (pass == 1 && count > 3) {
        double skipped = (time - passStart) * static_cast<double>(count - 3);
        time += skipped;
        inFree += skipped;
        outFree += skipped;
        pass = count - 2;
      }
    }
  };
  runPasses(timed.times, split.microBatch, split.fullPasses, split.isEven());
  if (!split.isEven())
    runPasses(timed.shortTimes, split.microBatch - 1, split.shortPasses(),
              true);
  if (observer && estimate.passes > 1)
    observer->interval(
        "passes", "passes 2 to " + std::to_string(estimate.passes),
        estimate.firstPassSeconds, time - estimate.firstPassSeconds, {});
  detail::finishStep(program, time, outFree, lastGradients, estimate, observer);
  return estimate;
}

StepEstimate StepScheduler::estimate(const TimedPlacement &timed,
                                     CheckpointPolicy policy,
                                     ScheduleObserver *observer) const {
  StepEstimate estimate =
      timed.placement.mode == ExecutionMode::layer_pipelined
          ? detail::estimatePipelinedStep(program, timed, observer)
          : estimateStreaming(timed, policy, observer);
  CGPT_DEBUG(CGPT_DBGS() << llvm::formatv(
                 "{0} placer, {1}: {2} pass(es), the first "
                 "{3:e3} s; passes end {4:e3} s, drain {5:e3} s, reduce "
                 "{6:e3} s, optimizer {7:e3} s: step {8:e3} s\n",
                 timed.placement.placer, policy.str(), estimate.passes,
                 estimate.firstPassSeconds, estimate.passesSeconds,
                 estimate.drainSeconds, estimate.reduceSeconds,
                 estimate.optimizerSeconds, estimate.stepSeconds));
  return estimate;
}

StepEstimate estimateStep(const StepProgram &program,
                          const TimedPlacement &timed, CheckpointPolicy policy,
                          ScheduleObserver *observer) {
  return StepScheduler(program).estimate(timed, policy, observer);
}

} // namespace cgpt::wafer
