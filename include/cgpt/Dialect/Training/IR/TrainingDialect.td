//===- TrainingDialect.td - shared training attributes -----*- tablegen -*-===//
//
// Part of cgpt. The `training` dialect holds no ops: it owns the attributes
// that describe one optimizer step (micro-batch request, AdamW, learning-rate
// phases, precision, muP) and travel unchanged through the transformer,
// dataflow and wafer dialects.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_TRAINING_IR_TRAININGDIALECT_TD
#define CGPT_DIALECT_TRAINING_IR_TRAININGDIALECT_TD

include "mlir/IR/OpBase.td"

def Training_Dialect : Dialect {
  let name = "training";
  let cppNamespace = "::cgpt::training";
  let summary = "attributes of a training step, shared by every cgpt dialect";
  let description = [{
    The `training` dialect has no operations. Its attributes state what one
    optimizer step is, independently of how far it has been lowered: the
    user's micro-batch request, the AdamW hyper-parameters, the
    learning-rate schedule's phases, the mixed precision and the muP
    multipliers. `transformer.train_step` carries them, `dataflow.program`
    and `dataflow.optimizer_step` keep them, and `wafer.device` records the
    micro-batch request its plan answered.

    ```mlir
    transformer.train_step @tiny(...) attributes {
        micro_batch = #training.micro_batch<auto>,
        optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1e-08, weight_decay = 0.1>,
        schedule = [#training.lr_phase<kind = linear, start = 0.0, end = 0.0002, steps = 1500>],
        precision = #training.precision<storage = bf16, accumulate = f32>, ...} { ... }
    ```
  }];
  let useDefaultAttributePrinterParser = 1;
}

#endif // CGPT_DIALECT_TRAINING_IR_TRAININGDIALECT_TD
