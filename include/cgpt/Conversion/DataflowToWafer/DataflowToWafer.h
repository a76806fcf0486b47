//===- DataflowToWafer.h - dataflow to wafer --------------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_CONVERSION_DATAFLOWTOWAFER_DATAFLOWTOWAFER_H
#define CGPT_CONVERSION_DATAFLOWTOWAFER_DATAFLOWTOWAFER_H

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"
#include "cgpt/Dialect/Wafer/IR/Wafer.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/DialectConversion.h"

namespace cgpt {

#define GEN_PASS_DECL_CONVERTDATAFLOWTOWAFER
#include "cgpt/Conversion/Passes.h.inc"

/// Adds the pattern that maps a tiled `dataflow.program` to a
/// `wafer.device` to `patterns`.
void populateDataflowToWaferConversionPatterns(
    mlir::RewritePatternSet &patterns);

} // namespace cgpt

#endif // CGPT_CONVERSION_DATAFLOWTOWAFER_DATAFLOWTOWAFER_H
