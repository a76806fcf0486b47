//===- MpiLinks.h - the bands of a mesh run in MPI processes ----*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// A cycle-level run over the processes of an MPI job (`mpirun -np N
// cgpt-run ... --cycle-level`): each process simulates one band of rows
// and exchanges with the processes of the bands beside it what crossed the
// border each cycle (BandLinks.h). Built when CMake finds MPI
// (CGPT_ENABLE_MPI); a tool links CGPTSimMPI and asks `join` whether it
// was started as part of a job.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SIM_MESH_MPILINKS_H
#define CGPT_SIM_MESH_MPILINKS_H

#include "cgpt/Sim/Mesh/BandLinks.h"

#include <memory>

namespace cgpt::sim::mesh {

class MpiLinks : public BandLinks {
public:
  /// This process's place in the MPI job that started it, MPI initialised;
  /// nothing when no MPI launcher (mpirun, srun) started it, and the
  /// process runs alone.
  static std::unique_ptr<MpiLinks> join(int &argc, char **&argv);
  /// Finalises MPI.
  ~MpiLinks() override;

  int worker() const override { return rank; }
  int workers() const override { return size; }
  void endCycle(bool north, bool south, const std::vector<BorderEntry> &toNorth,
                const std::vector<BorderEntry> &toSouth,
                std::vector<BorderEntry> &fromNorth,
                std::vector<BorderEntry> &fromSouth,
                CycleFigures &figures) override;
  void minimum(CycleFigures &figures) override;
  std::vector<std::string> gather(const std::string &mine) override;

private:
  MpiLinks(int rank, int size) : rank(rank), size(size) {}
  int rank, size;
};

} // namespace cgpt::sim::mesh

#endif // CGPT_SIM_MESH_MPILINKS_H
