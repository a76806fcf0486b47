//===- Dropout.h - the counter-based dropout mask ---------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Dropout masks are drawn by a counter-based generator: each element's bits
// are a hash of the step, the dropout site, the element's sequence in the
// global batch, its row and its column. The forward pass, a recomputed
// forward and the backward pass therefore draw the same mask without
// storing it, whatever the micro-batch split or the number of systems, as a
// core regenerates it from its coordinates (docs/runtime.md, "Dropout").
// test/reference/check_against_torch.py draws the same masks in NumPy.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_EXEC_DROPOUT_H
#define CGPT_EXEC_DROPOUT_H

#include "cgpt/Exec/Kernels.h"

#include <cstdint>

namespace cgpt::exec {

/// A 32-bit integer hash with low bias (C. Wellons' "lowbias32"): two
/// multiplies and three xor-shifts, seven operations.
constexpr uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

/// Where a micro-batch's masks come from: the run's seed, the optimizer
/// step, and the global batch index of the micro-batch's first sequence.
struct DropoutStream {
  uint64_t seed = 0;
  int64_t step = 0;
  int64_t firstSequence = 0;
};

/// The key of sequence `sequence`'s mask at `site`.
uint32_t dropoutSequenceKey(const DropoutStream &stream, int64_t site,
                            int64_t sequence);

/// `input` [sequences, ..., columns] with each element kept, scaled by
/// 1 / (1 - rate), when the bits of (its sequence, row within the
/// sequence, column) are at least rate x 2^32, and zeroed otherwise.
Tensor dropout(const Tensor &input, double rate, int64_t site,
               const DropoutStream &stream);

} // namespace cgpt::exec

#endif // CGPT_EXEC_DROPOUT_H
