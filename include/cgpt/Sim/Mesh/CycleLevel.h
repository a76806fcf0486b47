//===- CycleLevel.h - every kernel of a device on the mesh model -*- C++
//-*-===//
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
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace cgpt::sim::mesh {

/// How long a cycle-level run may take unless told otherwise, at the speed
/// measured on this host before it starts.
constexpr double kMaxSeconds = 600;
/// How long that speed is measured: the run's costliest program, from its
/// start, for at most this many seconds of simulating.
constexpr double kSpeedMeasurementSeconds = 1;

/// The most a cycle-level run may take: a time on this host (`seconds`),
/// judged before it starts and enforced while it runs, or, when
/// `coreCycles` is above 0, that many core-cycles by the analytic times, a
/// decision the same on every host.
struct CycleLevelLimit {
  double seconds = kMaxSeconds;
  double coreCycles = 0;
};

/// Reads a limit as `--cycle-level-limit` takes it: a time with its unit
/// (`90s`, `10min`, `1.5h`) or a bare number of core-cycles (`2e10`);
/// nothing when it is neither, not above 0, or beyond a year or 1e18.
std::optional<CycleLevelLimit> parseCycleLevelLimit(llvm::StringRef text);
/// The limit as a person reads it: "10 min", "90 s", "2.00e+10 core-cycles".
std::string describeCycleLevelLimit(const CycleLevelLimit &limit);

struct CycleLevelOptions {
  /// Threads, MPI processes, a stop flag.
  MeshWorkers workers;
  /// The most the run may take, and the most host memory a process may
  /// need (0: no memory limit), judged beforehand.
  CycleLevelLimit limit;
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
  /// The run was stopped in this region (empty: it ran to the end), by
  /// CycleLevelOptions::workers.stop or, when `stoppedAtLimit`, at the
  /// limit's time; `kernels` holds those simulated before.
  std::string stoppedIn;
  bool stoppedAtLimit = false;
  std::vector<CycleLevelWave> waves;
  /// Cores x cycles simulated over all kernels.
  int64_t coreCycles = 0;
  /// The target's clock, to turn cycles into time.
  double clockHz = 0;
};

/// Fails with a diagnostic on `device` when its `target` is one the
/// cycle-level model cannot run: links that do not move one wavelet a
/// cycle, or hops of more than a cycle.
mlir::LogicalResult
checkCycleLevelTarget(wafer::DeviceOp device,
                      const target::WaferTargetModel &target);

/// Simulates every region of `device` once, at its micro-batch, as the IR
/// places it: each core does the work its region's layout gives it, on
/// the region's rectangle (for attention, one (sequence, head) block with
/// its share of the pairs); the regions of a wave also run together on one
/// mesh, side by side. A kernel run again (`repeats`) or in vocabulary
/// chunks is simulated once. Before it starts, it measures how fast this
/// host simulates its costliest program (kSpeedMeasurementSeconds of it)
/// and prints to `options.log` the core-cycles the run will take, the time
/// at that speed and the host memory of its largest mesh. Fails with a
/// diagnostic on the device when the run would take more than
/// `options.limit` or more memory than `maxHostBytes`, on a region without
/// a placement, and on a region that cannot run. A run that reaches a
/// limit in seconds all the same stops there (CycleLevelRun::stoppedIn).
mlir::FailureOr<CycleLevelRun>
runCycleLevel(wafer::DeviceOp device, const CycleLevelOptions &options = {});

} // namespace cgpt::sim::mesh

#endif // CGPT_SIM_MESH_CYCLELEVEL_H
