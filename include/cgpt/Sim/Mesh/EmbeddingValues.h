//===- EmbeddingValues.h - embeddings with values ---------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Runs the embedding's mesh programs (KernelPrograms.h: a region whose
// kernel is a dataflow.gather, or a table's gradient: a
// dataflow.scatter_add, or a dataflow.position_grad whose ids are the
// tokens' places in their sequences) with numbers in their buffers and
// wavelets. The lookup: the table streams down the
// columns, each core keeps the rows its tokens' ids name, and the rows are
// read from every core. The gradient: each core sums its tokens' rows by
// id, and the table's gradient that passes down each column of token
// groups is read where it leaves. A core's lists (its tokens' distinct ids
// in order, the rows between them, where each row lands) are made from
// the token ids as they are loaded, as the input servers that send the
// ids would make them. Every token group runs, so a wrong id, token or
// feature gives a wrong number.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SIM_MESH_EMBEDDINGVALUES_H
#define CGPT_SIM_MESH_EMBEDDINGVALUES_H

#include "cgpt/Sim/Mesh/KernelPrograms.h"

#include "llvm/ADT/ArrayRef.h"

#include <optional>
#include <string>
#include <vector>

namespace cgpt::sim::mesh {

/// Why `kernel`, laid out as `layout` on `rect`, cannot run with values as
/// an embedding's lookup or gradient (another kernel, a layout that does
/// not fit the rectangle); empty when it can.
std::string embeddingRefusal(const wafer::KernelShape &kernel,
                             const wafer::Layout &layout,
                             const wafer::Rect &rect);

/// An embedding's result and the cycles its run on the mesh took: the
/// lookup's rows, [T, N] row-major, or the gradient of the table, [V, N].
struct EmbeddingRun {
  std::vector<float> values;
  int64_t cycles = 0;
};

/// Runs the lookup `kernel` (RowFunction::gather) for `microBatch`
/// sequences, laid out as `layout` on `rect`, with values: `table` is
/// [V, N] row-major (V the kernel's table rows, N its columns), `ids` the
/// T = microBatch x rows tokens' rows of it; the result is `scale` times
/// each token's row, plus, for a kernel with fused positions
/// (`positionRows`), the row of `positions` ([P, N], P at least those
/// rows; empty without) at the token's place in its sequence. Returns
/// nothing and sets `error` for a kernel embeddingRefusal refuses,
/// operands of the wrong size, an id outside the table, or a program that
/// fails to load or run.
std::optional<EmbeddingRun>
runGather(const wafer::KernelShape &kernel, const wafer::Layout &layout,
          int64_t microBatch, const target::WaferTargetModel &target,
          const wafer::Rect &rect, llvm::ArrayRef<float> table,
          llvm::ArrayRef<int32_t> ids, double scale,
          llvm::ArrayRef<float> positions, std::string &error);

/// Runs the gradient `kernel` (RowFunction::scatterAdd) as runGather runs
/// the lookup: `gradient` is [T, N] row-major, and row v of the result is
/// `scale` times the sum of the rows of the tokens whose id is v.
std::optional<EmbeddingRun>
runScatterAdd(const wafer::KernelShape &kernel, const wafer::Layout &layout,
              int64_t microBatch, const target::WaferTargetModel &target,
              const wafer::Rect &rect, llvm::ArrayRef<int32_t> ids,
              llvm::ArrayRef<float> gradient, double scale, std::string &error);

} // namespace cgpt::sim::mesh

#endif // CGPT_SIM_MESH_EMBEDDINGVALUES_H
