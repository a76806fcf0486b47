//===- KernelPrograms.h - placed kernels as per-core programs ---*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Turns one kernel of the wafer IR, laid out on a rectangle of cores, into
// the per-core programs and routes the cycle-level mesh model runs: the
// algorithm each kernel kind runs in the analytic model
// (`wafer::kernelTime`), wavelet by wavelet. Feature groups are the
// rectangle's columns and token groups its rows; an attention block's query
// blocks are its rows and key blocks its columns.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SIM_MESH_KERNELPROGRAMS_H
#define CGPT_SIM_MESH_KERNELPROGRAMS_H

#include "cgpt/Dialect/Wafer/Analysis/ExecutionModel.h"
#include "cgpt/Sim/Mesh/MeshSimulator.h"

namespace cgpt::sim::mesh {

/// The programs of `kernel` for `microBatch` sequences on a `width` x
/// `height` rectangle of `target`'s cores. For attention the rectangle is
/// one (sequence, head) block: `microBatch` times the heads must be 1.
MeshProgram buildKernelProgram(const wafer::KernelShape &kernel,
                               int64_t microBatch,
                               const target::WaferTargetModel &target,
                               int width, int height);

/// The layout the rectangle stands for: its rows and columns.
wafer::Layout rectangleLayout(int width, int height);

/// The mesh model's figures from `target`.
MeshConfig meshConfig(const target::WaferTargetModel &target);

} // namespace cgpt::sim::mesh

#endif // CGPT_SIM_MESH_KERNELPROGRAMS_H
