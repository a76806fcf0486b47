//===- MixtureOfExpertsOps.cpp - routed-expert kernels --------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Verifiers, FLOPs and tiling spaces of the kernels a transformer.moe
// lowers to: the router, the load-balancing loss, dispatch and combine,
// and the experts' products (docs/dataflow.md, "Mixture of experts").
//
//===----------------------------------------------------------------------===//

#include "KernelChecks.h"

#include <cmath>

using namespace mlir;
using namespace cgpt::dataflow;
using namespace cgpt::dataflow::checks;
using cgpt::formatShape;
using cgpt::perSequence;
using cgpt::shapesAgree;

/// Checks `experts`: [batch, seq, k] integer expert indices.
static LogicalResult expectChoices(Operation *op, Value experts) {
  if (shapeOf(experts).size() == 3 &&
      elementTypeOf(experts).isSignlessInteger())
    return success();
  return op->emitOpError() << "experts must be [batch, seq, k] integer "
                              "expert indices, got "
                           << tensorOf(experts);
}

/// Choices per token: the last dimension of an experts stream.
static int64_t choicesOf(Value experts) { return shapeOf(experts)[2]; }

/// Tokens per sequence of an experts stream.
static int64_t tokensOf(Value experts) {
  return perSequence(shapeOf(experts)[1]);
}

/// Checks that `routed` holds `k` routed rows per token of `experts`.
static LogicalResult expectRoutedRows(Operation *op, StringRef name,
                                      Value routed, Value experts) {
  ArrayRef<int64_t> choices = shapeOf(experts);
  if (failed(expectRank(op, name, routed, 3)))
    return failure();
  int64_t rows = shapeOf(routed)[1];
  if (!ShapedType::isDynamic(rows) && !ShapedType::isDynamic(choices[1]) &&
      rows != choices[1] * choices[2])
    return op->emitOpError()
           << name << " has " << rows << " routed rows per sequence but "
           << choices[1] << " tokens of " << choices[2]
           << " choices each route " << choices[1] * choices[2];
  return success();
}

//===----------------------------------------------------------------------===//
// Router
//===----------------------------------------------------------------------===//

LogicalResult RouteOp::verify() {
  if (failed(expectRank(*this, "input", getInput(), 3)) ||
      failed(expectRank(*this, "router", getRouter(), 2)) ||
      failed(expectChoices(*this, getExperts())))
    return failure();
  ArrayRef<int64_t> input = shapeOf(getInput()), router = shapeOf(getRouter());
  if (!cgpt::dimsAgree(router[0], input[2]))
    return emitOpError() << "router has shape " << formatShape(router)
                         << " but the input's d_model is " << input[2];
  int64_t experts = router[1];
  if (getTopK() < 1 || getTopK() > experts)
    return emitOpError() << "top_k must be between 1 and the " << experts
                         << " experts, got " << getTopK();
  std::string why = "input " + formatShape(input) + ", " +
                    std::to_string(experts) + " experts and top_k " +
                    std::to_string(getTopK());
  SmallVector<int64_t> choices = {input[0], input[1], getTopK()};
  if (failed(expectShape(*this, "weights", getWeights(), choices, why)) ||
      failed(expectShape(*this, "experts", getExperts(), choices, why)) ||
      failed(expectShape(*this, "probs", getProbs(),
                         {input[0], input[1], experts}, why)) ||
      failed(expectF32(*this, "weights", getWeights())) ||
      failed(expectF32(*this, "probs", getProbs())))
    return failure();
  if (std::optional<APFloat> null = getNullExpert();
      null && !std::isfinite(null->convertToDouble()))
    return emitOpError() << "null_expert must be a finite logit";
  return expectSameElementType(*this, {getInput(), getRouter()});
}

KernelKind RouteOp::getKernelKind() { return KernelKind::weight_matmul; }

Value RouteOp::getStreamedWeight() { return getRouter(); }

int64_t RouteOp::getFlopsPerSequence() {
  int64_t experts = shapeOf(getRouter())[1];
  return tokensOf(getExperts()) * experts *
         (2 * perSequence(shapeOf(getInput())[2]) + 5);
}

SmallVector<int64_t> RouteOp::getTilingSpace() {
  return {tokensOf(getExperts()), shapeOf(getRouter())[1],
          perSequence(shapeOf(getInput())[2])};
}

LogicalResult BalanceLossOp::verify() {
  if (failed(expectChoices(*this, getExperts())) ||
      failed(expectRank(*this, "probs", getProbs(), 3)) ||
      failed(expectF32(*this, "probs", getProbs())) ||
      failed(expectShape(*this, "loss", getLoss(), {}, "a loss")) ||
      failed(expectF32(*this, "loss", getLoss())))
    return failure();
  double scale = getScale().convertToDouble();
  if (!std::isfinite(scale) || scale < 0.0)
    return emitOpError() << "scale must be finite and 0 or more, got "
                         << cgpt::formatExactDouble(scale);
  return success();
}

KernelKind BalanceLossOp::getKernelKind() { return KernelKind::reduction; }

int64_t BalanceLossOp::getFlopsPerSequence() {
  int64_t tokens = tokensOf(getExperts());
  return tokens * (2 * shapeOf(getProbs())[2] + choicesOf(getExperts()));
}

SmallVector<int64_t> BalanceLossOp::getTilingSpace() {
  return {tokensOf(getExperts()), shapeOf(getProbs())[2]};
}

LogicalResult RouteGradOp::verify() {
  if (failed(expectChoices(*this, getExperts())))
    return failure();
  ArrayRef<int64_t> choices = shapeOf(getExperts());
  std::string why = "experts " + formatShape(choices);
  if (failed(expectShape(*this, "weights", getWeights(), choices, why)) ||
      failed(
          expectShape(*this, "weights_grad", getWeightsGrad(), choices, why)) ||
      failed(expectRank(*this, "probs", getProbs(), 3)) ||
      failed(expectShape(*this, "result", getResult(), shapeOf(getProbs()),
                         "probs " + formatShape(shapeOf(getProbs())))))
    return failure();
  for (auto [name, value] :
       {std::pair{"probs", getProbs()}, std::pair{"weights", getWeights()},
        std::pair{"weights_grad", getWeightsGrad()}})
    if (failed(expectF32(*this, name, value)))
      return failure();
  double scale = getBalanceScale().convertToDouble();
  if (!std::isfinite(scale) || scale < 0.0)
    return emitOpError() << "balance_scale must be finite and 0 or more, got "
                         << cgpt::formatExactDouble(scale);
  return success();
}

int64_t RouteGradOp::getFlopsPerSequence() {
  return tokensOf(getExperts()) *
         (4 * shapeOf(getProbs())[2] + 4 * choicesOf(getExperts()));
}

SmallVector<int64_t> RouteGradOp::getTilingSpace() {
  return {tokensOf(getExperts()), shapeOf(getProbs())[2]};
}

//===----------------------------------------------------------------------===//
// Dispatch and combine
//===----------------------------------------------------------------------===//

LogicalResult DispatchOp::verify() {
  if (failed(expectChoices(*this, getExperts())) ||
      failed(expectRank(*this, "input", getInput(), 3)) ||
      failed(expectRoutedRows(*this, "result", getResult(), getExperts())))
    return failure();
  ArrayRef<int64_t> input = shapeOf(getInput());
  if (failed(expectShape(*this, "result", getResult(),
                         {input[0], shapeOf(getResult())[1], input[2]},
                         "input " + formatShape(input))))
    return failure();
  return expectSameElementType(*this, {getInput(), getResult()});
}

int64_t DispatchOp::getFlopsPerSequence() { return 0; }

SmallVector<int64_t> DispatchOp::getTilingSpace() {
  return rowSpace(getResult());
}

LogicalResult CombineOp::verify() {
  if (failed(expectRank(*this, "routed", getRouted(), 3)) ||
      failed(expectRank(*this, "result", getResult(), 3)))
    return failure();
  ArrayRef<int64_t> routed = shapeOf(getRouted()),
                    result = shapeOf(getResult());
  if (!cgpt::dimsAgree(routed[2], result[2]) ||
      !cgpt::dimsAgree(routed[0], result[0]) || result[1] < 1 ||
      (!ShapedType::isDynamic(routed[1]) && routed[1] % result[1] != 0))
    return emitOpError() << "result " << formatShape(result)
                         << " does not gather routed rows "
                         << formatShape(routed)
                         << ": k rows per token of the same width";
  if (getWeights()) {
    if (failed(expectRank(*this, "weights", getWeights(), 3)) ||
        failed(expectF32(*this, "weights", getWeights())) ||
        failed(expectRoutedRows(*this, "routed", getRouted(), getWeights())))
      return failure();
  }
  return expectSameElementType(*this, {getRouted(), getResult()});
}

int64_t CombineOp::getFlopsPerSequence() {
  int64_t elements = elementsPerSequence(getResult());
  int64_t k = shapeOf(getRouted())[1] / shapeOf(getResult())[1];
  return elements * (getWeights() ? 2 * k : k - 1);
}

SmallVector<int64_t> CombineOp::getTilingSpace() {
  return rowSpace(getResult());
}

LogicalResult CombineGradOp::verify() {
  if (failed(expectRank(*this, "weights", getWeights(), 3)) ||
      failed(expectF32(*this, "weights", getWeights())) ||
      failed(expectRoutedRows(*this, "routed", getRouted(), getWeights())) ||
      failed(expectShape(*this, "routed_grad", getRoutedGrad(),
                         shapeOf(getRouted()), "routed")) ||
      failed(expectShape(*this, "weights_grad", getWeightsGrad(),
                         shapeOf(getWeights()), "weights")) ||
      failed(expectF32(*this, "weights_grad", getWeightsGrad())))
    return failure();
  ArrayRef<int64_t> weights = shapeOf(getWeights());
  if (failed(expectShape(*this, "grad", getGrad(),
                         {weights[0], weights[1], shapeOf(getRouted())[2]},
                         "weights " + formatShape(weights) + " and routed " +
                             formatShape(shapeOf(getRouted())))))
    return failure();
  return expectSameElementType(*this,
                               {getRouted(), getGrad(), getRoutedGrad()});
}

int64_t CombineGradOp::getFlopsPerSequence() {
  return 3 * elementsPerSequence(getRouted());
}

SmallVector<int64_t> CombineGradOp::getTilingSpace() {
  return rowSpace(getRouted());
}

//===----------------------------------------------------------------------===//
// The experts' products
//===----------------------------------------------------------------------===//

LogicalResult ExpertMatmulOp::verify() {
  if (failed(expectChoices(*this, getExperts())) ||
      failed(expectRoutedRows(*this, "lhs", getLhs(), getExperts())) ||
      failed(expectRank(*this, "rhs", getRhs(), 3)))
    return failure();
  ArrayRef<int64_t> lhs = shapeOf(getLhs()), rhs = shapeOf(getRhs());
  int64_t contracted = getTransposeRhs() ? rhs[2] : rhs[1];
  int64_t columns = getTransposeRhs() ? rhs[1] : rhs[2];
  if (!cgpt::dimsAgree(contracted, lhs[2]))
    return emitOpError() << "contracts " << lhs[2] << " columns of lhs "
                         << formatShape(lhs) << " with " << contracted
                         << " rows of each expert's rhs " << formatShape(rhs);
  std::string why = "lhs " + formatShape(lhs) + " and rhs " + formatShape(rhs);
  if (failed(expectShape(*this, "result", getResult(),
                         {lhs[0], lhs[1], columns}, why)))
    return failure();
  if (getBias() &&
      failed(expectShape(*this, "bias", getBias(), {rhs[0], columns}, why)))
    return failure();
  SmallVector<Value> values = {getLhs(), getRhs(), getResult()};
  if (getBias())
    values.push_back(getBias());
  return expectSameElementType(*this, values);
}

KernelKind ExpertMatmulOp::getKernelKind() { return KernelKind::weight_matmul; }

Value ExpertMatmulOp::getStreamedWeight() { return getRhs(); }

int64_t ExpertMatmulOp::getRoutedExperts() { return shapeOf(getRhs())[0]; }

int64_t ExpertMatmulOp::getFlopsPerSequence() {
  SmallVector<int64_t> space = getTilingSpace();
  return space[0] * (2 * space[1] * space[2] + (getBias() ? space[1] : 0));
}

SmallVector<int64_t> ExpertMatmulOp::getTilingSpace() {
  ArrayRef<int64_t> rhs = shapeOf(getRhs());
  return {perSequence(shapeOf(getLhs())[1]),
          getTransposeRhs() ? rhs[1] : rhs[2],
          getTransposeRhs() ? rhs[2] : rhs[1]};
}

LogicalResult ExpertWeightGradOp::verify() {
  if (failed(expectChoices(*this, getExperts())) ||
      failed(expectRoutedRows(*this, "lhs", getLhs(), getExperts())) ||
      failed(expectRoutedRows(*this, "grad", getGrad(), getExperts())) ||
      failed(expectRank(*this, "result", getResult(), 3)))
    return failure();
  ArrayRef<int64_t> result = shapeOf(getResult());
  if (failed(
          expectShape(*this, "result", getResult(),
                      {result[0], shapeOf(getLhs())[2], shapeOf(getGrad())[2]},
                      "lhs " + formatShape(shapeOf(getLhs())) + " and grad " +
                          formatShape(shapeOf(getGrad())))))
    return failure();
  return expectSameElementType(*this, {getLhs(), getGrad(), getResult()});
}

KernelKind ExpertWeightGradOp::getKernelKind() {
  return KernelKind::weight_grad;
}

Value ExpertWeightGradOp::getAccumulatedGradient() { return getResult(); }

int64_t ExpertWeightGradOp::getRoutedExperts() {
  return shapeOf(getResult())[0];
}

int64_t ExpertWeightGradOp::getFlopsPerSequence() {
  SmallVector<int64_t> space = getTilingSpace();
  return 2 * space[0] * space[1] * space[2];
}

SmallVector<int64_t> ExpertWeightGradOp::getTilingSpace() {
  ArrayRef<int64_t> result = shapeOf(getResult());
  return {result[1], result[2], perSequence(shapeOf(getLhs())[1])};
}

LogicalResult ExpertBiasGradOp::verify() {
  if (failed(expectChoices(*this, getExperts())) ||
      failed(expectRoutedRows(*this, "grad", getGrad(), getExperts())) ||
      failed(expectRank(*this, "result", getResult(), 2)))
    return failure();
  if (!cgpt::dimsAgree(shapeOf(getResult())[1], shapeOf(getGrad())[2]))
    return emitOpError() << "result " << formatShape(shapeOf(getResult()))
                         << " is not [experts, " << shapeOf(getGrad())[2]
                         << "]";
  return expectSameElementType(*this, {getGrad(), getResult()});
}

KernelKind ExpertBiasGradOp::getKernelKind() { return KernelKind::token_sum; }

Value ExpertBiasGradOp::getAccumulatedGradient() { return getResult(); }

int64_t ExpertBiasGradOp::getRoutedExperts() { return shapeOf(getResult())[0]; }

int64_t ExpertBiasGradOp::getFlopsPerSequence() {
  return elementsPerSequence(getGrad());
}

SmallVector<int64_t> ExpertBiasGradOp::getTilingSpace() {
  return rowSpace(getGrad());
}
