//===- TransformerDialect.td - transformer dialect ---------*- tablegen -*-===//
//
// Part of cgpt. The `transformer` dialect: GPT training steps as written by a
// model author, before any tiling or placement decision.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_TRANSFORMER_IR_TRANSFORMERDIALECT_TD
#define CGPT_DIALECT_TRANSFORMER_IR_TRANSFORMERDIALECT_TD

include "mlir/IR/OpBase.td"

def Transformer_Dialect : Dialect {
  let name = "transformer";
  let cppNamespace = "::cgpt::transformer";
  let summary = "GPT models and one training step of them, on tensors";
  let description = [{
    The `transformer` dialect is the entry point of cgpt. It describes a
    decoder-only GPT model (embeddings, pre-layer-norm decoder blocks, the
    output head and the loss) together with what one optimizer step is:
    global batch, sequence length, AdamW hyper-parameters, learning-rate
    schedule, gradient clipping, precision and the muP multipliers.

    Everything is a value of a builtin tensor type. Trainable tensors are
    declared by `transformer.weight`; activations carry a dynamic leading
    batch dimension, because the per-system micro-batch is chosen later by
    the compiler, not by the model author.

    ```mlir
    transformer.train_step @tiny(%tokens: tensor<?x64xi32>, %labels: tensor<?x64xi32>)
        attributes {global_batch = 8 : i64, num_csx = 1 : i64, seq_len = 64 : i64, ...} {
      %wte = transformer.weight "wte" : tensor<256x64xf32>
      %x = transformer.token_embedding %tokens, %wte
          : tensor<?x64xi32>, tensor<256x64xf32> -> tensor<?x64x64xf32>
      ...
      transformer.yield %loss : tensor<f32>
    }
    ```

    `cgpt-run models/tiny.yaml --emit=transformer` prints a complete one.
  }];
  let dependentDialects = ["::cgpt::training::TrainingDialect"];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

#endif // CGPT_DIALECT_TRANSFORMER_IR_TRANSFORMERDIALECT_TD
