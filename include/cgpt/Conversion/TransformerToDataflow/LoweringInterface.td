//===- LoweringInterface.td - lowering a transformer op ----*- tablegen -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_CONVERSION_TRANSFORMERTODATAFLOW_LOWERINGINTERFACE_TD
#define CGPT_CONVERSION_TRANSFORMERTODATAFLOW_LOWERINGINTERFACE_TD

include "mlir/IR/OpBase.td"

def DataflowLoweringOpInterface : OpInterface<"DataflowLoweringOpInterface"> {
  let cppNamespace = "::cgpt";
  let description = [{
    A transformer op that convert-transformer-to-dataflow can lower: its
    forward kernels and the hand-derived kernels of its backward.
    Transformer ops get it as an external model (lib/Kernels, one file per
    family of ops, registered by `registerKernelModels`).
  }];
  let methods = [
    InterfaceMethod<[{
        Emits the op's forward kernels into the current stage of `lowering`,
        defines the stream of each of its results, and returns the
        activations its backward reads.
      }], "::mlir::FailureOr<::cgpt::SavedActivations>", "lowerForward",
      (ins "::cgpt::StepLowering &":$lowering)>,
    InterfaceMethod<[{
        Emits the kernels of the op's backward from the gradients of its
        results and the activations `lowerForward` returned (fetched or
        recomputed by now): adds the gradients of its inputs and streams
        out the gradients of the weights it reads.
      }], "::mlir::LogicalResult", "lowerBackward",
      (ins "::llvm::ArrayRef<::mlir::Value>":$saved,
           "::cgpt::StepLowering &":$lowering)>,
  ];
}

#endif // CGPT_CONVERSION_TRANSFORMERTODATAFLOW_LOWERINGINTERFACE_TD
