//===- Parameters.h - a model's weights and how they start ------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The trainable tensors of a transformer.train_step, each with the role the
// optimizer and the initializer need (docs/functional.md):
//
// - initialization follows the Cerebras-GPT paper: a normal truncated at two
//   standard deviations, std 0.02, and 0.02 / sqrt(2 n_layers) for the
//   output projections of attention and the FFN; norm scales start at 1,
//   biases and norm shifts at 0. Under muP the decoder's matrices use std /
//   sqrt(width multiplier), the width multiplier being 1 /
//   output_logits_scale;
// - weight decay applies to matrices (embeddings included), not to biases
//   or norms;
// - under muP the decoder's matrices learn at decoder_kernel_lr_scale times
//   the schedule's rate.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_EXEC_PARAMETERS_H
#define CGPT_EXEC_PARAMETERS_H

#include "cgpt/Dialect/Transformer/IR/Transformer.h"
#include "cgpt/Exec/Kernels.h"

#include <string>

namespace cgpt::exec {

struct ParameterSpec {
  std::string name;
  llvm::SmallVector<int64_t, 2> shape;
  /// Standard deviation of the truncated normal; 0 for a constant start.
  double initStd = 0.0;
  /// The start value when `initStd` is 0.
  float initValue = 0.0f;
  bool weightDecay = false;
  /// Factor on the schedule's learning rate.
  double lrScale = 1.0;
};

/// The parameters of `step` in the order the IR declares them.
std::vector<ParameterSpec> collectParameters(transformer::TrainStepOp step);

/// Seeded start values: each tensor draws from its own stream, derived from
/// `seed` and its name, so the same seed gives the same weights on every
/// machine and adding a tensor does not change the others.
std::vector<Tensor> initializeParameters(llvm::ArrayRef<ParameterSpec> specs,
                                         uint64_t seed);

/// A counter-based generator (splitmix64): the same numbers on every
/// platform, unlike the standard library's distributions.
class RandomStream {
public:
  explicit RandomStream(uint64_t seed) : state(seed) {}
  uint64_t next();
  /// Uniform in [0, 1).
  double uniform();
  /// Standard normal (Box-Muller).
  double normal();

private:
  uint64_t state;
};

/// Mixes a string into a seed (FNV-1a), to give each tensor its stream.
uint64_t seedFor(uint64_t seed, llvm::StringRef name);

} // namespace cgpt::exec

#endif // CGPT_EXEC_PARAMETERS_H
