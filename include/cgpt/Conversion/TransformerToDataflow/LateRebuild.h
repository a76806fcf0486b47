//===- LateRebuild.h - rebuilding recomputed tensors late -------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// recompute=tensor: a layer's backward stage reruns the layer's forward
// kernels at its start, as recompute=layer does, and then rebuilds again,
// just before the backward kernel that reads it, each recomputed tensor
// that would otherwise stay live across the stage's peak (attention's
// queries, keys and values across the feed-forward's backward, say), when
// rebuilding costs little: the tensor then lives twice, briefly, instead of
// once across the peak (docs/dataflow.md, "Recompute policy").
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_CONVERSION_TRANSFORMERTODATAFLOW_LATEREBUILD_H
#define CGPT_CONVERSION_TRANSFORMERTODATAFLOW_LATEREBUILD_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Builders.h"

namespace cgpt {

/// At most this share of a stage's executed FLOPs is spent on one rebuild
/// (a judgement: one QKV projection is about 7% of a layer's backward).
constexpr double kLateRebuildFlopsShare = 0.1;

/// Rebuilds late, in the ops of `body` after `after` (null: all of them),
/// the recomputed tensors live across the stage's peak; returns how many
/// kernels it added.
int64_t rebuildLate(mlir::Block &body, mlir::Operation *after,
                    mlir::OpBuilder &builder);

} // namespace cgpt

#endif // CGPT_CONVERSION_TRANSFORMERTODATAFLOW_LATEREBUILD_H
