//===- LayerNormValues.h - a placed layer norm run with real values -*- C++
//-*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Runs a layer norm's mesh program (KernelPrograms.h) with numbers in its
// buffers and wavelets: each core's SRAM holds its token group's rows of
// its feature group and those features' gain and shift; the segment sums
// each token's statistics along its row of cores and multicasts them back,
// and every core normalizes its block in place. The normalized rows are
// read from every core, the mean and reciprocal standard deviation from
// the first core of each segment. Every token group runs, so a wrong
// route, chain or multicast gives a wrong number.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SIM_MESH_LAYERNORMVALUES_H
#define CGPT_SIM_MESH_LAYERNORMVALUES_H

#include "cgpt/Sim/Mesh/KernelPrograms.h"

#include "llvm/ADT/ArrayRef.h"

#include <optional>
#include <string>
#include <vector>

namespace cgpt::sim::mesh {

/// Why `kernel`, laid out as `layout` on `rect`, cannot run with values as
/// a layer norm (another kernel, a layout that does not fit the
/// rectangle); empty when it can.
std::string layerNormRefusal(const wafer::KernelShape &kernel,
                             const wafer::Layout &layout,
                             const wafer::Rect &rect);

/// A layer norm's results, and the cycles its run on the mesh took.
struct LayerNormRun {
  /// [T, N] row-major, and [T] each.
  std::vector<float> result, mean, rstd;
  int64_t cycles = 0;
};

/// Runs the layer norm `kernel` for `microBatch` sequences, laid out as
/// `layout` on `rect`, with values: `input` is [T, N] row-major f32 (T =
/// microBatch x rows tokens, N = columns features), `gain` and `shift`
/// [N]. Returns nothing and sets `error` for a kernel layerNormRefusal
/// refuses, operands of the wrong size, or a program that fails to load or
/// run.
std::optional<LayerNormRun>
runLayerNorm(const wafer::KernelShape &kernel, const wafer::Layout &layout,
             int64_t microBatch, const target::WaferTargetModel &target,
             const wafer::Rect &rect, llvm::ArrayRef<float> input,
             llvm::ArrayRef<float> gain, llvm::ArrayRef<float> shift,
             double epsilon, std::string &error);

} // namespace cgpt::sim::mesh

#endif // CGPT_SIM_MESH_LAYERNORMVALUES_H
