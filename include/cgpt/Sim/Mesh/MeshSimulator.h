//===- MeshSimulator.h - a cycle-level model of the core mesh ---*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// A rectangle of cores simulated cycle by cycle: the reference the analytic
// kernel times are checked against (docs/runtime.md). Each core is a router
// with five ports (north, south, east, west and the ramp to its compute
// engine) and a compute engine that executes a CoreProgram: its buffers in
// the core's SRAM, its tasks, and their vector operations over memory,
// fabric and registers (CoreProgram.h).
//
// Routers move one 32-bit wavelet per link per direction per cycle, per
// color along that color's route (several outputs multicast), into queues
// of finite depth: a full queue stops its sender; between a router and its
// compute engine a wavelet takes the target's ramp latency either way, its
// place in the queue held meanwhile. A compute engine runs one
// task at a time: picking a task costs the target's activation cycles; a
// vector operation over memory takes as long as the larger of its SIMD
// width and its SRAM traffic allow (the target's widths by precision and
// its read and write bytes per cycle); an operation with a fabric operand
// moves one wavelet a cycle, waiting for wavelets and for room; an
// asynchronous one runs as a microthread beside the tasks (waiting for one
// already on any of its fabric queues). A program whose
// buffers exceed the core's SRAM beside its reserve fails to load. With
// `values`, wavelets and buffers carry numbers: what a program computes
// can be read back. Nothing here is told a kernel's time: it follows from
// the program and these rates.
//
// A router sees the room in a neighbour's queue as it was at the start of
// the cycle: a wavelet taken out frees its place for the sender from the
// next cycle on (the credit comes back at the cycle's end). So no core's
// step depends on the order the cores are stepped in, and the mesh can be
// cut into bands of rows simulated by parallel workers, threads or MPI
// processes, with the same result bit for bit (BandLinks.h).
//
// The loop skips cycles in which nothing can move, so its result is the
// same as stepping every cycle. A program that can never finish (a queue
// nobody drains, a task waiting for wavelets that never come) is reported
// as a deadlock with the cycle and the cores and colors involved.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SIM_MESH_MESHSIMULATOR_H
#define CGPT_SIM_MESH_MESHSIMULATOR_H

#include "cgpt/Sim/Mesh/BandLinks.h"
#include "cgpt/Sim/Mesh/CoreProgram.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cgpt::sim::mesh {

/// A router port. `ramp` is the link to the core's own compute engine.
enum Port : uint8_t { north = 0, south = 1, east = 2, west = 3, ramp = 4 };
constexpr int kPorts = 5;

/// A wavelet's 32 bits: one f32 (`lo`), or two 16-bit values.
constexpr int64_t kWaveletBytes = 4;
struct Wavelet {
  float lo = 0, hi = 0;
};

/// Where one color goes at one core: the ports it is received from and the
/// ports it is sent to (a multicast when there are several). Bit i of a
/// mask is port i.
struct Route {
  int color = 0;
  uint8_t rx = 0, tx = 0;
};

/// Wavelets entering at an edge: `count` of `color` into core (x, y) from
/// outside through `port`, one a cycle, carrying `payload` (zeros when it
/// is empty). The edge is the mesh's, or, inside it, that of the rectangle
/// a region runs on (regions side by side), where the neighbour across must
/// not send that color this way.
struct Injector {
  int x = 0, y = 0;
  Port port = north;
  int color = 0;
  int64_t count = 0;
  std::vector<Wavelet> payload;
};

/// An edge link that takes wavelets off, as fast as they come: what leaves
/// core (x, y) through `port` on `color` (at the mesh's edge, or at the
/// edge of a region's rectangle inside it, where it does not reach the
/// neighbour). With `record`, the run keeps what left, in order.
struct Drain {
  int x = 0, y = 0;
  Port port = east;
  int color = 0;
  bool record = false;
};

struct MeshProgram {
  int width = 0, height = 0;
  /// Per core (index y * width + x): its routes.
  std::vector<llvm::SmallVector<Route, 4>> routes;
  /// The distinct core programs, and which one each core runs (-1: none).
  std::vector<CoreProgram> programs;
  std::vector<int32_t> programOf;
  std::vector<Injector> injectors;
  std::vector<Drain> drains;

  MeshProgram(int width, int height)
      : width(width), height(height), routes(width * height),
        programOf(width * height, -1) {}
  int index(int x, int y) const { return y * width + x; }
  int addProgram(CoreProgram program) {
    programs.push_back(std::move(program));
    return static_cast<int>(programs.size()) - 1;
  }
};

/// The figures of the target the mesh model reads.
struct MeshConfig {
  int colors = 24;
  /// Wavelets one input queue holds, per port and color.
  int queueDepth = 4;
  int64_t activationCycles = 2;
  /// Cycles a wavelet takes across a core's ramp, either way: from the
  /// compute engine into its router's queue, or from the router to the
  /// engine.
  int64_t rampLatencyCycles = 1;
  /// SRAM per core, and what its code, queues and stack keep.
  int64_t sramBytes = 49152, reservedBytes = 8192;
  /// Bytes the SRAM reads and writes per cycle.
  int64_t readBytesPerCycle = 16, writeBytesPerCycle = 8;
  /// Elements per cycle: an FMAC of 16-bit operands into f32 sums, an
  /// all-f32 FMAC, and the other operations on 16-bit and on f32 data.
  int64_t mixedFmacs = 2, f32Fmacs = 1, halfOps = 4, f32Ops = 2;
  /// Carry numbers in wavelets and buffers.
  bool values = false;
  /// A guard against runaway programs: the most cycles to simulate.
  int64_t cycleLimit = int64_t(1) << 40;
  /// Jump over cycles in which nothing can move (the result is the same as
  /// stepping each one; tests compare the two).
  bool skipIdleCycles = true;
};

struct MeshResult {
  /// Cycles to the end; with `stopped`, those simulated.
  int64_t cycles = 0;
  /// The run was stopped (MeshWorkers::stop) before the program ended.
  bool stopped = false;
  /// Cores x cycles simulated.
  int64_t coreCycles = 0;
  /// Host seconds the slowest worker spent simulating the cycles, setup
  /// excluded: the same on every worker of an MPI job.
  double seconds = 0;
  /// For each row of cores, the first and last cycle one of its compute
  /// engines worked ({0, 0} for a row that never did).
  std::vector<std::pair<int64_t, int64_t>> rowActivity;
  /// Per drain with `record`: what left through it, in order.
  std::vector<std::vector<Wavelet>> drained;
};

/// With `values`: fills a core's buffers before the run, and reads them
/// after. Each gets the core's index and its buffers' values, sized as the
/// program declares them.
struct CoreMemoryAccess {
  llvm::function_ref<void(int core, std::vector<std::vector<float>> &)> load;
  llvm::function_ref<void(int core, const std::vector<std::vector<float>> &)>
      store;
};

/// Where a run stands, for a progress line.
struct MeshProgress {
  int64_t cycle = 0, coreCycles = 0;
  /// Workers simulating it.
  int workers = 1;
};

/// How a run is spread over workers: the mesh cut into bands of whole
/// rows, each simulated by a thread of this process or, with `processes`,
/// by one process of an MPI job. The result does not depend on how.
struct MeshWorkers {
  /// Threads, at most: fewer on a small mesh, so that each band has at
  /// least `minCoresPerThread` cores (below that, the exchange at the end of
  /// each cycle costs more than the band's cores), and never more than the
  /// mesh has rows.
  int threads = 1;
  int64_t minCoresPerThread = 16384;
  /// This process's links to the others of an MPI job. Each process then
  /// simulates one band (threads do not apply) and returns the whole
  /// result; with `values`, CoreMemoryAccess sees the cores of its band.
  BandLinks *processes = nullptr;
  /// When set, the run ends after the cycle being simulated, and the
  /// result says how far it went (MeshResult::stopped).
  const std::atomic<bool> *stop = nullptr;
  /// When above 0, the run also ends after the cycle in which this many
  /// seconds of simulating have passed on any worker (to measure speed).
  double stopAfterSeconds = 0;
  /// Called on the first worker about once a second of a long run.
  std::function<void(const MeshProgress &)> progress;
};

/// The workers a run of a `width` x `height` mesh takes, each a band of
/// rows: the processes of the MPI job, or as many threads as `workers`
/// allows; never more than the mesh has rows.
int meshWorkers(int width, int height, const MeshWorkers &workers);

/// The host memory a run of `program` takes in one process when `workers`
/// share it: the program's description, and each of its bands' queues,
/// engines and buffers.
int64_t estimateHostBytes(const MeshProgram &program, const MeshConfig &config,
                          const MeshWorkers &workers);

/// Simulates `program` to completion. Returns nothing and sets `error` when
/// the program is malformed (a route off the mesh, a color out of range or
/// routed twice on one core, an operation on a color the core does not
/// route, buffers beyond a core's SRAM) or deadlocks.
std::optional<MeshResult> simulate(const MeshProgram &program,
                                   const MeshConfig &config, std::string &error,
                                   const CoreMemoryAccess &memory = {},
                                   const MeshWorkers &workers = {});

} // namespace cgpt::sim::mesh

#endif // CGPT_SIM_MESH_MESHSIMULATOR_H
