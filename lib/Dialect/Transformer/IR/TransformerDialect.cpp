//===- TransformerDialect.cpp - transformer dialect and attributes --------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Transformer/IR/Transformer.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace cgpt::transformer;

#include "cgpt/Dialect/Transformer/IR/TransformerEnums.cpp.inc"
#include "cgpt/Dialect/Transformer/IR/TransformerInterfaces.cpp.inc"
#include "cgpt/Dialect/Transformer/IR/TransformerOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "cgpt/Dialect/Transformer/IR/TransformerAttrs.cpp.inc"

void TransformerDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "cgpt/Dialect/Transformer/IR/TransformerOps.cpp.inc"
      >();
  registerAttributes();
}

void TransformerDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "cgpt/Dialect/Transformer/IR/TransformerAttrs.cpp.inc"
      >();
}
