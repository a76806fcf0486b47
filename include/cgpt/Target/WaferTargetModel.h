//===- WaferTargetModel.h - the machine compiled for ------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Every hardware figure cgpt uses comes from a target description file
// (lib/Target/targets/*.yaml, or a user's own) through this class. Passes and
// the runtime never hard-code a mesh size, a memory size or a bandwidth.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_TARGET_WAFERTARGETMODEL_H
#define CGPT_TARGET_WAFERTARGETMODEL_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace cgpt::target {

class WaferTargetModel {
public:
  /// Loads a built-in target by name (`wse2`, `wse3`, `mini`) or a target
  /// file by path. Errors go to `context`'s diagnostic engine with the
  /// file, line and key.
  static mlir::FailureOr<WaferTargetModel> load(llvm::StringRef nameOrPath,
                                                mlir::MLIRContext *context);
  /// As `load`, but each name is read once per process: the model stays
  /// alive (and unchanged) for the rest of it. A name that cannot be read
  /// is reported once per context; later calls fail without a diagnostic.
  static mlir::FailureOr<const WaferTargetModel *>
  loadShared(llvm::StringRef nameOrPath, mlir::MLIRContext *context);
  /// Parses target description `text`; `path` names it in diagnostics.
  static mlir::FailureOr<WaferTargetModel>
  parse(llvm::StringRef text, llvm::StringRef path, mlir::MLIRContext *context);
  /// The names `load` accepts without a file.
  static llvm::ArrayRef<llvm::StringRef> builtinNames();

  llvm::StringRef getName() const { return name; }

  // Mesh.
  int64_t getMeshWidth() const { return meshWidth; }
  int64_t getMeshHeight() const { return meshHeight; }
  int64_t getNumCores() const { return meshWidth * meshHeight; }

  // One core.
  int64_t getCoreSramBytes() const { return coreSramBytes; }
  int64_t getFlopsPerCycle() const { return flopsPerCycle; }
  int64_t getSramReadBytesPerCycle() const { return sramReadBytesPerCycle; }
  int64_t getSramWriteBytesPerCycle() const { return sramWriteBytesPerCycle; }
  double getClockHz() const { return clockHz; }
  /// FMACs per cycle when 16-bit operands accumulate in f32, and when
  /// everything is f32; 16-bit FMACs run at flops_per_cycle / 2.
  int64_t getMixedFmacsPerCycle() const { return mixedFmacsPerCycle; }
  int64_t getF32FmacsPerCycle() const { return f32FmacsPerCycle; }
  /// Elements per cycle of the other vector operations (add, multiply,
  /// move, max), as the SDK's table of SIMD widths gives them: on 16-bit
  /// data as wide as the 16-bit FMAC (@faddh, @fmulh: flops_per_cycle / 2),
  /// on f32 data as wide as the mixed FMAC (@fadds, @fmovs).
  int64_t getHalfOpsPerCycle() const {
    return std::max<int64_t>(1, flopsPerCycle / 2);
  }
  int64_t getF32OpsPerCycle() const { return mixedFmacsPerCycle; }
  /// Cycles from a wavelet's arrival to its data task running.
  int64_t getTaskActivationCycles() const { return taskActivationCycles; }
  /// SRAM each core keeps for code, queues and the stack.
  int64_t getReservedBytes() const { return reservedBytes; }
  /// Peak FLOP/s of the whole mesh: cores x FLOP per cycle x clock.
  double getPeakFlopsPerSecond() const {
    return static_cast<double>(getNumCores()) * flopsPerCycle * clockHz;
  }

  // Fabric.
  int64_t getLinkBytesPerCycle() const { return linkBytesPerCycle; }
  int64_t getHopLatencyCycles() const { return hopLatencyCycles; }
  /// Cycles a wavelet takes across a core's ramp, between its compute
  /// engine and its router, either way.
  int64_t getRampLatencyCycles() const { return rampLatencyCycles; }
  int64_t getNumColors() const { return numColors; }
  /// Wavelets a router's input queue holds, per port and color.
  int64_t getRouterQueueWavelets() const { return routerQueueWavelets; }

  // System and cluster.
  double getIoBytesPerSecond() const { return ioBytesPerSecond; }
  /// A system's power draw in watts (`system.power_watts`); 0 when the
  /// target states none.
  double getSystemPowerWatts() const { return systemPowerWatts; }
  double getWeightServerCapacityBytes() const { return weightServerCapacity; }
  double getWeightServerBytesPerSecond() const { return weightServerBandwidth; }
  /// Bytes per second the weight servers' optimizer reads and writes in
  /// their own memory (weights, moments, gradients).
  double getOptimizerBytesPerSecond() const { return optimizerBandwidth; }
  double getReduceBytesPerSecond() const { return reduceBandwidth; }
  double getReduceLevelLatencySeconds() const { return reduceLevelLatency; }
  /// Systems (or nodes) one broadcast/reduce node serves.
  int64_t getReduceFanout() const { return reduceFanout; }

private:
  std::string name;
  int64_t meshWidth = 0, meshHeight = 0;
  int64_t coreSramBytes = 0, flopsPerCycle = 0;
  int64_t sramReadBytesPerCycle = 0, sramWriteBytesPerCycle = 0;
  int64_t mixedFmacsPerCycle = 0, f32FmacsPerCycle = 0;
  int64_t taskActivationCycles = 0, reservedBytes = 0;
  double clockHz = 0;
  int64_t linkBytesPerCycle = 0, hopLatencyCycles = 0, numColors = 0;
  int64_t rampLatencyCycles = 1;
  int64_t routerQueueWavelets = 0;
  double ioBytesPerSecond = 0;
  double systemPowerWatts = 0;
  double weightServerCapacity = 0, weightServerBandwidth = 0;
  double optimizerBandwidth = 0;
  double reduceBandwidth = 0, reduceLevelLatency = 0;
  int64_t reduceFanout = 0;
};

} // namespace cgpt::target

#endif // CGPT_TARGET_WAFERTARGETMODEL_H
