// RUN: cgpt-opt %s -split-input-file -verify-diagnostics

// Every verifier rule of the wafer dialect, one case each.

wafer.device @d target "mini" mesh 16 x 12 attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #transformer.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64, sram_bytes = 49152 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-note @+1 {{the other region}}
    wafer.region @a "dataflow.matmul" at <x = 0, y = 0, w = 4, h = 4> {accumulator = 0 : i64, efficiency = 1.0 : f64, flops = 1 : i64, stationary = 0 : i64, stream_buffers = 0 : i64, tile = array<i64: 1, 1, 1>, tiles = 1 : i64, working_set = 0 : i64}
    // expected-error @+1 {{at #wafer.rect<x = 2, y = 2, w = 4, h = 4> overlaps region "a" at #wafer.rect<x = 0, y = 0, w = 4, h = 4>}}
    wafer.region @b "dataflow.matmul" at <x = 2, y = 2, w = 4, h = 4> {accumulator = 0 : i64, efficiency = 1.0 : f64, flops = 1 : i64, stationary = 0 : i64, stream_buffers = 0 : i64, tile = array<i64: 1, 1, 1>, tiles = 1 : i64, working_set = 0 : i64}
  }
}

// -----

wafer.device @d target "mini" mesh 16 x 12 attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #transformer.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64, sram_bytes = 49152 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{is placed at #wafer.rect<x = 14, y = 0, w = 4, h = 4> outside the 16 x 12 mesh of target 'mini'}}
    wafer.region @a "dataflow.matmul" at <x = 14, y = 0, w = 4, h = 4> {accumulator = 0 : i64, efficiency = 1.0 : f64, flops = 1 : i64, stationary = 0 : i64, stream_buffers = 0 : i64, tile = array<i64: 1, 1, 1>, tiles = 1 : i64, working_set = 0 : i64}
  }
}

// -----

wafer.device @d target "mini" mesh 16 x 12 attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #transformer.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64, sram_bytes = 49152 : i64} {
  wafer.stage @s0 order 0 "forward" {
    wafer.region @a "dataflow.matmul" {accumulator = 0 : i64, efficiency = 1.0 : f64, flops = 1 : i64, stationary = 0 : i64, stream_buffers = 0 : i64, tile = array<i64: 1, 1, 1>, tiles = 1 : i64, working_set = 0 : i64}
    // expected-error @+1 {{refers to @missing, which is not a region of stage "s0"}}
    wafer.flow @a -> @missing bytes 4
  }
}

// -----

wafer.device @d target "mini" mesh 16 x 12 attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #transformer.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64, sram_bytes = 49152 : i64} {
  wafer.stage @s0 order 0 "forward" {
    wafer.region @a "dataflow.matmul" {accumulator = 0 : i64, efficiency = 1.0 : f64, flops = 1 : i64, stationary = 0 : i64, stream_buffers = 0 : i64, tile = array<i64: 1, 1, 1>, tiles = 1 : i64, working_set = 0 : i64}
    wafer.region @b "dataflow.matmul" {accumulator = 0 : i64, efficiency = 1.0 : f64, flops = 1 : i64, stationary = 0 : i64, stream_buffers = 0 : i64, tile = array<i64: 1, 1, 1>, tiles = 1 : i64, working_set = 0 : i64}
    // expected-error @+1 {{route leg 1 is diagonal; mesh routes move along one axis at a time}}
    wafer.flow @a -> @b bytes 4 color 0 route [0, 0, 3, 2]
  }
}

// -----

wafer.device @d target "mini" mesh 16 x 12 attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #transformer.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64, sram_bytes = 49152 : i64} {
  wafer.stage @s0 order 0 "forward" {
    wafer.region @a "dataflow.matmul" {accumulator = 0 : i64, efficiency = 1.0 : f64, flops = 1 : i64, stationary = 0 : i64, stream_buffers = 0 : i64, tile = array<i64: 1, 1, 1>, tiles = 1 : i64, working_set = 0 : i64}
    wafer.region @b "dataflow.matmul" {accumulator = 0 : i64, efficiency = 1.0 : f64, flops = 1 : i64, stationary = 0 : i64, stream_buffers = 0 : i64, tile = array<i64: 1, 1, 1>, tiles = 1 : i64, working_set = 0 : i64}
    // expected-error @+1 {{route must list at least two (x, y) points, got 3 numbers}}
    wafer.flow @a -> @b bytes 4 color 0 route [0, 0, 3]
  }
}

// -----

wafer.device @d target "mini" mesh 16 x 12 attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #transformer.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64, sram_bytes = 49152 : i64} {
  wafer.stage @s0 order 0 "forward" {
    wafer.region @a "dataflow.matmul" {accumulator = 0 : i64, efficiency = 1.0 : f64, flops = 1 : i64, stationary = 0 : i64, stream_buffers = 0 : i64, tile = array<i64: 1, 1, 1>, tiles = 1 : i64, working_set = 0 : i64}
    wafer.region @b "dataflow.matmul" {accumulator = 0 : i64, efficiency = 1.0 : f64, flops = 1 : i64, stationary = 0 : i64, stream_buffers = 0 : i64, tile = array<i64: 1, 1, 1>, tiles = 1 : i64, working_set = 0 : i64}
    // expected-error @+1 {{bytes must be non-negative, got -4}}
    wafer.flow @a -> @b bytes -4
  }
}

// -----

wafer.device @d target "mini" mesh 16 x 12 attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #transformer.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64, sram_bytes = 49152 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{efficiency must be in (0, 1], got 1.5}}
    wafer.region @a "dataflow.matmul" {accumulator = 0 : i64, efficiency = 1.5 : f64, flops = 1 : i64, stationary = 0 : i64, stream_buffers = 0 : i64, tile = array<i64: 1, 1, 1>, tiles = 1 : i64, working_set = 0 : i64}
  }
}

// -----

wafer.device @d target "mini" mesh 16 x 12 attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #transformer.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64, sram_bytes = 49152 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{is placed on an empty rectangle #wafer.rect<x = 0, y = 0, w = 0, h = 4>}}
    wafer.region @a "dataflow.matmul" at <x = 0, y = 0, w = 0, h = 4> {accumulator = 0 : i64, efficiency = 1.0 : f64, flops = 1 : i64, stationary = 0 : i64, stream_buffers = 0 : i64, tile = array<i64: 1, 1, 1>, tiles = 1 : i64, working_set = 0 : i64}
  }
}

// -----

wafer.device @d target "mini" mesh 16 x 12 attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #transformer.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64, sram_bytes = 49152 : i64} {
  // expected-error @+1 {{has order 1 but is stage #0 of the schedule}}
  wafer.stage @s1 order 1 "forward" {
    wafer.region @a "dataflow.matmul" {accumulator = 0 : i64, efficiency = 1.0 : f64, flops = 1 : i64, stationary = 0 : i64, stream_buffers = 0 : i64, tile = array<i64: 1, 1, 1>, tiles = 1 : i64, working_set = 0 : i64}
  }
}

// -----

// expected-error @+1 {{micro_batch (3) x grad_accum_steps (2) must equal the per-system batch (8)}}
wafer.device @d target "mini" mesh 16 x 12 attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 2 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 3 : i64, micro_batch_request = #transformer.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64, sram_bytes = 49152 : i64} {
  wafer.stage @s0 order 0 "forward" {
    wafer.region @a "dataflow.matmul" {accumulator = 0 : i64, efficiency = 1.0 : f64, flops = 1 : i64, stationary = 0 : i64, stream_buffers = 0 : i64, tile = array<i64: 1, 1, 1>, tiles = 1 : i64, working_set = 0 : i64}
  }
}

// -----

// expected-error @+1 {{micro_batch (4) and grad_accum_steps (0) must both be 0 (not planned) or both positive}}
wafer.device @d target "mini" mesh 16 x 12 attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 4 : i64, micro_batch_request = #transformer.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64, sram_bytes = 49152 : i64} {
  wafer.stage @s0 order 0 "forward" {
    wafer.region @a "dataflow.matmul" {accumulator = 0 : i64, efficiency = 1.0 : f64, flops = 1 : i64, stationary = 0 : i64, stream_buffers = 0 : i64, tile = array<i64: 1, 1, 1>, tiles = 1 : i64, working_set = 0 : i64}
  }
}

// -----

wafer.device @d target "mini" mesh 16 x 12 attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #transformer.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64, sram_bytes = 49152 : i64} {
  wafer.stage @s0 order 0 "forward" {
    wafer.region @a "dataflow.matmul" {accumulator = 0 : i64, efficiency = 1.0 : f64, flops = 1 : i64, stationary = 0 : i64, stream_buffers = 0 : i64, tile = array<i64: 1, 1, 1>, tiles = 1 : i64, working_set = 0 : i64}
    // expected-error @+1 {{refers to @b, which is not a region of stage "s0"}}
    wafer.ingress "w" -> @b bytes 4
  }
}
