// The recompute policy decides what a layer keeps for its backward stage.

// none: every activation the backward kernels read (15 buffers here), the
// attention probabilities excepted: the backward recomputes them.
// RUN: cgpt-opt %S/Inputs/one-layer.mlir --convert-transformer-to-dataflow=recompute=none | FileCheck %s --check-prefix=NONE
// NONE-LABEL: dataflow.stage "h.0" forward
// NONE-COUNT-14: dataflow.stash
// NONE:          dataflow.yield
// NONE-LABEL: dataflow.stage "h.0" backward
// NONE-NOT:      recompute
// NONE:          dataflow.matmul {{.+}} {recompute, transpose_rhs}
// NONE-NEXT:     dataflow.softmax {{.+}} recompute
// NONE-NOT:      recompute
// NONE:          dataflow.yield

// layer (the default): the layer input alone; the backward stage reruns
// the layer's forward kernels, marked recompute, before the gradients.
// RUN: cgpt-opt %S/Inputs/one-layer.mlir --convert-transformer-to-dataflow | FileCheck %s --check-prefix=LAYER
// LAYER-LABEL: dataflow.stage "h.0" forward
// LAYER:         dataflow.stash
// LAYER-NOT:     dataflow.stash
// LAYER-LABEL: dataflow.stage "h.0" backward
// LAYER:         %[[X:.+]] = dataflow.fetch
// LAYER:         dataflow.layer_norm %[[X]], {{.*}} {recompute}
// LAYER:         dataflow.softmax %{{.+}} {causal, head_size = 4 : i64, recompute, scale = 5.000000e-01 : f64}
// Nothing reads the layer's output: its projection and residual are not
// rebuilt, and the projection's bias is not streamed again.
// LAYER:         dataflow.map gelu %{{.+}} {recompute}
// LAYER-NOT:     recompute
// LAYER-NOT:     "h.0.mlp.proj.bias" bytes
// LAYER:         dataflow.layer_norm_grad

// The kept bytes and the recomputed FLOPs, per sequence.
// RUN: cgpt-opt %S/Inputs/one-layer.mlir --convert-transformer-to-dataflow=recompute=none --dataflow-print-costs -o /dev/null | FileCheck %s --check-prefix=NONE-COSTS
// Kept none, the backward still recomputes the probabilities: the scores
// product (2 x 8 x 4 x 4) and the softmax (4 x head_size a score, 32
// scores).
// NONE-COSTS: recompute_flops_per_sequence: 768
// NONE-COSTS: kept_activation_bytes_per_sequence_per_layer: 2112 (1 layers)
// RUN: cgpt-opt %S/Inputs/one-layer.mlir --convert-transformer-to-dataflow --dataflow-print-costs -o /dev/null | FileCheck %s --check-prefix=LAYER-COSTS
// LAYER-COSTS: algorithmic_flops_per_sequence: 37600
// LAYER-COSTS: recompute_flops_per_sequence: 9184
// LAYER-COSTS: kept_activation_bytes_per_sequence_per_layer: 128 (1 layers)

// tensor: as layer, then the recomputed tensors live across the stage's
// peak (the feed-forward's backward) are rebuilt just before the backward
// kernel that reads them, from what is still live: the second norm's
// output from the residual (which the norm's gradient reads anyway)
// before the first feed-forward weight gradient, and the first norm's
// output, queries, keys and values (one more QKV projection) before
// attention's backward, whose recomputed scores read the new queries and
// keys. The first copies then die before the peak.
// RUN: cgpt-opt %S/Inputs/one-layer.mlir --convert-transformer-to-dataflow=recompute=tensor | FileCheck %s --check-prefix=TENSOR
// TENSOR-LABEL: dataflow.stage "h.0" backward
// TENSOR:         %[[X:.+]] = dataflow.fetch
// TENSOR:         %[[R:.+]] = dataflow.map add %[[X]], %{{.+}} {recompute}
// TENSOR:         dataflow.map gelu %{{.+}} {recompute}
// TENSOR:         %[[GG:.+]] = dataflow.map gelu_grad
// TENSOR-NEXT:    %[[N2:.+]], %{{.+}}, %{{.+}} = dataflow.layer_norm %[[R]], {{.*}} {recompute}
// TENSOR-NEXT:    dataflow.matmul %[[N2]], %[[GG]] {reduce_batch, transpose_lhs}
// TENSOR:         dataflow.unmerge_heads
// TENSOR-NEXT:    %[[N1:.+]], %{{.+}}, %{{.+}} = dataflow.layer_norm %[[X]], {{.*}} {recompute}
// TENSOR-NEXT:    %[[QKV:.+]] = dataflow.matmul %[[N1]], {{.*}} {recompute}
// TENSOR-NEXT:    %[[Q:.+]], %[[K:.+]], %[[V:.+]] = dataflow.split_heads %[[QKV]] {{.*}} {recompute}
// TENSOR-NEXT:    dataflow.matmul %[[Q]], %[[K]] {recompute, transpose_rhs}
// TENSOR:         dataflow.matmul %[[N1]], %{{.+}} {reduce_batch, transpose_lhs}
