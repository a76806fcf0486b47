// RUN: cgpt-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

// Every verifier rule of the dataflow dialect, one case each.

%a = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
%b = "test.source"() : () -> !dataflow.stream<tensor<6x3xf32>>
// expected-error @+1 {{contracts 8 columns of lhs [?, 4, 8] with 6 rows of rhs [6, 3]}}
%r = dataflow.matmul %a, %b : (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<6x3xf32>>) -> !dataflow.stream<tensor<?x4x3xf32>>

// -----

%a = "test.source"() : () -> !dataflow.stream<tensor<8xf32>>
%b = "test.source"() : () -> !dataflow.stream<tensor<8x3xf32>>
// expected-error @+1 {{operands must have rank 2 or more, got [8] and [8, 3]}}
%r = dataflow.matmul %a, %b : (!dataflow.stream<tensor<8xf32>>, !dataflow.stream<tensor<8x3xf32>>) -> !dataflow.stream<tensor<3xf32>>

// -----

%a = "test.source"() : () -> !dataflow.stream<tensor<?x2x4x8xf32>>
%b = "test.source"() : () -> !dataflow.stream<tensor<?x3x8x4xf32>>
// expected-error @+1 {{rhs batch dimensions [?, 3] differ from lhs batch dimensions [?, 2]}}
%r = dataflow.matmul %a, %b : (!dataflow.stream<tensor<?x2x4x8xf32>>, !dataflow.stream<tensor<?x3x8x4xf32>>) -> !dataflow.stream<tensor<?x2x4x4xf32>>

// -----

%a = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
%b = "test.source"() : () -> !dataflow.stream<tensor<8x3xf32>>
// expected-error @+1 {{result has shape [?, 4, 5] but lhs [?, 4, 8] and rhs [8, 3] requires [?, 4, 3]}}
%r = dataflow.matmul %a, %b : (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<8x3xf32>>) -> !dataflow.stream<tensor<?x4x5xf32>>

// -----

%a = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
%b = "test.source"() : () -> !dataflow.stream<tensor<8x3xf32>>
%c = "test.source"() : () -> !dataflow.stream<tensor<4xf32>>
// expected-error @+1 {{bias has shape [4] but the result's columns requires [3]}}
%r = dataflow.matmul %a, %b bias %c : (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<8x3xf32>>, !dataflow.stream<tensor<4xf32>>) -> !dataflow.stream<tensor<?x4x3xf32>>

// -----

%a = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
%b = "test.source"() : () -> !dataflow.stream<tensor<8x3xbf16>>
// expected-error @+1 {{mixes element types 'f32' and 'bf16'}}
%r = dataflow.matmul %a, %b : (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<8x3xbf16>>) -> !dataflow.stream<tensor<?x4x3xf32>>

// -----

%a = "test.source"() : () -> !dataflow.stream<tensor<4x8xf32>>
%b = "test.source"() : () -> !dataflow.stream<tensor<4x3xf32>>
// expected-error @+1 {{reduce_batch needs batch dimensions to sum}}
%r = dataflow.matmul %a, %b {reduce_batch, transpose_lhs} : (!dataflow.stream<tensor<4x8xf32>>, !dataflow.stream<tensor<4x3xf32>>) -> !dataflow.stream<tensor<8x3xf32>>

// -----

%a = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
// expected-error @+1 {{gelu_grad takes 2 inputs, got 1}}
%r = dataflow.map gelu_grad %a : (!dataflow.stream<tensor<?x4x8xf32>>) -> !dataflow.stream<tensor<?x4x8xf32>>

// -----

%a = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
// expected-error @+1 {{dropout rate must be in [0, 1), got 1.5}}
%r = dataflow.dropout %a rate 1.5 site 0 : (!dataflow.stream<tensor<?x4x8xf32>>) -> !dataflow.stream<tensor<?x4x8xf32>>

// -----

%a = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
// expected-error @+1 {{input 'tensor<?x4x8xf32>' differs from the result 'tensor<?x4x6xf32>'; dropout keeps the shape and type}}
%r = dataflow.dropout %a rate 0.1 site 0 : (!dataflow.stream<tensor<?x4x8xf32>>) -> !dataflow.stream<tensor<?x4x6xf32>>

// -----

%a = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
%b = "test.source"() : () -> !dataflow.stream<tensor<?x4x6xf32>>
// expected-error @+1 {{input 'tensor<?x4x6xf32>' differs from the result 'tensor<?x4x8xf32>'; elementwise maps keep the shape and type}}
%r = dataflow.map add %a, %b : (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<?x4x6xf32>>) -> !dataflow.stream<tensor<?x4x8xf32>>

// -----

%t = "test.source"() : () -> !dataflow.stream<tensor<16x8xf32>>
%i = "test.source"() : () -> !dataflow.stream<tensor<?x4xf32>>
// expected-error @+1 {{ids must be [batch, seq] integer ids, got 'tensor<?x4xf32>'}}
%r = dataflow.gather %t, %i : (!dataflow.stream<tensor<16x8xf32>>, !dataflow.stream<tensor<?x4xf32>>) -> !dataflow.stream<tensor<?x4x8xf32>>

// -----

%t = "test.source"() : () -> !dataflow.stream<tensor<16x8xf32>>
%i = "test.source"() : () -> !dataflow.stream<tensor<?x4xi32>>
// expected-error @+1 {{result has shape [?, 4, 6] but ids [?, 4] and table [16, 8] requires [?, 4, 8]}}
%r = dataflow.gather %t, %i : (!dataflow.stream<tensor<16x8xf32>>, !dataflow.stream<tensor<?x4xi32>>) -> !dataflow.stream<tensor<?x4x6xf32>>

// -----

%i = "test.source"() : () -> !dataflow.stream<tensor<?x4xi32>>
%g = "test.source"() : () -> !dataflow.stream<tensor<?x4x6xf32>>
// expected-error @+1 {{grad has shape [?, 4, 6] but ids [?, 4] and result [16, 8] requires [?, 4, 8]}}
%r = dataflow.scatter_add %i, %g : (!dataflow.stream<tensor<?x4xi32>>, !dataflow.stream<tensor<?x4x6xf32>>) -> !dataflow.stream<tensor<16x8xf32>>

// -----

%x = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
%t = "test.source"() : () -> !dataflow.stream<tensor<2x8xf32>>
// expected-error @+1 {{table has shape [2, 8] but a stream of shape [?, 4, 8] needs at least 4 rows of 8}}
%r = dataflow.add_positions %x, %t : (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<2x8xf32>>) -> !dataflow.stream<tensor<?x4x8xf32>>

// -----

%g = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
// expected-error @+1 {{result has shape [4, 6] but a stream of shape [?, 4, 8] needs at least 4 rows of 8}}
%r = dataflow.position_grad %g : (!dataflow.stream<tensor<?x4x8xf32>>) -> !dataflow.stream<tensor<4x6xf32>>

// -----

%g = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
// expected-error @+1 {{result has shape [4] but input [?, 4, 8] requires [8]}}
%r = dataflow.sum_batch %g : (!dataflow.stream<tensor<?x4x8xf32>>) -> !dataflow.stream<tensor<4xf32>>

// -----


// expected-error @+1 {{dim must be positive and even, got 3}}
%r = dataflow.rotary_angles dim 3 base 10000.0 : !dataflow.stream<tensor<4x1x2xf32>>

// -----


// expected-error @+1 {{base must be greater than 1, got 1.0}}
%r = dataflow.rotary_angles dim 4 base 1.0 : !dataflow.stream<tensor<4x2x2xf32>>

// -----


// expected-error @+1 {{result has shape [4, 3, 2] but dim 4 requires [seq, 2, 2]}}
%r = dataflow.rotary_angles dim 4 base 10000.0 : !dataflow.stream<tensor<4x3x2xf32>>

// -----

%x = "test.source"() : () -> !dataflow.stream<tensor<?x2x4x4xf32>>
%a = "test.source"() : () -> !dataflow.stream<tensor<4x3x2xf32>>
// expected-error @+1 {{angles [4, 3, 2] must cover the sequence and at most the head size of input [?, 2, 4, 4]}}
%r = dataflow.rotary %x, %a : (!dataflow.stream<tensor<?x2x4x4xf32>>, !dataflow.stream<tensor<4x3x2xf32>>) -> !dataflow.stream<tensor<?x2x4x4xf32>>

// -----

%x = "test.source"() : () -> !dataflow.stream<tensor<?x4x24xf32>>
// expected-error @+1 {{heads [?, 2, 4, 4] do not match 3 heads of 4}}
%q, %k, %v = dataflow.split_heads %x heads 3 head_size 4 : (!dataflow.stream<tensor<?x4x24xf32>>) -> (!dataflow.stream<tensor<?x2x4x4xf32>>, !dataflow.stream<tensor<?x2x4x4xf32>>, !dataflow.stream<tensor<?x2x4x4xf32>>)

// -----

%x = "test.source"() : () -> !dataflow.stream<tensor<?x2x4x4xf32>>
// expected-error @+1 {{flat stream has shape [?, 4, 6] but 1 part(s) of heads [?, 2, 4, 4] requires [?, 4, 8]}}
%r = dataflow.merge_heads %x : (!dataflow.stream<tensor<?x2x4x4xf32>>) -> !dataflow.stream<tensor<?x4x6xf32>>

// -----

%x = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
%g = "test.source"() : () -> !dataflow.stream<tensor<8xf32>>
// expected-error @+1 {{row statistic must be f32, got 'bf16'}}
%y, %m, %s = dataflow.layer_norm %x, %g, %g eps 1.0e-5 : (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<8xf32>>, !dataflow.stream<tensor<8xf32>>) -> (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<?x4xbf16>>, !dataflow.stream<tensor<?x4xf32>>)

// -----

%x = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
%g = "test.source"() : () -> !dataflow.stream<tensor<6xf32>>
// expected-error @+1 {{parameter has shape [6] but rows of 8 requires [8]}}
%y, %m, %s = dataflow.layer_norm %x, %g, %g eps 1.0e-5 : (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<6xf32>>, !dataflow.stream<tensor<6xf32>>) -> (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<?x4xf32>>, !dataflow.stream<tensor<?x4xf32>>)

// -----

%x = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
%d = "test.source"() : () -> !dataflow.stream<tensor<?x4x6xf32>>
%m = "test.source"() : () -> !dataflow.stream<tensor<?x4xf32>>
%g = "test.source"() : () -> !dataflow.stream<tensor<8xf32>>
// expected-error @+1 {{grad, input and input_grad must share the type 'tensor<?x4x8xf32>'}}
%dx, %dg, %db = dataflow.layer_norm_grad %d, %x, %m, %m, %g : (!dataflow.stream<tensor<?x4x6xf32>>, !dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<?x4xf32>>, !dataflow.stream<tensor<?x4xf32>>, !dataflow.stream<tensor<8xf32>>) -> (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<8xf32>>, !dataflow.stream<tensor<8xf32>>)

// -----

%s = "test.source"() : () -> !dataflow.stream<tensor<?x2x4x3xf32>>
// expected-error @+1 {{a causal mask needs square scores, got [?, 2, 4, 3]}}
%p = dataflow.softmax %s {causal, head_size = 4 : i64, scale = 0.5 : f64} : (!dataflow.stream<tensor<?x2x4x3xf32>>) -> !dataflow.stream<tensor<?x2x4x3xf32>>

// -----

%s = "test.source"() : () -> !dataflow.stream<tensor<?x2x4x4xf32>>
// expected-error @+1 {{scale and head_size must be positive}}
%p = dataflow.softmax %s {causal, head_size = 4 : i64, scale = 0.0 : f64} : (!dataflow.stream<tensor<?x2x4x4xf32>>) -> !dataflow.stream<tensor<?x2x4x4xf32>>

// -----

%l = "test.source"() : () -> !dataflow.stream<tensor<?x4x16xf32>>
%y = "test.source"() : () -> !dataflow.stream<tensor<?x4xi32>>
// expected-error @+1 {{loss must be a scalar f32 stream, got 'tensor<1xf32>'}}
%loss, %lse = dataflow.cross_entropy %l, %y {scale = 1.0 : f64} : (!dataflow.stream<tensor<?x4x16xf32>>, !dataflow.stream<tensor<?x4xi32>>) -> (!dataflow.stream<tensor<1xf32>>, !dataflow.stream<tensor<?x4xf32>>)

// -----

%l = "test.source"() : () -> !dataflow.stream<tensor<?x4x16xf32>>
%y = "test.source"() : () -> !dataflow.stream<tensor<?x3xi32>>
// expected-error @+1 {{labels has shape [?, 3] but logits [?, 4, 16] requires [?, 4]}}
%loss, %lse = dataflow.cross_entropy %l, %y {scale = 1.0 : f64} : (!dataflow.stream<tensor<?x4x16xf32>>, !dataflow.stream<tensor<?x3xi32>>) -> (!dataflow.stream<tensor<f32>>, !dataflow.stream<tensor<?x4xf32>>)

// -----


// expected-error @+1 {{weight 'w' of type 'tensor<8x3xf32>' is 96 bytes, not 100}}
%w = dataflow.weight_in "w" bytes 100 : !dataflow.stream<tensor<8x3xf32>>

// -----


// expected-error @+1 {{weight 'w' must have a static shape, got [?, 3]}}
%w = dataflow.weight_in "w" bytes 96 : !dataflow.stream<tensor<?x3xf32>>

// -----

%g = "test.source"() : () -> !dataflow.stream<tensor<8x3xbf16>>
// expected-error @+1 {{weight 'w' of type 'tensor<8x3xbf16>' is 48 bytes, not 96}}
dataflow.grad_out "w", %g bytes 96 : !dataflow.stream<tensor<8x3xbf16>>

// -----

%x = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
// expected-error @+1 {{buffer holds 'tensor<?x4x8xbf16>' but the stream carries 'tensor<?x4x8xf32>'}}
%b = dataflow.stash %x : !dataflow.stream<tensor<?x4x8xf32>> -> !dataflow.buffer<tensor<?x4x8xbf16>>

// -----

%x = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
// expected-error @+1 {{tile [4, 8, 1] has rank 3 but the tiling space [4, 8] has rank 2}}
%r = dataflow.map gelu %x {tile = #dataflow.tile<[4, 8, 1]>} : (!dataflow.stream<tensor<?x4x8xf32>>) -> !dataflow.stream<tensor<?x4x8xf32>>

// -----

%x = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
// expected-error @+1 {{tile [4, 16] does not fit the tiling space [4, 8]: dimension 1 must be between 1 and 8}}
%r = dataflow.map gelu %x {tile = #dataflow.tile<[4, 16]>} : (!dataflow.stream<tensor<?x4x8xf32>>) -> !dataflow.stream<tensor<?x4x8xf32>>

// -----

%a = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
%b = "test.source"() : () -> !dataflow.stream<tensor<8x3xf32>>
// expected-error @+1 {{tile [0, 3, 8] does not fit the tiling space [4, 3, 8]: dimension 0 must be between 1 and 4}}
%r = dataflow.matmul %a, %b {tile = #dataflow.tile<[0, 3, 8]>} : (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<8x3xf32>>) -> !dataflow.stream<tensor<?x4x3xf32>>

// -----

// expected-error @+1 {{global_batch (2) is smaller than num_csx (3): every system needs a sequence}}
dataflow.program @p attributes {global_batch = 2 : i64, micro_batch = #training.micro_batch<auto>, num_csx = 3 : i64, recompute = #dataflow<recompute layer>, seq_len = 4 : i64} {
  dataflow.micro_batch_loop(%tokens: !dataflow.stream<tensor<?x4xi32>>, %labels: !dataflow.stream<tensor<?x4xi32>>) attributes {grad_accum_steps = 0 : i64, micro_batch = 0 : i64} {
  }
  dataflow.optimizer_step {max_gradient_norm = 1.0 : f64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, parameters = 1 : i64, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>]}
}

// -----

// expected-error @+1 {{global_batch, num_csx and seq_len must be positive, got 8, -3, 4}}
dataflow.program @p attributes {global_batch = 8 : i64, micro_batch = #training.micro_batch<auto>, num_csx = -3 : i64, recompute = #dataflow<recompute layer>, seq_len = 4 : i64} {
  dataflow.micro_batch_loop(%tokens: !dataflow.stream<tensor<?x4xi32>>, %labels: !dataflow.stream<tensor<?x4xi32>>) attributes {grad_accum_steps = 0 : i64, micro_batch = 0 : i64} {
  }
  dataflow.optimizer_step {max_gradient_norm = 1.0 : f64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, parameters = 1 : i64, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>]}
}

// -----

// expected-error @+1 {{body must be one dataflow.micro_batch_loop followed by one dataflow.optimizer_step}}
dataflow.program @p attributes {global_batch = 8 : i64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, recompute = #dataflow<recompute layer>, seq_len = 4 : i64} {
  dataflow.micro_batch_loop(%tokens: !dataflow.stream<tensor<?x4xi32>>, %labels: !dataflow.stream<tensor<?x4xi32>>) attributes {grad_accum_steps = 0 : i64, micro_batch = 0 : i64} {
  }
}

// -----

dataflow.program @p attributes {global_batch = 8 : i64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, recompute = #dataflow<recompute layer>, seq_len = 4 : i64} {
  // expected-error @+1 {{micro_batch (4) and grad_accum_steps (0) must both be 0 (not planned) or both positive}}
  dataflow.micro_batch_loop(%tokens: !dataflow.stream<tensor<?x4xi32>>, %labels: !dataflow.stream<tensor<?x4xi32>>) attributes {grad_accum_steps = 0 : i64, micro_batch = 4 : i64} {
  }
  dataflow.optimizer_step {max_gradient_norm = 1.0 : f64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, parameters = 1 : i64, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>]}
}

// -----

dataflow.program @p attributes {global_batch = 8 : i64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, recompute = #dataflow<recompute layer>, seq_len = 4 : i64} {
  dataflow.micro_batch_loop(%tokens: !dataflow.stream<tensor<?x4xi32>>, %labels: !dataflow.stream<tensor<?x4xi32>>) attributes {grad_accum_steps = 0 : i64, micro_batch = 0 : i64} {
    // expected-error @+1 {{yields 0 values whose types differ from its 1 results}}
    %x = dataflow.stage "embed" forward -> (!dataflow.stream<tensor<?x4x8xf32>>) {
      dataflow.yield
    }
  }
  dataflow.optimizer_step {max_gradient_norm = 1.0 : f64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, parameters = 1 : i64, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>]}
}

// -----

%x = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
%g = "test.source"() : () -> !dataflow.stream<tensor<6xf32>>
// expected-error @+1 {{parameter has shape [6] but rows of 8 requires [8]}}
%y, %s = dataflow.rms_norm %x, %g eps 1.0e-5 : (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<6xf32>>) -> (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<?x4xf32>>)

// -----

%x = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
%g = "test.source"() : () -> !dataflow.stream<tensor<8xf32>>
// expected-error @+1 {{row statistic must be f32, got 'bf16'}}
%y, %s = dataflow.rms_norm %x, %g eps 1.0e-5 : (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<8xf32>>) -> (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<?x4xbf16>>)

// -----

%x = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
%g = "test.source"() : () -> !dataflow.stream<tensor<8xf32>>
// expected-error @+1 {{epsilon must be positive}}
%y, %s = dataflow.rms_norm %x, %g eps 0.0 : (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<8xf32>>) -> (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<?x4xf32>>)

// -----

%x = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
%d = "test.source"() : () -> !dataflow.stream<tensor<?x4x6xf32>>
%s = "test.source"() : () -> !dataflow.stream<tensor<?x4xf32>>
%g = "test.source"() : () -> !dataflow.stream<tensor<8xf32>>
// expected-error @+1 {{grad, input and input_grad must share the type 'tensor<?x4x8xf32>'}}
%dx, %dg = dataflow.rms_norm_grad %d, %x, %s, %g : (!dataflow.stream<tensor<?x4x6xf32>>, !dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<?x4xf32>>, !dataflow.stream<tensor<8xf32>>) -> (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<8xf32>>)

// -----

%qkv = "test.source"() : () -> !dataflow.stream<tensor<?x4x32xf32>>
// expected-error @+1 {{keys [?, 4, 4, 2] do not match 2 key/value heads}}
%q, %k, %v = dataflow.split_heads %qkv heads 4 kv_heads 2 head_size 2 : (!dataflow.stream<tensor<?x4x32xf32>>) -> (!dataflow.stream<tensor<?x4x4x2xf32>>, !dataflow.stream<tensor<?x4x4x2xf32>>, !dataflow.stream<tensor<?x4x4x2xf32>>)

// -----

%k = "test.source"() : () -> !dataflow.stream<tensor<?x3x4x2xf32>>
// expected-error @+1 {{key/value heads 3 do not divide query heads 4}}
%r = dataflow.repeat_heads %k : (!dataflow.stream<tensor<?x3x4x2xf32>>) -> !dataflow.stream<tensor<?x4x4x2xf32>>

// -----

%g = "test.source"() : () -> !dataflow.stream<tensor<?x4x4x2xf32>>
// expected-error @+1 {{head stream has shape [?, 2, 4, 3] but heads [?, 4, 4, 2] requires [?, 2, 4, 2]}}
%s = dataflow.sum_head_groups %g : (!dataflow.stream<tensor<?x4x4x2xf32>>) -> !dataflow.stream<tensor<?x2x4x3xf32>>

// -----

%x = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
// expected-error @+1 {{mul takes 2 inputs, got 1}}
%y = dataflow.map mul %x : (!dataflow.stream<tensor<?x4x8xf32>>) -> !dataflow.stream<tensor<?x4x8xf32>>
