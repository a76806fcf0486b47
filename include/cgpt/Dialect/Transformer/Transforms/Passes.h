//===- Passes.h - transformer dialect passes --------------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_TRANSFORMER_TRANSFORMS_PASSES_H
#define CGPT_DIALECT_TRANSFORMER_TRANSFORMS_PASSES_H

#include "cgpt/Dialect/Transformer/IR/Transformer.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace cgpt::transformer {

#define GEN_PASS_DECL
#include "cgpt/Dialect/Transformer/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cgpt/Dialect/Transformer/Transforms/Passes.h.inc"

} // namespace cgpt::transformer

#endif // CGPT_DIALECT_TRANSFORMER_TRANSFORMS_PASSES_H
