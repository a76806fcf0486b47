//===- MeshSimulator.h - a cycle-level model of the core mesh ---*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// A rectangle of cores simulated cycle by cycle, the reference the analytic
// kernel times are checked against (docs/runtime.md). Each core is a router
// with five ports (north, south, east, west and the ramp to its compute
// engine) and a compute engine that runs a small program of tasks. Routers
// move one 32-bit wavelet per link per direction per cycle, per color along
// that color's route (several outputs multicast), into queues of finite
// depth: a full queue stops its sender. The compute engine runs one task at
// a time; a task started by a wavelet pays the target's activation cost.
// Wavelets carry no values: only when they move is modelled.
//
// The loop skips cycles in which nothing can move, so its result is the
// same as stepping every cycle. A program that can never finish (a queue
// nobody drains, a task waiting for wavelets that never come) is reported
// as a deadlock with the cycle and the cores and colors involved.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SIM_MESH_MESHSIMULATOR_H
#define CGPT_SIM_MESH_MESHSIMULATOR_H

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cgpt::sim::mesh {

/// A router port. `ramp` is the link to the core's own compute engine.
enum Port : uint8_t { north = 0, south = 1, east = 2, west = 3, ramp = 4 };
constexpr int kPorts = 5;

/// Where one color goes at one core: the ports it is received from and the
/// ports it is sent to (a multicast when there are several). Bit i of a
/// mask is port i.
struct Route {
  int color = 0;
  uint8_t rx = 0, tx = 0;
};

/// One step of a core's program.
struct Instruction {
  enum Kind : uint8_t {
    /// Takes `count` wavelets of `color` from the ramp, one task each:
    /// activation, then `cycles` of work.
    receive,
    /// Streams `count` wavelets of `color` into the router, one a cycle,
    /// after one activation.
    send,
    /// Streams `count` wavelets from `color` to `outColor`, adding its own
    /// partial sum to each (a vector operation over the fabric input, one
    /// wavelet a cycle after one activation).
    forward,
    /// Stores `count` wavelets of `color` in memory as they stream in, one
    /// a cycle after one activation.
    store,
    /// Works for `cycles` without the fabric.
    compute,
  };
  Kind kind = compute;
  int color = 0, outColor = 0;
  int64_t count = 0, cycles = 0;
};

/// Wavelets entering at an edge: `count` of `color` into core (x, y) from
/// outside through `port`, one a cycle. The edge is the mesh's, or, inside
/// it, that of the rectangle a region runs on (regions side by side), where
/// the neighbour across must not send that color this way.
struct Injector {
  int x = 0, y = 0;
  Port port = north;
  int color = 0;
  int64_t count = 0;
};

/// An edge link that takes wavelets off, as fast as they come: what leaves
/// core (x, y) through `port` on `color` (at the mesh's edge, or at the
/// edge of a region's rectangle inside it, where it does not reach the
/// neighbour).
struct Drain {
  int x = 0, y = 0;
  Port port = east;
  int color = 0;
};

struct MeshProgram {
  int width = 0, height = 0;
  /// Per core (index y * width + x): its routes and its program.
  std::vector<llvm::SmallVector<Route, 4>> routes;
  std::vector<std::vector<Instruction>> programs;
  std::vector<Injector> injectors;
  std::vector<Drain> drains;

  MeshProgram(int width, int height)
      : width(width), height(height), routes(width * height),
        programs(width * height) {}
  int index(int x, int y) const { return y * width + x; }
};

/// The figures of the target the mesh model reads.
struct MeshConfig {
  int colors = 24;
  /// Wavelets one input queue holds, per port and color.
  int queueDepth = 4;
  int64_t activationCycles = 2;
  /// A guard against runaway programs: the most cycles to simulate.
  int64_t cycleLimit = int64_t(1) << 40;
  /// Jump over cycles in which nothing can move (the result is the same as
  /// stepping each one; tests compare the two).
  bool skipIdleCycles = true;
};

struct MeshResult {
  int64_t cycles = 0;
  /// Cores x cycles simulated.
  int64_t coreCycles = 0;
  /// For each row of cores, the first and last cycle one of its compute
  /// engines worked ({0, 0} for a row that never did).
  std::vector<std::pair<int64_t, int64_t>> rowActivity;
};

/// Simulates `program` to completion. Returns nothing and sets `error` when
/// the program is malformed (a route off the mesh, a color out of range or
/// routed twice on one core, an instruction or injector that names a color
/// the core does not route) or deadlocks.
std::optional<MeshResult> simulate(const MeshProgram &program,
                                   const MeshConfig &config,
                                   std::string &error);

} // namespace cgpt::sim::mesh

#endif // CGPT_SIM_MESH_MESHSIMULATOR_H
