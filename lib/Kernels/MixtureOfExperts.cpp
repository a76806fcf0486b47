//===- MixtureOfExperts.cpp - routed feed-forward experts -----------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// A transformer.moe lowers to the router (product, softmax, top-k), the
// dispatch of each token to its chosen experts, the experts' products on
// their routed rows, and the weighted combine; the load-balancing loss adds
// its share to the step's loss. The backward kernels are derived by hand
// (docs/dataflow.md, "Mixture of experts").
//
//===----------------------------------------------------------------------===//

#include "KernelModels.h"

using namespace mlir;
using namespace cgpt;
using namespace cgpt::dataflow;
using namespace cgpt::kernels;

namespace {

struct MixtureOfExpertsLowering {
  /// What the forward pass keeps for the backward one, by name.
  enum Saved {
    X,
    Weights,
    Experts,
    Probs,
    Routed,
    Up,
    Hidden,
    Out,
    Gate,
    Gated
  };

  /// `balance_loss`'s scale: the op's balance weight over the global
  /// batch's sequences, so that micro-batches and systems add up.
  static double balanceScale(transformer::MixtureOfExpertsOp op,
                             StepLowering &s) {
    return op.getBalance().convertToDouble() /
           static_cast<double>(s.getStep().getGlobalBatch());
  }

  static Value expertMatmul(StepLowering &s, Type type, Value lhs, Value rhs,
                            Value experts, Value bias, bool transposeRhs) {
    return s.kernel<ExpertMatmulOp>(type, lhs, rhs, experts, bias,
                                    transposeRhs ? s.b().getUnitAttr()
                                                 : UnitAttr());
  }

  static SavedActivations forward(transformer::MixtureOfExpertsOp op,
                                  StepLowering &s) {
    MLIRContext *ctx = op.getContext();
    Value x = s.lookup(op.getInput());
    ArrayRef<int64_t> xs = StepLowering::shapeOf(x);
    int64_t k = op.getTopK(), experts = op.getNumExperts();
    SmallVector<int64_t> choices = {xs[0], xs[1], k};
    auto route = s.kernel<RouteOp>(
        StepLowering::f32Stream(ctx, choices),
        StreamType::get(
            ctx, RankedTensorType::get(choices, IntegerType::get(ctx, 32))),
        StepLowering::f32Stream(ctx, {xs[0], xs[1], experts}), x,
        s.weight(op.getRouterWeight()), op.getTopKAttr(),
        op.getNullExpertAttr(), op.getRouterF32Attr());
    Value choice = route.getExperts();
    double balance = balanceScale(op, s);
    if (balance > 0.0 && !s.isRecomputing()) {
      Value loss = s.kernel<BalanceLossOp>(StepLowering::f32Stream(ctx, {}),
                                           route.getProbs(), choice,
                                           s.b().getF64FloatAttr(balance));
      s.b().create<LossOutOp>(s.getLoc(), loss);
    }

    Value routed = s.kernel<DispatchOp>(
        StepLowering::streamLike(x, {xs[0], xs[1] * k, xs[2]}), x, choice);
    Value up = s.weight(op.getUpWeight());
    auto hidden = StepLowering::streamLike(
        x, {xs[0], xs[1] * k, StepLowering::shapeOf(up)[2]});
    MapKind activation = activationMaps(op.getActivation()).first;
    Value h = expertMatmul(s, hidden, routed, up, choice,
                           s.optionalWeight(op.getUpBias()), false);
    Value a, g, gated;
    if (op.getGateWeight()) {
      g = expertMatmul(s, hidden, routed, s.weight(op.getGateWeight()), choice,
                       s.optionalWeight(op.getGateBias()), false);
      gated = s.map(activation, g);
      a = s.map(MapKind::mul, {gated, h});
    } else {
      a = s.map(activation, h);
    }
    Value out =
        expertMatmul(s, routed.getType(), a, s.weight(op.getDownWeight()),
                     choice, s.optionalWeight(op.getDownBias()), false);
    s.define(op.getResult(),
             s.kernel<CombineOp>(x.getType(), out, route.getWeights()));
    SavedActivations saved = {
        x, route.getWeights(), choice, route.getProbs(), routed, h, a, out};
    if (g)
      saved.append({g, gated});
    return saved;
  }

  static void expertGradOut(StepLowering &s, Value weight, Value lhs,
                            Value grad, Value experts) {
    Value stream = s.weight(weight);
    s.gradOut(weight, s.kernel<ExpertWeightGradOp>(stream.getType(), lhs, grad,
                                                   experts));
  }
  static void expertBiasGradOut(StepLowering &s, Value bias, Value grad,
                                Value experts) {
    if (bias)
      s.gradOut(bias, s.kernel<ExpertBiasGradOp>(s.weight(bias).getType(), grad,
                                                 experts));
  }

  static LogicalResult backward(transformer::MixtureOfExpertsOp op,
                                ArrayRef<Value> saved, StepLowering &s) {
    FailureOr<Value> dy = s.grad(op.getResult());
    if (failed(dy))
      return failure();
    Value x = saved[X], weights = saved[Weights], choice = saved[Experts];
    Value routed = saved[Routed], h = saved[Up], a = saved[Hidden];
    auto combined = s.kernel<CombineGradOp>(
        saved[Out].getType(), weights.getType(), saved[Out], weights, *dy);
    Value dOut = combined.getRoutedGrad();
    // As in the dense block, each weight gradient comes before its input's.
    expertGradOut(s, op.getDownWeight(), a, dOut, choice);
    expertBiasGradOut(s, op.getDownBias(), dOut, choice);
    Value da = expertMatmul(s, a.getType(), dOut, s.weight(op.getDownWeight()),
                            choice, Value(), true);
    MapKind derivative = activationMaps(op.getActivation()).second;
    Value dRouted;
    if (op.getGateWeight()) {
      Value dg = s.map(derivative, {saved[Gate], s.map(MapKind::mul, {da, h})});
      expertGradOut(s, op.getGateWeight(), routed, dg, choice);
      expertBiasGradOut(s, op.getGateBias(), dg, choice);
      dRouted =
          expertMatmul(s, routed.getType(), dg, s.weight(op.getGateWeight()),
                       choice, Value(), true);
      da = s.map(MapKind::mul, {da, saved[Gated]});
    } else {
      da = s.map(derivative, {h, da});
    }
    expertGradOut(s, op.getUpWeight(), routed, da, choice);
    expertBiasGradOut(s, op.getUpBias(), da, choice);
    Value dUp = expertMatmul(s, routed.getType(), da,
                             s.weight(op.getUpWeight()), choice, Value(), true);
    dRouted = dRouted ? s.map(MapKind::add, {dRouted, dUp}) : dUp;
    s.addGrad(op.getInput(),
              s.kernel<CombineOp>(x.getType(), dRouted, Value()));

    ArrayRef<int64_t> xs = StepLowering::shapeOf(x);
    Value dLogits = s.kernel<RouteGradOp>(
        StepLowering::streamLike(x, {xs[0], xs[1], op.getNumExperts()}),
        saved[Probs], choice, weights, combined.getWeightsGrad(),
        s.b().getF64FloatAttr(balanceScale(op, s)));
    Value router = s.weight(op.getRouterWeight());
    s.gradOut(op.getRouterWeight(), s.matmul(router.getType(), x, dLogits,
                                             Value(), true, false, true));
    s.addGrad(op.getInput(),
              s.matmul(x.getType(), dLogits, router, Value(), false, true));
    return success();
  }
};

} // namespace

void kernels::registerMixtureOfExpertsModels(DialectRegistry &registry) {
  attachLowering<transformer::MixtureOfExpertsOp, MixtureOfExpertsLowering>(
      registry);
}
