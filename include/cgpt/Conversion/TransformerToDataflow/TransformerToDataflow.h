//===- TransformerToDataflow.h - transformer to dataflow --------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_CONVERSION_TRANSFORMERTODATAFLOW_TRANSFORMERTODATAFLOW_H
#define CGPT_CONVERSION_TRANSFORMERTODATAFLOW_TRANSFORMERTODATAFLOW_H

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/DialectConversion.h"

namespace cgpt {

#define GEN_PASS_DECL_CONVERTTRANSFORMERTODATAFLOW
#include "cgpt/Conversion/Passes.h.inc"

/// Adds the pattern that lowers a `transformer.train_step`, with the
/// forward and backward lowering of each transformer op, to `patterns`.
void populateTransformerToDataflowConversionPatterns(
    mlir::RewritePatternSet &patterns, dataflow::Recompute recompute);

} // namespace cgpt

#endif // CGPT_CONVERSION_TRANSFORMERTODATAFLOW_TRANSFORMERTODATAFLOW_H
