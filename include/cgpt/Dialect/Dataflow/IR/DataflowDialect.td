//===- DataflowDialect.td - tiled dataflow dialect ---------*- tablegen -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_DATAFLOW_IR_DATAFLOWDIALECT_TD
#define CGPT_DIALECT_DATAFLOW_IR_DATAFLOWDIALECT_TD

include "mlir/IR/OpBase.td"

def Dataflow_Dialect : Dialect {
  let name = "dataflow";
  let cppNamespace = "::cgpt::dataflow";
  let summary = "One training step as kernels, streams and weight streams";
  let description = [{
    The `dataflow` dialect states what a weight-streaming wafer executes for
    one training step: kernels (matrix multiplies, elementwise maps, row
    reductions, embedding gather and scatter-add) connected by typed
    streams, grouped into stages that run one after the other.

    ```mlir
    dataflow.program @tiny attributes {...} {
      dataflow.micro_batch_loop(%tokens: ..., %labels: ...) attributes {...} {
        %0:3 = dataflow.stage "embed" forward { ... }
        %1:4 = dataflow.stage "h.0" forward layer 0 { ... }
        ...
        dataflow.stage "head" loss { ... }
        ...
        dataflow.stage "h.0" backward layer 0 { ... }
        dataflow.stage "embed" backward { ... }
      }
      dataflow.optimizer_step ...
    }
    ```

    Each decoder layer's weights stream in (`dataflow.weight_in`) for its
    forward stage and again for its backward stage; each weight gradient
    streams out (`dataflow.grad_out`) to the weight servers, which sum the
    gradients of all micro-batches and systems and run the optimizer
    (`dataflow.optimizer_step`). Activations the backward pass needs are
    kept in buffers (`dataflow.stash` / `dataflow.fetch`) or recomputed
    (kernels marked `recompute`).

    Streams carry tensors whose leading dimension is the micro-batch, still
    symbolic here. Kernel FLOP counts are per sequence.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::cgpt::training::TrainingDialect"];
  let extraClassDeclaration = [{
    void registerTypes();
    void registerAttributes();
  }];
}

#endif // CGPT_DIALECT_DATAFLOW_IR_DATAFLOWDIALECT_TD
