//===- DataflowOps.td - dataflow dialect ops ---------------*- tablegen -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_DATAFLOW_IR_DATAFLOWOPS_TD
#define CGPT_DIALECT_DATAFLOW_IR_DATAFLOWOPS_TD

include "cgpt/Dialect/Dataflow/IR/DataflowBase.td"
include "cgpt/Dialect/Training/IR/TrainingAttrs.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Dataflow_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dataflow_Dialect, mnemonic, traits>;

/// A kernel: its own operands plus the tile dataflow-tile picks and the
/// `recompute` mark of kernels rerun for the backward pass.
class Dataflow_Kernel<string mnemonic, dag operands, list<Trait> traits = [],
                      list<string> overridden = []>
    : Dataflow_Op<mnemonic, !listconcat(traits, [
        DeclareOpInterfaceMethods<Dataflow_KernelOpInterface, overridden>])> {
  let arguments = !con(operands, (ins OptionalAttr<Dataflow_TileAttr>:$tile,
                                      UnitAttr:$recompute));
  let hasVerifier = 1;
}

def Dataflow_Stream : Type<CPred<"::llvm::isa<::cgpt::dataflow::StreamType>($_self)">,
    "stream", "::cgpt::dataflow::StreamType">;
def Dataflow_Buffer : Type<CPred<"::llvm::isa<::cgpt::dataflow::BufferType>($_self)">,
    "buffer", "::cgpt::dataflow::BufferType">;

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

def Dataflow_ProgramOp : Dataflow_Op<"program", [
    IsolatedFromAbove, Symbol, SingleBlock, NoTerminator]> {
  let summary = "the wafer program of one training step";
  let description = [{
    Holds one `dataflow.micro_batch_loop` and the `dataflow.optimizer_step`
    that follows it. The attributes carry the training step's batch facts
    from `transformer.train_step`, the activation recompute policy the
    lowering used, and, once `dataflow-tile` ran, the target it tiled for.

    ```mlir
    dataflow.program @tiny attributes {global_batch = 8 : i64, num_csx = 1 : i64,
        seq_len = 64 : i64, micro_batch = #training.micro_batch<auto>,
        recompute = #dataflow<recompute layer>} {
      dataflow.micro_batch_loop(...) { ... }
      dataflow.optimizer_step {...}
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, CGPT_I64Attr:$global_batch,
                       CGPT_I64Attr:$num_csx, CGPT_I64Attr:$seq_len,
                       Training_MicroBatchAttr:$micro_batch,
                       Dataflow_RecomputeAttr:$recompute,
                       OptionalAttr<StrAttr>:$target);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The busiest system's share: the global batch is split as evenly as
    /// it goes, so some systems may get one sequence fewer.
    int64_t getPerSystemBatch() {
      return llvm::divideCeil(getGlobalBatch(), getNumCsx());
    }
    MicroBatchLoopOp getLoop();
    OptimizerStepOp getOptimizerStep();
  }];
}

def Dataflow_MicroBatchLoopOp : Dataflow_Op<"micro_batch_loop", [
    SingleBlock, NoTerminator, HasParent<"ProgramOp">,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "the body run once per micro-batch, gradients accumulating";
  let description = [{
    One iteration runs the forward, loss and backward stages for one
    micro-batch of token ids `%tokens` and labels `%labels`. Gradients of
    the iterations add up on the weight servers; after
    `grad_accum_steps` iterations the optimizer step follows. A request
    that fixes the micro-batch (`micro_batch_size: N`, or `none`) sets both
    here; otherwise they are 0 and `wafer-plan-batch` chooses them on the
    placed program, where the device records them.

    ```mlir
    dataflow.micro_batch_loop(%tokens: !dataflow.stream<tensor<?x64xi32>>,
                              %labels: !dataflow.stream<tensor<?x64xi32>>)
        attributes {grad_accum_steps = 0 : i64, micro_batch = 0 : i64} {
      ...
    }
    ```
  }];
  let arguments = (ins CGPT_I64Attr:$micro_batch, CGPT_I64Attr:$grad_accum_steps);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
  }];
}

def Dataflow_StageOp : Dataflow_Op<"stage", [
    SingleBlockImplicitTerminator<"YieldOp">,
    HasParent<"MicroBatchLoopOp">]> {
  let summary = "kernels that run together, one layer's pass at a time";
  let description = [{
    A stage is what the wafer holds at one time: one layer's forward
    (`forward`) or backward (`backward`) kernels, or the turn-around
    (`loss`: final norm, head, loss and their gradients). Stages run in
    order; the weights a stage reads stream in while it runs. Values other
    stages need leave it as results.

    ```mlir
    %x, %kept = dataflow.stage "h.0" forward layer 0 -> (!dataflow.stream<...>, !dataflow.buffer<...>) {
      ...
      dataflow.yield %y, %b : !dataflow.stream<...>, !dataflow.buffer<...>
    }
    ```
  }];
  let arguments = (ins StrAttr:$name, Dataflow_PhaseAttr:$phase,
                       OptionalAttr<CGPT_I64Attr>:$layer);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $name `` $phase (`layer` $layer^)? (`->` `(` type($results)^ `)`)?
    attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::TypeRange":$resultTypes, "::llvm::StringRef":$name,
                   "Phase":$phase, "std::optional<int64_t>":$layer)>
  ];
}

def Dataflow_YieldOp : Dataflow_Op<"yield", [
    Pure, Terminator, HasParent<"StageOp">]> {
  let summary = "the values a stage hands to later stages";
  let description = [{
    ```mlir
    dataflow.yield %x : !dataflow.stream<tensor<?x64x64xf32>>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
  let builders = [OpBuilder<(ins), [{ /* no values */ }]>];
}

def Dataflow_OptimizerStepOp : Dataflow_Op<"optimizer_step", [
    HasParent<"ProgramOp">]> {
  let summary = "the weight servers' optimizer step (runs off the wafer)";
  let description = [{
    Marks where the weight servers, having summed the streamed gradients of
    all micro-batches and systems, clip them to `max_gradient_norm` (0:
    no clipping) and apply AdamW to `parameters` master weights in f32.
    Nothing here runs on the wafer.

    ```mlir
    dataflow.optimizer_step {max_gradient_norm = 1.0 : f64, optimizer = #training.adamw<...>,
                             parameters = 120576 : i64, schedule = [...]}
    ```
  }];
  let arguments = (ins Training_AdamWAttr:$optimizer,
                       TypedArrayAttrBase<Training_LRPhaseAttr,
                                          "learning-rate phases">:$schedule,
                       F64Attr:$max_gradient_norm,
                       OptionalAttr<Training_MuPAttr>:$mup,
                       CGPT_I64Attr:$parameters);
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Streams to and from the wafer, and kept activations
//===----------------------------------------------------------------------===//

def Dataflow_WeightInOp : Dataflow_Op<"weight_in", [Pure]> {
  let summary = "a weight streamed in from the weight servers";
  let description = [{
    Streams the named weight onto the wafer, `bytes` in its storage type,
    for the stage that reads it. A weight used by a forward and a backward
    stage streams in twice.

    ```mlir
    %w = dataflow.weight_in "h.0.attn.qkv.weight" bytes 49152 : !dataflow.stream<tensor<64x192xf32>>
    ```
  }];
  let arguments = (ins StrAttr:$name, CGPT_I64Attr:$bytes);
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = "$name `bytes` $bytes attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Dataflow_GradOutOp : Dataflow_Op<"grad_out"> {
  let summary = "a weight gradient streamed out to the weight servers";
  let description = [{
    Streams one micro-batch's gradient of the named weight off the wafer.
    The weight servers add up every `grad_out` of a weight: the micro-batches,
    the systems, and both uses of a tied embedding.

    ```mlir
    dataflow.grad_out "h.0.attn.qkv.weight", %dw bytes 49152 : !dataflow.stream<tensor<64x192xf32>>
    ```
  }];
  let arguments = (ins StrAttr:$name, Dataflow_Stream:$grad, CGPT_I64Attr:$bytes);
  let assemblyFormat = "$name `,` $grad `bytes` $bytes attr-dict `:` type($grad)";
  let hasVerifier = 1;
}

def Dataflow_LossOutOp : Dataflow_Op<"loss_out"> {
  let summary = "the micro-batch's share of the loss, sent to the host";
  let description = [{
    ```mlir
    dataflow.loss_out %loss : !dataflow.stream<tensor<f32>>
    ```
  }];
  let arguments = (ins Dataflow_Stream:$loss);
  let assemblyFormat = "$loss attr-dict `:` type($loss)";
}

def Dataflow_StashOp : Dataflow_Op<"stash"> {
  let summary = "keeps an activation on the wafer for the backward pass";
  let description = [{
    Holds the stream's tensor in core memory until a backward stage fetches
    it. Its bytes, per sequence, are what the activation analysis counts.

    ```mlir
    %b = dataflow.stash %x : !dataflow.stream<tensor<?x64x64xf32>> -> !dataflow.buffer<tensor<?x64x64xf32>>
    ```
  }];
  let arguments = (ins Dataflow_Stream:$input);
  let results = (outs Dataflow_Buffer:$buffer);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($buffer)";
  let hasVerifier = 1;
}

def Dataflow_FetchOp : Dataflow_Op<"fetch"> {
  let summary = "reads a kept activation back as a stream";
  let description = [{
    ```mlir
    %x = dataflow.fetch %b : !dataflow.buffer<tensor<?x64x64xf32>> -> !dataflow.stream<tensor<?x64x64xf32>>
    ```
  }];
  let arguments = (ins Dataflow_Buffer:$buffer);
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = "$buffer attr-dict `:` type($buffer) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

def Dataflow_MatmulOp : Dataflow_Kernel<"matmul", (ins
    Dataflow_Stream:$lhs, Dataflow_Stream:$rhs,
    Optional<Dataflow_Stream>:$bias, UnitAttr:$transpose_lhs,
    UnitAttr:$transpose_rhs, UnitAttr:$reduce_batch,
    OptionalAttr<F64Attr>:$scale), [],
    ["getKernelKind", "getStreamedWeight", "getAccumulatedGradient"]> {
  let summary = "matrix multiply, f32 accumulation, storage-type result";
  let description = [{
    `result = scale * op(lhs) @ op(rhs) (+ bias)` over the last two
    dimensions, `op` transposing them when `transpose_lhs`/`transpose_rhs`
    is set. Leading dimensions are batch dimensions: `rhs` either has the
    same ones or none (a weight broadcast over the batch). With
    `reduce_batch` the product is also summed over the batch dimensions,
    as a weight gradient is summed over tokens. Products accumulate in f32;
    the result is stored in the operands' type.

    Tiling space `[M, N, K]` per sequence (batch dimensions folded into `M`,
    or into `K` with `reduce_batch`). FLOPs: `2 M N K` (+ `M N` for a bias).

    ```mlir
    %y = dataflow.matmul %x, %w : (!dataflow.stream<tensor<?x64x64xf32>>,
        !dataflow.stream<tensor<64x192xf32>>) -> !dataflow.stream<tensor<?x64x192xf32>>
    %dw = dataflow.matmul %x, %dy {reduce_batch, transpose_lhs} : (...) -> !dataflow.stream<tensor<64x192xf32>>
    ```
  }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`bias` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Dataflow_MapOp : Dataflow_Kernel<"map", (ins
    Dataflow_MapKindAttr:$kind, Variadic<Dataflow_Stream>:$inputs)> {
  let summary = "an elementwise function";
  let description = [{
    `add` sums two streams of one shape. `gelu` (exact), `gelu_tanh`,
    `relu` and `silu` take one; their `_grad` forms take `(x, dy)` and give
    `dy * f'(x)`.

    Tiling space `[rows, columns]`: the last dimension is a row. FLOPs per
    element: 1 for `add` and `relu`, 20 for `gelu` (the paper's Appendix F
    count), 4 for `silu`; a derivative counts twice its function.

    ```mlir
    %a = dataflow.map gelu %h : (!dataflow.stream<tensor<?x64x256xf32>>) -> !dataflow.stream<tensor<?x64x256xf32>>
    ```
  }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = [{
    `` $kind $inputs attr-dict `:` functional-type($inputs, results)
  }];
}

def Dataflow_DropoutOp : Dataflow_Kernel<"dropout", (ins
    Dataflow_Stream:$input, F64Attr:$rate, CGPT_I64Attr:$site), [],
    ["getExecutedFlopsPerSequence"]> {
  let summary = "drops elements at a rate with a site's regenerated mask";
  let description = [{
    `result = input * keep / (1 - rate)`, where `keep` is 1 unless the
    counter-based generator of site `site` draws below `rate` for the
    element (docs/runtime.md, "Dropout"): a function of the step, the site,
    the element's sequence in the global batch, its row and its column. The
    mask is never stored: the gradient is the same op with the same site
    over the result's gradient, and a recomputed forward draws it again.

    Tiling space `[rows, columns]`. No algorithmic FLOPs (the paper's count
    has none for dropout); the cores execute 20 per element: the generator's
    ten integer operations (a counter add, a 32-bit hash of seven, a
    compare, the select-and-scale), two FLOPs to an operation as the
    timing model counts vector work.

    ```mlir
    %d = dataflow.dropout %a rate 1.000000e-01 site 2 : (!dataflow.stream<tensor<?x64x256xf32>>) -> !dataflow.stream<tensor<?x64x256xf32>>
    ```
  }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = [{
    $input `rate` $rate `site` $site attr-dict `:` functional-type($input, results)
  }];
}

def Dataflow_GatherOp : Dataflow_Kernel<"gather", (ins
    Dataflow_Stream:$table, Dataflow_Stream:$ids,
    OptionalAttr<F64Attr>:$scale), [], ["getExecutedFlopsPerSequence", "getKernelKind",
                       "getStreamedWeight"]> {
  let summary = "embedding lookup: rows of a table picked by token id";
  let description = [{
    `result[b, s, :] = scale * table[ids[b, s], :]`. Tiling space
    `[seq, d_model]`. FLOPs: `2 V d` per token, the one-hot product the
    lookup computes, as Appendix F counts it; it executes `d` (the scale).

    ```mlir
    %x = dataflow.gather %wte, %tokens : (...) -> !dataflow.stream<tensor<?x64x64xf32>>
    ```
  }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = [{
    $table `,` $ids attr-dict `:` functional-type(operands, results)
  }];
}

def Dataflow_ScatterAddOp : Dataflow_Kernel<"scatter_add", (ins
    Dataflow_Stream:$ids, Dataflow_Stream:$grad,
    OptionalAttr<F64Attr>:$scale), [], ["getExecutedFlopsPerSequence", "getKernelKind",
                       "getAccumulatedGradient"]> {
  let summary = "embedding gradient: rows added at their token ids";
  let description = [{
    `result[v, :] = scale * sum over (b, s) with ids[b, s] = v of
    grad[b, s, :]`, a `[vocab, d_model]` gradient. Tiling space
    `[seq, d_model]`; FLOPs `2 V d` per token, as its forward lookup; it
    executes `d` adds.
  }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = [{
    $ids `,` $grad attr-dict `:` functional-type(operands, results)
  }];
}

def Dataflow_AddPositionsOp : Dataflow_Kernel<"add_positions", (ins
    Dataflow_Stream:$input, Dataflow_Stream:$table), [], ["getExecutedFlopsPerSequence"]> {
  let summary = "adds learned position embeddings";
  let description = [{
    `result[b, s, :] = input[b, s, :] + table[s, :]`. Tiling space
    `[seq, d_model]`; FLOPs `2 d` per token (Appendix F).
  }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = [{
    $input `,` $table attr-dict `:` functional-type(operands, results)
  }];
}

def Dataflow_PositionGradOp : Dataflow_Kernel<"position_grad", (ins
    Dataflow_Stream:$grad), [], ["getExecutedFlopsPerSequence", "getKernelKind",
                     "getAccumulatedGradient"]> {
  let summary = "position embedding gradient: summed over the batch";
  let description = [{
    `result[s, :] = sum_b grad[b, s, :]` for `s < seq`, zero for the table
    rows beyond the sequence. Tiling space `[seq, d_model]`; FLOPs `2 d`
    per token.
  }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = "$grad attr-dict `:` functional-type(operands, results)";
}

def Dataflow_SumBatchOp : Dataflow_Kernel<"sum_batch", (ins
    Dataflow_Stream:$input), [],
    ["getKernelKind", "getAccumulatedGradient"]> {
  let summary = "bias gradient: sums every row of a stream";
  let description = [{
    `result[n] = sum over all leading indices of input[..., n]`. Tiling
    space `[rows, columns]`; one FLOP per element.
  }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Dataflow_RotaryAnglesOp : Dataflow_Kernel<"rotary_angles", (ins
    CGPT_I64Attr:$dim, F64Attr:$base)> {
  let summary = "cos and sin of the rotary position angles";
  let description = [{
    `result[s, i] = (cos, sin)(s * base^(-2i / dim))`, a `[seq, dim/2, 2]`
    f32 stream. Tiling space `[seq, dim]`; one FLOP per value.
  }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = "`dim` $dim `base` $base attr-dict `:` type($result)";
}

def Dataflow_RotaryOp : Dataflow_Kernel<"rotary", (ins
    Dataflow_Stream:$input, Dataflow_Stream:$angles, UnitAttr:$inverse)> {
  let summary = "rotates the first channels of every head by position angles";
  let description = [{
    For `input` of shape `[batch, heads, seq, head_size]`, rotates each pair
    `(2i, 2i+1)` of the first `2 * angles.dim(1)` channels by the angle of
    its position; `inverse` rotates back (the gradient). Tiling space
    `[heads * seq, head_size]`; 3 FLOPs per rotated element.
  }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = [{
    $input `,` $angles attr-dict `:` functional-type(operands, results)
  }];
}

def Dataflow_SplitHeadsOp : Dataflow_Kernel<"split_heads", (ins
    Dataflow_Stream:$qkv, CGPT_I64Attr:$num_heads,
    OptionalAttr<CGPT_I64Attr>:$num_kv_heads, CGPT_I64Attr:$head_size)> {
  let summary = "splits fused projections into query, key and value heads";
  let description = [{
    `[batch, seq, (heads + 2 * kv_heads) * head_size]` to the queries
    `[batch, heads, seq, head_size]` and the keys and values
    `[batch, kv_heads, seq, head_size]` (`kv_heads` is `heads` unless
    given). Data movement only: no FLOPs. Tiling space
    `[seq, (heads + 2 * kv_heads) * head_size]`.

    ```mlir
    %q, %k, %v = dataflow.split_heads %qkv heads 4 kv_heads 2 head_size 16
        : (!dataflow.stream<tensor<?x64x128xf32>>) -> (!dataflow.stream<tensor<?x4x64x16xf32>>,
           !dataflow.stream<tensor<?x2x64x16xf32>>, !dataflow.stream<tensor<?x2x64x16xf32>>)
    ```
  }];
  let results = (outs Dataflow_Stream:$query, Dataflow_Stream:$key,
                      Dataflow_Stream:$value);
  let assemblyFormat = [{
    $qkv `heads` $num_heads (`kv_heads` $num_kv_heads^)? `head_size`
    $head_size attr-dict `:` functional-type(operands, results)
  }];
}

def Dataflow_JoinHeadsOp : Dataflow_Kernel<"join_heads", (ins
    Dataflow_Stream:$query, Dataflow_Stream:$key, Dataflow_Stream:$value)> {
  let summary = "joins query, key and value head gradients (split_heads' inverse)";
  let description = [{
    The queries `[batch, heads, seq, head_size]` and the keys and values
    `[batch, kv_heads, seq, head_size]` to one
    `[batch, seq, (heads + 2 * kv_heads) * head_size]`. No FLOPs. Tiling
    space `[seq, (heads + 2 * kv_heads) * head_size]`.
  }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value attr-dict `:` functional-type(operands, results)
  }];
}

def Dataflow_MergeHeadsOp : Dataflow_Kernel<"merge_heads", (ins
    Dataflow_Stream:$input)> {
  let summary = "concatenates heads: [b, h, s, d] to [b, s, h * d]";
  let description = [{ No FLOPs. Tiling space `[seq, heads * head_size]`. }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Dataflow_UnmergeHeadsOp : Dataflow_Kernel<"unmerge_heads", (ins
    Dataflow_Stream:$input)> {
  let summary = "splits heads: [b, s, h * d] to [b, h, s, d]";
  let description = [{ No FLOPs. Tiling space `[seq, heads * head_size]`. }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Dataflow_LayerNormOp : Dataflow_Kernel<"layer_norm", (ins
    Dataflow_Stream:$input, Dataflow_Stream:$gamma, Dataflow_Stream:$beta,
    F64Attr:$epsilon), [], ["getKernelKind", "getExecutedFlopsPerSequence"]> {
  let summary = "layer norm, with the row statistics the gradient needs";
  let description = [{
    Normalizes each row of `input` and returns it with the row mean and
    reciprocal standard deviation (f32, one per row). Tiling space
    `[rows, d_model]`; 7 FLOPs per element (Appendix F). The cores execute
    12 per element and 40 per row: the vector operations of the mesh
    program, two FLOPs to an operation (docs/runtime.md).
  }];
  let results = (outs Dataflow_Stream:$result, Dataflow_Stream:$mean,
                      Dataflow_Stream:$rstd);
  let assemblyFormat = [{
    $input `,` $gamma `,` $beta `eps` $epsilon attr-dict `:`
    functional-type(operands, results)
  }];
}

def Dataflow_LayerNormGradOp : Dataflow_Kernel<"layer_norm_grad", (ins
    Dataflow_Stream:$grad, Dataflow_Stream:$input, Dataflow_Stream:$mean,
    Dataflow_Stream:$rstd, Dataflow_Stream:$gamma), [],
    ["getKernelKind", "getExecutedFlopsPerSequence"]> {
  let summary = "layer norm gradient: input, scale and shift";
  let description = [{
    With `xhat = (x - mean) * rstd`: `dgamma = sum_rows dy * xhat`,
    `dbeta = sum_rows dy`, and
    `dx = rstd * (g - mean_row(g) - xhat * mean_row(g * xhat))` where
    `g = dy * gamma`. Tiling space `[rows, d_model]`; 14 FLOPs per element.
    The cores execute 20 per element and 10 per row: the vector operations
    of the mesh program, two FLOPs to an operation (docs/runtime.md).
  }];
  let results = (outs Dataflow_Stream:$input_grad, Dataflow_Stream:$gamma_grad,
                      Dataflow_Stream:$beta_grad);
  let assemblyFormat = [{
    $grad `,` $input `,` $mean `,` $rstd `,` $gamma attr-dict `:`
    functional-type(operands, results)
  }];
}

def Dataflow_RMSNormOp : Dataflow_Kernel<"rms_norm", (ins
    Dataflow_Stream:$input, Dataflow_Stream:$gamma, F64Attr:$epsilon), [],
    ["getKernelKind", "getExecutedFlopsPerSequence"]> {
  let summary = "RMS norm, with the row statistic the gradient needs";
  let description = [{
    `result = input * rstd * gamma` with `rstd = 1 / sqrt(mean_row(input^2)
    + epsilon)`, returned with `rstd` (f32, one per row). Tiling space
    `[rows, d_model]`; 4 FLOPs per element (square, sum, two products). The
    cores execute 8 per element and 30 per row: the vector operations of
    the mesh program, two FLOPs to an operation (docs/runtime.md).

    ```mlir
    %y, %rstd = dataflow.rms_norm %x, %g eps 1.0e-05
        : (!dataflow.stream<tensor<?x64x64xf32>>, !dataflow.stream<tensor<64xf32>>)
        -> (!dataflow.stream<tensor<?x64x64xf32>>, !dataflow.stream<tensor<?x64xf32>>)
    ```
  }];
  let results = (outs Dataflow_Stream:$result, Dataflow_Stream:$rstd);
  let assemblyFormat = [{
    $input `,` $gamma `eps` $epsilon attr-dict `:`
    functional-type(operands, results)
  }];
}

def Dataflow_RMSNormGradOp : Dataflow_Kernel<"rms_norm_grad", (ins
    Dataflow_Stream:$grad, Dataflow_Stream:$input, Dataflow_Stream:$rstd,
    Dataflow_Stream:$gamma), [],
    ["getKernelKind", "getExecutedFlopsPerSequence"]> {
  let summary = "RMS norm gradient: input and scale";
  let description = [{
    With `xhat = x * rstd` and `g = dy * gamma`:
    `dgamma = sum_rows dy * xhat` and
    `dx = rstd * (g - xhat * mean_row(g * xhat))`. Tiling space
    `[rows, d_model]`; 8 FLOPs per element (twice the forward). The cores
    execute 16 per element and 2 per row: the vector operations of the
    mesh program, two FLOPs to an operation (docs/runtime.md).

    ```mlir
    %dx, %dg = dataflow.rms_norm_grad %dy, %x, %rstd, %g
        : (!dataflow.stream<tensor<?x64x64xf32>>, !dataflow.stream<tensor<?x64x64xf32>>,
           !dataflow.stream<tensor<?x64xf32>>, !dataflow.stream<tensor<64xf32>>)
        -> (!dataflow.stream<tensor<?x64x64xf32>>, !dataflow.stream<tensor<64xf32>>)
    ```
  }];
  let results = (outs Dataflow_Stream:$input_grad,
                      Dataflow_Stream:$gamma_grad);
  let assemblyFormat = [{
    $grad `,` $input `,` $rstd `,` $gamma attr-dict `:`
    functional-type(operands, results)
  }];
}

def Dataflow_SoftmaxOp : Dataflow_Kernel<"softmax", (ins
    Dataflow_Stream:$scores, F64Attr:$scale, UnitAttr:$causal,
    CGPT_I64Attr:$head_size, UnitAttr:$alibi), [],
    ["getExecutedFlopsPerSequence", "getKernelKind"]> {
  let summary = "scaled, causally masked softmax over attention scores";
  let description = [{
    `p[..., i, j] = softmax_j(scale * scores[..., i, j])` over `j <= i` when
    `causal`, 0 for `j > i`. With `alibi`, head `h` of `H` (dimension 1 of
    the scores) adds `m_h * (j - i)` after the scale, `m_h` the ALiBi
    slopes of `H` heads. Tiling space `[heads * seq, seq]` (a row is one
    query). FLOPs follow Appendix F, which counts `4 d s^2` per layer
    (`3 d s^2` and a `d s^2` reduction): `4 * head_size` per score, and one
    more per score for the ALiBi bias. It executes 44 per score (46 with
    ALiBi) and 30 per row, two to a vector operation (`RowOperations.h`):
    the maximum, the scaled score less it, the exponential in software
    (eighteen operations, as the loss's), the sum and the product by its
    reciprocal, which each row takes once.
  }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = "$scores attr-dict `:` functional-type(operands, results)";
}

def Dataflow_RepeatHeadsOp : Dataflow_Kernel<"repeat_heads", (ins
    Dataflow_Stream:$input)> {
  let summary = "repeats each key or value head for its group of query heads";
  let description = [{
    `[batch, kv_heads, seq, head_size]` to `[batch, heads, seq, head_size]`:
    query head `h` reads key/value head `h / (heads / kv_heads)`, as
    grouped-query attention shares them. Data movement only: no FLOPs.
    Tiling space `[heads * seq, head_size]`.

    ```mlir
    %kr = dataflow.repeat_heads %k : (!dataflow.stream<tensor<?x2x64x16xf32>>)
        -> !dataflow.stream<tensor<?x4x64x16xf32>>
    ```
  }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Dataflow_SumHeadGroupsOp : Dataflow_Kernel<"sum_head_groups", (ins
    Dataflow_Stream:$input)> {
  let summary = "sums the gradients of a group of query heads (repeat_heads' gradient)";
  let description = [{
    `[batch, heads, seq, head_size]` to `[batch, kv_heads, seq, head_size]`:
    key/value head `g` gets the sum over the `heads / kv_heads` heads that
    repeated it. `(heads - kv_heads) * seq * head_size` FLOPs per sequence.
    Tiling space `[kv_heads * seq, head_size]`.
  }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Dataflow_SoftmaxGradOp : Dataflow_Kernel<"softmax_grad", (ins
    Dataflow_Stream:$probs, Dataflow_Stream:$grad, F64Attr:$scale,
    CGPT_I64Attr:$head_size), [], ["getExecutedFlopsPerSequence", "getKernelKind"]> {
  let summary = "softmax gradient, back to the unscaled scores";
  let description = [{
    `dscores = scale * p * (dp - sum_j(p * dp))`. Masked positions have
    `p = 0` and get no gradient. FLOPs: twice the forward's; it executes
    10 per score, two to a vector operation: the product `p * dp`, its
    sum, `dp` less the sum, and the products by `p` and by `scale`.
  }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = [{
    $probs `,` $grad attr-dict `:` functional-type(operands, results)
  }];
}

def Dataflow_CrossEntropyOp : Dataflow_Kernel<"cross_entropy", (ins
    Dataflow_Stream:$logits, Dataflow_Stream:$labels, F64Attr:$scale), [],
    ["getKernelKind", "getExecutedFlopsPerSequence"]> {
  let summary = "cross-entropy loss of a micro-batch, with row log-sum-exp";
  let description = [{
    `loss = scale * sum_{b,s} (lse[b, s] - logits[b, s, labels[b, s]])` with
    `lse` the row's log-sum-exp (f32, kept for the gradient). `scale` folds
    the loss weight and the global-batch normalization, so the losses of
    all micro-batches and systems add up to the step's loss. Tiling space
    `[seq, vocab]`; 4 FLOPs per logit (max, subtract, exp, sum). The cores
    execute more: the exponential and the logarithm in software, and the
    merge of each chunk's statistics (`RowOperations.h`), 42 FLOPs a logit
    and 226 a row.
  }];
  let results = (outs Dataflow_Stream:$loss, Dataflow_Stream:$lse);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` functional-type(operands, results)
  }];
}

def Dataflow_CrossEntropyGradOp : Dataflow_Kernel<"cross_entropy_grad", (ins
    Dataflow_Stream:$logits, Dataflow_Stream:$lse, Dataflow_Stream:$labels,
    F64Attr:$scale), [], ["getKernelKind", "getExecutedFlopsPerSequence"]> {
  let summary = "cross-entropy gradient with respect to the logits";
  let description = [{
    `dlogits = scale * (exp(logits - lse) - onehot(labels))`. Tiling space
    `[seq, vocab]`; 3 FLOPs per logit. The cores execute more: the
    exponential in software (`RowOperations.h`), 40 FLOPs a logit and 2 a
    row.
  }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = [{
    $logits `,` $lse `,` $labels attr-dict `:` functional-type(operands, results)
  }];
}


//===----------------------------------------------------------------------===//
// Mixture of experts
//===----------------------------------------------------------------------===//

def Dataflow_RouteOp : Dataflow_Kernel<"route", (ins
    Dataflow_Stream:$input, Dataflow_Stream:$router, CGPT_I64Attr:$top_k,
    OptionalAttr<F64Attr>:$null_expert, UnitAttr:$router_f32), [],
    ["getKernelKind", "getStreamedWeight"]> {
  let summary = "the router: its product, softmax and top-k choice";
  let description = [{
    For every token, `logits = input @ router` (`[d_model, E]`, summed in
    f32 and, unless `router_f32`, rounded to the storage type), `probs =
    softmax(logits)` in f32, `experts` the `top_k` largest (ties to the
    lower index) and `weights` their probabilities over the chosen ones'
    sum, plus, with `null_expert L`, `exp(L) / sum exp(logits)` (see
    `transformer.moe`). `weights` and `probs` are f32; `experts` are i32.

    Tiling space `[seq, E, d_model]`. FLOPs: `2 d_model E` per token for
    the product and 5 per logit for the softmax (max, subtract and exp,
    sum, divide); the top-k compares are not counted.

    ```mlir
    %w, %e, %p = dataflow.route %x, %wr {top_k = 2 : i64}
        : (!dataflow.stream<tensor<?x64x32xf32>>, !dataflow.stream<tensor<32x4xf32>>)
        -> (!dataflow.stream<tensor<?x64x2xf32>>, !dataflow.stream<tensor<?x64x2xi32>>,
            !dataflow.stream<tensor<?x64x4xf32>>)
    ```
  }];
  let results = (outs Dataflow_Stream:$weights, Dataflow_Stream:$experts,
                      Dataflow_Stream:$probs);
  let assemblyFormat = "$input `,` $router attr-dict `:` functional-type(operands, results)";
}

def Dataflow_BalanceLossOp : Dataflow_Kernel<"balance_loss", (ins
    Dataflow_Stream:$probs, Dataflow_Stream:$experts, F64Attr:$scale), [],
    ["getKernelKind"]> {
  let summary = "the router's load-balancing loss of a micro-batch";
  let description = [{
    `loss = scale * E * sum_b sum_e f[b, e] * P[b, e]`, per sequence `b`:
    `f` the share of its tokens whose `experts` hold `e`, `P` the mean of
    `probs[b, :, e]`. `scale` folds the balance weight and the global
    batch's sequence count, so the shares of all micro-batches and systems
    add up to the step's. Tiling space `[seq, E]`; 2 FLOPs per probability
    and one per choice.
  }];
  let results = (outs Dataflow_Stream:$loss);
  let assemblyFormat = "$probs `,` $experts attr-dict `:` functional-type(operands, results)";
}

def Dataflow_RouteGradOp : Dataflow_Kernel<"route_grad", (ins
    Dataflow_Stream:$probs, Dataflow_Stream:$experts, Dataflow_Stream:$weights,
    Dataflow_Stream:$weights_grad, F64Attr:$balance_scale)> {
  let summary = "the router logits' gradient";
  let description = [{
    From the chosen experts' weights `w` and their gradient `dw`:
    `dlogits[e_j] += w_j * (dw_j - sum_l w_l dw_l)` (a null expert's fixed
    logit takes none); from the load-balancing loss of `balance_scale`
    (`balance_loss`'s scale), `g[t, e] = balance_scale * E * f[e] / seq`
    through the softmax: `dlogits += p * (g - sum_e p g)`. Stored in the
    storage type, the product's gradients then run as matmuls. Tiling
    space `[seq, E]`; 4 FLOPs per logit and 4 per choice.
  }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = [{
    $probs `,` $experts `,` $weights `,` $weights_grad attr-dict `:`
    functional-type(operands, results)
  }];
}

def Dataflow_DispatchOp : Dataflow_Kernel<"dispatch", (ins
    Dataflow_Stream:$input, Dataflow_Stream:$experts)> {
  let summary = "sends each token to its chosen experts";
  let description = [{
    `result[b, t * k + j] = input[b, t]` for each of a token's `k` choices:
    the routed rows the expert kernels read, row `t * k + j` for expert
    `experts[b, t, j]`. On the wafer the rows move over the fabric to the
    expert's pass. Data movement only: no FLOPs. Tiling space
    `[seq * k, d_model]`.
  }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = "$input `,` $experts attr-dict `:` functional-type(operands, results)";
}

def Dataflow_CombineOp : Dataflow_Kernel<"combine", (ins
    Dataflow_Stream:$routed, Optional<Dataflow_Stream>:$weights)> {
  let summary = "sums each token's expert outputs, weighted";
  let description = [{
    `result[b, t] = sum_j weights[b, t, j] * routed[b, t * k + j]` (weights
    1 when absent: the gradient of `dispatch`). Tiling space
    `[seq, d_model]`; `2 k` FLOPs per element (`k - 1` without weights).
  }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = "$routed (`weights` $weights^)? attr-dict `:` functional-type(operands, results)";
}

def Dataflow_CombineGradOp : Dataflow_Kernel<"combine_grad", (ins
    Dataflow_Stream:$routed, Dataflow_Stream:$weights, Dataflow_Stream:$grad)> {
  let summary = "the gradients of a weighted combine";
  let description = [{
    `routed_grad[b, t * k + j] = weights[b, t, j] * grad[b, t]` and
    `weights_grad[b, t, j] = routed[b, t * k + j] . grad[b, t]` (f32).
    Tiling space `[seq * k, d_model]`; 3 FLOPs per routed element.
  }];
  let results = (outs Dataflow_Stream:$routed_grad,
                      Dataflow_Stream:$weights_grad);
  let assemblyFormat = [{
    $routed `,` $weights `,` $grad attr-dict `:` functional-type(operands, results)
  }];
}

def Dataflow_ExpertMatmulOp : Dataflow_Kernel<"expert_matmul", (ins
    Dataflow_Stream:$lhs, Dataflow_Stream:$rhs, Dataflow_Stream:$experts,
    Optional<Dataflow_Stream>:$bias, UnitAttr:$transpose_rhs), [],
    ["getKernelKind", "getStreamedWeight", "getRoutedExperts"]> {
  let summary = "each routed row times its expert's weight";
  let description = [{
    `result[b, r] = lhs[b, r] @ op(rhs[e]) (+ bias[e])` with `e` the expert
    of routed row `r` (`experts[b, r / k, r % k]`), `rhs` the experts'
    stacked weights `[E, K, N]` (`[E, N, K]` with `transpose_rhs`). Products
    accumulate in f32. Tiling space `[seq * k, N, K]`; FLOPs `2 N K` per
    routed row (+ `N` for a bias): the work done, `k` experts' worth per
    token, not the `E` a dense layer of all experts would do.

    ```mlir
    %h = dataflow.expert_matmul %r, %w1, %e : (!dataflow.stream<tensor<?x128x32xf32>>,
        !dataflow.stream<tensor<4x32x48xf32>>, !dataflow.stream<tensor<?x64x2xi32>>)
        -> !dataflow.stream<tensor<?x128x48xf32>>
    ```
  }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $experts (`bias` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def Dataflow_ExpertWeightGradOp : Dataflow_Kernel<"expert_weight_grad", (ins
    Dataflow_Stream:$lhs, Dataflow_Stream:$grad, Dataflow_Stream:$experts), [],
    ["getKernelKind", "getAccumulatedGradient", "getRoutedExperts"]> {
  let summary = "the experts' weight gradients, each over its own rows";
  let description = [{
    `result[e] = sum over the routed rows r of expert e of lhs[r]^T @
    grad[r]`, summed over the micro-batch: `[E, K, N]` from `lhs [?, R, K]`
    and `grad [?, R, N]`, accumulated in f32. Tiling space
    `[K, N, seq * k]`; `2 K N` FLOPs per routed row.
  }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = [{
    $lhs `,` $grad `,` $experts attr-dict `:` functional-type(operands, results)
  }];
}

def Dataflow_ExpertBiasGradOp : Dataflow_Kernel<"expert_bias_grad", (ins
    Dataflow_Stream:$grad, Dataflow_Stream:$experts), [],
    ["getKernelKind", "getAccumulatedGradient", "getRoutedExperts"]> {
  let summary = "the experts' bias gradients, each over its own rows";
  let description = [{
    `result[e] = sum over the routed rows r of expert e of grad[r]`:
    `[E, N]`, a token sum for each expert, run one after another as the
    experts' weight gradients are. Tiling space `[seq * k, N]`; one FLOP
    per element.
  }];
  let results = (outs Dataflow_Stream:$result);
  let assemblyFormat = "$grad `,` $experts attr-dict `:` functional-type(operands, results)";
}

#endif // CGPT_DIALECT_DATAFLOW_IR_DATAFLOWOPS_TD
