// RUN: cgpt-opt %S/Inputs/one-layer.mlir --convert-transformer-to-dataflow=recompute=none | FileCheck %s

// Forward: fused QKV projection, heads, causal scaled softmax, output
// projection.
// CHECK-LABEL: dataflow.stage "h.0" forward
// CHECK:         %[[WQKV:.+]] = dataflow.weight_in "h.0.attn.qkv.weight" bytes 768
// CHECK:         %[[BQKV:.+]] = dataflow.weight_in "h.0.attn.qkv.bias" bytes 96
// CHECK:         %[[QKV:.+]] = dataflow.matmul %[[X:.+]], %[[WQKV]] bias %[[BQKV]] : {{.*}} -> !dataflow.stream<tensor<?x4x24xf32>>
// CHECK:         %[[Q:.+]], %[[K:.+]], %[[V:.+]] = dataflow.split_heads %[[QKV]] heads 2 head_size 4
// CHECK:         %[[S:.+]] = dataflow.matmul %[[Q]], %[[K]] {transpose_rhs} : {{.*}} -> !dataflow.stream<tensor<?x2x4x4xf32>>
// CHECK:         %[[P:.+]] = dataflow.softmax %[[S]] {causal, head_size = 4 : i64, scale = 5.000000e-01 : f64}
// CHECK:         %[[O:.+]] = dataflow.matmul %[[P]], %[[V]] :
// CHECK:         %[[M:.+]] = dataflow.merge_heads %[[O]] : {{.*}} -> !dataflow.stream<tensor<?x4x8xf32>>
// CHECK:         %[[WO:.+]] = dataflow.weight_in "h.0.attn.proj.weight" bytes 256
// CHECK:         dataflow.matmul %[[M]], %[[WO]] bias %{{.+}} :
// Backward, with every activation kept but the probabilities (seq^2 per
// head and sequence): dWo = M^T dY, dM = dY Wo^T; P recomputed from Q and
// K (flash attention's backward), dP = dO V^T, dV = P^T dO,
// dS = softmax'(P, dP), dQ = dS K, dK = dS^T Q, dWqkv = X^T dQKV,
// dX = dQKV Wqkv^T.
// CHECK-LABEL: dataflow.stage "h.0" backward
// CHECK:         %[[FX:.+]] = dataflow.fetch %{{.+}}#4
// CHECK:         %[[FQ:.+]] = dataflow.fetch %{{.+}}#5
// CHECK:         %[[FK:.+]] = dataflow.fetch %{{.+}}#6
// CHECK:         %[[FV:.+]] = dataflow.fetch %{{.+}}#7
// CHECK:         %[[FM:.+]] = dataflow.fetch %{{.+}}#8 : <tensor<?x4x8xf32>>
// Each projection's weight gradient comes before its input's gradient.
// CHECK:         %[[WO2:.+]] = dataflow.weight_in "h.0.attn.proj.weight" bytes 256
// CHECK:         %[[DWO:.+]] = dataflow.matmul %[[FM]], %[[DY:.+]] {reduce_batch, transpose_lhs} : {{.*}} -> !dataflow.stream<tensor<8x8xf32>>
// CHECK:         dataflow.grad_out "h.0.attn.proj.weight", %[[DWO]]
// CHECK:         %[[DBO:.+]] = dataflow.sum_batch %[[DY]]
// CHECK:         dataflow.grad_out "h.0.attn.proj.bias", %[[DBO]]
// CHECK:         %[[DM:.+]] = dataflow.matmul %[[DY]], %[[WO2]] {transpose_rhs}
// CHECK:         %[[DO:.+]] = dataflow.unmerge_heads %[[DM]]
// CHECK:         %[[RS:.+]] = dataflow.matmul %[[FQ]], %[[FK]] {recompute, transpose_rhs}
// CHECK:         %[[FP:.+]] = dataflow.softmax %[[RS]] {causal, head_size = 4 : i64, recompute, scale = 5.000000e-01 : f64}
// CHECK:         %[[DP:.+]] = dataflow.matmul %[[DO]], %[[FV]] {transpose_rhs}
// CHECK:         %[[DV:.+]] = dataflow.matmul %[[FP]], %[[DO]] {transpose_lhs}
// CHECK:         %[[DS:.+]] = dataflow.softmax_grad %[[FP]], %[[DP]] {head_size = 4 : i64, scale = 5.000000e-01 : f64}
// CHECK:         %[[DQ:.+]] = dataflow.matmul %[[DS]], %[[FK]] :
// CHECK:         %[[DK:.+]] = dataflow.matmul %[[DS]], %[[FQ]] {transpose_lhs}
// CHECK:         %[[WQKV2:.+]] = dataflow.weight_in "h.0.attn.qkv.weight" bytes 768
// CHECK:         %[[DQKV:.+]] = dataflow.join_heads %[[DQ]], %[[DK]], %[[DV]] : {{.*}} -> !dataflow.stream<tensor<?x4x24xf32>>
// CHECK:         %[[DWQKV:.+]] = dataflow.matmul %[[FX]], %[[DQKV]] {reduce_batch, transpose_lhs} : {{.*}} -> !dataflow.stream<tensor<8x24xf32>>
// CHECK:         dataflow.grad_out "h.0.attn.qkv.weight", %[[DWQKV]] bytes 768
// CHECK:         dataflow.sum_batch %[[DQKV]]
// CHECK:         dataflow.grad_out "h.0.attn.qkv.bias"
// CHECK:         dataflow.matmul %[[DQKV]], %[[WQKV2]] {transpose_rhs} : {{.*}} -> !dataflow.stream<tensor<?x4x8xf32>>

// muP scales scores by 1/head_size; without biases no bias gradients leave.
// RUN: cgpt-opt %S/Inputs/one-layer-gptj.mlir --convert-transformer-to-dataflow | FileCheck %s --check-prefix=MUP
// MUP: dataflow.softmax %{{.+}} {causal, head_size = 4 : i64, scale = 2.500000e-01 : f64}
// MUP-NOT: grad_out "h.0.attn.qkv.bias"
