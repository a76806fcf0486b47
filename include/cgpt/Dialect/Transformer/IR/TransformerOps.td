//===- TransformerOps.td - transformer dialect ops ---------*- tablegen -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_TRANSFORMER_IR_TRANSFORMEROPS_TD
#define CGPT_DIALECT_TRANSFORMER_IR_TRANSFORMEROPS_TD

include "cgpt/Dialect/Transformer/IR/TransformerDialect.td"
include "cgpt/Dialect/Transformer/IR/TransformerAttrs.td"
include "cgpt/Dialect/Training/IR/TrainingAttrs.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Transformer_Op<string mnemonic, list<Trait> traits = []>
    : Op<Transformer_Dialect, mnemonic, traits>;

def Transformer_NormOpInterface : OpInterface<"NormOpInterface"> {
  let cppNamespace = "::cgpt::transformer";
  let description = [{
    A normalization over the feature dimension with a learned gain
    `gamma`, which starts at 1 (and is neither weight-decayed nor muP
    scaled as a matrix is).
  }];
  let methods = [
    InterfaceMethod<"The learned gain.", "::mlir::Value", "getGamma">,
  ];
}

// [batch, sequence] token ids and [batch, sequence, features] activations.
def Transformer_TokenTensor : TensorRankOf<[I32, I64], [2]>;
def Transformer_ActivationTensor : TensorRankOf<[AnyFloat], [3]>;
def Transformer_Vector : TensorRankOf<[AnyFloat], [1]>;
def Transformer_Matrix : TensorRankOf<[AnyFloat], [2]>;

//===----------------------------------------------------------------------===//
// Training step
//===----------------------------------------------------------------------===//

def Transformer_TrainStepOp : Transformer_Op<"train_step", [
    IsolatedFromAbove, Symbol, SingleBlock,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "one optimizer step of a GPT model";
  let description = [{
    A `transformer.train_step` states what one optimizer step is. Its body is
    the forward computation of one micro-batch, from the token ids
    `%tokens` and next-token labels `%labels` (both `[batch, seq_len]`, batch
    left dynamic) to the scalar loss it yields. The gradients of the loss
    with respect to every `transformer.weight` in the body are what the step
    computes; the weight servers then apply the optimizer.

    Attributes:
    - `global_batch`: sequences per optimizer step, over all systems;
    - `num_csx`: systems in data parallel (each runs global_batch / num_csx);
    - `seq_len`: tokens per sequence;
    - `micro_batch`: the user's micro-batch request (see `#training.micro_batch`);
    - `optimizer`, `schedule`, `max_gradient_norm` (0 disables clipping);
    - `precision`: storage and accumulation types;
    - `mup` (optional): the muP multipliers.

    ```mlir
    transformer.train_step @tiny(%tokens: tensor<?x64xi32>, %labels: tensor<?x64xi32>)
        attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64,
                    micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64,
                    optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1e-08, weight_decay = 0.1>,
                    precision = #training.precision<storage = f32, accumulate = f32>,
                    schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>],
                    seq_len = 64 : i64} {
      %wte = transformer.weight "wte" : tensor<256x64xf32>
      ...
      transformer.yield %loss : tensor<f32>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, CGPT_I64Attr:$global_batch,
                       CGPT_I64Attr:$num_csx, CGPT_I64Attr:$seq_len,
                       Training_MicroBatchAttr:$micro_batch,
                       Training_AdamWAttr:$optimizer,
                       TypedArrayAttrBase<Training_LRPhaseAttr,
                                          "learning-rate phases">:$schedule,
                       F64Attr:$max_gradient_norm,
                       Training_PrecisionAttr:$precision,
                       OptionalAttr<Training_MuPAttr>:$mup);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    ::mlir::BlockArgument getTokens() { return getBodyBlock().getArgument(0); }
    ::mlir::BlockArgument getLabels() { return getBodyBlock().getArgument(1); }
    /// Sequences each system processes per optimizer step.
    /// The busiest system's share: the global batch is split as evenly as
    /// it goes, so some systems may get one sequence fewer.
    int64_t getPerSystemBatch() {
      return llvm::divideCeil(getGlobalBatch(), getNumCsx());
    }
  }];
}

def Transformer_YieldOp : Transformer_Op<"yield", [
    Pure, Terminator, HasParent<"TrainStepOp">]> {
  let summary = "yields the loss of a training step";
  let description = [{
    Terminates a `transformer.train_step` body with the scalar loss whose
    gradients the step computes.

    ```mlir
    transformer.yield %loss : tensor<f32>
    ```
  }];
  let arguments = (ins 0DTensorOf<[F32]>:$loss);
  let assemblyFormat = "$loss attr-dict `:` type($loss)";
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

def Transformer_WeightOp : Transformer_Op<"weight", [
    Pure, DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "a trainable tensor";
  let description = [{
    Declares one trainable tensor of the model by name. Its shape is static;
    its element type is the step's storage type. Weights of decoder block
    `i` carry `layer i`; embeddings, the final layer norm and the output head
    carry none. A tied output head uses the very same value as the token
    embedding, so the tensor is counted, streamed and updated once.

    ```mlir
    %w = transformer.weight "h.3.attn.qkv.weight" layer 3 : tensor<768x2304xbf16>
    ```
  }];
  let arguments = (ins StrAttr:$name, OptionalAttr<CGPT_I64Attr>:$layer);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = "$name (`layer` $layer^)? attr-dict `:` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Number of scalars in the tensor.
    int64_t getNumElements() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType()).getNumElements();
    }
  }];
}

//===----------------------------------------------------------------------===//
// Embeddings
//===----------------------------------------------------------------------===//

def Transformer_TokenEmbeddingOp : Transformer_Op<"token_embedding", [Pure]> {
  let summary = "looks up token ids in the embedding table";
  let description = [{
    `result[b, s, :] = scale * table[tokens[b, s], :]`, with `table` of
    shape `[vocab, d_model]`. `scale` is muP's `embeddings_scale` (1 when
    absent).

    ```mlir
    %x = transformer.token_embedding %tokens, %wte scale 10.0
        : tensor<?x2048xi32>, tensor<50257x768xbf16> -> tensor<?x2048x768xbf16>
    ```
  }];
  let arguments = (ins Transformer_TokenTensor:$tokens, Transformer_Matrix:$table,
                       OptionalAttr<F64Attr>:$scale);
  let results = (outs Transformer_ActivationTensor:$result);
  let assemblyFormat = [{
    $tokens `,` $table (`scale` $scale^)? attr-dict `:` type($tokens) `,`
    type($table) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Transformer_PositionEmbeddingOp : Transformer_Op<"position_embedding", [
    Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "adds learned position embeddings";
  let description = [{
    `result[b, s, :] = input[b, s, :] + table[s, :]`, with `table` of shape
    `[max_positions, d_model]` and `max_positions >= seq_len`.

    ```mlir
    %h = transformer.position_embedding %x, %wpe
        : tensor<?x2048x768xbf16>, tensor<2048x768xbf16>
    ```
  }];
  let arguments = (ins Transformer_ActivationTensor:$input,
                       Transformer_Matrix:$table);
  let results = (outs Transformer_ActivationTensor:$result);
  let assemblyFormat = [{
    $input `,` $table attr-dict `:` type($input) `,` type($table)
  }];
  let hasVerifier = 1;
}

def Transformer_RotaryEmbeddingOp : Transformer_Op<"rotary_embedding", [Pure]> {
  let summary = "rotary position embedding (RoPE) angles";
  let description = [{
    Produces, for every position `s < seq_len` and every pair `i < dim / 2`
    of rotated channels, `cos` and `sin` of `s * base^(-2i / dim)`, as a
    `[seq_len, dim / 2, 2]` f32 tensor. A `transformer.attention` that takes
    it rotates the first `dim` channels of every query and key head by
    these angles: that is how rotary models (GPT-J, GPT-NeoX) encode
    positions. It has no trainable parameters.

    ```mlir
    %rope = transformer.rotary_embedding dim 64 base 10000.0 : tensor<2048x32x2xf32>
    ```
  }];
  let arguments = (ins CGPT_I64Attr:$dim, F64Attr:$base);
  let results = (outs TensorRankOf<[F32], [3]>:$result);
  let assemblyFormat = "`dim` $dim `base` $base attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Decoder block pieces
//===----------------------------------------------------------------------===//

def Transformer_LayerNormOp : Transformer_Op<"layer_norm", [
    Pure, AllTypesMatch<["input", "result"]>,
    Transformer_NormOpInterface,
    AllTypesMatch<["gamma", "beta"]>]> {
  let summary = "layer normalization over the feature dimension";
  let description = [{
    `result = (input - mean) / sqrt(var + epsilon) * gamma + beta`, with the
    mean and (biased) variance taken over the last dimension.

    ```mlir
    %n = transformer.layer_norm %x, %g, %b eps 1.0e-05
        : tensor<?x2048x768xbf16>, tensor<768xbf16>
    ```
  }];
  let arguments = (ins Transformer_ActivationTensor:$input,
                       Transformer_Vector:$gamma, Transformer_Vector:$beta,
                       F64Attr:$epsilon);
  let results = (outs Transformer_ActivationTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma `,` $beta `eps` $epsilon attr-dict `:` type($input) `,`
    type($gamma)
  }];
  let hasVerifier = 1;
}

def Transformer_RMSNormOp : Transformer_Op<"rms_norm", [
    Pure, AllTypesMatch<["input", "result"]>,
    Transformer_NormOpInterface]> {
  let summary = "root-mean-square normalization over the feature dimension";
  let description = [{
    `result = input / sqrt(mean(input^2) + epsilon) * gamma`, the mean of
    squares taken over the last dimension: no centring and no shift, as
    LLaMA, Mistral and BTLM normalize.

    ```mlir
    %n = transformer.rms_norm %x, %g eps 1.0e-05 : tensor<?x4096x4096xbf16>, tensor<4096xbf16>
    ```
  }];
  let arguments = (ins Transformer_ActivationTensor:$input,
                       Transformer_Vector:$gamma, F64Attr:$epsilon);
  let results = (outs Transformer_ActivationTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma `eps` $epsilon attr-dict `:` type($input) `,`
    type($gamma)
  }];
  let hasVerifier = 1;
}

def Transformer_AttentionOp : Transformer_Op<"attention", [
    Pure, AttrSizedOperandSegments, AllTypesMatch<["input", "result"]>]> {
  let summary = "causal multi-head self-attention with its projections";
  let description = [{
    With `x = input` of shape `[batch, seq, d_model]`, `H = num_heads` and
    `dh = head_size`:

    - `qkv = x @ qkv_weight (+ qkv_bias)`,
      `qkv_weight: [d_model, (H + 2*KV)*dh]`, split into `H` query heads and
      `KV` key and value heads each: `KV = kv_heads` when given (grouped-
      query attention; 1 is multi-query), else `H`. Query head `h` reads
      key and value head `h / (H / KV)`;
    - with a `rotary` operand, the first `dim` channels of every query and
      key head are rotated by the position angles;
    - `scores = q @ k^T * scale`, `scale` being `1/sqrt(dh)` for
      `inv_sqrt_head_size` or muP's `1/dh` for `inv_head_size`, times
      `logits_alpha` when given (Model Zoo's `attention_logits_alpha`);
    - with `alibi`, head `h` adds `m_h * (j - i)` to the score of query
      `i` and key `j`, `m_h` the ALiBi slopes (`2^(-8 (h+1) / H)` for `H` a
      power of two, interleaved for other `H`, as in Press et al.);
    - a causal mask keeps positions `<=` the query's; softmax over keys;
    - `result = (softmax(scores) @ v) @ out_weight (+ out_bias)`,
      `out_weight: [H*dh, d_model]`.

    Both biases are optional (Model Zoo's `use_projection_bias_in_attention`
    and `use_ffn_bias_in_attention`). With `dropout R site N`, the
    probabilities are dropped at rate `R` before they weigh the values,
    with the mask of dropout site `N` (see `transformer.dropout`).

    ```mlir
    %a = transformer.attention %n qkv(%wqkv, %bqkv) out(%wo, %bo)
        heads 12 head_size 64 scaling inv_sqrt_head_size
        : (tensor<?x2048x768xbf16>, tensor<768x2304xbf16>, tensor<2304xbf16>,
           tensor<768x768xbf16>, tensor<768xbf16>) -> tensor<?x2048x768xbf16>
    ```
  }];
  let arguments = (ins Transformer_ActivationTensor:$input,
                       Transformer_Matrix:$qkv_weight,
                       Optional<Transformer_Vector>:$qkv_bias,
                       Transformer_Matrix:$out_weight,
                       Optional<Transformer_Vector>:$out_bias,
                       Optional<TensorRankOf<[F32], [3]>>:$rotary,
                       CGPT_I64Attr:$num_heads,
                       OptionalAttr<CGPT_I64Attr>:$num_kv_heads,
                       CGPT_I64Attr:$head_size,
                       Transformer_ScoreScalingAttr:$scaling,
                       OptionalAttr<F64Attr>:$logits_alpha, UnitAttr:$alibi,
                       OptionalAttr<F64Attr>:$dropout,
                       OptionalAttr<CGPT_I64Attr>:$dropout_site);
  let results = (outs Transformer_ActivationTensor:$result);
  let assemblyFormat = [{
    $input `qkv` `(` $qkv_weight (`,` $qkv_bias^)? `)`
    `out` `(` $out_weight (`,` $out_bias^)? `)`
    (`rotary` `(` $rotary^ `)`)?
    `heads` $num_heads (`kv_heads` $num_kv_heads^)? `head_size` $head_size
    `scaling` `` $scaling (`alpha` $logits_alpha^)? (`alibi` $alibi^)?
    (`dropout` $dropout^ `site` $dropout_site)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Key and value heads: `num_kv_heads`, or one per query head.
    int64_t getKvHeads() {
      return static_cast<int64_t>(getNumKvHeads().value_or(getNumHeads()));
    }
  }];
}

def Transformer_FeedForwardOp : Transformer_Op<"ffn", [
    Pure, AttrSizedOperandSegments, AllTypesMatch<["input", "result"]>]> {
  let summary = "the feed-forward block: up projection, nonlinearity, down";
  let description = [{
    `result = act(input @ up_weight (+ up_bias)) @ down_weight (+ down_bias)`
    with `up_weight: [d_model, d_ffn]` and `down_weight: [d_ffn, d_model]`.
    `act` is `gelu` (exact, erf), `gelu_tanh` (the tanh approximation,
    Hugging Face's `gelu_new`), `relu` or `silu`.

    With a `gate` (a gated linear unit: SwiGLU with `silu`, GeGLU with
    `gelu`), `result = (act(input @ gate_weight (+ gate_bias)) *
    (input @ up_weight (+ up_bias))) @ down_weight (+ down_bias)`,
    `gate_weight` shaped as `up_weight`.

    ```mlir
    %f = transformer.ffn %n up(%w1) gate(%wg) down(%w2) activation silu
        : (tensor<?x4096x4096xbf16>, tensor<4096x11008xbf16>,
           tensor<4096x11008xbf16>, tensor<11008x4096xbf16>) -> tensor<?x4096x4096xbf16>
    ```

    ```mlir
    %f = transformer.ffn %n up(%w1, %b1) down(%w2, %b2) activation gelu
        : (tensor<?x2048x768xbf16>, tensor<768x3072xbf16>, tensor<3072xbf16>,
           tensor<3072x768xbf16>, tensor<768xbf16>) -> tensor<?x2048x768xbf16>
    ```
  }];
  let arguments = (ins Transformer_ActivationTensor:$input,
                       Transformer_Matrix:$up_weight,
                       Optional<Transformer_Vector>:$up_bias,
                       Optional<Transformer_Matrix>:$gate_weight,
                       Optional<Transformer_Vector>:$gate_bias,
                       Transformer_Matrix:$down_weight,
                       Optional<Transformer_Vector>:$down_bias,
                       Transformer_ActivationAttr:$activation);
  let results = (outs Transformer_ActivationTensor:$result);
  let assemblyFormat = [{
    $input `up` `(` $up_weight (`,` $up_bias^)? `)`
    (`gate` `(` $gate_weight^ (`,` $gate_bias^)? `)`)?
    `down` `(` $down_weight (`,` $down_bias^)? `)`
    `activation` `` $activation attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Transformer_ExpertWeights : TensorRankOf<[AnyFloat], [3]>;

def Transformer_MixtureOfExpertsOp : Transformer_Op<"moe", [
    Pure, AttrSizedOperandSegments, AllTypesMatch<["input", "result"]>]> {
  let summary = "a routed mixture of feed-forward experts";
  let description = [{
    A router picks, for every token, `top_k` of `E` experts, each a
    feed-forward block as `transformer.ffn` computes it (weights stacked on
    a leading expert dimension: `up_weight: [E, d_model, d_ffn]`,
    `down_weight: [E, d_ffn, d_model]`, biases `[E, d_ffn]` and
    `[E, d_model]`), and sums their outputs weighted by the router:

    - `logits = input @ router_weight` (`[d_model, E]`), accumulated in f32
      and, unless `router_f32`, rounded to the storage type;
    - `p = softmax(logits)` in f32; the experts chosen are the `top_k`
      largest `p`, ties to the lower expert index (`torch.topk` promises
      no order among ties: on a CPU, `topk([1, 2, 2, 2], 2)` picks
      experts 1 and 3);
    - each chosen expert's weight is its `p` over the chosen experts' sum
      (Mixtral's renormalization); with `null_expert L`, the sum also holds
      `exp(L) / sum_e exp(logits_e)`, the share a null expert of fixed
      logit `L` would have: it is never chosen, but a single chosen
      expert's weight is then not always 1 and the router learns from it;
    - `result[t] = sum_j weight[t, j] * expert_{e[t, j]}(input[t])`.

    With `balance W > 0` the op adds to the step's loss, per sequence of
    `S` tokens and averaged over the global batch's sequences,
    `W * E * sum_e f_e * P_e`: `f_e` the share of the sequence's tokens
    that chose expert `e` (summing to `top_k`), `P_e` the mean of `p_e`
    (Switch Transformer's load-balancing loss; the frontend gives each of
    `L` layers `W = coefficient / L`, so the loss is the layers' mean).

    ```mlir
    %m = transformer.moe %n router(%wr) up(%w1) gate(%wg) down(%w2)
        activation silu top_k 2 balance 6.25e-04 router_f32
        : (tensor<?x4096x4096xbf16>, tensor<4096x8xbf16>, tensor<8x4096x14336xbf16>,
           tensor<8x4096x14336xbf16>, tensor<8x14336x4096xbf16>) -> tensor<?x4096x4096xbf16>
    ```
  }];
  let arguments = (ins Transformer_ActivationTensor:$input,
                       Transformer_Matrix:$router_weight,
                       Transformer_ExpertWeights:$up_weight,
                       Optional<Transformer_Matrix>:$up_bias,
                       Optional<Transformer_ExpertWeights>:$gate_weight,
                       Optional<Transformer_Matrix>:$gate_bias,
                       Transformer_ExpertWeights:$down_weight,
                       Optional<Transformer_Matrix>:$down_bias,
                       Transformer_ActivationAttr:$activation,
                       CGPT_I64Attr:$top_k,
                       DefaultValuedAttr<F64Attr, "0.0">:$balance,
                       OptionalAttr<F64Attr>:$null_expert,
                       UnitAttr:$router_f32);
  let results = (outs Transformer_ActivationTensor:$result);
  let assemblyFormat = [{
    $input `router` `(` $router_weight `)` `up` `(` $up_weight (`,` $up_bias^)? `)`
    (`gate` `(` $gate_weight^ (`,` $gate_bias^)? `)`)?
    `down` `(` $down_weight (`,` $down_bias^)? `)`
    `activation` `` $activation `top_k` $top_k (`balance` $balance^)?
    (`null_expert` $null_expert^)? (`router_f32` $router_f32^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getNumExperts() {
      return ::llvm::cast<::mlir::ShapedType>(getRouterWeight().getType())
          .getShape()[1];
    }
  }];
}

def Transformer_ResidualAddOp : Transformer_Op<"residual_add", [
    Pure, Commutative, SameOperandsAndResultType]> {
  let summary = "adds a block's output to the residual stream";
  let description = [{
    Elementwise `result = residual + update`.

    ```mlir
    %y = transformer.residual_add %x, %a : tensor<?x2048x768xbf16>
    ```
  }];
  let arguments = (ins Transformer_ActivationTensor:$residual,
                       Transformer_ActivationTensor:$update);
  let results = (outs Transformer_ActivationTensor:$result);
  let assemblyFormat = "$residual `,` $update attr-dict `:` type($result)";
}

def Transformer_DropoutOp : Transformer_Op<"dropout", [
    Pure, SameOperandsAndResultType]> {
  let summary = "zeroes activations at a rate, scaling the rest up";
  let description = [{
    `result = input * mask / (1 - rate)`, `mask` keeping each element with
    probability `1 - rate`. The mask is a function of the element's place
    (sequence of the global batch, position, feature), the step and the
    `site`, so the backward pass and a recomputed forward regenerate the
    very mask the forward drew instead of keeping it (docs/runtime.md,
    "Dropout"). Sites are unique in a step; a rate is in `[0, 1)`.

    ```mlir
    %d = transformer.dropout %a rate 0.1 site 2 : tensor<?x1024x768xbf16>
    ```
  }];
  let arguments = (ins Transformer_ActivationTensor:$input, F64Attr:$rate,
                       CGPT_I64Attr:$site);
  let results = (outs Transformer_ActivationTensor:$result);
  let assemblyFormat =
      "$input `rate` $rate `site` $site attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Output head and loss
//===----------------------------------------------------------------------===//

def Transformer_OutputHeadOp : Transformer_Op<"output_head", [Pure]> {
  let summary = "projects hidden states onto the vocabulary";
  let description = [{
    `logits = scale * (input @ weight^T) (+ bias)` with `weight` of shape
    `[vocab, d_model]`. `tied` states that `weight` is the token embedding
    table itself (the verifier checks that it is, and that an untied head is
    not). `scale` is muP's `output_logits_scale` (1 when absent).

    ```mlir
    %logits = transformer.output_head %h, %wte tied
        : tensor<?x2048x768xbf16>, tensor<50257x768xbf16> -> tensor<?x2048x50257xbf16>
    ```
  }];
  let arguments = (ins Transformer_ActivationTensor:$input,
                       Transformer_Matrix:$weight,
                       Optional<Transformer_Vector>:$bias, UnitAttr:$tied,
                       OptionalAttr<F64Attr>:$scale);
  let results = (outs Transformer_ActivationTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`bias` `(` $bias^ `:` type($bias) `)`)? (`tied` $tied^)?
    (`scale` $scale^)? attr-dict `:` type($input) `,` type($weight) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def Transformer_CrossEntropyOp : Transformer_Op<"cross_entropy", [Pure]> {
  let summary = "next-token cross-entropy loss";
  let description = [{
    `loss = weight * sum_{b,s} -log softmax(logits[b, s])[labels[b, s]] / N`
    where `N` is the number of tokens (`num_tokens`) or of sequences
    (`batch_size`) in the global batch: Model Zoo's `loss_scaling` and
    `loss_weight`. The softmax is computed in f32.

    ```mlir
    %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0
        : tensor<?x2048x50257xbf16>, tensor<?x2048xi32> -> tensor<f32>
    ```
  }];
  let arguments = (ins Transformer_ActivationTensor:$logits,
                       Transformer_TokenTensor:$labels,
                       Transformer_LossScalingAttr:$scaling, F64Attr:$weight);
  let results = (outs 0DTensorOf<[F32]>:$loss);
  let assemblyFormat = [{
    $logits `,` $labels `scaling` `` $scaling `weight` $weight attr-dict `:`
    type($logits) `,` type($labels) `->` type($loss)
  }];
  let hasVerifier = 1;
}

#endif // CGPT_DIALECT_TRANSFORMER_IR_TRANSFORMEROPS_TD
