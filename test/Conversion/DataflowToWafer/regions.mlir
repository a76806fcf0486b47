// RUN: cgpt-opt %S/../TransformerToDataflow/Inputs/one-layer.mlir --cgpt-lower-to-dataflow=target=mini --convert-dataflow-to-wafer | FileCheck %s
// RUN: not cgpt-opt %S/../TransformerToDataflow/Inputs/one-layer.mlir --convert-transformer-to-dataflow --convert-dataflow-to-wafer 2>&1 | FileCheck %s --check-prefix=UNTILED

// A map that reads no result of the region before it is a region of its
// own, which names the function it applies: LLaMA's gated product in the
// backward pass.
// RUN: cgpt-run %cgpt_src/test/reference/Inputs/tiny-llama.config.json --target mini --emit=wafer 2>/dev/null | FileCheck %s --check-prefix=MAP
// MAP: wafer.region @map.11 elementwise "dataflow.map" map mul at <

// The router's region carries its choice: top_k, the null expert's
// logit and whether the logits stay f32 (odd-moe's router is f32).
// RUN: cgpt-run %cgpt_src/test/reference/Inputs/odd-moe.yaml --target mini --emit=wafer 2>/dev/null | FileCheck %s --check-prefix=ROUTER
// ROUTER: wafer.region @route.5 weight_matmul "dataflow.route" at <{{.*}}null_expert = 3.000000e-01 : f64{{.*}}router_f32{{.*}}top_k = 2 : i64
// An expert's product carries each expert's bias and the maps after it as
// a matmul's does: the gated product's SiLU and product forward; backward
// the hidden gradient (kept: the other branch's gradient reads it too)
// times the first projection's output, then SiLU's gradient; and the sum
// of the two input gradients.
// ROUTER: wafer.region @expert_matmul.9 weight_matmul "dataflow.expert_matmul" at <{{.*}}bias, {{.*}}epilogue = [#wafer.epilogue_map<kind = silu, running = 0, kept = false>, #wafer.epilogue_map<kind = mul, running = 0, kept = false>]
// ROUTER: wafer.region @expert_matmul.24 weight_matmul "dataflow.expert_matmul" at <{{.*}}epilogue = [#wafer.epilogue_map<kind = mul, running = 0, kept = true>, #wafer.epilogue_map<kind = silu_grad, running = 1, kept = false>]
// ROUTER: wafer.region @expert_matmul.31 weight_matmul "dataflow.expert_matmul" at <{{.*}}epilogue = [#wafer.epilogue_map<kind = add, running = 1, kept = false>]

// The optimizer's clipping threshold is the device's: the runtime's tail
// waits for the norm of every gradient when it is above 0.
// RUN: sed 's/max_gradient_norm = 0.000000e+00 : f64/max_gradient_norm = 1.0 : f64/' %S/../TransformerToDataflow/Inputs/one-layer.mlir | cgpt-opt --cgpt-lower-to-dataflow=target=mini --convert-dataflow-to-wafer | FileCheck %s --check-prefix=CLIP
// CLIP: wafer.device @{{.+}} target "mini" attributes {{{.*}}max_gradient_norm = 1.000000e+00 : f64

// convert-dataflow-to-wafer on a one-layer model (d_model 8, 2 heads of 4,
// d_ffn 32, vocabulary 16, 4 tokens, f32): one region per kernel that runs
// over the mesh, elementwise work fused into the kernel whose result it
// reads, attention's products and softmax fused into one region. Sizes are
// per sequence.

// The layer's input is its checkpoint: 4 tokens x 8 features x 4 B.
// CHECK-LABEL: wafer.stage @h.0.forward order 1 "forward" layer 0 attributes {checkpoint_bytes = 128 : i64}
// Live at the first layer norm: its input (128 B, read again by the
// residual add) and its result (128 B); its mean and rstd, which nothing
// reads in the forward stage, never leave it. It works on its input and
// its result (256 B) and reads no region of the stage: its input is the
// stage's. It executes what its mesh program runs, 12 FLOPs an element and
// 40 a row: 4 x 8 x 12 + 4 x 40 = 544 (its algorithmic count is 7 an
// element).
// CHECK-NEXT: wafer.region @layer_norm.0 reduction "dataflow.layer_norm" {accumulator = 0 : i64, element_bytes = 4 : i64, flops = 544 : i64, live = 256 : i64, operand_bytes = 256 : i64, reads = [], shape = array<i64: 4, 8, 1>}
// The head split is fused into the QKV projection; attention fuses both
// products, the softmax and the head merge. Its 4 x 4 scores per head are
// its own and do not count as live; its kernels run together, so its
// queries, keys and values, its merged result and the residual stream
// (128 B each) are all live while it runs: 640 B.
// A weight matmul's epilogue runs on its cores: its own bias (and
// scale), then the maps fused into it that take the running value. The
// head split is not a map: the projection's epilogue is its bias alone.
// CHECK-NEXT: wafer.region @matmul.1 weight_matmul "dataflow.matmul" {accumulator = 0 : i64, bias, element_bytes = 4 : i64, flops = 1632 : i64, fused = ["dataflow.split_heads"], {{.*}}reads = [@layer_norm.0], shape = array<i64: 4, 24, 8>, weight_bytes = 768 : i64}
// CHECK-NEXT: wafer.region @matmul.2 attention "dataflow.matmul" {{{.*}}fused = ["dataflow.softmax", "dataflow.matmul", "dataflow.merge_heads"], live = 640 : i64, {{.*}}reads = [@matmul.1], shape = array<i64: 8, 4, 4>}
// The residual's add takes the projection as its second input.
// CHECK-NEXT: wafer.region @matmul.3 weight_matmul "dataflow.matmul" {{{.*}}bias, {{.*}}epilogue = [#wafer.epilogue_map<kind = add, running = 1, kept = false>], {{.*}}fused = ["dataflow.map"]
// The GELU's input feeds nothing else in the forward stage.
// CHECK: wafer.region @matmul.5 weight_matmul "dataflow.matmul" {{{.*}}bias, {{.*}}epilogue = [#wafer.epilogue_map<kind = gelu, running = 0, kept = false>]
// CHECK: wafer.ingress "h.0.attn.qkv.weight" -> @matmul.1 bytes 768

// The loss turn-around: the weight gradient of the tied embedding sums
// 16 x 8 f32 values over the pass and leaves as a gradient.
// CHECK-LABEL: wafer.stage @head.loss order 2 "loss"
// CHECK: wafer.region @matmul.5 weight_grad "dataflow.matmul" {accumulator = 512 : i64, {{.*}}shape = array<i64: 16, 8, 4>, weight_bytes = 512 : i64}
// CHECK: wafer.egress @matmul.5 -> "wte" bytes 512

// Backward recomputes the layer from its checkpoint, all but the FFN's
// output projection and residual, which no backward kernel reads, then runs
// the second attention region: the scores and probabilities again (flash
// attention's backward), the gradient products and the softmax gradient.
// CHECK-LABEL: wafer.stage @h.0.backward order 3 "backward" layer 0 {
// CHECK-NOT:   wafer.region @matmul.6 weight_matmul
// The FFN's weight and bias gradients come before its input gradient (the
// activation the weight gradient reads is then dead before the input
// gradient is made); the three read the recomputed FFN and the stage's
// input gradient, none of each other: what the side-by-side placer may run
// at once. The input gradient's GELU derivative is fused into it: its
// product never exists whole; the FFN's hidden state and the fused result
// (512 B each) are live beside the 1,216 B the rest of the layer's
// backward still needs, and the GELU output is not (its one reader, the
// weight gradient, came first).
// CHECK: wafer.region @matmul.6 weight_grad "dataflow.matmul" {{{.*}}reads = [@matmul.5], {{.*}}}
// CHECK-NEXT: wafer.region @sum_batch.7 token_sum "dataflow.sum_batch" {{{.*}}reads = [], {{.*}}}
// CHECK-NEXT: wafer.region @matmul.8 weight_matmul "dataflow.matmul" {{{.*}}fused = ["dataflow.map"], live = 2240 : i64, {{.*}}reads = [@matmul.5], {{.*}}}
// CHECK: wafer.region @matmul.16 attention "dataflow.matmul" {{{.*}}fused = ["dataflow.softmax", "dataflow.matmul", "dataflow.matmul", "dataflow.softmax_grad", "dataflow.matmul", "dataflow.matmul", "dataflow.join_heads"]

// Backward, the recomputed GELU's input is kept for the GELU's gradient,
// which takes the input gradient's product as its second input.
// RUN: cgpt-opt %S/../TransformerToDataflow/Inputs/one-layer.mlir --cgpt-lower-to-dataflow=target=mini --convert-dataflow-to-wafer | FileCheck %s --check-prefix=BACKWARD
// BACKWARD-LABEL: wafer.stage @h.0.backward
// BACKWARD: wafer.region @matmul.5 weight_matmul "dataflow.matmul" {{{.*}}epilogue = [#wafer.epilogue_map<kind = gelu, running = 0, kept = true>]
// BACKWARD: wafer.region @matmul.8 weight_matmul "dataflow.matmul" {{{.*}}epilogue = [#wafer.epilogue_map<kind = gelu_grad, running = 1, kept = false>]

// UNTILED: error: 'dataflow.program' op is not tiled for a target; run dataflow-tile first

// recompute=tensor rebuilds late what the feed-forward's backward would
// hold (LateRebuild.h): at its first weight gradient, by hand, the first
// norm's output (128 B) and statistics (32), the queries, keys and values
// (3 x 128), the second norm's output (128) and statistics (32) are no
// longer live: 2,240 - 704 = 1,536 B a sequence. The residual (128) stays:
// the rebuilds share 10% of the stage's 28,960 FLOPs, the QKV projection's
// (its norm's 544 and its own 1,632) leave 720, which rebuild the second
// norm (544) from the residual but not the residual too (its projection
// and add, 576 more).
// RUN: cgpt-opt %S/../TransformerToDataflow/Inputs/one-layer.mlir --cgpt-lower-to-dataflow="target=mini recompute=tensor" --convert-dataflow-to-wafer | FileCheck %s --check-prefix=TENSOR
// TENSOR-LABEL: wafer.stage @h.0.backward
// TENSOR: wafer.region @matmul.6 weight_grad "dataflow.matmul" {{{.*}}live = 1536 : i64,
