//===- WaferModel.cpp - memory and time of placed stages ------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/WaferModel.h"

#include "cgpt/Support/Format.h"

#include <algorithm>
#include <cstdlib>

using namespace mlir;
using namespace cgpt::wafer;

namespace cgpt::sim {

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Stationary bytes `region` holds in all at `microBatch`: the
/// activations, or the weight when that is smaller.
static int64_t stationaryBytes(RegionOp region, int64_t microBatch) {
  int64_t stationary = microBatch * region.getStationary();
  if (std::optional<int64_t> weight = region.getWeightBytes())
    stationary = std::min(stationary, *weight);
  return stationary;
}

/// Bytes `region` holds in all at `microBatch`: the stationary data and
/// the accumulators.
static int64_t heldBytes(RegionOp region, int64_t microBatch) {
  return stationaryBytes(region, microBatch) + region.getAccumulator();
}

/// Bytes of kept activations on every core of the device at `microBatch`.
static int64_t keptPerCore(DeviceOp device, int64_t microBatch) {
  return ceilDiv(microBatch * device.getKeptBytesPerSequence(),
                 device.getNumCores());
}

CoreMemory regionMemory(RegionOp region, int64_t microBatch) {
  auto device = region->getParentOfType<DeviceOp>();
  int64_t cores = region.getPlacementAttr().getCores();
  CoreMemory memory;
  memory.tile = region.getWorkingSet();
  memory.streamBuffers = region.getStreamBuffers();
  memory.stationary = ceilDiv(stationaryBytes(region, microBatch), cores);
  memory.accumulator = ceilDiv(region.getAccumulator(), cores);
  memory.kept = keptPerCore(device, microBatch);
  return memory;
}

int64_t minimumCores(RegionOp region, int64_t microBatch) {
  auto device = region->getParentOfType<DeviceOp>();
  int64_t left = device.getSramBytes() - region.getWorkingSet() -
                 region.getStreamBuffers() - keptPerCore(device, microBatch);
  if (left <= 0)
    return 0;
  return std::max<int64_t>(1, ceilDiv(heldBytes(region, microBatch), left));
}

std::string describeMemory(const CoreMemory &memory, int64_t microBatch) {
  return "tile " + formatGrouped(memory.tile) + " B, stream buffers " +
         formatGrouped(memory.streamBuffers) + " B, stationary (" +
         std::to_string(microBatch) + " sequences) " +
         formatGrouped(memory.stationary) + " B, accumulators " +
         formatGrouped(memory.accumulator) + " B, kept for backward " +
         formatGrouped(memory.kept) + " B";
}

std::string describeRegion(RegionOp region) {
  auto stage = region->getParentOfType<StageOp>();
  std::string where = "@" + region.getSymName().str() + " (" +
                      region.getKernel().str() + ")";
  if (RectAttr rect = region.getPlacementAttr())
    where += " on cores [" + std::to_string(rect.getX()) + ", " +
             std::to_string(rect.getY()) + ", " +
             std::to_string(rect.getW()) + " x " +
             std::to_string(rect.getH()) + "]";
  where += " of stage @" + stage.getSymName().str();
  if (std::optional<int64_t> layer = stage.getLayer())
    where += " (layer " + std::to_string(*layer) + ")";
  return where;
}

MemoryPeak memoryPeak(DeviceOp device, int64_t microBatch) {
  MemoryPeak peak;
  device.walk([&](RegionOp region) {
    CoreMemory memory = regionMemory(region, microBatch);
    if (!peak.region || memory.total() > peak.memory.total()) {
      peak.region = region;
      peak.memory = memory;
    }
  });
  return peak;
}

/// Seconds `region` computes for `microBatch` sequences: its FLOPs over
/// the cores that have a tile to work on, at the efficiency its tiles
/// allow, or its SRAM traffic over the cores' SRAM bandwidth if slower.
double regionSeconds(RegionOp region, const target::WaferTargetModel &target,
                     int64_t microBatch) {
  int64_t cores = std::min(region.getPlacementAttr().getCores(),
                           microBatch * region.getTiles());
  double cyclesPerSecond = target.getClockHz();
  double flopRate = static_cast<double>(cores) * target.getFlopsPerCycle() *
                    cyclesPerSecond *
                    region.getEfficiency().convertToDouble();
  double flops = static_cast<double>(microBatch) * region.getFlops();
  // Every tile's operands are read and its results written once.
  double sramBytes = static_cast<double>(microBatch) * region.getTiles() *
                     region.getWorkingSet();
  double sramRate = static_cast<double>(cores) *
                    (target.getSramReadBytesPerCycle() +
                     target.getSramWriteBytesPerCycle()) *
                    cyclesPerSecond;
  return std::max(flops / flopRate, sramBytes / sramRate);
}

/// Seconds `flow` moves its bytes: over as many parallel links as the
/// narrower region offers (its half-perimeter, w + h: the disjoint paths
/// that can leave or enter a rectangle across two of its sides), plus the
/// latency of the hops.
double flowSeconds(FlowOp flow, StageOp stage,
                   const target::WaferTargetModel &target,
                   int64_t microBatch) {
  auto source = cast<RegionOp>(
      mlir::SymbolTable::lookupSymbolIn(stage, flow.getSourceAttr()));
  auto dest = cast<RegionOp>(
      mlir::SymbolTable::lookupSymbolIn(stage, flow.getDestAttr()));
  RectAttr from = source.getPlacementAttr(), to = dest.getPlacementAttr();
  int64_t links = std::min(from.getW() + from.getH(), to.getW() + to.getH());
  double bytes = static_cast<double>(microBatch) * flow.getBytes();
  double rate = static_cast<double>(links) * target.getLinkBytesPerCycle() *
                target.getClockHz();
  return bytes / rate + flowLatencySeconds(flow, target);
}

double flowLatencySeconds(FlowOp flow, const target::WaferTargetModel &target) {
  return static_cast<double>(flow.getHops()) * target.getHopLatencyCycles() /
         target.getClockHz();
}

int64_t regionWaves(RegionOp region, int64_t microBatch) {
  return std::max<int64_t>(1, ceilDiv(microBatch * region.getTiles(),
                                      region.getPlacementAttr().getCores()));
}

} // namespace cgpt::sim
