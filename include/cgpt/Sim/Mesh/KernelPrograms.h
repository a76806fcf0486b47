//===- KernelPrograms.h - placed kernels as per-core programs ---*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Turns one kernel of the wafer IR, laid out as its region was placed, into
// the per-core programs and routes the cycle-level mesh model runs: the
// algorithm each kernel kind runs in the analytic model
// (`wafer::kernelTime`), wavelet by wavelet. Each core does the work its
// layout gives it (its tokens and features); on the simulated grid,
// feature groups chain along the rows and token groups stand in the
// columns, each column of the grid alike; an attention block's query
// blocks are its rows and key blocks its columns.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SIM_MESH_KERNELPROGRAMS_H
#define CGPT_SIM_MESH_KERNELPROGRAMS_H

#include "cgpt/Dialect/Wafer/Analysis/KernelCost.h"
#include "cgpt/Sim/Mesh/MeshSimulator.h"

namespace cgpt::sim::mesh {

/// The programs of `kernel` for `microBatch` sequences, each core doing
/// the work `layout` gives it, on a `width` x `height` grid of `target`'s
/// cores. For attention the grid is one (sequence, head) block:
/// `microBatch` times the heads must be 1.
MeshProgram buildKernelProgram(const wafer::KernelShape &kernel,
                               const wafer::Layout &layout, int64_t microBatch,
                               const target::WaferTargetModel &target,
                               int width, int height);

/// The grid of a kernel laid out as `layout` on `rect`: one chain of its
/// feature groups (or, for attention, one block of query by key blocks)
/// per row, as many rows as its token groups (query blocks) up to the
/// rectangle's height; every further row of groups would run alike.
std::pair<int, int> simulatedGrid(const wafer::KernelShape &kernel,
                                  const wafer::Layout &layout,
                                  const wafer::Rect &rect);

/// Copies `part` into `mesh` with its north-west core at (x, y).
void embedProgram(MeshProgram &mesh, const MeshProgram &part, int x, int y);

/// The layout the rectangle stands for: its rows and columns.
wafer::Layout rectangleLayout(int width, int height);

/// The mesh model's figures from `target`.
MeshConfig meshConfig(const target::WaferTargetModel &target);

} // namespace cgpt::sim::mesh

#endif // CGPT_SIM_MESH_KERNELPROGRAMS_H
