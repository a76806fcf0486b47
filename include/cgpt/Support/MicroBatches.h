//===- MicroBatches.h - a system's batch in even passes ---------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// How a system runs its share of the batch in micro-batch passes. Model Zoo
// from release 2.5 distributes the work evenly where the micro-batch does
// not divide the batch: ceil(batch / micro) passes whose sizes differ by at
// most one sequence (docs/wafer.md, "Micro-batches"). The planner, the
// verifier, the schedule and the functional executor all split this way.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SUPPORT_MICROBATCHES_H
#define CGPT_SUPPORT_MICROBATCHES_H

#include <cstdint>
#include <vector>

namespace cgpt {

/// `batch` sequences in `passes` passes of `microBatch` or `microBatch - 1`
/// sequences, the larger passes first.
struct PassSplit {
  int64_t batch = 0;
  int64_t passes = 0;
  /// The largest pass: what memory must hold.
  int64_t microBatch = 0;
  /// How many passes hold `microBatch` sequences; the rest hold one fewer.
  int64_t fullPasses = 0;

  /// The even split of `batch` into passes of at most `requested`
  /// sequences (both positive): as few passes as that allows, then sizes
  /// as equal as they go. The largest pass may be smaller than requested.
  static PassSplit atMost(int64_t batch, int64_t requested) {
    PassSplit split;
    split.batch = batch;
    split.passes = (batch + requested - 1) / requested;
    split.microBatch = (batch + split.passes - 1) / split.passes;
    split.fullPasses = batch - split.passes * (split.microBatch - 1);
    return split;
  }

  int64_t shortPasses() const { return passes - fullPasses; }
  bool isEven() const { return fullPasses == passes; }
  /// The first sequence of pass `pass` (0-based; `passes` gives `batch`).
  int64_t firstOf(int64_t pass) const {
    return pass * microBatch - (pass > fullPasses ? pass - fullPasses : 0);
  }
};

/// Whether `microBatch` x `passes` is the even split of `batch`: the passes
/// are as few as `microBatch` allows and cover `batch` with sizes
/// differing by at most one.
inline bool isEvenSplit(int64_t batch, int64_t microBatch, int64_t passes) {
  if (batch <= 0 || microBatch <= 0 || passes <= 0)
    return false;
  PassSplit split = PassSplit::atMost(batch, microBatch);
  return split.microBatch == microBatch && split.passes == passes;
}

/// Every largest-pass size of an even split of `batch`, ascending: one per
/// number of passes that gives a distinct size, about 2 sqrt(batch) of them
/// (every divisor of `batch` among them).
inline std::vector<int64_t> evenMicroBatches(int64_t batch) {
  std::vector<int64_t> sizes;
  for (int64_t passes = batch; passes >= 1;) {
    int64_t size = (batch + passes - 1) / passes;
    sizes.push_back(size);
    // The fewest passes that still give `size`: skip the rest of its run.
    int64_t fewest = (batch + size - 1) / size;
    passes = fewest - 1;
  }
  return sizes;
}

} // namespace cgpt

#endif // CGPT_SUPPORT_MICROBATCHES_H
