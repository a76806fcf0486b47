//===- Passes.td - conversions between cgpt dialects -------*- tablegen -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_CONVERSION_PASSES_TD
#define CGPT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTransformerToDataflow
    : Pass<"convert-transformer-to-dataflow", "::mlir::ModuleOp"> {
  let summary = "Lowers a training step to forward, loss and backward kernels";
  let description = [{
    Turns each `transformer.train_step` into a `dataflow.program`:

    - the forward kernels of every op, grouped in stages: `embed`, one per
      decoder layer (`h.0`, `h.1`, ...), then the turn-around `head` stage
      (final norm, output head, loss, and their gradients);
    - the backward kernels, derived by hand for every op (layer norm,
      softmax, causal attention, GELU, tied embedding, cross-entropy), in
      reverse layer order;
    - `dataflow.weight_in` for every weight a stage reads (a decoder
      layer's weights stream in for its forward and again for its backward
      stage) and `dataflow.grad_out` for every weight gradient;
    - the activations the backward kernels need, kept with
      `dataflow.stash`/`dataflow.fetch` or recomputed, as `recompute` says:
      `none` keeps every activation; `layer` (the default) keeps only each
      decoder layer's input and reruns the layer's forward kernels, marked
      `recompute`, at the start of its backward stage. `layer` trades a
      third more compute for activations small enough that the large
      micro-batches weight streaming needs fit in SRAM (docs/dataflow.md);
      `tensor` does as `layer`, then reruns again, just before the backward
      kernel that reads it, each recomputed tensor that would stay live
      across the stage's peak when that costs at most a tenth of the
      stage's FLOPs (attention's queries, keys and values across the
      feed-forward's backward);
    - the `dataflow.optimizer_step` the weight servers run.

    Before:
    ```mlir
    transformer.train_step @tiny(%tokens: tensor<?x64xi32>, %labels: tensor<?x64xi32>) ... {
      %wte = transformer.weight "wte" : tensor<256x64xf32>
      %0 = transformer.token_embedding %tokens, %wte : ...
      ...
    }
    ```
    After:
    ```mlir
    dataflow.program @tiny attributes {...} {
      dataflow.micro_batch_loop(%tokens: ..., %labels: ...) attributes {...} {
        %0:2 = dataflow.stage "embed" forward -> (...) {
          %w = dataflow.weight_in "wte" bytes 65536 : !dataflow.stream<tensor<256x64xf32>>
          %x = dataflow.gather %w, %tokens : ...
          ...
        }
        ...
      }
      dataflow.optimizer_step {...}
    }
    ```
  }];
  let dependentDialects = ["::cgpt::dataflow::DataflowDialect"];
  let options = [
    Option<"recompute", "recompute", "::cgpt::dataflow::Recompute",
           /*default=*/"::cgpt::dataflow::Recompute::layer",
           "Which activations the backward pass recomputes",
           [{::llvm::cl::values(
               clEnumValN(::cgpt::dataflow::Recompute::none, "none",
                          "keep every activation the backward pass reads"),
               clEnumValN(::cgpt::dataflow::Recompute::layer, "layer",
                          "keep each layer's input, recompute the rest"),
               clEnumValN(::cgpt::dataflow::Recompute::tensor, "tensor",
                          "as layer, and rebuild late the recomputed "
                          "tensors live across the stage's peak"))}]>
  ];
}

def ConvertDataflowToWafer
    : Pass<"convert-dataflow-to-wafer", "::mlir::ModuleOp"> {
  let summary = "Maps a tiled dataflow program to kernels that run over the mesh";
  let description = [{
    Turns each tiled `dataflow.program` into a `wafer.device` for the
    program's target, with one `wafer.stage` per dataflow stage in schedule
    order. In each, the kernels become an ordered sequence of
    `wafer.region`s, each of which will run over the whole mesh:

    - elementwise work (maps, head splits and merges, position adds) fuses
      into the region just before it when it reads that region's result;
    - attention's products, softmax and softmax gradient fuse into one
      region while they follow each other, so the score matrices are the
      region's own and never count as live activations;
    - the loss turn-around runs over the vocabulary in chunks as wide as the
      hidden size (`chunks`), its logits product twice (`repeats`).

    Each region records its `kind`, the kernels it runs, its FLOPs and
    shape per sequence, its stored element size, the bytes of activations
    live while it runs (by liveness over the stage), and the weight
    gradient it sums. A `wafer.ingress` goes to the first region that reads
    each streamed weight, a `wafer.egress` from the region that makes each
    gradient; each stage records the checkpoint bytes it keeps per sequence.

    ```mlir
    %q = dataflow.matmul %x, %w {tile = #dataflow.tile<[4, 24, 8]>} : ...
    %h:3 = dataflow.split_heads %q heads 2 head_size 4 ...
    ```
    becomes
    ```mlir
    wafer.region @matmul.1 weight_matmul "dataflow.matmul" {flops = 1632 : i64,
        fused = ["dataflow.split_heads"], live = 896 : i64, shape = array<i64: 4, 24, 8>, ...}
    wafer.ingress "h.0.attn.qkv.weight" -> @matmul.1 bytes 768
    ```
    The program must have been tiled (`dataflow-tile`) for a target.
  }];
  let dependentDialects = ["::cgpt::wafer::WaferDialect"];
}

#endif // CGPT_CONVERSION_PASSES_TD
