//===- CycleLevel.h - every kernel of a device on the mesh model -*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Runs each kernel of a placed, planned device through the cycle-level mesh
// model and sets its cycles beside the analytic prediction for the same
// split (`cgpt-run --cycle-level`, docs/runtime.md).
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SIM_MESH_CYCLELEVEL_H
#define CGPT_SIM_MESH_CYCLELEVEL_H

#include "cgpt/Dialect/Wafer/IR/Wafer.h"
#include "cgpt/Sim/Mesh/MeshSimulator.h"

#include "mlir/Support/LogicalResult.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace cgpt::sim::mesh {

/// The most core-cycles a cycle-level run takes unless told otherwise
/// (CycleLevelOptions::maxCoreCycles), judged from the analytic times
/// beforehand: about eight minutes on one thread of this project's
/// machines.
constexpr double kMaxCoreCycles = 2e10;
/// Core-cycles one worker simulates a second, for the estimate printed
/// before a run: a judgement from the benchmarks (docs/benchmarks.md),
/// between the 3.3e7 to 4.1e7 of a matmul on the whole WSE-2 mesh and the
/// 7e7 of a 64 x 64 one.
constexpr double kCoreCyclesPerWorkerSecond = 4e7;

struct CycleLevelOptions {
  /// Threads, MPI processes, a stop flag.
  MeshWorkers workers;
  /// The most core-cycles to simulate, and the most host memory a process
  /// may need, judged beforehand (0: no memory limit).
  double maxCoreCycles = kMaxCoreCycles;
  int64_t maxHostBytes = 0;
  /// Where the estimate before the run goes, and, with `progress`, a line
  /// updated in place while it runs (a terminal's standard error).
  llvm::raw_ostream *log = nullptr;
  bool progress = false;
};

struct CycleLevelKernel {
  std::string stage, name;
  /// Cores of the grid simulated.
  int64_t cores = 0;
  double analyticCycles = 0;
  int64_t simulatedCycles = 0;
  /// When each row of the rectangle worked, in cycles from the kernel's
  /// start.
  std::vector<std::pair<int64_t, int64_t>> rowActivity;
};

/// Regions of one wave run side by side on one simulated mesh.
struct CycleLevelWave {
  std::string stage;
  std::vector<std::string> regions;
  /// The wave on one mesh, and the slowest of its regions alone.
  int64_t simulatedCycles = 0, slowestAlone = 0;
};

struct CycleLevelRun {
  std::vector<CycleLevelKernel> kernels;
  /// The run was stopped (CycleLevelOptions::workers.stop) in this region
  /// (empty: it ran to the end); `kernels` holds those simulated before.
  std::string stoppedIn;
  std::vector<CycleLevelWave> waves;
  /// Cores x cycles simulated over all kernels.
  int64_t coreCycles = 0;
  /// The target's clock, to turn cycles into time.
  double clockHz = 0;
};

/// Fails with a diagnostic on `device` when its `target` is one the
/// cycle-level model cannot run: links that do not move one wavelet a
/// cycle.
mlir::LogicalResult checkCycleLevelTarget(wafer::DeviceOp device,
                                          const target::WaferTargetModel &target);

/// Simulates every region of `device` once, at its micro-batch, as the IR
/// places it: each core does the work its region's layout gives it, on
/// the region's rectangle (for attention, one (sequence, head) block with
/// its share of the pairs); the regions of a wave also run together on one
/// mesh, side by side. A kernel run again (`repeats`) or in vocabulary
/// chunks is simulated once. Before it starts, prints to `options.log` the
/// core-cycles it will take, the time at kCoreCyclesPerWorkerSecond a
/// worker and the host memory of its largest mesh. Fails with a diagnostic
/// on the device when the run would take more than `maxCoreCycles` or more
/// memory than the host has, on a region without a placement, and on a
/// region that cannot run.
mlir::FailureOr<CycleLevelRun>
runCycleLevel(wafer::DeviceOp device, const CycleLevelOptions &options = {});

} // namespace cgpt::sim::mesh

#endif // CGPT_SIM_MESH_CYCLELEVEL_H
