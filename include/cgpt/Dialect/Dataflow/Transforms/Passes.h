//===- Passes.h - dataflow dialect passes -----------------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_DATAFLOW_TRANSFORMS_PASSES_H
#define CGPT_DIALECT_DATAFLOW_TRANSFORMS_PASSES_H

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace cgpt::dataflow {

#define GEN_PASS_DECL
#include "cgpt/Dialect/Dataflow/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cgpt/Dialect/Dataflow/Transforms/Passes.h.inc"

} // namespace cgpt::dataflow

#endif // CGPT_DIALECT_DATAFLOW_TRANSFORMS_PASSES_H
