//===- DataflowDialect.cpp - dataflow dialect, types and attributes -------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace cgpt::dataflow;

#include "cgpt/Dialect/Dataflow/IR/DataflowEnums.cpp.inc"
#include "cgpt/Dialect/Dataflow/IR/DataflowInterfaces.cpp.inc"
#include "cgpt/Dialect/Dataflow/IR/DataflowOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "cgpt/Dialect/Dataflow/IR/DataflowOpsTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "cgpt/Dialect/Dataflow/IR/DataflowAttrs.cpp.inc"

void DataflowDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "cgpt/Dialect/Dataflow/IR/DataflowOps.cpp.inc"
      >();
  registerTypes();
  registerAttributes();
}

void DataflowDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "cgpt/Dialect/Dataflow/IR/DataflowOpsTypes.cpp.inc"
      >();
}

void DataflowDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "cgpt/Dialect/Dataflow/IR/DataflowAttrs.cpp.inc"
      >();
}

int64_t cgpt::dataflow::elementBytes(Type type) {
  return (type.getIntOrFloatBitWidth() + 7) / 8;
}

int64_t cgpt::dataflow::bytesPerSequence(RankedTensorType type) {
  int64_t elements = 1;
  for (int64_t dim : type.getShape())
    elements *= ShapedType::isDynamic(dim) ? 1 : dim;
  return elements * elementBytes(type.getElementType());
}
