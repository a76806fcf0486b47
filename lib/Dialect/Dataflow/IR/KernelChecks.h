//===- KernelChecks.h - shape checks the kernel verifiers share -*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// What every dataflow kernel's verifier, FLOP count and tiling space reads
// of its streams, and the checks that name the operand that breaks them.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_LIB_DIALECT_DATAFLOW_IR_KERNELCHECKS_H
#define CGPT_LIB_DIALECT_DATAFLOW_IR_KERNELCHECKS_H

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"
#include "cgpt/Support/Format.h"
#include "cgpt/Support/Shapes.h"

namespace cgpt::dataflow::checks {

using namespace mlir;

inline RankedTensorType tensorOf(Value value) {
  if (auto stream = dyn_cast<StreamType>(value.getType()))
    return stream.getTensor();
  return cast<BufferType>(value.getType()).getTensor();
}

inline ArrayRef<int64_t> shapeOf(Value value) {
  return tensorOf(value).getShape();
}

inline Type elementTypeOf(Value value) {
  return tensorOf(value).getElementType();
}

/// Elements of `value` for one sequence.
inline int64_t elementsPerSequence(Value value) {
  return productPerSequence(shapeOf(value));
}

/// [rows, columns] of a stream whose rows are its last dimension.
inline SmallVector<int64_t> rowSpace(Value value) {
  ArrayRef<int64_t> shape = shapeOf(value);
  return {productPerSequence(shape.drop_back()), perSequence(shape.back())};
}

inline LogicalResult expectShape(Operation *op, StringRef name, Value value,
                                 ArrayRef<int64_t> expected, StringRef why) {
  if (shapesAgree(shapeOf(value), expected))
    return success();
  return op->emitOpError() << name << " has shape "
                           << formatShape(shapeOf(value)) << " but " << why
                           << " requires " << formatShape(expected);
}

inline LogicalResult expectRank(Operation *op, StringRef name, Value value,
                                int64_t rank) {
  if (static_cast<int64_t>(shapeOf(value).size()) == rank)
    return success();
  return op->emitOpError() << name << " must have rank " << rank << ", got "
                           << formatShape(shapeOf(value));
}

inline LogicalResult expectSameElementType(Operation *op, ValueRange values) {
  for (Value value : values)
    if (elementTypeOf(value) != elementTypeOf(values.front()))
      return op->emitOpError()
             << "mixes element types " << elementTypeOf(values.front())
             << " and " << elementTypeOf(value);
  return success();
}

inline LogicalResult expectIds(Operation *op, StringRef name, Value ids) {
  if (shapeOf(ids).size() == 2 && elementTypeOf(ids).isSignlessInteger())
    return success();
  return op->emitOpError() << name << " must be [batch, seq] integer ids, got "
                           << tensorOf(ids);
}

inline LogicalResult expectF32(Operation *op, StringRef name, Value value) {
  if (elementTypeOf(value).isF32())
    return success();
  return op->emitOpError() << name << " must be f32, got "
                           << elementTypeOf(value);
}

} // namespace cgpt::dataflow::checks

#endif // CGPT_LIB_DIALECT_DATAFLOW_IR_KERNELCHECKS_H
