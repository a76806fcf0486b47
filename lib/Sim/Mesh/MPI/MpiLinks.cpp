//===- MpiLinks.cpp - the bands of a mesh run in MPI processes ------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/MpiLinks.h"

// MPI's C interface only: the deprecated C++ bindings need a library of
// their own.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cstdlib>

namespace cgpt::sim::mesh {
namespace {

/// Tags of the border messages, by the way they go.
enum Tag : int { goingNorth = 1, goingSouth = 2 };

/// Receives the border entries `from` sent with `tag`, however many.
void receive(int from, int tag, std::vector<BorderEntry> &entries) {
  MPI_Status status;
  MPI_Probe(from, tag, MPI_COMM_WORLD, &status);
  int bytes = 0;
  MPI_Get_count(&status, MPI_BYTE, &bytes);
  entries.resize(bytes / sizeof(BorderEntry));
  MPI_Recv(entries.data(), bytes, MPI_BYTE, from, tag, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
}

/// Whether an MPI launcher started this process: Open MPI's mpirun, or a
/// PMI/PMIx launcher such as Slurm's srun.
bool launched() {
  for (const char *variable :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (std::getenv(variable))
      return true;
  return false;
}

} // namespace

std::unique_ptr<MpiLinks> MpiLinks::join(int &argc, char **&argv) {
  if (!launched())
    return nullptr;
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return std::unique_ptr<MpiLinks>(new MpiLinks(rank, size));
}

MpiLinks::~MpiLinks() { MPI_Finalize(); }

void MpiLinks::endCycle(bool north, bool south,
                        const std::vector<BorderEntry> &toNorth,
                        const std::vector<BorderEntry> &toSouth,
                        std::vector<BorderEntry> &fromNorth,
                        std::vector<BorderEntry> &fromSouth,
                        CycleFigures &figures) {
  MPI_Request sends[2];
  int sent = 0;
  auto send = [&](const std::vector<BorderEntry> &entries, int to, int tag) {
    MPI_Isend(entries.data(),
              static_cast<int>(entries.size() * sizeof(BorderEntry)), MPI_BYTE,
              to, tag, MPI_COMM_WORLD, &sends[sent++]);
  };
  if (north)
    send(toNorth, rank - 1, goingNorth);
  if (south)
    send(toSouth, rank + 1, goingSouth);
  fromNorth.clear();
  fromSouth.clear();
  if (north)
    receive(rank - 1, goingSouth, fromNorth);
  if (south)
    receive(rank + 1, goingNorth, fromSouth);
  MPI_Waitall(sent, sends, MPI_STATUSES_IGNORE);
  minimum(figures);
}

void MpiLinks::minimum(CycleFigures &figures) {
  MPI_Allreduce(MPI_IN_PLACE, figures.data(), kCycleFigures, MPI_INT64_T,
                MPI_MIN, MPI_COMM_WORLD);
}

std::vector<std::string> MpiLinks::gather(const std::string &mine) {
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(size), offsets(size);
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT,
                MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::string all(total, '\0');
  MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(),
                 offsets.data(), MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> parts;
  for (int r = 0; r < size; ++r)
    parts.push_back(all.substr(offsets[r], lengths[r]));
  return parts;
}

} // namespace cgpt::sim::mesh
