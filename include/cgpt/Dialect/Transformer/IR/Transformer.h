//===- Transformer.h - transformer dialect ----------------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_TRANSFORMER_IR_TRANSFORMER_H
#define CGPT_DIALECT_TRANSFORMER_IR_TRANSFORMER_H

#include "cgpt/Dialect/Training/IR/Training.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "cgpt/Dialect/Transformer/IR/TransformerEnums.h.inc"
#include "cgpt/Dialect/Transformer/IR/TransformerOpsDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "cgpt/Dialect/Transformer/IR/TransformerAttrs.h.inc"

#include "cgpt/Dialect/Transformer/IR/TransformerInterfaces.h.inc"

#define GET_OP_CLASSES
#include "cgpt/Dialect/Transformer/IR/TransformerOps.h.inc"

#endif // CGPT_DIALECT_TRANSFORMER_IR_TRANSFORMER_H
