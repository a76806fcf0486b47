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

/// Seconds placed `region` computes `microBatch` sequences.
double regionSeconds(wafer::RegionOp region,
                     const target::WaferTargetModel &target,
                     int64_t microBatch);
/// Waves of tiles `region` works through: a wave gives every core a tile.
int64_t regionWaves(wafer::RegionOp region, int64_t microBatch);
/// Seconds `flow` of `stage` moves its bytes for `microBatch` sequences,
/// and the latency of its first byte alone.
double flowSeconds(wafer::FlowOp flow, wafer::StageOp stage,
                   const target::WaferTargetModel &target, int64_t microBatch);
double flowLatencySeconds(wafer::FlowOp flow,
                          const target::WaferTargetModel &target);

} // namespace cgpt::sim

#endif // CGPT_SIM_WAFERMODEL_H
