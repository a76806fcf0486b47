//===- WaferModel.h - memory and time of placed stages ----------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The memory and cost model of a placed wafer program: how many bytes each
// core holds, and how long a stage takes, for a given micro-batch. The
// batch planner chooses micro-batches with it and the runtime predicts step
// times with it, so the two always agree. Every constant comes from the
// target model; docs/targets.md describes the model and what it leaves out.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SIM_WAFERMODEL_H
#define CGPT_SIM_WAFERMODEL_H

#include "cgpt/Dialect/Wafer/IR/Wafer.h"
#include "cgpt/Target/WaferTargetModel.h"

#include <string>

namespace cgpt::sim {

/// What one core of a region holds, in bytes.
struct CoreMemory {
  /// One tile of every operand and result (and the matmul accumulator).
  int64_t tile = 0;
  /// The next tile of the inputs, arriving while the current one computes.
  int64_t streamBuffers = 0;
  /// The region's share of its stationary data for the micro-batch: the
  /// activations, or the weight when that is smaller.
  int64_t stationary = 0;
  /// Its share of accumulators held once per pass (weight gradients).
  int64_t accumulator = 0;
  /// Its share of the activations every sequence keeps for backward,
  /// spread over the whole mesh.
  int64_t kept = 0;

  int64_t total() const {
    return tile + streamBuffers + stationary + accumulator + kept;
  }
};

/// Per-core memory of placed `region` at `microBatch` sequences.
CoreMemory regionMemory(wafer::RegionOp region, int64_t microBatch);

/// The fewest cores `region` can hold its data on at `microBatch`: its
/// stationary data and accumulators over what a core has left after the
/// tile, the stream buffers and its share of the kept activations. Zero
/// when not even the tile fits.
int64_t minimumCores(wafer::RegionOp region, int64_t microBatch);

/// The memory map of one core, for diagnostics: "tile 21,632 B, stream
/// buffers 10,816 B, ...".
std::string describeMemory(const CoreMemory &memory, int64_t microBatch);

/// Where a region is, for diagnostics: "@matmul.1 (dataflow.matmul) on
/// cores [2, 0, 3 x 4] of stage @h.0.forward".
std::string describeRegion(wafer::RegionOp region);

/// The region whose cores need the most memory at `microBatch`.
struct MemoryPeak {
  wafer::RegionOp region;
  CoreMemory memory;
};
MemoryPeak memoryPeak(wafer::DeviceOp device, int64_t microBatch);

/// Time of one stage for one micro-batch pass, and what bounds it.
struct StageCost {
  double compute = 0;      // the slowest region's kernel
  double fabric = 0;       // the slowest flow between regions
  double weightsIn = 0;    // the stage's weights through the system's I/O
  double gradientsOut = 0; // its gradients out, the other way
  double seconds = 0;      // the largest of the four (they overlap)
  std::string bound;       // "compute", "fabric", "weights in", ...
};
StageCost stageCost(wafer::StageOp stage,
                    const target::WaferTargetModel &target,
                    int64_t microBatch);

/// One system's share of an optimizer step at `microBatch`.
struct StepCost {
  int64_t passes = 0;
  double passSeconds = 0;
  double stepSeconds = 0;
  /// Global batch over the step time: every system runs in parallel.
  double samplesPerSecond = 0;
};
StepCost stepCost(wafer::DeviceOp device,
                  const target::WaferTargetModel &target, int64_t microBatch);

} // namespace cgpt::sim

#endif // CGPT_SIM_WAFERMODEL_H
