//===- ModelBuilder.cpp - ModelSpec to transformer IR ---------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Frontend/ModelSpec.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace cgpt::transformer;
using namespace cgpt::training;

namespace cgpt::frontend {
namespace {

class TrainStepBuilder {
public:
  TrainStepBuilder(const ModelSpec &spec, MLIRContext *context)
      : spec(spec), builder(context),
        fileLoc(FileLineColLoc::get(context, spec.path, 1, 1)) {
    switch (spec.storage) {
    case StorageType::F32:
      storage = builder.getF32Type();
      break;
    case StorageType::BF16:
      storage = builder.getBF16Type();
      break;
    case StorageType::F16:
      storage = builder.getF16Type();
      break;
    }
  }

  OwningOpRef<ModuleOp> build();

private:
  /// Where `key` was read, or the file's start when the file did not give
  /// it (a default, or the command line).
  Location at(LocationAttr key) { return key ? Location(key) : fileLoc; }
  /// `scope` (a weight or op name) at the line of the key that sized it.
  Location loc(StringRef scope, LocationAttr key) {
    return NameLoc::get(builder.getStringAttr(scope), at(key));
  }
  RankedTensorType activations(int64_t features) {
    return RankedTensorType::get(
        {ShapedType::kDynamic, spec.sequenceLength, features}, storage);
  }
  Value weight(StringRef name, ArrayRef<int64_t> shape,
               std::optional<int64_t> layer, LocationAttr key) {
    auto op = builder.create<WeightOp>(
        loc(name, key), RankedTensorType::get(shape, storage),
        builder.getStringAttr(name),
        layer ? builder.getI64IntegerAttr(*layer) : IntegerAttr());
    return op.getResult();
  }
  /// `x` dropped at `rate` with the next dropout site's mask; `x` itself
  /// at rate 0.
  Value dropout(Value x, double rate, Location location) {
    if (rate == 0.0)
      return x;
    return builder.create<DropoutOp>(location, x, builder.getF64FloatAttr(rate),
                                     builder.getI64IntegerAttr(nextSite++));
  }
  /// The site attribute of attention's probability dropout, or none.
  std::pair<FloatAttr, IntegerAttr> attentionDropout() {
    if (spec.attentionDropout == 0.0)
      return {};
    return {builder.getF64FloatAttr(spec.attentionDropout),
            builder.getI64IntegerAttr(nextSite++)};
  }
  Value optionalWeight(bool present, StringRef name, ArrayRef<int64_t> shape,
                       std::optional<int64_t> layer, LocationAttr key) {
    return present ? weight(name, shape, layer, key) : Value();
  }
  Value layerNorm(StringRef prefix, Value input, std::optional<int64_t> layer);
  /// A feed-forward block of width `width` named `prefix`.
  Value feedForward(const std::string &prefix, int64_t layer, Value input,
                    int64_t width);
  /// The routed experts of layer `layer` (block `prefix`), and its shared
  /// experts: one feed-forward block as wide as all of them, since every
  /// token goes through each and their outputs add.
  Value mixtureOfExperts(const std::string &prefix, int64_t layer, Value input);
  LocationAttr ffnKey() const {
    return spec.locations.ffn ? spec.locations.ffn : spec.locations.hidden;
  }
  Value decoderBlock(int64_t layer, Value x, Value rope);

  const ModelSpec &spec;
  OpBuilder builder;
  Location fileLoc;
  Type storage;
  /// Dropout sites are numbered in the order the step draws them.
  int64_t nextSite = 0;
};

Value TrainStepBuilder::layerNorm(StringRef prefix, Value input,
                                  std::optional<int64_t> layer) {
  int64_t d = spec.hiddenSize;
  LocationAttr key = spec.locations.hidden;
  Value gamma = weight((prefix + ".weight").str(), {d}, layer, key);
  if (spec.norm == NormKind::RMSNorm)
    return builder.create<RMSNormOp>(
        loc(prefix, key), input.getType(), input, gamma,
        builder.getF64FloatAttr(spec.layerNormEpsilon));
  Value beta = weight((prefix + ".bias").str(), {d}, layer, key);
  return builder.create<LayerNormOp>(
      loc(prefix, key), input.getType(), input, gamma, beta,
      builder.getF64FloatAttr(spec.layerNormEpsilon));
}

Value TrainStepBuilder::feedForward(const std::string &prefix, int64_t layer,
                                    Value input, int64_t width) {
  int64_t d = spec.hiddenSize, f = width;
  LocationAttr key = ffnKey();
  Value upW = weight(prefix + ".fc.weight", {d, f}, layer, key);
  Value upB =
      optionalWeight(spec.ffnBias, prefix + ".fc.bias", {f}, layer, key);
  Value gateW = optionalWeight(spec.gatedFfn, prefix + ".gate.weight", {d, f},
                               layer, key);
  Value gateB = optionalWeight(spec.gatedFfn && spec.ffnBias,
                               prefix + ".gate.bias", {f}, layer, key);
  Value downW = weight(prefix + ".proj.weight", {f, d}, layer, key);
  Value downB =
      optionalWeight(spec.ffnBias, prefix + ".proj.bias", {d}, layer, key);
  return builder.create<FeedForwardOp>(loc(prefix, key), input.getType(), input,
                                       upW, upB, gateW, gateB, downW, downB,
                                       spec.activation);
}

Value TrainStepBuilder::mixtureOfExperts(const std::string &prefix,
                                         int64_t layer, Value input) {
  int64_t d = spec.hiddenSize, f = spec.ffnSize, e = spec.moe.experts;
  LocationAttr key = ffnKey();
  std::string p = prefix + ".moe";
  Value router = weight(p + ".router.weight", {d, e}, layer, key);
  std::string x = p + ".experts";
  Value upW = weight(x + ".fc.weight", {e, d, f}, layer, key);
  Value upB = optionalWeight(spec.ffnBias, x + ".fc.bias", {e, f}, layer, key);
  Value gateW =
      optionalWeight(spec.gatedFfn, x + ".gate.weight", {e, d, f}, layer, key);
  Value gateB = optionalWeight(spec.gatedFfn && spec.ffnBias, x + ".gate.bias",
                               {e, f}, layer, key);
  Value downW = weight(x + ".proj.weight", {e, f, d}, layer, key);
  Value downB =
      optionalWeight(spec.ffnBias, x + ".proj.bias", {e, d}, layer, key);
  // The coefficient weighs the layers' mean balance loss.
  double balance =
      spec.moe.balanceCoefficient / static_cast<double>(spec.numLayers);
  Value routed = builder.create<MixtureOfExpertsOp>(
      loc(p, key), input.getType(), input, router, upW, upB, gateW, gateB,
      downW, downB, ActivationAttr::get(builder.getContext(), spec.activation),
      builder.getI64IntegerAttr(spec.moe.topK),
      builder.getF64FloatAttr(balance),
      spec.moe.nullExpert ? builder.getF64FloatAttr(*spec.moe.nullExpert)
                          : FloatAttr(),
      spec.moe.routerF32 ? builder.getUnitAttr() : UnitAttr());
  if (spec.moe.sharedExperts == 0)
    return routed;
  Value shared =
      feedForward(p + ".shared", layer, input, spec.moe.sharedExperts * f);
  return builder.create<ResidualAddOp>(loc(p, key), routed, shared);
}

Value TrainStepBuilder::decoderBlock(int64_t layer, Value x, Value rope) {
  std::string p = "h." + std::to_string(layer);
  int64_t d = spec.hiddenSize, inner = spec.numHeads * spec.headSize;
  int64_t f = spec.ffnSize;

  // Attention is sized by num_heads, the FFN by filter_size (hidden_size
  // when the file leaves it to its default).
  LocationAttr heads = spec.locations.heads;
  LocationAttr ffnKey = this->ffnKey();
  Value ln1 = layerNorm(p + ".ln_1", x, layer);
  // Queries of every head, keys and values of the key/value heads.
  int64_t kvHeads = spec.numKvHeads ? spec.numKvHeads : spec.numHeads;
  int64_t qkv = (spec.numHeads + 2 * kvHeads) * spec.headSize;
  Value qkvW = weight(p + ".attn.qkv.weight", {d, qkv}, layer, heads);
  Value qkvB =
      optionalWeight(spec.qkvBias, p + ".attn.qkv.bias", {qkv}, layer, heads);
  Value outW = weight(p + ".attn.proj.weight", {inner, d}, layer, heads);
  Value outB = optionalWeight(spec.attentionOutBias, p + ".attn.proj.bias", {d},
                              layer, heads);
  auto scaling = spec.scaleQkByHeadSize ? ScoreScaling::inv_head_size
                                        : ScoreScaling::inv_sqrt_head_size;
  IntegerAttr kvHeadsAttr = spec.numKvHeads
                                ? builder.getI64IntegerAttr(spec.numKvHeads)
                                : IntegerAttr();
  UnitAttr alibi =
      spec.position == PositionKind::Alibi ? builder.getUnitAttr() : UnitAttr();
  auto [probabilityDropout, probabilitySite] = attentionDropout();
  Value attn = builder.create<AttentionOp>(
      loc(p + ".attn", heads), x.getType(), ln1, qkvW, qkvB, outW, outB, rope,
      builder.getI64IntegerAttr(spec.numHeads), kvHeadsAttr,
      builder.getI64IntegerAttr(spec.headSize),
      ScoreScalingAttr::get(builder.getContext(), scaling),
      spec.attentionLogitsAlpha != 1.0
          ? builder.getF64FloatAttr(spec.attentionLogitsAlpha)
          : FloatAttr(),
      alibi, probabilityDropout, probabilitySite);
  attn = dropout(attn, spec.residualDropout, loc(p + ".attn", heads));

  Value ffnInput;
  if (spec.blockStyle == BlockStyle::Sequential) {
    x = builder.create<ResidualAddOp>(loc(p + ".attn", heads), x, attn);
    ffnInput = layerNorm(p + ".ln_2", x, layer);
  } else {
    // Parallel blocks read one normalized input (GPT-J) or two (NeoX).
    ffnInput = spec.untiedLayerNorm ? layerNorm(p + ".ln_2", x, layer) : ln1;
  }
  Value ffn = spec.moe.experts ? mixtureOfExperts(p, layer, ffnInput)
                               : feedForward(p + ".mlp", layer, ffnInput, f);
  ffn = dropout(ffn, spec.residualDropout, loc(p + ".mlp", ffnKey));
  if (spec.blockStyle == BlockStyle::Parallel)
    x = builder.create<ResidualAddOp>(loc(p + ".attn", heads), x, attn);
  return builder.create<ResidualAddOp>(loc(p + ".mlp", ffnKey), x, ffn);
}

OwningOpRef<ModuleOp> TrainStepBuilder::build() {
  MLIRContext *ctx = builder.getContext();
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  builder.setInsertionPointToEnd(module->getBody());

  SmallVector<Attribute> phases;
  for (const LRPhase &phase : spec.schedule)
    phases.push_back(LRPhaseAttr::get(ctx, phase.kind, APFloat(phase.start),
                                      APFloat(phase.end), phase.steps));
  auto microBatch =
      MicroBatchAttr::get(ctx, spec.microBatchMode, spec.microBatchSize,
                          spec.microBatchMin, spec.microBatchMax);
  MuPAttr mup;
  if (spec.mup)
    mup = MuPAttr::get(ctx, APFloat(spec.embeddingsScale),
                       APFloat(spec.outputLogitsScale),
                       APFloat(spec.decoderKernelLrScale));
  // The step is sized by its batch: planning errors point at the
  // micro-batch the file asks for, or at its batch.
  Location stepLoc = at(spec.locations.microBatch ? spec.locations.microBatch
                                                  : spec.locations.batch);
  auto step = builder.create<TrainStepOp>(
      stepLoc, spec.name, spec.globalBatch, spec.numCsx, spec.sequenceLength,
      microBatch,
      AdamWAttr::get(ctx, APFloat(spec.beta1), APFloat(spec.beta2),
                     APFloat(spec.epsilon), APFloat(spec.weightDecay)),
      builder.getArrayAttr(phases), APFloat(spec.maxGradientNorm),
      PrecisionAttr::get(ctx, storage, builder.getF32Type()), mup);

  auto tokenType = RankedTensorType::get(
      {ShapedType::kDynamic, spec.sequenceLength}, builder.getI32Type());
  Block *body = builder.createBlock(&step.getBody(), {}, {tokenType, tokenType},
                                    {stepLoc, stepLoc});
  Value tokens = body->getArgument(0), labels = body->getArgument(1);

  int64_t d = spec.hiddenSize, vocab = spec.vocabSize;
  LocationAttr vocabKey = spec.locations.vocab;
  LocationAttr positionsKey = spec.locations.positions;
  Value wte = weight("wte", {vocab, d}, std::nullopt, vocabKey);
  FloatAttr embeddingsScale =
      spec.mup ? builder.getF64FloatAttr(spec.embeddingsScale) : FloatAttr();
  Value x = builder.create<TokenEmbeddingOp>(
      loc("wte", vocabKey), activations(d), tokens, wte, embeddingsScale);
  if (spec.position == PositionKind::Learned) {
    Value wpe =
        weight("wpe", {spec.maxPositions, d}, std::nullopt, positionsKey);
    x = builder.create<PositionEmbeddingOp>(loc("wpe", positionsKey),
                                            x.getType(), x, wpe);
  }
  // Dropped as soon as it is made, so that the dropout joins the
  // embeddings' region.
  x = dropout(x, spec.embeddingDropout, loc("drop", vocabKey));
  Value rope;
  if (spec.position == PositionKind::Rotary) {
    auto angles = RankedTensorType::get(
        {spec.sequenceLength, spec.rotaryDim / 2, 2}, builder.getF32Type());
    rope = builder.create<RotaryEmbeddingOp>(
        loc("rope", positionsKey), angles,
        builder.getI64IntegerAttr(spec.rotaryDim),
        builder.getF64FloatAttr(spec.rotaryBase));
  }

  for (int64_t layer = 0; layer < spec.numLayers; ++layer)
    x = decoderBlock(layer, x, rope);

  Value h = layerNorm("ln_f", x, std::nullopt);
  Value headWeight = spec.tiedEmbeddings
                         ? wte
                         : weight("lm_head.weight", {vocab, d}, {}, vocabKey);
  Value headBias = optionalWeight(spec.outputBias, "lm_head.bias", {vocab},
                                  std::nullopt, vocabKey);
  FloatAttr logitsScale =
      spec.mup ? builder.getF64FloatAttr(spec.outputLogitsScale) : FloatAttr();
  Value logits = builder.create<OutputHeadOp>(
      loc("lm_head", vocabKey), activations(vocab), h, headWeight, headBias,
      spec.tiedEmbeddings ? builder.getUnitAttr() : UnitAttr(), logitsScale);
  Value loss = builder.create<CrossEntropyOp>(
      loc("loss", vocabKey), RankedTensorType::get({}, builder.getF32Type()),
      logits, labels, spec.lossScaling, APFloat(spec.lossWeight));
  builder.create<YieldOp>(loc("loss", vocabKey), loss);
  return module;
}

} // namespace

OwningOpRef<ModuleOp> buildTrainStep(const ModelSpec &spec,
                                     MLIRContext *context) {
  context->loadDialect<TransformerDialect>();
  return TrainStepBuilder(spec, context).build();
}

OwningOpRef<ModuleOp> importModelFile(StringRef path, MLIRContext *context,
                                      const ImportOptions &options) {
  FailureOr<ModelSpec> spec = readModelFile(path, context, options);
  if (failed(spec))
    return nullptr;
  return importModel(*spec, context);
}

OwningOpRef<ModuleOp> importModel(const ModelSpec &spec, MLIRContext *context) {
  OwningOpRef<ModuleOp> module = buildTrainStep(spec, context);
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

} // namespace cgpt::frontend
