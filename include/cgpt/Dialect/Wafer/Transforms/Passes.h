//===- Passes.h - wafer dialect passes --------------------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_WAFER_TRANSFORMS_PASSES_H
#define CGPT_DIALECT_WAFER_TRANSFORMS_PASSES_H

#include "cgpt/Dialect/Wafer/IR/Wafer.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace cgpt::wafer {

#define GEN_PASS_DECL
#include "cgpt/Dialect/Wafer/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cgpt/Dialect/Wafer/Transforms/Passes.h.inc"

} // namespace cgpt::wafer

#endif // CGPT_DIALECT_WAFER_TRANSFORMS_PASSES_H
