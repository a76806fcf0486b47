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

/// A simulated step: what it costs (StepEstimate: the passes, the drain, the
/// reduce, the optimizer and the step, which add up), and its timeline.
struct SimulationResult : wafer::StepEstimate {
  int64_t numCsx = 1;
  std::string checkpoint;
  /// The placer that laid the step out, and how it runs.
  std::string placer;
  wafer::ExecutionMode execution = wafer::ExecutionMode::weight_streaming;
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
