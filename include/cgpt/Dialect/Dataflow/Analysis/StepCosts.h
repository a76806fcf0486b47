//===- StepCosts.h - FLOPs, streamed bytes and kept activations -*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_DATAFLOW_ANALYSIS_STEPCOSTS_H
#define CGPT_DIALECT_DATAFLOW_ANALYSIS_STEPCOSTS_H

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"

namespace cgpt::dataflow {

/// The costs of one training step, counted from the kernels and streams a
/// `dataflow.program` actually contains (docs/dataflow.md).
struct StepCosts {
  /// Algorithmic FLOPs for one sequence: every kernel but the ones marked
  /// `recompute`.
  int64_t flopsPerSequence = 0;
  /// FLOPs of the `recompute` kernels, for one sequence.
  int64_t recomputeFlopsPerSequence = 0;
  /// A sum above passed int64_t (kernels each within kMaxFlopsPerSequence,
  /// but very many): the figures are then meaningless and refused.
  bool overflowed = false;
  /// Bytes that one micro-batch pass streams: weights in, gradients out.
  int64_t weightBytesIn = 0;
  int64_t gradientBytesOut = 0;
  /// Bytes one sequence keeps in `dataflow.stash` buffers, in all and in
  /// the forward stage of the average decoder layer.
  int64_t keptBytesPerSequence = 0;
  int64_t keptBytesPerSequencePerLayer = 0;
  int64_t layers = 0;

  // Per optimizer step.
  int64_t globalBatch = 0;
  int64_t numCsx = 0;
  /// Micro-batch passes each system makes per step: the loop's gradient
  /// accumulation steps, 0 while the micro-batch is still to be planned.
  int64_t passesPerSystem = 0;

  double algorithmicFlopsPerStep() const {
    return static_cast<double>(flopsPerSequence) * globalBatch;
  }
  double recomputeFlopsPerStep() const {
    return static_cast<double>(recomputeFlopsPerSequence) * globalBatch;
  }
  /// Weights in plus gradients out, per pass and per system per step (0
  /// until the passes are planned).
  int64_t streamedBytesPerPass() const {
    return weightBytesIn + gradientBytesOut;
  }
  double streamedBytesPerStep() const {
    return static_cast<double>(passesPerSystem) *
           static_cast<double>(streamedBytesPerPass());
  }
};

StepCosts computeStepCosts(ProgramOp program);

} // namespace cgpt::dataflow

#endif // CGPT_DIALECT_DATAFLOW_ANALYSIS_STEPCOSTS_H
