//===- Loss.cpp - output head and loss ------------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The output head and the cross-entropy loss that seeds the backward pass.
//
//===----------------------------------------------------------------------===//

#include "KernelModels.h"

using namespace mlir;
using namespace cgpt;
using namespace cgpt::dataflow;
using namespace cgpt::kernels;

namespace {

struct OutputHeadLowering {
  // Saved: the input, for the weight gradient.
  static SavedActivations forward(transformer::OutputHeadOp op,
                                  StepLowering &s) {
    Value x = s.lookup(op.getInput());
    Value w = s.weight(op.getWeight());
    Value bias = s.optionalWeight(op.getBias());
    s.define(op.getResult(),
             s.matmul(StepLowering::streamOf(op.getType()), x, w, bias, false,
                      /*transposeRhs=*/true, false, op.getScaleAttr()));
    return {x};
  }
  static LogicalResult backward(transformer::OutputHeadOp op,
                                ArrayRef<Value> saved, StepLowering &s) {
    Value x = saved[0];
    FailureOr<Value> dLogits = s.grad(op.getResult());
    if (failed(dLogits))
      return failure();
    Value w = s.weight(op.getWeight());
    s.addGrad(op.getInput(), s.matmul(x.getType(), *dLogits, w, Value(), false,
                                      false, false, op.getScaleAttr()));
    s.gradOut(op.getWeight(), s.matmul(w.getType(), *dLogits, x, Value(), true,
                                       false, true, op.getScaleAttr()));
    s.gradOutBias(op.getBias(), *dLogits);
    return success();
  }
};

struct CrossEntropyLowering {
  /// The factor that makes the losses of all micro-batches and systems add
  /// up to the step's loss: the loss weight over the tokens (or sequences)
  /// of the global batch.
  static double scale(transformer::CrossEntropyOp op, StepLowering &s) {
    transformer::TrainStepOp step = s.getStep();
    double count = static_cast<double>(step.getGlobalBatch());
    if (op.getScaling() == transformer::LossScaling::num_tokens)
      count *= static_cast<double>(step.getSeqLen());
    return op.getWeight().convertToDouble() / count;
  }

  // Saved: the logits and their row log-sum-exp.
  static SavedActivations forward(transformer::CrossEntropyOp op,
                                  StepLowering &s) {
    Value logits = s.lookup(op.getLogits());
    ArrayRef<int64_t> shape = StepLowering::shapeOf(logits);
    auto ce = s.kernel<CrossEntropyOp>(
        StepLowering::f32Stream(op.getContext(), {}),
        StepLowering::f32Stream(op.getContext(), {shape[0], shape[1]}), logits,
        s.lookup(op.getLabels()), s.b().getF64FloatAttr(scale(op, s)));
    s.define(op.getResult(), ce.getLoss());
    s.b().create<LossOutOp>(s.getLoc(), ce.getLoss());
    return {logits, ce.getLse()};
  }
  static LogicalResult backward(transformer::CrossEntropyOp op,
                                ArrayRef<Value> saved, StepLowering &s) {
    // The loss seeds the backward pass: dloss = 1, folded into `scale`.
    s.addGrad(op.getLogits(), s.kernel<CrossEntropyGradOp>(
                                  saved[0].getType(), saved[0], saved[1],
                                  s.lookup(op.getLabels()),
                                  s.b().getF64FloatAttr(scale(op, s))));
    return success();
  }
};

} // namespace

void kernels::registerLossModels(DialectRegistry &registry) {
  attachLowering<transformer::OutputHeadOp, OutputHeadLowering>(registry);
  attachLowering<transformer::CrossEntropyOp, CrossEntropyLowering>(registry);
}
