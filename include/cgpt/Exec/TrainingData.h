//===- TrainingData.h - the batches a functional run trains on --*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Training text tokenized by bytes (a vocabulary of 256), cut into
// consecutive windows of seq + 1 bytes: a window's first seq bytes are the
// tokens, its last seq the labels. Step t takes windows t * batch onwards,
// wrapping around the text. Without text, seeded uniform tokens stand in.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_EXEC_TRAININGDATA_H
#define CGPT_EXEC_TRAININGDATA_H

#include "cgpt/Exec/Executor.h"

#include "llvm/Support/Error.h"

#include <string>

namespace cgpt::exec {

class TrainingData {
public:
  /// Byte-level batches of the text in `path`. Fails when the vocabulary
  /// cannot hold every byte or the text is shorter than one window.
  static llvm::Expected<TrainingData> fromText(llvm::StringRef path,
                                               int64_t seqLen, int64_t vocab);
  /// Seeded uniform tokens over the vocabulary.
  static TrainingData synthetic(uint64_t seed, int64_t seqLen, int64_t vocab);

  /// The global batch of 0-based step `step`.
  Batch batch(int64_t step, int64_t batchSize) const;

  /// Where the data comes from, for the summary.
  const std::string &describe() const { return description; }

private:
  std::string text;
  uint64_t seed = 0;
  int64_t seqLen = 0, vocab = 0;
  std::string description;
};

} // namespace cgpt::exec

#endif // CGPT_EXEC_TRAININGDATA_H
