//===- FeedForward.cpp - feed-forward block -------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The feed-forward block: two projections around an elementwise
// activation (the matmul and map kernels are in Common.cpp).
//
//===----------------------------------------------------------------------===//

#include "KernelModels.h"

using namespace mlir;
using namespace cgpt;
using namespace cgpt::dataflow;
using namespace cgpt::kernels;

namespace {

struct FeedForwardLowering {
  // Saved: x, pre-activation h, activation a; gated, x, up projection u,
  // gate g, act(g) and a = act(g) * u.
  static SavedActivations forward(transformer::FeedForwardOp op,
                                  StepLowering &s) {
    Value x = s.lookup(op.getInput());
    Value up = s.weight(op.getUpWeight());
    ArrayRef<int64_t> xs = StepLowering::shapeOf(x);
    auto hidden = StepLowering::streamLike(
        x, {xs[0], xs[1], StepLowering::shapeOf(up)[1]});
    MapKind activation = activationMaps(op.getActivation()).first;
    Value h = s.matmul(hidden, x, up, s.optionalWeight(op.getUpBias()));
    SavedActivations saved;
    Value a;
    if (op.getGateWeight()) {
      Value gate = s.weight(op.getGateWeight());
      Value g = s.matmul(hidden, x, gate, s.optionalWeight(op.getGateBias()));
      Value gated = s.map(activation, g);
      a = s.map(MapKind::mul, {gated, h});
      saved = {x, h, a, g, gated};
    } else {
      a = s.map(activation, h);
      saved = {x, h, a};
    }
    Value down = s.weight(op.getDownWeight());
    Value downBias = s.optionalWeight(op.getDownBias());
    s.define(op.getResult(), s.matmul(x.getType(), a, down, downBias));
    return saved;
  }

  // Gated: with a = act(g) * u, du = da * act(g) and
  // dg = act'(g) * (da * u); the input's gradient sums both projections'.
  static LogicalResult backward(transformer::FeedForwardOp op,
                                ArrayRef<Value> saved, StepLowering &s) {
    Value x = saved[0], h = saved[1], a = saved[2];
    FailureOr<Value> dy = s.grad(op.getResult());
    if (failed(dy))
      return failure();
    // Each projection's weight gradient comes before its input's: the
    // activation it reads is then dead before the input's gradient, as
    // wide, is made (docs/dataflow.md).
    Value down = s.weight(op.getDownWeight());
    s.gradOut(op.getDownWeight(),
              s.matmul(down.getType(), a, *dy, Value(), true, false, true));
    s.gradOutBias(op.getDownBias(), *dy);
    Value da = s.matmul(a.getType(), *dy, down, Value(), false, true);
    MapKind derivative = activationMaps(op.getActivation()).second;
    if (op.getGateWeight()) {
      Value g = saved[3], gated = saved[4];
      Value dg = s.map(derivative, {g, s.map(MapKind::mul, {da, h})});
      Value gate = s.weight(op.getGateWeight());
      s.gradOut(op.getGateWeight(),
                s.matmul(gate.getType(), x, dg, Value(), true, false, true));
      s.gradOutBias(op.getGateBias(), dg);
      s.addGrad(op.getInput(),
                s.matmul(x.getType(), dg, gate, Value(), false, true));
      // The up projection's gradient: da * act(g).
      da = s.map(MapKind::mul, {da, gated});
    } else {
      da = s.map(derivative, {h, da});
    }
    Value up = s.weight(op.getUpWeight());
    s.gradOut(op.getUpWeight(),
              s.matmul(up.getType(), x, da, Value(), true, false, true));
    s.gradOutBias(op.getUpBias(), da);
    s.addGrad(op.getInput(),
              s.matmul(x.getType(), da, up, Value(), false, true));
    return success();
  }
};

} // namespace

std::pair<MapKind, MapKind>
kernels::activationMaps(transformer::Activation activation) {
  switch (activation) {
  case transformer::Activation::gelu:
    return {MapKind::gelu, MapKind::gelu_grad};
  case transformer::Activation::gelu_tanh:
    return {MapKind::gelu_tanh, MapKind::gelu_tanh_grad};
  case transformer::Activation::relu:
    return {MapKind::relu, MapKind::relu_grad};
  case transformer::Activation::silu:
    return {MapKind::silu, MapKind::silu_grad};
  }
  return {MapKind::gelu, MapKind::gelu_grad};
}

void kernels::registerFeedForwardModels(DialectRegistry &registry) {
  attachLowering<transformer::FeedForwardOp, FeedForwardLowering>(registry);
}
