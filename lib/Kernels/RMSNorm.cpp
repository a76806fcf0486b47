//===- RMSNorm.cpp - root-mean-square normalization -----------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// RMS normalization (LLaMA, Mistral, BTLM): transformer.rms_norm lowers to
// dataflow.rms_norm, which keeps each row's reciprocal RMS for the
// backward, and dataflow.rms_norm_grad, which gives the input's and the
// gain's gradients. docs/adding-a-kernel.md walks through this file.
//
//===----------------------------------------------------------------------===//

#include "KernelModels.h"

#include <cmath>

using namespace mlir;
using namespace cgpt;
using namespace cgpt::dataflow;
using namespace cgpt::kernels;

namespace {

//===----------------------------------------------------------------------===//
// Lowering
//===----------------------------------------------------------------------===//

struct RMSNormLowering {
  // Saved: the input and its row rstd.
  static SavedActivations forward(transformer::RMSNormOp op, StepLowering &s) {
    Value x = s.lookup(op.getInput());
    SmallVector<int64_t> rows(StepLowering::shapeOf(x).drop_back());
    auto stats = StepLowering::f32Stream(op.getContext(), rows);
    auto norm =
        s.kernel<RMSNormOp>(TypeRange{x.getType(), stats}, x,
                            s.weight(op.getGamma()), op.getEpsilonAttr());
    s.define(op.getResult(), norm.getResult());
    return {x, norm.getRstd()};
  }

  // y = x * rstd * gamma, rstd = (mean(x^2) + eps)^-1/2. With xhat = x *
  // rstd and g = dy * gamma: d rstd / dx_j = -rstd^3 x_j / n, so
  // dx_i = rstd * g_i - x_i rstd^3 / n * sum_j g_j x_j
  //      = rstd * (g_i - xhat_i * mean_j(g_j * xhat_j)),
  // and dgamma = sum over rows of dy * xhat.
  static LogicalResult backward(transformer::RMSNormOp op,
                                ArrayRef<Value> saved, StepLowering &s) {
    FailureOr<Value> dy = s.grad(op.getResult());
    if (failed(dy))
      return failure();
    Value gamma = s.weight(op.getGamma());
    auto grad =
        s.kernel<RMSNormGradOp>(TypeRange{saved[0].getType(), gamma.getType()},
                                *dy, saved[0], saved[1], gamma);
    s.addGrad(op.getInput(), grad.getInputGrad());
    s.gradOut(op.getGamma(), grad.getGammaGrad());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Functional execution, tile by tile as a region of cores runs it
//===----------------------------------------------------------------------===//

} // namespace

void kernels::registerRMSNormModels(DialectRegistry &registry) {
  attachLowering<transformer::RMSNormOp, RMSNormLowering>(registry);
}
