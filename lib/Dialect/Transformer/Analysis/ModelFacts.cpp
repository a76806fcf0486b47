//===- ModelFacts.cpp - parameter count and shape facts -------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Transformer/Analysis/ModelFacts.h"

#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace cgpt::transformer {

FailureOr<ModelFacts> computeModelFacts(TrainStepOp step) {
  ModelFacts facts;
  facts.name = step.getSymName().str();
  facts.sequenceLength = step.getSeqLen();
  facts.globalBatch = step.getGlobalBatch();
  facts.numCsx = step.getNumCsx();

  Block &body = step.getBodyBlock();
  llvm::DenseSet<int64_t> layers;
  for (auto weight : body.getOps<WeightOp>()) {
    facts.parameters += weight.getNumElements();
    if (std::optional<uint64_t> layer = weight.getLayer())
      layers.insert(static_cast<int64_t>(*layer));
  }
  facts.layers = static_cast<int64_t>(layers.size());

  auto embeddings = body.getOps<TokenEmbeddingOp>();
  auto attentions = body.getOps<AttentionOp>();
  auto ffns = body.getOps<FeedForwardOp>();
  auto mixtures = body.getOps<MixtureOfExpertsOp>();
  if (embeddings.empty() || attentions.empty() ||
      (ffns.empty() && mixtures.empty()))
    return step.emitOpError()
           << "is not a GPT: it needs a token_embedding, an attention and an "
              "ffn or a moe";
  auto table = cast<ShapedType>((*embeddings.begin()).getTable().getType());
  facts.vocabSize = table.getDimSize(0);
  facts.hiddenSize = table.getDimSize(1);
  AttentionOp attention = *attentions.begin();
  facts.numHeads = attention.getNumHeads();
  facts.kvHeads = attention.getKvHeads();
  facts.headSize = attention.getHeadSize();
  facts.activeParameters = facts.parameters;
  for (MixtureOfExpertsOp moe : mixtures) {
    facts.experts = moe.getNumExperts();
    facts.expertsPerToken = static_cast<int64_t>(moe.getTopK());
    int64_t stacked = 0;
    for (Value weight :
         {moe.getUpWeight(), moe.getUpBias(), moe.getGateWeight(),
          moe.getGateBias(), moe.getDownWeight(), moe.getDownBias()})
      if (weight)
        stacked += cast<ShapedType>(weight.getType()).getNumElements();
    facts.activeParameters -=
        stacked / facts.experts * (facts.experts - facts.expertsPerToken);
  }
  bool dense = mixtures.empty();
  Value up =
      dense ? (*ffns.begin()).getUpWeight() : (*mixtures.begin()).getUpWeight();
  auto upType = cast<ShapedType>(up.getType());
  facts.ffnSize = upType.getDimSize(upType.getRank() - 1);
  Activation kind = dense ? (*ffns.begin()).getActivation()
                          : (*mixtures.begin()).getActivation();
  bool gated = dense ? bool((*ffns.begin()).getGateWeight())
                     : bool((*mixtures.begin()).getGateWeight());
  StringRef activation = stringifyActivation(kind);
  if (!gated)
    facts.ffn = activation.str();
  else
    facts.ffn = activation == "silu"   ? "swiglu"
                : activation == "relu" ? "reglu"
                                       : "geglu";
  if (std::optional<APFloat> rate = attention.getDropout())
    facts.attentionDropout = rate->convertToDouble();
  for (auto dropout : body.getOps<DropoutOp>()) {
    Operation *producer = dropout.getInput().getDefiningOp();
    double &rate = isa_and_nonnull<AttentionOp, FeedForwardOp,
                                   MixtureOfExpertsOp, ResidualAddOp>(producer)
                       ? facts.blockDropout
                       : facts.embeddingDropout;
    if (rate == 0)
      rate = dropout.getRate().convertToDouble();
  }
  facts.norm = body.getOps<RMSNormOp>().empty() ? "layer_norm" : "rms_norm";
  facts.tiedEmbeddings = llvm::any_of(
      body.getOps<OutputHeadOp>(), [](OutputHeadOp h) { return h.getTied(); });
  if (!body.getOps<PositionEmbeddingOp>().empty())
    facts.positionEmbedding = "learned";
  else if (!body.getOps<RotaryEmbeddingOp>().empty())
    facts.positionEmbedding = "rotary";
  else if (attention.getAlibi())
    facts.positionEmbedding = "alibi";
  else
    facts.positionEmbedding = "none";
  return facts;
}

} // namespace cgpt::transformer
