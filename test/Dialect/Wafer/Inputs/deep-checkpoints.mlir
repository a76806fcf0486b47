// Four layers whose layer fits the mini mesh but whose checkpoints (2 MiB
// per sequence per layer, 8 MiB in all) exceed its 9 MiB of SRAM once
// the reserve is taken: the planner must recompute or offload.
wafer.device @deep target "mini" attributes {flops_per_sequence = 6291456 : i64, global_batch = 2 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 8388608 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 16384 : i64, seq_len = 64 : i64} {
  wafer.stage @h.0.forward order 0 "forward" layer 0 attributes {checkpoint_bytes = 2097152 : i64} {
    wafer.region @norm reduction "dataflow.layer_norm" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 28672 : i64, fused = ["dataflow.map"], live = 24576 : i64, shape = array<i64: 64, 64, 1>}
    wafer.region @fc weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 524288 : i64, live = 16384 : i64, shape = array<i64: 64, 64, 64>, weight_bytes = 8192 : i64}
    wafer.ingress "h.0.w" -> @fc bytes 8192
  }
  wafer.stage @h.1.forward order 1 "forward" layer 1 attributes {checkpoint_bytes = 2097152 : i64} {
    wafer.region @norm reduction "dataflow.layer_norm" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 28672 : i64, fused = ["dataflow.map"], live = 24576 : i64, shape = array<i64: 64, 64, 1>}
    wafer.region @fc weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 524288 : i64, live = 16384 : i64, shape = array<i64: 64, 64, 64>, weight_bytes = 8192 : i64}
    wafer.ingress "h.1.w" -> @fc bytes 8192
  }
  wafer.stage @h.2.forward order 2 "forward" layer 2 attributes {checkpoint_bytes = 2097152 : i64} {
    wafer.region @norm reduction "dataflow.layer_norm" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 28672 : i64, fused = ["dataflow.map"], live = 24576 : i64, shape = array<i64: 64, 64, 1>}
    wafer.region @fc weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 524288 : i64, live = 16384 : i64, shape = array<i64: 64, 64, 64>, weight_bytes = 8192 : i64}
    wafer.ingress "h.2.w" -> @fc bytes 8192
  }
  wafer.stage @h.3.forward order 3 "forward" layer 3 attributes {checkpoint_bytes = 2097152 : i64} {
    wafer.region @norm reduction "dataflow.layer_norm" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 28672 : i64, fused = ["dataflow.map"], live = 24576 : i64, shape = array<i64: 64, 64, 1>}
    wafer.region @fc weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 524288 : i64, live = 16384 : i64, shape = array<i64: 64, 64, 64>, weight_bytes = 8192 : i64}
    wafer.ingress "h.3.w" -> @fc bytes 8192
  }
  wafer.stage @h.3.backward order 4 "backward" layer 3 {
    wafer.region @dx weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 524288 : i64, live = 16384 : i64, shape = array<i64: 64, 64, 64>, weight_bytes = 8192 : i64}
    wafer.region @dw weight_grad "dataflow.matmul" {accumulator = 16384 : i64, element_bytes = 2 : i64, flops = 524288 : i64, live = 16384 : i64, shape = array<i64: 64, 64, 64>, weight_bytes = 8192 : i64}
    wafer.ingress "h.3.w" -> @dx bytes 8192
    wafer.egress @dw -> "h.3.w" bytes 8192
  }
  wafer.stage @h.2.backward order 5 "backward" layer 2 {
    wafer.region @dx weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 524288 : i64, live = 16384 : i64, shape = array<i64: 64, 64, 64>, weight_bytes = 8192 : i64}
    wafer.region @dw weight_grad "dataflow.matmul" {accumulator = 16384 : i64, element_bytes = 2 : i64, flops = 524288 : i64, live = 16384 : i64, shape = array<i64: 64, 64, 64>, weight_bytes = 8192 : i64}
    wafer.ingress "h.2.w" -> @dx bytes 8192
    wafer.egress @dw -> "h.2.w" bytes 8192
  }
  wafer.stage @h.1.backward order 6 "backward" layer 1 {
    wafer.region @dx weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 524288 : i64, live = 16384 : i64, shape = array<i64: 64, 64, 64>, weight_bytes = 8192 : i64}
    wafer.region @dw weight_grad "dataflow.matmul" {accumulator = 16384 : i64, element_bytes = 2 : i64, flops = 524288 : i64, live = 16384 : i64, shape = array<i64: 64, 64, 64>, weight_bytes = 8192 : i64}
    wafer.ingress "h.1.w" -> @dx bytes 8192
    wafer.egress @dw -> "h.1.w" bytes 8192
  }
  wafer.stage @h.0.backward order 7 "backward" layer 0 {
    wafer.region @dx weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 524288 : i64, live = 16384 : i64, shape = array<i64: 64, 64, 64>, weight_bytes = 8192 : i64}
    wafer.region @dw weight_grad "dataflow.matmul" {accumulator = 16384 : i64, element_bytes = 2 : i64, flops = 524288 : i64, live = 16384 : i64, shape = array<i64: 64, 64, 64>, weight_bytes = 8192 : i64}
    wafer.ingress "h.0.w" -> @dx bytes 8192
    wafer.egress @dw -> "h.0.w" bytes 8192
  }
}
