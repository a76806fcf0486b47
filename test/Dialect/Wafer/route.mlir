// RUN: cgpt-opt %S/Inputs/two-layers.mlir --wafer-place --wafer-route | FileCheck %s
// RUN: sed 's|target "mini"|target "%S/Inputs/two-colors.yaml"|' %S/Inputs/two-layers.mlir | cgpt-opt --wafer-place | not cgpt-opt --wafer-route 2>&1 | FileCheck %s --check-prefix=COLORS
// RUN: cgpt-opt %s -split-input-file -verify-diagnostics --wafer-route

// wafer-route: a weight matmul's weights take one color down the columns
// and its partial sums two alternating colors along the rows; a weight
// gradient also gathers its output gradient along the rows. Weights enter
// at the north edge; gradients leave at the south-east corner.
// CHECK-LABEL: wafer.stage @h.0.forward
// CHECK: wafer.region @norm {{.*}}colors = array<i64: 0, 1>
// CHECK: wafer.region @fc {{.*}}colors = array<i64: 0, 1, 2>
// CHECK: wafer.ingress "h.0.w" -> @fc bytes 8192 at [0, 0]
// CHECK-LABEL: wafer.stage @h.1.backward
// CHECK: wafer.region @dw {{.*}}colors = array<i64: 0, 1, 2, 3>
// CHECK: wafer.egress @dw -> "h.1.w" bytes 8192 at [15, 11]

// A target with two colors cannot carry a weight matmul's three streams.
// COLORS: error: 'wafer.region' op needs 3 routing colors; target '{{.*}}two-colors.yaml' has 2

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 1 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s order 0 "forward" {
    // expected-error @+1 {{has no layout; run wafer-place before wafer-route}}
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}
