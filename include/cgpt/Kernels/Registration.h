//===- Registration.h - the behaviour of every kernel -----------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_KERNELS_REGISTRATION_H
#define CGPT_KERNELS_REGISTRATION_H

#include "mlir/IR/DialectRegistry.h"

namespace cgpt {

/// Registers, as external models, how each transformer op lowers to
/// dataflow kernels (DataflowLoweringOpInterface). How each dataflow
/// kernel executes with real numbers is the executor's
/// (exec::registerExecutionModels). docs/adding-a-kernel.md explains where
/// a new kernel's pieces go.
void registerKernelModels(mlir::DialectRegistry &registry);

} // namespace cgpt

#endif // CGPT_KERNELS_REGISTRATION_H
