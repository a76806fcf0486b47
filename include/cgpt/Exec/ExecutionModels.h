//===- ExecutionModels.h - how each dataflow kernel executes ----*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The functional executor attaches to every dataflow kernel how it executes
// with real numbers (ExecutableKernelOpInterface). The compiler does not:
// cgpt-opt registers the dialects and the lowering models only
// (cgpt::registerAllDialects), and the tools that execute, cgpt-run and the
// Python package, add these.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_EXEC_EXECUTIONMODELS_H
#define CGPT_EXEC_EXECUTIONMODELS_H

#include "mlir/IR/DialectRegistry.h"

namespace cgpt::exec {

/// Registers, as external models of the dataflow kernels, their execution
/// by the arithmetic of Kernels.h.
void registerExecutionModels(mlir::DialectRegistry &registry);

} // namespace cgpt::exec

#endif // CGPT_EXEC_EXECUTIONMODELS_H
