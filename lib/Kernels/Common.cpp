//===- Common.cpp - shared kernels ----------------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Kernels every family uses (matrix multiply, elementwise maps, row sums)
// and the residual add, which lowers to a map.
//
//===----------------------------------------------------------------------===//

#include "KernelModels.h"

using namespace mlir;
using namespace cgpt;
using namespace cgpt::dataflow;
using namespace cgpt::kernels;

namespace {

struct ResidualAddLowering {
  static SavedActivations forward(transformer::ResidualAddOp op,
                                  StepLowering &s) {
    s.define(op.getResult(), s.map(MapKind::add, {s.lookup(op.getResidual()),
                                                  s.lookup(op.getUpdate())}));
    return {};
  }
  static LogicalResult backward(transformer::ResidualAddOp op, ArrayRef<Value>,
                                StepLowering &s) {
    FailureOr<Value> dy = s.grad(op.getResult());
    if (failed(dy))
      return failure();
    s.addGrad(op.getResidual(), *dy);
    s.addGrad(op.getUpdate(), *dy);
    return success();
  }
};

} // namespace

void kernels::registerCommonModels(DialectRegistry &registry) {
  attachLowering<transformer::ResidualAddOp, ResidualAddLowering>(registry);
}
