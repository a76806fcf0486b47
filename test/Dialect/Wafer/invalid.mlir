// RUN: cgpt-opt %s -split-input-file -verify-diagnostics

// Every verifier rule of the wafer dialect, one case each.

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{is placed at #wafer.rect<x = 14, y = 0, w = 4, h = 4> outside the 16 x 12 mesh of target 'mini'}}
    wafer.region @a weight_matmul "dataflow.matmul" at <x = 14, y = 0, w = 4, h = 4> {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{runs unknown kernel 'dataflow.teleport'}}
    wafer.region @a weight_matmul "dataflow.teleport" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{fuses unknown kernel "dataflow.nothing"}}
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>, fused = ["dataflow.nothing"]}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{runs a dataflow.map but names no map}}
    wafer.region @a elementwise "dataflow.map" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 1>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{names a map but runs 'dataflow.matmul', not a dataflow.map}}
    wafer.region @a weight_matmul "dataflow.matmul" map gelu {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{runs a dataflow.route but names no top_k}}
    wafer.region @a weight_matmul "dataflow.route" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 3, 2>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{names a router's top_k, null_expert or router_f32 but runs 'dataflow.matmul', not a dataflow.route}}
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, router_f32, shape = array<i64: 4, 3, 2>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{top_k must be 1 to its 3 experts (columns), got 4}}
    wafer.region @a weight_matmul "dataflow.route" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 3, 2>, top_k = 4 : i64}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{top_k must be 1 to its 3 experts (columns), got 0}}
    wafer.region @a weight_matmul "dataflow.route" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, null_expert = 0.5 : f64, shape = array<i64: 4, 3, 2>, top_k = 0 : i64}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{null_expert must be a finite f32 logit, got 1.000000e+300}}
    wafer.region @a weight_matmul "dataflow.route" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, null_expert = 1.0e300 : f64, shape = array<i64: 4, 3, 2>, top_k = 2 : i64}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{has a bias, scale or epilogue but runs 'dataflow.matmul' as a weight_grad, not a dataflow.matmul or dataflow.expert_matmul as a weight_matmul}}
    wafer.region @a weight_grad "dataflow.matmul" {accumulator = 16 : i64, bias, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{scale must be a finite f32, got 1.000000e+300}}
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, scale = 1.0e300 : f64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{has a scale but runs 'dataflow.expert_matmul', which scales nothing}}
    wafer.region @a weight_matmul "dataflow.expert_matmul" {accumulator = 0 : i64, bias, element_bytes = 2 : i64, experts = 2 : i64, flops = 8 : i64, live = 16 : i64, scale = 0.5 : f64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{applies 2 maps in its epilogue, but the kernels it fuses begin with 1 dataflow.map}}
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, epilogue = [#wafer.epilogue_map<kind = gelu, running = 0, kept = false>, #wafer.epilogue_map<kind = add, running = 1, kept = false>], flops = 8 : i64, fused = ["dataflow.map", "dataflow.split_heads", "dataflow.map"], live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{epilogue map 0 (gelu) takes the running value as input 1 of its 1}}
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, epilogue = [#wafer.epilogue_map<kind = gelu, running = 1, kept = false>], flops = 8 : i64, fused = ["dataflow.map"], live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{shape must be [rows, columns, contracted], got 2 numbers}}
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{flops (-8) must be 0 to}}
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = -8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{element_bytes must be 1 to 8, got 0}}
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 0 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{layout #wafer.layout<token_groups = 100, feature_groups = 4, weights = north, partials = rows> needs 100 token groups; segments of 4 cores hold 48 on 16 x 12 cores (4 a row)}}
    wafer.region @a weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 100, feature_groups = 4, weights = north, partials = rows> {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

// An attention block's query blocks run down the rectangle's rows: 16 of
// them do not fit 12 rows, although 16 x 1 groups would fit 16 x 12 cores.
wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 64 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{layout #wafer.layout<token_groups = 16, feature_groups = 1, weights = none, partials = rows> puts 16 query blocks of attention down a column of 12 cores}}
    wafer.region @attend attention "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 16, feature_groups = 1, weights = none, partials = rows> {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 1048576 : i64, live = 32768 : i64, shape = array<i64: 256, 64, 16>}
  }
}

// -----

// A token group's feature groups run along one row: 38 x 5 groups are
// fewer than the 192 cores, but segments of 5 leave a core of each row
// idle and hold 36 token groups.
wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{layout #wafer.layout<token_groups = 38, feature_groups = 5, weights = north, partials = rows> needs 38 token groups; segments of 5 cores hold 36 on 16 x 12 cores (3 a row)}}
    wafer.region @a weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 38, feature_groups = 5, weights = north, partials = rows> {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{layout #wafer.layout<token_groups = 2, feature_groups = 24, weights = north, partials = rows> puts 24 feature groups along a row of 16 cores}}
    wafer.region @a weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 2, feature_groups = 24, weights = north, partials = rows> {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

// Only a weight kernel sums output columns in blocks (and a token sum its
// features: the next case verifies), and a block holds at least one.
wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{layout #wafer.layout<token_groups = 4, feature_groups = 4, weights = none, partials = none, sum_block = 2> sums 2 output columns at a time; a reduction kernel here has no sums to block}}
    wafer.region @a reduction "dataflow.layer_norm" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 4, feature_groups = 4, weights = none, partials = none, sum_block = 2> {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 1>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "backward" {
    wafer.region @a token_sum "dataflow.sum_batch" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 4, feature_groups = 4, weights = none, partials = columns, sum_block = 2> {accumulator = 8 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 1>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{layout #wafer.layout<token_groups = 4, feature_groups = 4, weights = north, partials = rows, sum_block = -3> sums -3 output columns at a time; a block has at least one}}
    wafer.region @a weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 4, feature_groups = 4, weights = north, partials = rows, sum_block = -3> {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

// Only attention takes its keys in blocks, and a block holds at least
// one.
wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{layout #wafer.layout<token_groups = 4, feature_groups = 4, weights = north, partials = rows, key_block = 2> takes 2 keys at a time; only attention takes keys in blocks}}
    wafer.region @a weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 4, feature_groups = 4, weights = north, partials = rows, key_block = 2> {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "backward" {
    // expected-error @+1 {{layout #wafer.layout<token_groups = 4, feature_groups = 4, weights = none, partials = rows, key_block = -1> takes -1 keys at a time; a block has at least one}}
    wafer.region @attend attention "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 4, feature_groups = 4, weights = none, partials = rows, key_block = -1> {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, fused = ["dataflow.softmax_grad", "dataflow.matmul"], live = 16 : i64, shape = array<i64: 64, 16, 4>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "backward" {
    wafer.region @attend attention "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 4, feature_groups = 4, weights = none, partials = rows, key_block = 2> {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, fused = ["dataflow.softmax_grad", "dataflow.matmul"], live = 16 : i64, shape = array<i64: 64, 16, 4>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{uses color 21; target 'mini' has colors 0 to 20}}
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>, colors = array<i64: 0, 21>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{records 50000 B per core, over the 49152 B of SRAM a core of target 'mini' has}}
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>, sram_bytes = 50000 : i64}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
    // expected-error @+1 {{refers to @b, which is not a region of stage "s0"}}
    wafer.ingress "w" -> @b bytes 4
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
    // expected-error @+1 {{is at [16, 0], off the 16 x 12 mesh of target 'mini'}}
    wafer.ingress "w" -> @a bytes 4 at [16, 0]
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
    // expected-error @+1 {{bytes (-4) must be 0 to 68719476736}}
    wafer.egress @a -> "w" bytes -4
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  // expected-error @+1 {{has phase 'sideways'; allowed: forward, backward, loss}}
  wafer.stage @s0 order 0 "sideways" {
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  // expected-error @+1 {{has order 1 but is stage #0 of the schedule}}
  wafer.stage @s1 order 1 "forward" {
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{in stage @s0 is not a region, ingress or egress}}
    %w = transformer.weight "stray" : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{micro_batch (3) and grad_accum_steps (2) do not split the per-system batch (8) evenly: passes of at most 3 split it as 3 of at most 3}}
wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 2 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 3 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

// expected-error @+1 {{flops_per_sequence must be non-negative, got -1}}
wafer.device @d target "mini" attributes {flops_per_sequence = -1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

// expected-error @+1 {{checkpoint interval must be at least 2, got 1}}
wafer.device @d target "mini" attributes {checkpoint = #wafer.checkpoint<every 1>, flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

// expected-error @+1 {{unknown checkpoint policy 'sometimes'; allowed: keep, every N, offload}}
wafer.device @d target "mini" attributes {checkpoint = #wafer.checkpoint<sometimes>, flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

// Regions of one wave run at once on cores of their own.
wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    wafer.region @a weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 8, h = 12> layout <token_groups = 4, feature_groups = 2, weights = none, partials = none> wave 0 {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
    // expected-error @+1 {{runs in wave 0 beside @a on cores they share: #wafer.rect<x = 4, y = 0, w = 8, h = 12> and #wafer.rect<x = 0, y = 0, w = 8, h = 12>}}
    wafer.region @b weight_matmul "dataflow.matmul" at <x = 4, y = 0, w = 8, h = 12> layout <token_groups = 4, feature_groups = 2, weights = none, partials = none> wave 0 {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

// A region runs after those it reads, not beside them.
wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    wafer.region @a weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 8, h = 12> layout <token_groups = 4, feature_groups = 2, weights = none, partials = none> wave 0 {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
    // expected-error @+1 {{reads @a, which runs in the same wave 0; a region runs after those it reads}}
    wafer.region @b weight_matmul "dataflow.matmul" at <x = 8, y = 0, w = 8, h = 12> layout <token_groups = 4, feature_groups = 2, weights = none, partials = none> wave 0 {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, reads = [@a], shape = array<i64: 4, 2, 2>}
  }
}

// -----

// A region reads only earlier regions of its stage.
wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{reads @b, which is not an earlier region of stage @s0}}
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, reads = [@b], shape = array<i64: 4, 2, 2>}
    wafer.region @b weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

// Waves run in the order of their regions.
wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    wafer.region @a weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 4, feature_groups = 2, weights = none, partials = none> wave 1 {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
    // expected-error @+1 {{runs in wave 0 after a region of wave 1; waves run in the order of their regions}}
    wafer.region @b weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 4, feature_groups = 2, weights = none, partials = none> wave 0 {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

// A wave is 0 or more.
wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{wave must be 0 or more, got -1}}
    wafer.region @a weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 4, feature_groups = 2, weights = none, partials = none> wave -1 {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

// A stage has a pipeline slot only when its device runs layer pipelined.
wafer.device @d target "mini" attributes {execution = #wafer.execution<weight_streaming>, flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  // expected-error @+1 {{has slot 0, but its device runs weight streaming, one stage at a time}}
  wafer.stage @s0 order 0 "forward" slot 0 {
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

// Under layer pipelining, every stage has one.
wafer.device @d target "mini" attributes {execution = #wafer.execution<layer_pipelined>, flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  // expected-error @+1 {{has no slot, but its device runs layer pipelined}}
  wafer.stage @s0 order 0 "forward" {
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

// Weight streaming holds no weights resident.
wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{holds its weights resident, but its device runs weight streaming: weights come from the north edge}}
    wafer.region @a weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 4, feature_groups = 2, weights = resident, partials = rows> wave 0 {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

// Layer pipelining streams no weights from the edge.
wafer.device @d target "mini" attributes {execution = #wafer.execution<layer_pipelined>, flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" slot 0 {
    // expected-error @+1 {{streams its weights from the north edge, but its device runs layer pipelined: weights are resident}}
    wafer.region @a weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 4, feature_groups = 2, weights = north, partials = rows> wave 0 {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

// The slots of a pipeline work at once: each on cores of its own.
wafer.device @d target "mini" attributes {execution = #wafer.execution<layer_pipelined>, flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" slot 0 {
    wafer.region @a weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 10, h = 12> layout <token_groups = 4, feature_groups = 2, weights = resident, partials = rows> wave 0 {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
  // expected-error @+1 {{runs in slot 1 on cores that slot 0 also holds; the slots of a pipeline work at once}}
  wafer.stage @s1 order 1 "forward" slot 1 {
    wafer.region @a weight_matmul "dataflow.matmul" at <x = 8, y = 0, w = 8, h = 12> layout <token_groups = 4, feature_groups = 2, weights = resident, partials = rows> wave 0 {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

// The execution mode is one of two.
// expected-error @+2 {{expected ::cgpt::wafer::ExecutionMode to be one of: weight_streaming, layer_pipelined}}
// expected-error @+1 {{failed to parse Wafer_ExecutionModeAttr parameter 'value'}}
wafer.device @d target "mini" attributes {execution = #wafer.execution<diagonal>, flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

// A stream of more than 2^36 bytes a pass (9.2e18 once overflowed the sum
// of a stage's weights and was ignored).
wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
    // expected-error @+1 {{bytes (9223372036854775000) must be 0 to 68719476736}}
    wafer.ingress "w" -> @a bytes 9223372036854775000
  }
}

// -----

// 2^36 rows: a step of 3e22 s in which every later stage took 0 s.
wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{shape 68719476736 x 1024 x 1024 is more than 4503599627370496 multiply-adds per sequence}}
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 68719476736, 1024, 1024>}
  }
}

// -----

// expected-error @+1 {{kept_bytes_per_sequence (68719476736) is not the 64 bytes its stages' checkpoint_bytes sum to}}
wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 68719476736 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" layer 0 attributes {checkpoint_bytes = 64 : i64} {
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  // expected-error @+1 {{is at layer -1; layers are numbered from 0}}
  wafer.stage @s0 order 0 "forward" layer -1 {
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

// Two layers' stages, one numbered 999999: the runtime would report a
// model of a million layers.
wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" layer 0 {
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
  // expected-error @+1 {{is at layer 999999, but no stage is at layer 1: layers are numbered 0 to N-1 without gaps}}
  wafer.stage @s1 order 1 "forward" layer 999999 {
    wafer.region @b weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}

// -----

wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    // expected-error @+1 {{gives color 1 to two of its streams; each stream needs a color of its own}}
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>, colors = array<i64: 0, 1, 1>}
  }
}

// -----

// expected-error @+1 {{max_gradient_norm must be a finite number 0 or above (0: no clipping), got -1}}
wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, max_gradient_norm = -1.0 : f64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    wafer.region @a weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 2>}
  }
}
