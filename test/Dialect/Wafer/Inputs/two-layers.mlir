// Two layers of one 64 x 64 matmul each, hand-written for the wafer passes
// on the mini mesh: 16 sequences of 64 tokens, 8 KiB of checkpoint per
// sequence per layer.
wafer.device @two target "mini" attributes {flops_per_sequence = 3145728 : i64, global_batch = 16 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 16384 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 8192 : i64, seq_len = 64 : i64} {
  wafer.stage @h.0.forward order 0 "forward" layer 0 attributes {checkpoint_bytes = 8192 : i64} {
    wafer.region @norm reduction "dataflow.layer_norm" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 28672 : i64, fused = ["dataflow.map"], live = 24576 : i64, shape = array<i64: 64, 64, 1>}
    wafer.region @fc weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 524288 : i64, live = 16384 : i64, shape = array<i64: 64, 64, 64>, weight_bytes = 8192 : i64}
    wafer.ingress "h.0.w" -> @fc bytes 8192
  }
  wafer.stage @h.1.forward order 1 "forward" layer 1 attributes {checkpoint_bytes = 8192 : i64} {
    wafer.region @norm reduction "dataflow.layer_norm" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 28672 : i64, fused = ["dataflow.map"], live = 24576 : i64, shape = array<i64: 64, 64, 1>}
    wafer.region @fc weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 524288 : i64, live = 16384 : i64, shape = array<i64: 64, 64, 64>, weight_bytes = 8192 : i64}
    wafer.ingress "h.1.w" -> @fc bytes 8192
  }
  wafer.stage @h.1.backward order 2 "backward" layer 1 {
    wafer.region @dx weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 524288 : i64, live = 16384 : i64, shape = array<i64: 64, 64, 64>, weight_bytes = 8192 : i64}
    wafer.region @dw weight_grad "dataflow.matmul" {accumulator = 16384 : i64, element_bytes = 2 : i64, flops = 524288 : i64, live = 16384 : i64, shape = array<i64: 64, 64, 64>, weight_bytes = 8192 : i64}
    wafer.ingress "h.1.w" -> @dx bytes 8192
    wafer.egress @dw -> "h.1.w" bytes 8192
  }
  wafer.stage @h.0.backward order 3 "backward" layer 0 {
    wafer.region @dx weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 524288 : i64, live = 16384 : i64, shape = array<i64: 64, 64, 64>, weight_bytes = 8192 : i64}
    wafer.region @dw weight_grad "dataflow.matmul" {accumulator = 16384 : i64, element_bytes = 2 : i64, flops = 524288 : i64, live = 16384 : i64, shape = array<i64: 64, 64, 64>, weight_bytes = 8192 : i64}
    wafer.ingress "h.0.w" -> @dx bytes 8192
    wafer.egress @dw -> "h.0.w" bytes 8192
  }
}
