//===- Simulator.h - event-driven simulation of a training step -*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Simulates one optimizer step of a placed, planned wafer program on a
// cluster of `num_csx` systems. Events are regions, flows and I/O
// transfers, never cores, so the cost grows with the kernels and passes of
// the program, not with the size of the mesh. Every constant comes from the
// target model; the per-region and per-flow costs are WaferModel's, the
// ones the batch planner used (docs/runtime.md).
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SIM_SIMULATOR_H
#define CGPT_SIM_SIMULATOR_H

#include "cgpt/Sim/WaferModel.h"

#include <string>
#include <vector>

namespace cgpt::sim {

/// One interval on a track of the timeline.
struct TraceEvent {
  std::string track; // "matmul", "weights in", "reduce", ...
  std::string name;  // "h.0.forward @matmul.1"
  double start = 0, duration = 0;
};

/// Where a stage's time went in the first pass.
struct StageTiming {
  std::string name;
  std::optional<int64_t> layer;
  double start = 0, end = 0;
  /// What held the stage up: "compute", "fabric" or "weights in"
  /// (gradients leave behind the stage and hold up only the step's end).
  std::string bound;
};

struct SimulationResult {
  int64_t numCsx = 1;
  int64_t passes = 0;
  double firstPassSeconds = 0;
  /// All passes of one system, gradients out included.
  double systemSeconds = 0;
  /// After the last gradient leaves a system: the reduce across systems.
  double reduceSeconds = 0;
  /// Then the weight servers' optimizer for the tensors the next step
  /// reads first.
  double optimizerSeconds = 0;
  double stepSeconds = 0;
  std::vector<StageTiming> stages;
  std::vector<TraceEvent> trace;
};

/// The most events one simulation may take; a larger one is refused with a
/// message that says how to make it smaller (docs/runtime.md).
constexpr int64_t kMaxEvents = 50'000'000;

/// Simulates a step of `device` (placed and planned) on `target`, for the
/// device's `num_csx` systems. Fails with a diagnostic on the device when
/// it is not placed and planned, or the simulation would be too large.
mlir::FailureOr<SimulationResult>
simulateStep(wafer::DeviceOp device, const target::WaferTargetModel &target);

/// What a step of `device` would take at `microBatch`, for the batch
/// planner: one pass simulated (no trace), repeated for the accumulation
/// steps, then the reduce and the optimizer. Needs a placed device; fails
/// with a diagnostic on IR the simulator cannot run.
struct StepCost {
  int64_t passes = 0;
  double passSeconds = 0;
  double stepSeconds = 0;
  /// Global batch over the step time: every system runs in parallel.
  double samplesPerSecond = 0;
};
mlir::FailureOr<StepCost> stepCost(wafer::DeviceOp device,
                                   const target::WaferTargetModel &target,
                                   int64_t microBatch);

/// Seconds to reduce `bytes` of gradients over `systems` systems through
/// a binary tree of the target's reduce nodes: one latency per level, the
/// bytes once through the tree's bandwidth (levels pipeline).
double reduceSeconds(const target::WaferTargetModel &target, int64_t systems,
                     double bytes);

} // namespace cgpt::sim

#endif // CGPT_SIM_SIMULATOR_H
