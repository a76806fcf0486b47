//===- KernelKind.td - the kind of work a kernel does ------*- tablegen -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// One enum for the kind of work a kernel does: a dataflow kernel states it
// (`getKernelKind`), and the wafer region that runs the kernel records it
// (`wafer.region @name weight_matmul ...`), which decides its layout on the
// mesh and its cost. Kept apart so that the wafer dialect's ODS can name
// it without the dataflow dialect's other definitions.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_DATAFLOW_IR_KERNELKIND_TD
#define CGPT_DIALECT_DATAFLOW_IR_KERNELKIND_TD

include "mlir/IR/EnumAttr.td"

def Dataflow_KernelKind : I32EnumAttr<"KernelKind",
    "the kind of work a kernel does, which decides how it is laid out on the mesh", [
      // Activations times a streamed weight.
      I32EnumAttrCase<"weight_matmul", 0>,
      // A weight gradient: activations times activations, summed over the
      // micro-batch.
      I32EnumAttrCase<"weight_grad", 1>,
      // Per-sequence products and softmax of attention.
      I32EnumAttrCase<"attention", 2>,
      // Row statistics: norms, the loss.
      I32EnumAttrCase<"reduction", 3>,
      I32EnumAttrCase<"elementwise", 4>,
      // Lookups into, and scatters onto, a table.
      I32EnumAttrCase<"embedding", 5>,
      // A sum over the tokens, per feature (bias gradients): partial sums
      // pass between token groups, as a weight gradient's do.
      I32EnumAttrCase<"token_sum", 6>
  ]> {
  let cppNamespace = "::cgpt::dataflow";
}

#endif // CGPT_DIALECT_DATAFLOW_IR_KERNELKIND_TD
