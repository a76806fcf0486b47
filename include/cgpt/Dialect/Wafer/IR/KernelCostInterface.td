//===- KernelCostInterface.td - a kernel's own cost on the mesh -*- tablegen -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_WAFER_IR_KERNELCOSTINTERFACE_TD
#define CGPT_DIALECT_WAFER_IR_KERNELCOSTINTERFACE_TD

include "mlir/IR/OpBase.td"

def Wafer_KernelCostOpInterface : OpInterface<"KernelCostOpInterface"> {
  let cppNamespace = "::cgpt::wafer";
  let description = [{
    A dataflow kernel whose algorithm on the mesh is its own. A
    `wafer.region` names the dataflow op it runs; when that op implements
    this interface, the region is timed by `getMeshCost` instead of by the
    standard algorithm of its `kind` (docs/runtime.md). A new kernel that
    runs like one of the six kinds needs nothing; one that does not attaches
    an external model (lib/Kernels, docs/adding-a-kernel.md):

    ```c++
    struct MyKernelCost
        : wafer::KernelCostOpInterface::ExternalModel<MyKernelCost, MyOp> {
      static wafer::KernelTime getMeshCost(const wafer::KernelCostQuery &q) {
        ...
      }
    };
    ```
  }];
  let methods = [
    StaticInterfaceMethod<[{
        The cycles one run of the kernel takes on `query.rect` with
        `query.layout`, for `query.microBatch` sequences, by bound.
      }], "::cgpt::wafer::KernelTime", "getMeshCost",
      (ins "const ::cgpt::wafer::KernelCostQuery &":$query)>,
  ];
}

#endif // CGPT_DIALECT_WAFER_IR_KERNELCOSTINTERFACE_TD
