//===- Schedule.h - a placed step as a timeline ------------------*- C++
//-*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Turns a placed step into time: under weight streaming, the stages of
// every pass one after another, each stage's waves of regions one after
// another, weights and checkpoints over the system's I/O; under layer
// pipelining, the slots working at once on micro-batches flowing through
// them. Then the reduce across systems and the weight servers' optimizer
// (docs/runtime.md). It reads only the program and its placement.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_WAFER_ANALYSIS_SCHEDULE_H
#define CGPT_DIALECT_WAFER_ANALYSIS_SCHEDULE_H

#include "cgpt/Dialect/Wafer/Analysis/CheckpointPolicy.h"
#include "cgpt/Dialect/Wafer/Analysis/StepProgram.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <optional>
#include <string>

namespace cgpt::wafer {

/// One stage as the schedule ran it, for reports and traces.
struct StageRun {
  std::string name;
  std::optional<int64_t> layer;
  /// "forward", "backward", "loss", or "recompute" for a rerun forward
  /// stage under the `every` policy.
  std::string phase;
  double start = 0, end = 0;
  /// "compute", "fabric", "sram" or "weights in".
  std::string bound;
};

/// The name of a kernel's interval on the timeline, "stage @region": the
/// trace shows it, and the compile report finds a region's run by it.
inline std::string kernelIntervalName(llvm::StringRef stage,
                                      llvm::StringRef region) {
  return (stage + " @" + region).str();
}

/// What an interval of the timeline did, for the trace's `args`: the
/// FLOPs a kernel executed, the bytes a kernel streamed in or a transfer
/// moved, and what bound a kernel ("compute", "fabric", "sram", or
/// "weights in" when it waited for its weights). Zero and null: not stated.
struct IntervalFacts {
  double flops = 0;
  double bytes = 0;
  const char *bound = nullptr;
};

/// Receives the intervals of the first pass and of the step's tail as the
/// schedule computes them (the simulator's timeline).
class ScheduleObserver {
public:
  virtual ~ScheduleObserver() = default;
  virtual void interval(llvm::StringRef track, llvm::StringRef name,
                        double start, double duration,
                        const IntervalFacts &facts) = 0;
  virtual void stage(const StageRun &run) = 0;
};

/// What a step costs.
struct StepEstimate {
  int64_t passes = 0;
  double firstPassSeconds = 0;
  /// Until the last pass's last kernel ends.
  double passesSeconds = 0;
  /// Then the gradients (and checkpoints) still leaving the system.
  double drainSeconds = 0;
  /// All passes of one system, gradients and checkpoints out included:
  /// passesSeconds + drainSeconds.
  double systemSeconds = 0;
  /// After the last gradient leaves: the reduce tree's latency and drain.
  double reduceSeconds = 0;
  /// Then the weight servers' optimizer still running.
  double optimizerSeconds = 0;
  double stepSeconds = 0;
  double samplesPerSecond = 0;
};

/// The schedule of one program's steps, with what it reads of the
/// program's stages and regions in flat arrays built once: the planner
/// estimates about a thousand placed candidates of one program, and a
/// deep model's stages and regions lie all over the heap.
class StepScheduler {
public:
  explicit StepScheduler(const StepProgram &program);

  /// Runs the schedule of one step as `timed` places it, at its micro-batch
  /// under `policy`: the passes of the busiest system, then the reduce
  /// across systems and the weight servers' optimizer. Reports the first
  /// pass and the tail to `observer` when given.
  StepEstimate estimate(const TimedPlacement &timed, CheckpointPolicy policy,
                        ScheduleObserver *observer = nullptr) const;

private:
  /// What a weight-streaming pass reads of a stage and of a region.
  struct Stage {
    double weightBytes, checkpointBytes, forwardCheckpointBytes;
    std::optional<int64_t> layer;
    bool forward, backward;
    /// Its regions in `regions`.
    size_t firstRegion, regions;
  };
  struct Region {
    double ingressBytes, egressBytes;
    /// The same at the cluster's rates in and out.
    double ingressSeconds, egressSeconds;
  };
  StepEstimate estimateStreaming(const TimedPlacement &timed,
                                 CheckpointPolicy policy,
                                 ScheduleObserver *observer) const;
  /// The stage executions of one pass under `policy`: indices into the
  /// stages, with true for a forward stage run again.
  std::vector<std::pair<size_t, bool>>
  passSchedule(CheckpointPolicy policy) const;

  const StepProgram &program;
  /// The cluster's: the tree's latency, and bytes per second into and out
  /// of one system.
  double treeLatency = 0, inRate = 0, outRate = 0;
  std::vector<Stage> stages;
  std::vector<Region> regions;
  /// The forward stage of each layer.
  llvm::DenseMap<int64_t, size_t> forwardOfLayer;
};

/// StepScheduler(program).estimate(timed, policy, observer), for one
/// estimate of a program.
StepEstimate estimateStep(const StepProgram &program,
                          const TimedPlacement &timed, CheckpointPolicy policy,
                          ScheduleObserver *observer = nullptr);

} // namespace cgpt::wafer

#endif // CGPT_DIALECT_WAFER_ANALYSIS_SCHEDULE_H
