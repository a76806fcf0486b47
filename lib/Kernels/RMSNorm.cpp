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
using namespace cgpt::exec;
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

LogicalResult executeRMSNorm(RMSNormOp op, KernelFrame &frame,
                             ArrayRef<int64_t> tile) {
  const Tensor &input = frame[op.getInput()], &gamma = frame[op.getGamma()];
  int64_t cols = input.dim(-1), rows = input.numel() / cols;
  int64_t rowsPerSequence = rows / input.dim(0);
  Tensor result(input.shape);
  Tensor rstd(ArrayRef<int64_t>(input.shape).drop_back());
  const float *x = input.data.data();
  // Two sweeps over the tiles: the sums of squares, then the scaled rows.
  forEachRowTile(rows, rowsPerSequence, cols, tile,
                 [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                   sumRows(r0, r1, c0, c1, rstd.data.data(),
                           [&](int64_t r, int64_t c) {
                             return x[r * cols + c] * x[r * cols + c];
                           });
                 });
  float inverseCols = 1.0f / static_cast<float>(cols);
  float epsilon = static_cast<float>(op.getEpsilon().convertToDouble());
  for (float &value : rstd.data)
    value = 1.0f / std::sqrt(value * inverseCols + epsilon);
  forEachRowTile(rows, rowsPerSequence, cols, tile,
                 [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                   for (int64_t r = r0; r < r1; ++r)
                     for (int64_t c = c0; c < c1; ++c)
                       result.data[r * cols + c] =
                           x[r * cols + c] * rstd.data[r] * gamma.data[c];
                 });
  frame.set(op.getResult(), std::move(result));
  frame.set(op.getRstd(), std::move(rstd));
  return success();
}

LogicalResult executeRMSNormGrad(RMSNormGradOp op, KernelFrame &frame,
                                 ArrayRef<int64_t> tile) {
  const Tensor &grad = frame[op.getGrad()], &input = frame[op.getInput()];
  const Tensor &rstd = frame[op.getRstd()], &gamma = frame[op.getGamma()];
  int64_t cols = input.dim(-1), rows = input.numel() / cols;
  int64_t rowsPerSequence = rows / input.dim(0);
  Tensor inputGrad(input.shape), gammaGrad({cols});
  const float *x = input.data.data(), *dy = grad.data.data();
  auto xhat = [&](int64_t r, int64_t c) {
    return x[r * cols + c] * rstd.data[r];
  };
  // Row sums of g * xhat, then dx; dgamma sums over rows, one partial per
  // row tile.
  std::vector<float> sumGX(rows), partGamma(cols);
  forEachRowTile(rows, rowsPerSequence, cols, tile,
                 [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                   sumRows(
                       r0, r1, c0, c1, sumGX.data(), [&](int64_t r, int64_t c) {
                         return dy[r * cols + c] * gamma.data[c] * xhat(r, c);
                       });
                 });
  float inverseCols = 1.0f / static_cast<float>(cols);
  forEachRowTile(
      rows, rowsPerSequence, cols, tile,
      [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
        std::fill(partGamma.begin() + c0, partGamma.begin() + c1, 0.0f);
        for (int64_t r = r0; r < r1; ++r) {
          float meanGX = sumGX[r] * inverseCols;
          for (int64_t c = c0; c < c1; ++c) {
            float g = dy[r * cols + c] * gamma.data[c], xh = xhat(r, c);
            inputGrad.data[r * cols + c] = rstd.data[r] * (g - xh * meanGX);
            partGamma[c] += dy[r * cols + c] * xh;
          }
        }
        for (int64_t c = c0; c < c1; ++c)
          gammaGrad.data[c] += partGamma[c];
      });
  frame.set(op.getInputGrad(), std::move(inputGrad));
  frame.set(op.getGammaGrad(), std::move(gammaGrad));
  return success();
}

} // namespace

void kernels::registerRMSNormModels(DialectRegistry &registry) {
  attachLowering<transformer::RMSNormOp, RMSNormLowering>(registry);
  attachExecution<RMSNormOp, executeRMSNorm, F32Results::statistics>(registry);
  attachExecution<RMSNormGradOp, executeRMSNormGrad>(registry);
}
