// One backward stage on the mini mesh, hand-written for the placers: the
// input gradient (@dx), the weight gradient (@dw) and the bias gradient
// (@db) of a 64 x 64 layer read the stage's input and none of each other;
// @act reads @dx. 1 sequence of 64 tokens; while the three gradients run,
// 64 KiB per sequence are live in the stage, a quarter of it each one's own.
wafer.device @independent target "mini" attributes {flops_per_sequence = 1052672 : i64, global_batch = 1 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 4160 : i64, seq_len = 64 : i64} {
  wafer.stage @h.0.backward order 0 "backward" layer 0 {
    wafer.region @dx weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 524288 : i64, live = 65536 : i64, operand_bytes = 16384 : i64, reads = [], shape = array<i64: 64, 64, 64>, weight_bytes = 8192 : i64}
    wafer.region @dw weight_grad "dataflow.matmul" {accumulator = 16384 : i64, element_bytes = 2 : i64, flops = 524288 : i64, live = 65536 : i64, operand_bytes = 16384 : i64, reads = [], shape = array<i64: 64, 64, 64>, weight_bytes = 8192 : i64}
    wafer.region @db token_sum "dataflow.sum_batch" {accumulator = 256 : i64, element_bytes = 2 : i64, flops = 4096 : i64, live = 65536 : i64, operand_bytes = 8192 : i64, reads = [], shape = array<i64: 64, 64, 1>, weight_bytes = 128 : i64}
    wafer.region @act elementwise "dataflow.map" map relu {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 4096 : i64, live = 16384 : i64, operand_bytes = 16384 : i64, reads = [@dx], shape = array<i64: 64, 64, 1>}
    wafer.ingress "h.0.w" -> @dx bytes 8192
    wafer.egress @dw -> "h.0.w" bytes 8192
    wafer.egress @db -> "h.0.b" bytes 128
  }
}
