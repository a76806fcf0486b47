//===- Embeddings.cpp - embeddings ----------------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Token, learned-position and rotary embeddings: the lookup and its
// scatter-add gradient, added positions, rotary angles and rotations.
//
//===----------------------------------------------------------------------===//

#include "KernelModels.h"

using namespace mlir;
using namespace cgpt;
using namespace cgpt::dataflow;
using namespace cgpt::kernels;

namespace {

struct TokenEmbeddingLowering {
  static SavedActivations forward(transformer::TokenEmbeddingOp op,
                                  StepLowering &s) {
    s.define(op.getResult(),
             s.kernel<GatherOp>(StepLowering::streamOf(op.getType()),
                                s.weight(op.getTable()),
                                s.lookup(op.getTokens()), op.getScaleAttr()));
    return {};
  }
  static LogicalResult backward(transformer::TokenEmbeddingOp op,
                                ArrayRef<Value>, StepLowering &s) {
    FailureOr<Value> dx = s.grad(op.getResult());
    if (failed(dx))
      return failure();
    s.gradOut(op.getTable(),
              s.kernel<ScatterAddOp>(
                  StepLowering::streamOf(op.getTable().getType()),
                  s.lookup(op.getTokens()), *dx, op.getScaleAttr()));
    return success();
  }
};

struct PositionEmbeddingLowering {
  static SavedActivations forward(transformer::PositionEmbeddingOp op,
                                  StepLowering &s) {
    Value x = s.lookup(op.getInput());
    s.define(op.getResult(),
             s.kernel<AddPositionsOp>(x.getType(), x, s.weight(op.getTable())));
    return {};
  }
  static LogicalResult backward(transformer::PositionEmbeddingOp op,
                                ArrayRef<Value>, StepLowering &s) {
    FailureOr<Value> dy = s.grad(op.getResult());
    if (failed(dy))
      return failure();
    s.addGrad(op.getInput(), *dy);
    s.gradOut(op.getTable(),
              s.kernel<PositionGradOp>(
                  StepLowering::streamOf(op.getTable().getType()), *dy));
    return success();
  }
};

struct RotaryEmbeddingLowering {
  static SavedActivations forward(transformer::RotaryEmbeddingOp op,
                                  StepLowering &s) {
    s.define(op.getResult(),
             s.kernel<RotaryAnglesOp>(StepLowering::streamOf(op.getType()),
                                      op.getDimAttr(), op.getBaseAttr()));
    return {};
  }
  static LogicalResult backward(transformer::RotaryEmbeddingOp, ArrayRef<Value>,
                                StepLowering &) {
    return success(); // The angles are constants: no gradient.
  }
};

} // namespace

void kernels::registerEmbeddingModels(DialectRegistry &registry) {
  attachLowering<transformer::TokenEmbeddingOp, TokenEmbeddingLowering>(
      registry);
  attachLowering<transformer::PositionEmbeddingOp, PositionEmbeddingLowering>(
      registry);
  attachLowering<transformer::RotaryEmbeddingOp, RotaryEmbeddingLowering>(
      registry);
}
