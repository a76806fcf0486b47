// RUN: cgpt-opt %S/Inputs/two-layers.mlir --wafer-place --wafer-route | FileCheck %s
// RUN: sed 's|target "mini"|target "%S/Inputs/two-colors.yaml"|' %S/Inputs/two-layers.mlir | cgpt-opt --wafer-place | not cgpt-opt --wafer-route 2>&1 | FileCheck %s --check-prefix=COLORS
// RUN: cgpt-opt %s -split-input-file -verify-diagnostics --wafer-route

// wafer-route: a weight matmul's weights take one color down the columns
// and the reduce-scatter of its sums two alternating colors each way along
// the rows; a weight
// gradient also gathers its output gradient along the rows. Weights enter
// at the north edge; gradients leave at the south-east corner of the rows
// the token groups occupy (11 of mini's 12: the last row stays idle).
// CHECK-LABEL: wafer.stage @h.0.forward
// CHECK: wafer.region @norm {{.*}}colors = array<i64: 0, 1>
// CHECK: wafer.region @fc {{.*}}colors = array<i64: 0, 1, 2, 3, 4>
// CHECK: wafer.ingress "h.0.w" -> @fc bytes 8192 at [0, 0]
// CHECK-LABEL: wafer.stage @h.1.backward
// CHECK: wafer.region @dw {{.*}}colors = array<i64: 0, 1, 2, 3>
// CHECK: wafer.egress @dw -> "h.1.w" bytes 8192 at [15, 10]

// Side by side, each region of a wave has its own columns: its streams
// reuse the colors of the others. Weights enter at the north edge above
// their region; a gradient leaves at the south-east corner of the rows
// its region's token groups occupy.
// RUN: cgpt-opt %S/Inputs/independent.mlir --wafer-place=placer=side-by-side --wafer-route | FileCheck %s --check-prefix=SIDE
// SIDE: wafer.region @dx {{.*}} at <x = 0, y = 0, w = 7, h = 12> {{.*}}colors = array<i64: 0, 1, 2, 3, 4>
// SIDE: wafer.region @dw {{.*}} at <x = 7, y = 0, w = 7, h = 12> {{.*}}colors = array<i64: 0, 1, 2, 3>
// SIDE: wafer.ingress "h.0.w" -> @dx bytes 8192 at [0, 0]
// SIDE: wafer.egress @dw -> "h.0.w" bytes 8192 at [13, 10]
// SIDE: wafer.egress @db -> "h.0.b" bytes 128 at [15, 10]

// Regions of one wave stacked on the same columns (a hand edit: @dw below
// @dx) share the routers their weights cross: their colors are disjoint.
// RUN: cgpt-opt %S/Inputs/independent.mlir --wafer-place=placer=side-by-side | sed -E 's/@dx (.*) at <x = 0, y = 0, w = 7, h = 12> layout <token_groups = 11, feature_groups = 7,/@dx \1 at <x = 0, y = 0, w = 7, h = 6> layout <token_groups = 6, feature_groups = 7,/; s/@dw (.*) at <x = 7, y = 0, w = 7, h = 12> layout <token_groups = 11, feature_groups = 7,/@dw \1 at <x = 0, y = 6, w = 7, h = 6> layout <token_groups = 6, feature_groups = 7,/' | cgpt-opt --wafer-route | FileCheck %s --check-prefix=STACKED
// STACKED: wafer.region @dx {{.*}} at <x = 0, y = 0, w = 7, h = 6> {{.*}}colors = array<i64: 0, 1, 2, 3, 4>
// STACKED: wafer.region @dw {{.*}} at <x = 0, y = 6, w = 7, h = 6> {{.*}}colors = array<i64: 5, 6, 7, 8>
// STACKED: wafer.egress @dw -> "h.0.w" bytes 8192 at [6, 11]

// Layer pipelined, colors 0 and 1 carry activations from band to band; the
// regions' own streams take the colors after them.
// RUN: cgpt-opt %S/Inputs/two-layers.mlir --wafer-place=placer=pipelined --wafer-route | FileCheck %s --check-prefix=PIPE
// PIPE-LABEL: wafer.stage @h.1.forward
// PIPE: wafer.region @fc {{.*}} at <x = 8, y = 0, w = 8, h = 12> {{.*}}colors = array<i64: 2, 3, 4>
// PIPE: wafer.ingress "h.1.w" -> @fc bytes 8192 at [8, 0]
// RUN: sed 's|target "mini"|target "%S/Inputs/four-colors.yaml"|' %S/Inputs/two-layers.mlir | cgpt-opt --wafer-place=placer=pipelined | not cgpt-opt --wafer-route 2>&1 | FileCheck %s --check-prefix=PIPE-COLORS
// PIPE-COLORS: error: 'wafer.region' op needs 3 routing colors after the 2 its wave's other regions and the pipeline use on its columns; target '{{.*}}four-colors.yaml' has 4

// A norm's gradient sums its gain's gradient over the tokens: with more
// than one row of token groups, two more colors carry it down the columns,
// beside the two of the row statistics; a norm takes the two alone.
// RUN: cgpt-opt %S/Inputs/row-kernels.mlir --wafer-route | FileCheck %s --check-prefix=NORMS
// NORMS: wafer.region @ln_grad {{.*}}colors = array<i64: 0, 1, 2, 3>
// NORMS: wafer.region @rms_grad {{.*}} at <x = 0, y = 0, w = 16, h = 1> {{.*}}colors = array<i64: 0, 1>
// NORMS: wafer.region @ln {{.*}}colors = array<i64: 0, 1>
// The loss sums its row statistics along the segments; its gradient reads
// the log-sum-exp the loss saved and passes nothing between cores.
// NORMS: wafer.region @loss {{.*}}colors = array<i64: 0, 1>
// NORMS: wafer.region @loss_grad {{.*}}colors = array<i64>
// Two colors cannot carry the gradient's four streams.
// RUN: sed 's|target "mini"|target "%S/Inputs/two-colors.yaml"|' %S/Inputs/row-kernels.mlir | not cgpt-opt --wafer-route 2>&1 | FileCheck %s --check-prefix=NORM-COLORS
// NORM-COLORS: error: 'wafer.region' op needs 4 routing colors; target '{{.*}}two-colors.yaml' has 2
// NORM-COLORS-NEXT: wafer.region @ln_grad

// A target with two colors cannot carry a weight matmul's three streams.
// COLORS: error: 'wafer.region' op needs 5 routing colors; target '{{.*}}two-colors.yaml' has 2

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 1 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s order 0 "forward" {
    // expected-error @+1 {{has no layout; run wafer-place before wafer-route}}
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}
