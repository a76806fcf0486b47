//===- BandLinks.h - how the bands of a parallel mesh run talk --*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// A parallel cycle-level run cuts the mesh into bands of whole rows, one
// per worker (a thread of this process, or an MPI process), each simulating
// its own cores. Only north and south links cross a cut. A router sees the
// room in its neighbour's queue as it was at the start of the cycle (the
// credit for a wavelet taken out comes back at the cycle's end), so what a
// band must learn from its neighbour each cycle is exactly what crossed
// the border: the wavelets that entered its queues, and the wavelets the
// neighbour took out of the queues this band feeds. Exchanging that once a
// cycle is a conservative synchronisation whose lookahead is the one-cycle
// hop: no band ever runs ahead of what it can know, and the run is the
// same, bit for bit, for any number of bands (docs/runtime.md, "The whole
// wafer").
//
// BandLinks is what one worker uses for that exchange and for the few
// figures all bands agree on each cycle; MeshSimulator.cpp implements it
// for threads and for a run alone, lib/Sim/Mesh/MPI for MPI processes.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SIM_MESH_BANDLINKS_H
#define CGPT_SIM_MESH_BANDLINKS_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace cgpt::sim::mesh {

/// One event at a border, about a router queue of the row across it in
/// color lane `lane` of column `x`: a wavelet that entered it from this
/// band (`arrived`, carrying `lo` and `hi`), or a wavelet this band took
/// out of its own queue that the other band feeds (the credit).
struct BorderEntry {
  int32_t x = 0;
  int16_t lane = 0;
  uint8_t arrived = 0;
  float lo = 0, hi = 0;
};

/// Figures every band gives each cycle; the run goes on with their minimum.
constexpr int kCycleFigures = 3;
using CycleFigures = std::array<int64_t, kCycleFigures>;

class BandLinks {
public:
  virtual ~BandLinks() = default;
  /// This worker, and how many take part (bands beyond the mesh's rows
  /// have no cores but still join every exchange).
  virtual int worker() const = 0;
  virtual int workers() const = 0;
  /// Ends a cycle: sends `toNorth` to worker - 1 and `toSouth` to
  /// worker + 1 where `north` and `south` say the band has such a
  /// neighbour, receives theirs in `fromNorth` and `fromSouth` (emptied
  /// first), and replaces `figures` with their minimum over all workers.
  virtual void endCycle(bool north, bool south,
                        const std::vector<BorderEntry> &toNorth,
                        const std::vector<BorderEntry> &toSouth,
                        std::vector<BorderEntry> &fromNorth,
                        std::vector<BorderEntry> &fromSouth,
                        CycleFigures &figures) = 0;
  /// Replaces `figures` with their minimum over all workers.
  virtual void minimum(CycleFigures &figures) = 0;
  /// Every worker's `mine`, in worker order.
  virtual std::vector<std::string> gather(const std::string &mine) = 0;
};

} // namespace cgpt::sim::mesh

#endif // CGPT_SIM_MESH_BANDLINKS_H
