//===- TransformerOps.cpp - transformer op verifiers and formats ----------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Transformer/IR/Transformer.h"
#include "cgpt/Support/BatchChecks.h"
#include "cgpt/Support/Format.h"
#include "cgpt/Support/Shapes.h"
#include "cgpt/Support/StepRegion.h"

#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace cgpt::transformer;
using namespace cgpt::training;
using cgpt::formatExactDouble;
using cgpt::formatShape;

//===----------------------------------------------------------------------===//
// Shape helpers shared by the verifiers
//===----------------------------------------------------------------------===//

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<ShapedType>(value.getType()).getShape();
}

static Type elementTypeOf(Value value) {
  return cast<ShapedType>(value.getType()).getElementType();
}

/// Checks that `value` has exactly `expected` as its shape (dynamic entries
/// of `expected` match anything), naming the operand in the error.
static LogicalResult expectShape(Operation *op, StringRef operandName,
                                 Value value, ArrayRef<int64_t> expected,
                                 StringRef why) {
  ArrayRef<int64_t> actual = shapeOf(value);
  if (cgpt::shapesAgree(actual, expected))
    return success();
  return op->emitOpError() << operandName << " has shape "
                           << formatShape(actual) << " but " << why
                           << " requires " << formatShape(expected);
}

/// Checks that every value in `values` stores the element type of `ref`.
static LogicalResult expectSameElementType(Operation *op, Value ref,
                                           ValueRange values) {
  Type expected = elementTypeOf(ref);
  for (Value value : values)
    if (elementTypeOf(value) != expected)
      return op->emitOpError()
             << "mixes element types " << expected << " and "
             << elementTypeOf(value) << "; all tensors of one op share the "
             << "storage type";
  return success();
}

static LogicalResult expectPositiveScale(Operation *op,
                                         std::optional<APFloat> scale) {
  if (scale && !(scale->convertToDouble() > 0))
    return op->emitOpError() << "scale must be positive, got "
                             << formatExactDouble(scale->convertToDouble());
  return success();
}

/// A dropout rate keeps some elements: 0 (none dropped) up to, not
/// including, 1.
static LogicalResult verifyDropoutRate(Operation *op, double rate) {
  if (!(rate >= 0.0 && rate < 1.0))
    return op->emitOpError()
           << "dropout rate must be in [0, 1), got " << formatExactDouble(rate);
  return success();
}

//===----------------------------------------------------------------------===//
// TrainStepOp
//===----------------------------------------------------------------------===//

ParseResult TrainStepOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  if (parser.parseSymbolName(name, getSymNameAttrName(result.name),
                             result.attributes))
    return failure();
  return cgpt::parseStepRegion(parser, result);
}

void TrainStepOp::print(OpAsmPrinter &printer) {
  printer << ' ';
  printer.printSymbolName(getSymName());
  cgpt::printStepRegion(printer, *this, getBody(), {getSymNameAttrName()});
}

void TrainStepOp::getAsmBlockArgumentNames(Region &region,
                                           OpAsmSetValueNameFn setNameFn) {
  cgpt::nameStepArguments(region, setNameFn);
}

LogicalResult TrainStepOp::verifyRegions() {
  if (getGlobalBatch() <= 0 || getGlobalBatch() > cgpt::kMaxBatch)
    return emitOpError() << "global_batch must be 1 to " << cgpt::kMaxBatch
                         << ", got " << getGlobalBatch();
  if (getNumCsx() <= 0)
    return emitOpError() << "num_csx must be positive, got " << getNumCsx();
  if (getGlobalBatch() < getNumCsx())
    return emitOpError() << "global_batch (" << getGlobalBatch()
                         << ") is smaller than num_csx (" << getNumCsx()
                         << "): every system needs a sequence";
  if (getSeqLen() <= 0)
    return emitOpError() << "seq_len must be positive, got " << getSeqLen();
  if (getMaxGradientNorm().convertToDouble() < 0)
    return emitOpError() << "max_gradient_norm must be non-negative (0 "
                            "disables clipping), got "
                         << formatExactDouble(
                                getMaxGradientNorm().convertToDouble());

  ArrayRef<Attribute> phases = getSchedule().getValue();
  if (phases.empty())
    return emitOpError() << "schedule must have at least one lr_phase";
  for (size_t i = 0; i + 1 < phases.size(); ++i)
    if (cast<LRPhaseAttr>(phases[i]).getSteps() == 0)
      return emitOpError() << "lr_phase #" << i
                           << " has steps = 0 (until the end) but is not the "
                              "last phase";

  Block &body = getBodyBlock();
  if (body.getNumArguments() != 2)
    return emitOpError() << "body must take (tokens, labels), got "
                         << body.getNumArguments() << " arguments";
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.getRank() != 2 ||
        !type.getElementType().isSignlessInteger() ||
        !ShapedType::isDynamic(type.getDimSize(0)) ||
        type.getDimSize(1) != getSeqLen())
      return emitOpError() << "body argument #" << arg.getArgNumber()
                           << " must be tensor<?x" << getSeqLen()
                           << "xi32> (batch symbolic, seq_len " << getSeqLen()
                           << "), got " << arg.getType();
  }
  if (!isa<YieldOp>(body.back()))
    return emitOpError() << "body must end with transformer.yield";
  double stepWork = 0;
  for (auto attention : body.getOps<AttentionOp>()) {
    double work = static_cast<double>(getSeqLen()) *
                  static_cast<double>(getSeqLen()) *
                  static_cast<double>(attention.getNumHeads()) *
                  static_cast<double>(attention.getHeadSize());
    stepWork += work;
    if (work > static_cast<double>(cgpt::kMaxAttentionWork) ||
        stepWork > static_cast<double>(cgpt::kMaxStepAttentionWork))
      return emitOpError()
             << "seq_len " << getSeqLen() << " makes attention's work per "
             << "sequence (seq_len^2 x heads x head_size, "
             << formatExactDouble(work) << " a layer) exceed what cgpt models ("
             << cgpt::kMaxAttentionWork << " a layer, "
             << cgpt::kMaxStepAttentionWork
             << " a step); shorten the sequence (max_sequence_length, or "
                "--sequence-length)";
  }

  // Each dropout site draws its own mask.
  llvm::DenseMap<int64_t, Operation *> dropoutSites;
  for (Operation &op : body) {
    std::optional<int64_t> site;
    if (auto dropout = dyn_cast<DropoutOp>(op))
      site = dropout.getSite();
    else if (auto attention = dyn_cast<AttentionOp>(op))
      site = attention.getDropoutSite();
    if (!site)
      continue;
    auto [it, inserted] = dropoutSites.try_emplace(*site, &op);
    if (!inserted) {
      InFlightDiagnostic diag = op.emitOpError()
                                << "uses dropout site " << *site
                                << ", which another op already draws from";
      diag.attachNote(it->second->getLoc()) << "site " << *site << " is here";
      return diag;
    }
  }

  Type storage = getPrecision().getStorage();
  llvm::StringMap<WeightOp> weightsByName;
  for (auto weight : body.getOps<WeightOp>()) {
    auto [it, inserted] = weightsByName.try_emplace(weight.getName(), weight);
    if (!inserted) {
      InFlightDiagnostic diag = weight.emitOpError() << "redeclares weight '"
                                                     << weight.getName() << "'";
      diag.attachNote(it->second.getLoc()) << "first declared here";
      return diag;
    }
    if (elementTypeOf(weight) != storage)
      return weight.emitOpError()
             << "weight '" << weight.getName() << "' stores "
             << elementTypeOf(weight) << " but the step's storage type is "
             << storage;
  }

  if (MuPAttr mup = getMupAttr()) {
    for (auto embedding : body.getOps<TokenEmbeddingOp>())
      if (embedding.getScale().value_or(APFloat(1.0)).convertToDouble() !=
          mup.getEmbeddingsScale().convertToDouble())
        return embedding.emitOpError()
               << "scale must equal the step's mup embeddings_scale ("
               << formatExactDouble(mup.getEmbeddingsScale().convertToDouble())
               << ")";
    for (auto head : body.getOps<OutputHeadOp>())
      if (head.getScale().value_or(APFloat(1.0)).convertToDouble() !=
          mup.getOutputLogitsScale().convertToDouble())
        return head.emitOpError()
               << "scale must equal the step's mup output_logits_scale ("
               << formatExactDouble(
                      mup.getOutputLogitsScale().convertToDouble())
               << ")";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// WeightOp
//===----------------------------------------------------------------------===//

void WeightOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), getName());
}

LogicalResult WeightOp::verify() {
  if (getName().empty())
    return emitOpError() << "weight name must not be empty";
  auto type = cast<RankedTensorType>(getType());
  if (!type.hasStaticShape())
    return emitOpError() << "weight '" << getName()
                         << "' must have a static shape, got "
                         << formatShape(type.getShape());
  for (int64_t dim : type.getShape())
    if (dim <= 0)
      return emitOpError() << "weight '" << getName()
                           << "' has an empty dimension in shape "
                           << formatShape(type.getShape());
  if (IntegerAttr layer = getLayerAttr(); layer && layer.getInt() < 0)
    return emitOpError() << "weight '" << getName()
                         << "' has a negative layer index " << layer.getInt();
  return success();
}

//===----------------------------------------------------------------------===//
// Embeddings
//===----------------------------------------------------------------------===//

LogicalResult TokenEmbeddingOp::verify() {
  ArrayRef<int64_t> tokens = shapeOf(getTokens());
  ArrayRef<int64_t> table = shapeOf(getTable());
  if (failed(expectShape(*this, "result", getResult(),
                         {tokens[0], tokens[1], table[1]},
                         "tokens " + formatShape(tokens) + " and table " +
                             formatShape(table))))
    return failure();
  if (failed(expectSameElementType(*this, getTable(), {getResult()})))
    return failure();
  return expectPositiveScale(*this, getScale());
}

LogicalResult PositionEmbeddingOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  ArrayRef<int64_t> table = shapeOf(getTable());
  if (table[1] != input[2])
    return emitOpError() << "table has shape " << formatShape(table)
                         << " but the input's feature size is " << input[2];
  if (!ShapedType::isDynamic(input[1]) && table[0] < input[1])
    return emitOpError() << "table holds " << table[0]
                         << " positions but the sequence has " << input[1];
  return expectSameElementType(*this, getInput(), {getTable()});
}

LogicalResult RotaryEmbeddingOp::verify() {
  int64_t dim = getDim();
  if (dim <= 0 || dim % 2 != 0)
    return emitOpError() << "dim must be positive and even, got " << dim;
  if (!(getBase().convertToDouble() > 1))
    return emitOpError() << "base must be greater than 1, got "
                         << formatExactDouble(getBase().convertToDouble());
  ArrayRef<int64_t> shape = shapeOf(getResult());
  if (ShapedType::isDynamic(shape[0]) || shape[0] <= 0 || shape[1] != dim / 2 ||
      shape[2] != 2)
    return emitOpError() << "result has shape " << formatShape(shape)
                         << " but dim " << dim << " requires [seq_len, "
                         << dim / 2 << ", 2] with a static seq_len";
  return success();
}

//===----------------------------------------------------------------------===//
// Decoder block pieces
//===----------------------------------------------------------------------===//

/// Checks a normalization's gain against the input's features and its
/// epsilon.
static LogicalResult verifyNorm(Operation *op, Value input, Value gamma,
                                const APFloat &epsilon) {
  int64_t features = shapeOf(input)[2];
  if (failed(expectShape(op, "gamma", gamma, {features},
                         "feature size " + std::to_string(features))))
    return failure();
  if (!(epsilon.convertToDouble() > 0))
    return op->emitOpError() << "epsilon must be positive, got "
                             << formatExactDouble(epsilon.convertToDouble());
  return expectSameElementType(op, input, {gamma});
}

LogicalResult LayerNormOp::verify() {
  return verifyNorm(*this, getInput(), getGamma(), getEpsilon());
}

LogicalResult RMSNormOp::verify() {
  return verifyNorm(*this, getInput(), getGamma(), getEpsilon());
}

LogicalResult AttentionOp::verify() {
  int64_t heads = getNumHeads(), headSize = getHeadSize();
  if (heads <= 0 || headSize <= 0)
    return emitOpError() << "num_heads and head_size must be positive, got "
                         << heads << " and " << headSize;
  int64_t kvHeads = getKvHeads();
  if (kvHeads <= 0 || heads % kvHeads != 0)
    return emitOpError() << "kv_heads must divide num_heads " << heads
                         << ", got " << kvHeads;
  if (getAlibi() && getRotary())
    return emitOpError() << "positions are rotary or ALiBi, not both";
  ArrayRef<int64_t> input = shapeOf(getInput());
  int64_t model = input[2], inner = heads * headSize;
  int64_t qkv = (heads + 2 * kvHeads) * headSize;
  std::string why = std::to_string(heads) + " heads of size " +
                    std::to_string(headSize) + " on d_model " +
                    std::to_string(model);
  if (getNumKvHeads())
    why += " with " + std::to_string(kvHeads) + " key/value heads";
  if (failed(expectShape(*this, "qkv_weight", getQkvWeight(), {model, qkv},
                         why)) ||
      failed(expectShape(*this, "out_weight", getOutWeight(), {inner, model},
                         why)))
    return failure();
  if (getQkvBias() &&
      failed(expectShape(*this, "qkv_bias", getQkvBias(), {qkv}, why)))
    return failure();
  if (getOutBias() &&
      failed(expectShape(*this, "out_bias", getOutBias(), {model}, why)))
    return failure();
  if (Value rotary = getRotary()) {
    ArrayRef<int64_t> angles = shapeOf(rotary);
    int64_t rotated = 2 * angles[1];
    if (rotated > headSize)
      return emitOpError() << "rotary embedding rotates " << rotated
                           << " channels but head_size is only " << headSize;
    if (!ShapedType::isDynamic(input[1]) &&
        (ShapedType::isDynamic(angles[0]) || angles[0] < input[1]))
      return emitOpError() << "rotary embedding covers " << angles[0]
                           << " positions but the sequence has " << input[1];
  }
  if (std::optional<APFloat> alpha = getLogitsAlpha();
      alpha && !(alpha->convertToDouble() > 0 &&
                 std::isfinite(alpha->convertToDouble())))
    return emitOpError() << "logits_alpha must be positive and finite, got "
                         << formatExactDouble(alpha->convertToDouble());
  if (getDropout().has_value() != getDropoutSite().has_value())
    return emitOpError() << "takes a dropout rate and its site together";
  if (std::optional<APFloat> rate = getDropout())
    if (failed(verifyDropoutRate(*this, rate->convertToDouble())))
      return failure();
  SmallVector<Value> weights = {getQkvWeight(), getOutWeight()};
  for (Value bias : {getQkvBias(), getOutBias()})
    if (bias)
      weights.push_back(bias);
  return expectSameElementType(*this, getInput(), weights);
}

LogicalResult DropoutOp::verify() {
  if (getSite() < 0)
    return emitOpError() << "site must be non-negative, got " << getSite();
  return verifyDropoutRate(*this, getRate().convertToDouble());
}

/// A gated block's gate weight is shaped as its up projection, and a gate
/// bias comes only with a gate weight.
static LogicalResult verifyGate(Operation *op, Value gateWeight, Value gateBias,
                                ArrayRef<int64_t> up, StringRef why) {
  if (gateBias && !gateWeight)
    return op->emitOpError() << "has a gate_bias but no gate_weight";
  if (gateWeight && failed(expectShape(op, "gate_weight", gateWeight, up, why)))
    return failure();
  return success();
}

LogicalResult FeedForwardOp::verify() {
  int64_t model = shapeOf(getInput())[2];
  ArrayRef<int64_t> up = shapeOf(getUpWeight());
  if (up[0] != model)
    return emitOpError() << "up_weight has shape " << formatShape(up)
                         << " but d_model is " << model;
  int64_t ffn = up[1];
  std::string why =
      "d_model " + std::to_string(model) + " and d_ffn " + std::to_string(ffn);
  if (failed(expectShape(*this, "down_weight", getDownWeight(), {ffn, model},
                         why)))
    return failure();
  if (getUpBias() &&
      failed(expectShape(*this, "up_bias", getUpBias(), {ffn}, why)))
    return failure();
  if (getDownBias() &&
      failed(expectShape(*this, "down_bias", getDownBias(), {model}, why)))
    return failure();
  if (failed(verifyGate(*this, getGateWeight(), getGateBias(), up, why)))
    return failure();
  if (getGateBias() &&
      failed(expectShape(*this, "gate_bias", getGateBias(), {ffn}, why)))
    return failure();
  SmallVector<Value> weights = {getUpWeight(), getDownWeight()};
  for (Value optional :
       {getUpBias(), getGateWeight(), getGateBias(), getDownBias()})
    if (optional)
      weights.push_back(optional);
  return expectSameElementType(*this, getInput(), weights);
}

LogicalResult MixtureOfExpertsOp::verify() {
  int64_t model = shapeOf(getInput())[2];
  ArrayRef<int64_t> router = shapeOf(getRouterWeight());
  if (router[0] != model)
    return emitOpError() << "router_weight has shape " << formatShape(router)
                         << " but d_model is " << model
                         << " (the router is [d_model, experts])";
  int64_t experts = router[1];
  if (experts < 2)
    return emitOpError() << "routes to " << experts
                         << " experts; a mixture needs at least 2";
  if (getTopK() < 1 || getTopK() > experts)
    return emitOpError() << "top_k must be between 1 and the " << experts
                         << " experts, got " << getTopK();
  ArrayRef<int64_t> up = shapeOf(getUpWeight());
  if (up[0] != experts || up[1] != model)
    return emitOpError() << "up_weight has shape " << formatShape(up) << " but "
                         << experts << " experts of d_model " << model
                         << " require [" << experts << ", " << model
                         << ", d_ffn]";
  int64_t ffn = up[2];
  std::string why = std::to_string(experts) + " experts, d_model " +
                    std::to_string(model) + " and d_ffn " + std::to_string(ffn);
  if (failed(expectShape(*this, "down_weight", getDownWeight(),
                         {experts, ffn, model}, why)))
    return failure();
  if (failed(verifyGate(*this, getGateWeight(), getGateBias(), up, why)))
    return failure();
  for (auto [name, bias, width] :
       {std::tuple{"up_bias", getUpBias(), ffn},
        std::tuple{"gate_bias", getGateBias(), ffn},
        std::tuple{"down_bias", getDownBias(), model}})
    if (bias && failed(expectShape(*this, name, bias, {experts, width}, why)))
      return failure();
  double balance = getBalance().convertToDouble();
  if (!std::isfinite(balance) || balance < 0.0)
    return emitOpError() << "balance must be a finite weight of 0 or more, got "
                         << formatExactDouble(balance);
  if (std::optional<APFloat> null = getNullExpert();
      null && !std::isfinite(null->convertToDouble()))
    return emitOpError() << "null_expert must be a finite logit";
  SmallVector<Value> weights = {getRouterWeight(), getUpWeight(),
                                getDownWeight()};
  for (Value optional :
       {getUpBias(), getGateWeight(), getGateBias(), getDownBias()})
    if (optional)
      weights.push_back(optional);
  return expectSameElementType(*this, getInput(), weights);
}

//===----------------------------------------------------------------------===//
// Output head and loss
//===----------------------------------------------------------------------===//

LogicalResult OutputHeadOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  ArrayRef<int64_t> weight = shapeOf(getWeight());
  if (weight[1] != input[2])
    return emitOpError() << "weight has shape " << formatShape(weight)
                         << " but the input's feature size is " << input[2]
                         << " (the head weight is [vocab, d_model])";
  std::string why =
      "input " + formatShape(input) + " and weight " + formatShape(weight);
  if (failed(expectShape(*this, "result", getResult(),
                         {input[0], input[1], weight[0]}, why)))
    return failure();
  if (getBias() &&
      failed(expectShape(*this, "bias", getBias(), {weight[0]}, why)))
    return failure();

  bool sharesEmbedding = llvm::any_of(getWeight().getUsers(), [](Operation *u) {
    return isa<TokenEmbeddingOp>(u);
  });
  if (getTied() && !sharesEmbedding)
    return emitOpError() << "is marked tied but its weight is not the token "
                            "embedding table";
  if (!getTied() && sharesEmbedding)
    return emitOpError() << "uses the token embedding table but is not marked "
                            "tied";
  if (failed(expectSameElementType(*this, getInput(), {getWeight()})))
    return failure();
  return expectPositiveScale(*this, getScale());
}

LogicalResult CrossEntropyOp::verify() {
  ArrayRef<int64_t> logits = shapeOf(getLogits());
  if (failed(expectShape(*this, "labels", getLabels(), {logits[0], logits[1]},
                         "logits " + formatShape(logits))))
    return failure();
  if (!(getWeight().convertToDouble() > 0))
    return emitOpError() << "weight must be positive, got "
                         << formatExactDouble(getWeight().convertToDouble());
  return success();
}

#define GET_OP_CLASSES
#include "cgpt/Dialect/Transformer/IR/TransformerOps.cpp.inc"
