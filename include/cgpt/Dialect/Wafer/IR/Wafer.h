//===- Wafer.h - wafer placement dialect ------------------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_WAFER_IR_WAFER_H
#define CGPT_DIALECT_WAFER_IR_WAFER_H

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"
#include "cgpt/Dialect/Training/IR/Training.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

// The enums, and the plain values a kernel's cost is a function of.
#include "cgpt/Dialect/Wafer/IR/KernelCostInterface.h"

#include "cgpt/Dialect/Wafer/IR/WaferOpsDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "cgpt/Dialect/Wafer/IR/WaferAttrs.h.inc"

#define GET_OP_CLASSES
#include "cgpt/Dialect/Wafer/IR/WaferOps.h.inc"

#endif // CGPT_DIALECT_WAFER_IR_WAFER_H
