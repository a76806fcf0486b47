//===- Passes.td - transformer dialect passes --------------*- tablegen -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_TRANSFORMER_TRANSFORMS_PASSES_TD
#define CGPT_DIALECT_TRANSFORMER_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TransformerPrintModelFacts
    : Pass<"transformer-print-model-facts", "::mlir::ModuleOp"> {
  let summary = "Prints the parameter count and shape of every training step";
  let description = [{
    Counts the parameters of each `transformer.train_step` from its
    `transformer.weight` ops (a tied head is counted once) and prints them,
    with the shape facts read off the IR, to standard output. The IR is left
    unchanged. For the Cerebras-GPT models the count equals the paper's
    Appendix E formula.

    ```mlir
    transformer.train_step @cerebras_gpt_111m(...) attributes {...} { ... }
    ```
    prints
    ```
    model cerebras_gpt_111m: parameters 111050496, layers 10, hidden 768, heads 12x64, ffn 3072, vocab 50257, seq 2048, batch 120 on 1 system(s)
    ```
    A step whose body lacks a token embedding, attention or ffn is an error.
  }];
}

#endif // CGPT_DIALECT_TRANSFORMER_TRANSFORMS_PASSES_TD
