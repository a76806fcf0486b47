//===- ModelFacts.h - numbers a user asks of a model ------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_TRANSFORMER_ANALYSIS_MODELFACTS_H
#define CGPT_DIALECT_TRANSFORMER_ANALYSIS_MODELFACTS_H

#include "cgpt/Dialect/Transformer/IR/Transformer.h"

#include <string>

namespace cgpt::transformer {

/// Facts read off one `transformer.train_step`: what the model is, counted
/// from the IR itself (never from the file it came from).
struct ModelFacts {
  std::string name;
  /// Trainable scalars: the elements of every `transformer.weight`. A tied
  /// output head shares the embedding's weight and so is counted once.
  int64_t parameters = 0;
  /// Decoder blocks: distinct `layer` indices among the weights.
  int64_t layers = 0;
  int64_t hiddenSize = 0;
  int64_t numHeads = 0;
  int64_t headSize = 0;
  int64_t ffnSize = 0;
  int64_t vocabSize = 0;
  int64_t sequenceLength = 0;
  int64_t globalBatch = 0;
  int64_t numCsx = 0;
  /// Key and value heads: numHeads unless attention shares them.
  int64_t kvHeads = 0;
  bool tiedEmbeddings = false;
  /// Dropout rates (0: none): of the embeddings, of attention's
  /// probabilities and of the blocks' outputs, as the first layer has them.
  double embeddingDropout = 0, attentionDropout = 0, blockDropout = 0;
  /// "learned", "rotary", "alibi" or "none".
  std::string positionEmbedding;
  /// "layer_norm" or "rms_norm".
  std::string norm;
  /// The feed-forward nonlinearity: an activation ("gelu", "silu", ...) or
  /// a gated unit ("swiglu", "geglu", "reglu").
  std::string ffn;
  /// A mixture of experts: the routed experts of each MoE layer and those
  /// a token uses (0 for a dense model), and the parameters one token
  /// meets: all but the experts it is not routed to.
  int64_t experts = 0, expertsPerToken = 0;
  int64_t activeParameters = 0;
};

/// Computes the facts of `step`; fails with a diagnostic on the step when
/// the body lacks a piece every GPT has (token embedding, attention, ffn).
mlir::FailureOr<ModelFacts> computeModelFacts(TrainStepOp step);

} // namespace cgpt::transformer

#endif // CGPT_DIALECT_TRANSFORMER_ANALYSIS_MODELFACTS_H
