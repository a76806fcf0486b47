//===- ExecutableKernelInterface.td - functional execution -*- tablegen -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_EXEC_EXECUTABLEKERNELINTERFACE_TD
#define CGPT_EXEC_EXECUTABLEKERNELINTERFACE_TD

include "mlir/IR/OpBase.td"

def ExecutableKernelOpInterface : OpInterface<"ExecutableKernelOpInterface"> {
  let cppNamespace = "::cgpt::exec";
  let description = [{
    A dataflow kernel the functional executor can run with real numbers.
    Kernels get it as an external model (lib/Exec/ExecutionModels.cpp,
    registered by `exec::registerExecutionModels`), by the arithmetic of
    lib/Exec/Kernels.cpp; the compiler alone (cgpt-opt) does not register it.
  }];
  let methods = [
    InterfaceMethod<[{
        Computes the kernel's results from the tensors of its operands in
        `frame`, one tile of its tiling space at a time, and stores them in
        `frame`.
      }], "::mlir::LogicalResult", "execute",
      (ins "::cgpt::exec::KernelFrame &":$frame,
           "::llvm::ArrayRef<int64_t>":$tile)>,
    InterfaceMethod<[{
        True when result `index` stays f32 under bf16 storage (row
        statistics, the loss, constants), instead of being rounded to the
        storage type as streams are.
      }], "bool", "keepsF32Result", (ins "unsigned":$index), [{}], [{
        return false;
      }]>,
  ];
}

#endif // CGPT_EXEC_EXECUTABLEKERNELINTERFACE_TD
