//===- LayerNorm.cpp - layer normalization --------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Layer normalization: the normalized rows with their statistics, and the
// gradient of input, gain and bias.
//
//===----------------------------------------------------------------------===//

#include "KernelModels.h"

using namespace mlir;
using namespace cgpt;
using namespace cgpt::dataflow;
using namespace cgpt::kernels;

namespace {

struct LayerNormLowering {
  // Saved: the input and its row statistics.
  static SavedActivations forward(transformer::LayerNormOp op,
                                  StepLowering &s) {
    Value x = s.lookup(op.getInput());
    SmallVector<int64_t> rows(StepLowering::shapeOf(x).drop_back());
    auto stats = StepLowering::f32Stream(op.getContext(), rows);
    // Weights stream in one statement at a time: the IR order must not
    // depend on the compiler's order of argument evaluation.
    Value gamma = s.weight(op.getGamma());
    Value beta = s.weight(op.getBeta());
    auto norm = s.kernel<LayerNormOp>(TypeRange{x.getType(), stats, stats}, x,
                                      gamma, beta, op.getEpsilonAttr());
    s.define(op.getResult(), norm.getResult());
    return {x, norm.getMean(), norm.getRstd()};
  }
  static LogicalResult backward(transformer::LayerNormOp op,
                                ArrayRef<Value> saved, StepLowering &s) {
    FailureOr<Value> dy = s.grad(op.getResult());
    if (failed(dy))
      return failure();
    Value gamma = s.weight(op.getGamma());
    auto grad = s.kernel<LayerNormGradOp>(
        TypeRange{saved[0].getType(), gamma.getType(), gamma.getType()}, *dy,
        saved[0], saved[1], saved[2], gamma);
    s.addGrad(op.getInput(), grad.getInputGrad());
    s.gradOut(op.getGamma(), grad.getGammaGrad());
    s.gradOut(op.getBeta(), grad.getBetaGrad());
    return success();
  }
};

} // namespace

void kernels::registerLayerNormModels(DialectRegistry &registry) {
  attachLowering<transformer::LayerNormOp, LayerNormLowering>(registry);
}
