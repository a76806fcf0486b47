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
using namespace cgpt::exec;
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

LogicalResult executeGather(GatherOp g, KernelFrame &frame,
                            ArrayRef<int64_t> tile) {
  frame.set(g.getResult(), gather(frame[g.getTable()], frame.idsOf(g.getIds()),
                                  scaleOr1(g.getScale()), tile));
  return success();
}

LogicalResult executeScatterAdd(ScatterAddOp s, KernelFrame &frame,
                                ArrayRef<int64_t> tile) {
  auto type = cast<StreamType>(s.getResult().getType());
  frame.set(s.getResult(),
            scatterAdd(frame.idsOf(s.getIds()), frame[s.getGrad()],
                       type.getShape()[0], scaleOr1(s.getScale()), tile));
  return success();
}

LogicalResult executeAddPositions(AddPositionsOp a, KernelFrame &frame,
                                  ArrayRef<int64_t> tile) {
  frame.set(a.getResult(),
            addPositions(frame[a.getInput()], frame[a.getTable()], tile));
  return success();
}

LogicalResult executePositionGrad(PositionGradOp p, KernelFrame &frame,
                                  ArrayRef<int64_t> tile) {
  auto type = cast<StreamType>(p.getResult().getType());
  frame.set(p.getResult(),
            positionGrad(frame[p.getGrad()], type.getShape()[0], tile));
  return success();
}

LogicalResult executeRotaryAngles(RotaryAnglesOp r, KernelFrame &frame,
                                  ArrayRef<int64_t> tile) {
  frame.set(r.getResult(),
            rotaryAngles(frame.getSeqLen(), static_cast<int64_t>(r.getDim()),
                         r.getBase().convertToDouble()));
  return success();
}

LogicalResult executeRotary(RotaryOp r, KernelFrame &frame,
                            ArrayRef<int64_t> tile) {
  frame.set(r.getResult(), rotary(frame[r.getInput()], frame[r.getAngles()],
                                  r.getInverse(), tile));
  return success();
}

} // namespace

void kernels::registerEmbeddingModels(DialectRegistry &registry) {
  attachLowering<transformer::TokenEmbeddingOp, TokenEmbeddingLowering>(
      registry);
  attachLowering<transformer::PositionEmbeddingOp, PositionEmbeddingLowering>(
      registry);
  attachLowering<transformer::RotaryEmbeddingOp, RotaryEmbeddingLowering>(
      registry);
  attachExecution<GatherOp, executeGather>(registry);
  attachExecution<ScatterAddOp, executeScatterAdd>(registry);
  attachExecution<AddPositionsOp, executeAddPositions>(registry);
  attachExecution<PositionGradOp, executePositionGrad>(registry);
  attachExecution<RotaryAnglesOp, executeRotaryAngles, F32Results::all>(
      registry);
  attachExecution<RotaryOp, executeRotary>(registry);
}
