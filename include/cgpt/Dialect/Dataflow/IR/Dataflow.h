//===- Dataflow.h - dataflow dialect ----------------------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_DATAFLOW_IR_DATAFLOW_H
#define CGPT_DIALECT_DATAFLOW_IR_DATAFLOW_H

#include "cgpt/Dialect/Training/IR/Training.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "cgpt/Dialect/Dataflow/IR/DataflowEnums.h.inc"
#include "cgpt/Dialect/Dataflow/IR/DataflowOpsDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "cgpt/Dialect/Dataflow/IR/DataflowOpsTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "cgpt/Dialect/Dataflow/IR/DataflowAttrs.h.inc"

namespace cgpt::dataflow {
/// Checks a kernel's tile against its tiling space (KernelOpInterface).
mlir::LogicalResult verifyKernel(mlir::Operation *op);
/// Bytes of one element of `type` in memory (bf16: 2, f32: 4, i32: 4).
int64_t elementBytes(mlir::Type type);
/// Bytes of a statically shaped tensor; with a dynamic (batch) dimension,
/// the bytes of one sequence.
int64_t bytesPerSequence(mlir::RankedTensorType type);
} // namespace cgpt::dataflow

#include "cgpt/Dialect/Dataflow/IR/DataflowInterfaces.h.inc"

namespace cgpt::dataflow {
/// Bytes of an accumulator element: products add up in f32.
constexpr int64_t kAccumulatorBytes = 4;
/// Storage bytes of a kernel's elements: those of its first floating-point
/// stream operand or result.
int64_t kernelStorageBytes(mlir::Operation *kernel);
/// Bytes one core holds to work on `tile` of `kernel`: for a matmul
/// `[m, n, k]`, an m x k and a k x n operand tile in the storage type and an
/// m x n f32 accumulator; otherwise `[rows, columns]` of every stream
/// operand and result.
int64_t tileWorkingSetBytes(KernelOpInterface kernel,
                            llvm::ArrayRef<int64_t> tile);
/// Bytes of `tile`'s input operand tiles alone: what double-buffering the
/// incoming streams adds.
int64_t tileInputBytes(KernelOpInterface kernel, llvm::ArrayRef<int64_t> tile);
/// The inputs a map of `kind` takes: one for a function, two for a
/// derivative (x, dy) or a sum or product.
unsigned mapArity(MapKind kind);
/// The FLOPs a map of `kind` counts per element.
int64_t mapFlopsPerElement(MapKind kind);
} // namespace cgpt::dataflow

#define GET_OP_CLASSES
#include "cgpt/Dialect/Dataflow/IR/DataflowOps.h.inc"

#endif // CGPT_DIALECT_DATAFLOW_IR_DATAFLOW_H
