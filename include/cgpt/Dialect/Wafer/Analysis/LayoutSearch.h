//===- LayoutSearch.h - the split that makes kernels fastest ----*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// What the placers share: the splits of a rectangle they try, and the one
// that makes a kernel, or a stage's kernels together, fastest under the
// kernel cost model (docs/wafer.md).
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_WAFER_ANALYSIS_LAYOUTSEARCH_H
#define CGPT_DIALECT_WAFER_ANALYSIS_LAYOUTSEARCH_H

#include "cgpt/Dialect/Wafer/Analysis/StepProgram.h"

namespace cgpt::wafer {

/// Where region `region` takes its weights from under `mode`: streamed from
/// the north edge when it has an ingress, resident under layer pipelining
/// when it holds a weight or its gradient.
Edge weightsOf(const ProgramRegion &region, ExecutionMode mode);

/// The splits of `rect` tried for `extent` items (tokens, or a resident
/// weight's output columns), each fitting the rectangle (tokenGroupsOn):
/// feature groups by powers of two with as many token groups as their
/// segments make, and item groups that give each core any whole number of
/// items up to 64 SIMD widths (whole widths, so that a larger micro-batch
/// never has to leave lanes empty, and every count between, so that a
/// target with wider SIMD keeps every split a narrower one had and is never
/// slower), each on the widest segments that hold them.
llvm::SmallVector<Layout> layoutCandidates(Rect rect, int64_t extent,
                                           int64_t lanes, Edge weights);

/// The blocks tried for an attention kernel of sequences of `seqLen` on
/// `rect`: query blocks by key blocks, each the widest that gives its count
/// of blocks down the rectangle's height and along its width (at most
/// `seqLen` each), about 4 sqrt(w h) of them. None depends on the
/// micro-batch, so fewer (sequence, head) pairs never take longer.
llvm::SmallVector<Layout> attentionCandidates(int64_t seqLen, Rect rect,
                                              Edge weights);

/// The split of stage `s`'s token-major regions on `rect` under streaming
/// that makes them fastest together (each then keeps its own weights edge).
/// This and bestRegionLayout search once a program for each class of stage
/// or region, rectangle and micro-batch (LayoutSearchMemo).
Layout bestStageLayout(const StepProgram &program, size_t s, Rect rect,
                       int64_t microBatch);

/// The layout that makes `region` fastest on `rect` with its weights from
/// `weights` (of layoutCandidates, or for attention bestAttentionLayout
/// with a core's room beside its reserve), and that time.
std::pair<Layout, KernelTime> bestRegionLayout(const StepProgram &program,
                                               const ProgramRegion &region,
                                               Rect rect, int64_t microBatch,
                                               Edge weights);
/// The attention layout that makes `region` fastest on `rect` with `room`
/// bytes a core beside everything else: of the attentionCandidates, each
/// taking as many queries at once as fit (its `sum_block`,
/// attentionChunkFor), the fastest whose buffers fit, or the fastest of
/// all when none does; and that time.
std::pair<Layout, KernelTime> bestAttentionLayout(const StepProgram &program,
                                                  const ProgramRegion &region,
                                                  Rect rect, int64_t microBatch,
                                                  Edge weights, int64_t room);

} // namespace cgpt::wafer

#endif // CGPT_DIALECT_WAFER_ANALYSIS_LAYOUTSEARCH_H
