//===- InitAllDialects.h - register every cgpt dialect ----------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_INITALLDIALECTS_H
#define CGPT_INITALLDIALECTS_H

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"
#include "cgpt/Dialect/Transformer/IR/Transformer.h"
#include "cgpt/Dialect/Wafer/IR/Wafer.h"
#include "cgpt/Kernels/Registration.h"
#include "mlir/IR/DialectRegistry.h"

namespace cgpt {

/// Registers the dialects and how each transformer op lowers: the compiler.
/// What executes the kernels registers their execution models too
/// (cgpt/Exec/ExecutionModels.h).
inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<training::TrainingDialect, transformer::TransformerDialect,
                  dataflow::DataflowDialect, wafer::WaferDialect>();
  registerKernelModels(registry);
}

} // namespace cgpt

#endif // CGPT_INITALLDIALECTS_H
