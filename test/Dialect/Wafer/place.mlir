// RUN: cgpt-opt %S/Inputs/two-layers.mlir --wafer-place | FileCheck %s
// RUN: cgpt-opt %s -split-input-file -verify-diagnostics --wafer-place

// wafer-place on hand-written IR: every kernel runs over the whole 16 x 12
// mini mesh; each stage gets the token x feature split that makes its
// kernels fastest at one sequence (64 tokens) before planning: forward,
// 4 tokens a core (two SIMD widths) by 12 feature groups.
// CHECK-LABEL: wafer.stage @h.0.forward
// CHECK-NEXT: wafer.region @norm reduction "dataflow.layer_norm" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 16, feature_groups = 12, weights = none, partials = none>
// CHECK-NEXT: wafer.region @fc weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 16, feature_groups = 12, weights = north, partials = rows>
// In the backward stage the weight gradient reduces its partial sums down
// the columns, over the token groups.
// CHECK-LABEL: wafer.stage @h.1.backward
// CHECK-NEXT: wafer.region @dx weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 12, feature_groups = 16, weights = north, partials = rows>
// CHECK-NEXT: wafer.region @dw weight_grad "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 12, feature_groups = 16, weights = none, partials = columns>

// expected-error @+1 {{has no stages; the runtime needs at least one}}
wafer.device @empty target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 1 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
}

