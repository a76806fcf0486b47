// A planned device whose one region holds a 1 MB accumulator on 4 cores.
wafer.device @overflow target "mini" mesh 16 x 12 attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 2 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 4 : i64, micro_batch_request = #transformer.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64, sram_bytes = 49152 : i64} {
  wafer.stage @s.forward order 0 "forward" {
    // expected-error @below {{needs 278,528 B per core on cores #wafer.rect<x = 0, y = 0, w = 2, h = 2> at micro-batch 4, over the 49,152 B of SRAM a core of target 'mini' has}}
    // expected-note @below {{memory map per core: tile 8,192 B, stream buffers 8,192 B, stationary (4 sequences) 0 B, accumulators 262,144 B, kept for backward 0 B}}
    wafer.region @matmul.0 "dataflow.matmul" at <x = 0, y = 0, w = 2, h = 2> {accumulator = 1048576 : i64, efficiency = 1.0 : f64, flops = 1 : i64, stationary = 0 : i64, stream_buffers = 8192 : i64, tile = array<i64: 4, 4, 4>, tiles = 1 : i64, working_set = 8192 : i64}
  }
}
