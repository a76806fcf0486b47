//===- ExecutableKernel.h - kernels the executor can run --------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_EXEC_EXECUTABLEKERNEL_H
#define CGPT_EXEC_EXECUTABLEKERNEL_H

#include "cgpt/Exec/KernelFrame.h"

#include "mlir/IR/OpDefinition.h"

#include "cgpt/Exec/ExecutableKernelInterface.h.inc"

#endif // CGPT_EXEC_EXECUTABLEKERNEL_H
