//===- Simulator.h - simulation of a training step --------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Simulates one optimizer step of a placed, planned wafer program on a
// cluster of `num_csx` systems, as the IR places it: each region on its
// rectangle with its layout, wave by wave, weights and checkpoints over the
// system's I/O, the reduce tree and the weight servers' optimizer, on the
// schedule the batch planner uses (lib/Dialect/Wafer/Analysis). It turns
// that schedule into a timeline and a per-stage account (docs/runtime.md).
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SIM_SIMULATOR_H
#define CGPT_SIM_SIMULATOR_H

#include "cgpt/Dialect/Wafer/Analysis/Schedule.h"

#include <string>
#include <vector>

namespace cgpt::sim {

/// One interval on a track of the timeline.
struct TraceEvent {
  std::string track; // "weight_matmul", "weights in", "reduce", ...
  std::string name;  // "h.0.forward @matmul.1"
  double start = 0, duration = 0;
  wafer::IntervalFacts facts;
};

using StageTiming = wafer::StageRun;

struct SimulationResult {
  int64_t numCsx = 1;
  int64_t passes = 0;
  std::string checkpoint;
  /// The placer that laid the step out, and how it runs.
  std::string placer;
  wafer::ExecutionMode execution = wafer::ExecutionMode::weight_streaming;
  double firstPassSeconds = 0;
  /// Until the last pass's last kernel ends.
  double passesSeconds = 0;
  /// Then the gradients still leaving the system.
  double drainSeconds = 0;
  /// All passes of one system, gradients and checkpoints out included.
  double systemSeconds = 0;
  /// After the last gradient leaves a system: the reduce tree.
  double reduceSeconds = 0;
  /// Then the weight servers' optimizer still running.
  double optimizerSeconds = 0;
  double stepSeconds = 0;
  std::vector<StageTiming> stages;
  std::vector<TraceEvent> trace;
};

/// Simulates a step of `device` (placed and planned) on its target, for
/// the device's `num_csx` systems. Fails with a diagnostic on the device
/// when it is not planned, on a region that is not placed, or on IR the
/// runtime cannot run.
mlir::FailureOr<SimulationResult> simulateStep(wafer::DeviceOp device);

} // namespace cgpt::sim

#endif // CGPT_SIM_SIMULATOR_H
