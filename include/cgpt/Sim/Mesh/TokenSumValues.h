//===- TokenSumValues.h - a token sum run with real values ----*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Runs a token sum's mesh program (KernelPrograms.h: a bias gradient) with
// numbers in its buffers and wavelets: each core's SRAM holds its token
// group's rows of its feature group, and the sums are read, block by
// block, from what leaves the bottom of each column of token groups (or,
// with one row of them and one block, from the cores' sums). Every token
// group runs, so the result is the whole sum; the sums of separate columns
// of segments are added on the host, as a weight gradient's are
// (docs/runtime.md).
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SIM_MESH_TOKENSUMVALUES_H
#define CGPT_SIM_MESH_TOKENSUMVALUES_H

#include "cgpt/Sim/Mesh/KernelPrograms.h"

#include "llvm/ADT/ArrayRef.h"

#include <optional>
#include <string>
#include <vector>

namespace cgpt::sim::mesh {

/// Why `kernel`, laid out as `layout` on `rect`, cannot run with values as
/// a token sum (another kind, a routed or chunked kernel, a layout that
/// does not fit the rectangle); empty when it can.
std::string tokenSumRefusal(const wafer::KernelShape &kernel,
                            const wafer::Layout &layout,
                            const wafer::Rect &rect);

/// A token sum's result, and the cycles its run on the mesh took.
struct TokenSumRun {
  std::vector<float> values;
  int64_t cycles = 0;
};

/// Runs the token sum `kernel` for `microBatch` sequences, laid out as
/// `layout` on `rect`, with values: `input` is [T, N] row-major f32 (T =
/// microBatch x rows tokens, N = columns features); returns the sum over
/// the tokens, [N]. Returns nothing and sets `error` for a kernel
/// tokenSumRefusal refuses, an input of the wrong size, or a program that
/// fails to load or run.
std::optional<TokenSumRun>
runTokenSum(const wafer::KernelShape &kernel, const wafer::Layout &layout,
            int64_t microBatch, const target::WaferTargetModel &target,
            const wafer::Rect &rect, llvm::ArrayRef<float> input,
            std::string &error);

} // namespace cgpt::sim::mesh

#endif // CGPT_SIM_MESH_TOKENSUMVALUES_H
