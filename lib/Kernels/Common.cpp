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
using namespace cgpt::exec;
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

LogicalResult executeMatmul(MatmulOp mm, KernelFrame &frame,
                            ArrayRef<int64_t> tile) {
  MatmulOptions mo;
  mo.transposeLhs = mm.getTransposeLhs();
  mo.transposeRhs = mm.getTransposeRhs();
  mo.reduceBatch = mm.getReduceBatch();
  mo.scale = scaleOr1(mm.getScale());
  const Tensor *bias = mm.getBias() ? &frame[mm.getBias()] : nullptr;
  frame.set(mm.getResult(),
            matmul(frame[mm.getLhs()], frame[mm.getRhs()], bias, mo, tile));
  return success();
}

LogicalResult executeMap(MapOp mapOp, KernelFrame &frame,
                         ArrayRef<int64_t> tile) {
  llvm::SmallVector<const Tensor *, 2> inputs;
  for (Value input : mapOp.getInputs())
    inputs.push_back(&frame[input]);
  frame.set(mapOp.getResult(), map(mapOp.getKind(), inputs, tile));
  return success();
}

LogicalResult executeSumBatch(SumBatchOp s, KernelFrame &frame,
                              ArrayRef<int64_t> tile) {
  frame.set(s.getResult(), sumBatch(frame[s.getInput()], tile));
  return success();
}

} // namespace

void kernels::registerCommonModels(DialectRegistry &registry) {
  attachLowering<transformer::ResidualAddOp, ResidualAddLowering>(registry);
  attachExecution<MatmulOp, executeMatmul>(registry);
  attachExecution<MapOp, executeMap>(registry);
  attachExecution<SumBatchOp, executeSumBatch>(registry);
}
