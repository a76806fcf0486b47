//===- Dropout.cpp - dropout ----------------------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Dropout of the embeddings and of each block's output: the same kernel,
// with the same site, forward and backward, since the mask is drawn again
// rather than kept (include/cgpt/Exec/Dropout.h draws it).
//
//===----------------------------------------------------------------------===//

#include "KernelModels.h"

using namespace mlir;
using namespace cgpt;
using namespace cgpt::dataflow;
using namespace cgpt::kernels;

namespace {

struct DropoutLowering {
  static SavedActivations forward(transformer::DropoutOp op, StepLowering &s) {
    s.define(op.getResult(), s.dropout(s.lookup(op.getInput()),
                                       op.getRateAttr(), op.getSiteAttr()));
    return {};
  }
  // d(input) = dy * mask / (1 - rate): the forward's mask, drawn again.
  static LogicalResult backward(transformer::DropoutOp op, ArrayRef<Value>,
                                StepLowering &s) {
    FailureOr<Value> dy = s.grad(op.getResult());
    if (failed(dy))
      return failure();
    s.addGrad(op.getInput(),
              s.dropout(*dy, op.getRateAttr(), op.getSiteAttr()));
    return success();
  }
};

} // namespace

void kernels::registerDropoutModels(DialectRegistry &registry) {
  attachLowering<transformer::DropoutOp, DropoutLowering>(registry);
}
