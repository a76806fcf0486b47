//===- ScheduleTail.h - what both schedules share ---------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The cluster around a system, as both the weight-streaming and the
// layer-pipelined schedule see it: the I/O rates through the broadcast and
// reduce tree, and the step's tail after each system's last gradient.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_LIB_DIALECT_WAFER_ANALYSIS_SCHEDULETAIL_H
#define CGPT_LIB_DIALECT_WAFER_ANALYSIS_SCHEDULETAIL_H

#include "cgpt/Dialect/Wafer/Analysis/Schedule.h"

#include <utility>
#include <vector>

namespace cgpt::wafer::detail {

/// A system's links to the weight servers, through the tree of `num_csx`
/// systems.
struct Cluster {
  /// The tree's latency, one level at a time.
  double treeLatency = 0;
  /// Bytes per second into and out of one system.
  double inRate = 0, outRate = 0;

  static Cluster of(const target::WaferTargetModel &target, int64_t systems);
};

/// Ends the step after the system's last pass at `passesEnd`, with its
/// outgoing link busy until `outFree` and the last pass's gradients
/// reaching the weight servers at `lastGradients` (arrival, bytes, in
/// order): the drain, the reduce, and the servers' optimizer updating each
/// tensor once its reduced gradient has arrived, or, when the program clips
/// gradients, every tensor once the last has arrived.
void finishStep(const StepProgram &program, double passesEnd, double outFree,
                llvm::ArrayRef<std::pair<double, double>> lastGradients,
                StepEstimate &estimate, ScheduleObserver *observer);

/// The layer-pipelined schedule (PipelinedSchedule.cpp).
StepEstimate estimatePipelinedStep(const StepProgram &program,
                                   const TimedPlacement &timed,
                                   ScheduleObserver *observer);

} // namespace cgpt::wafer::detail

#endif // CGPT_LIB_DIALECT_WAFER_ANALYSIS_SCHEDULETAIL_H
