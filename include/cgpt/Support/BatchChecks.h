//===- BatchChecks.h - verifier checks of batch facts -----------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The batch facts a dataflow program and a wafer device both carry, checked
// once with one wording.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SUPPORT_BATCHCHECKS_H
#define CGPT_SUPPORT_BATCHCHECKS_H

#include "mlir/IR/Operation.h"

namespace cgpt {

/// The largest global batch, in sequences, that any level accepts.
constexpr int64_t kMaxBatch = int64_t(1) << 24;
/// The largest per-sequence size (bytes or tiles) a wafer region or device
/// may state. With batches within kMaxBatch, every product and sum the
/// memory and timing models form stays within int64_t.
constexpr int64_t kMaxPerSequence = int64_t(1) << 36;
/// The most FLOPs one kernel may execute per sequence: a 175B model's
/// logits at a sequence of 2048 pass 2^40, and attention's scores of
/// LLaMA 3.1 405B at 131,072 tokens 2^49. The timing model forms products
/// with the batch in double precision; a step's sums are checked
/// (StepCosts).
constexpr int64_t kMaxFlopsPerSequence = int64_t(1) << 52;

/// The most attention work cgpt models per sequence and layer, as
/// seq_len^2 x num_heads x head_size (4x that is the scores' forward
/// FLOPs). It keeps every kernel's FLOPs, and their sums over a step, far
/// inside int64_t; a sequence past it is refused before any lowering.
constexpr int64_t kMaxAttentionWork = int64_t(1) << 52;
/// The same, summed over all layers: a step's FLOPs per sequence (about 16
/// times this with the backward pass and recomputation) stay below 2^63.
constexpr int64_t kMaxStepAttentionWork = int64_t(1) << 56;

/// global_batch, num_csx and seq_len are positive, the batch within
/// kMaxBatch, and every system gets at least one sequence.
inline mlir::LogicalResult verifyBatchFacts(mlir::Operation *op,
                                            int64_t globalBatch, int64_t numCsx,
                                            int64_t seqLen) {
  if (globalBatch <= 0 || numCsx <= 0 || seqLen <= 0)
    return op->emitOpError() << "global_batch, num_csx and seq_len must be "
                                "positive, got "
                             << globalBatch << ", " << numCsx << ", " << seqLen;
  if (globalBatch > kMaxBatch)
    return op->emitOpError() << "global_batch (" << globalBatch
                             << ") exceeds the limit of " << kMaxBatch;
  if (globalBatch < numCsx)
    return op->emitOpError()
           << "global_batch (" << globalBatch << ") is smaller than num_csx ("
           << numCsx << "): every system needs a sequence";
  return mlir::success();
}

/// micro_batch and grad_accum_steps are both 0 (not planned yet) or both
/// positive.
inline mlir::LogicalResult verifyBatchPlan(mlir::Operation *op,
                                           int64_t microBatch,
                                           int64_t gradAccumSteps) {
  if (microBatch < 0 || gradAccumSteps < 0 ||
      (microBatch == 0) != (gradAccumSteps == 0))
    return op->emitOpError() << "micro_batch (" << microBatch
                             << ") and grad_accum_steps (" << gradAccumSteps
                             << ") must both be 0 (not planned) or both "
                                "positive";
  return mlir::success();
}

} // namespace cgpt

#endif // CGPT_SUPPORT_BATCHCHECKS_H
