// RUN: cgpt-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

// Every verifier rule of the mixture-of-experts kernels, one case each.

%x = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
%r = "test.source"() : () -> !dataflow.stream<tensor<6x3xf32>>
// expected-error @+1 {{router has shape [6, 3] but the input's d_model is 8}}
%w, %e, %p = dataflow.route %x, %r {top_k = 2 : i64} : (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<6x3xf32>>) -> (!dataflow.stream<tensor<?x4x2xf32>>, !dataflow.stream<tensor<?x4x2xi32>>, !dataflow.stream<tensor<?x4x3xf32>>)

// -----

%x = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
%r = "test.source"() : () -> !dataflow.stream<tensor<8x3xf32>>
// expected-error @+1 {{top_k must be between 1 and the 3 experts, got 4}}
%w, %e, %p = dataflow.route %x, %r {top_k = 4 : i64} : (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<8x3xf32>>) -> (!dataflow.stream<tensor<?x4x4xf32>>, !dataflow.stream<tensor<?x4x4xi32>>, !dataflow.stream<tensor<?x4x3xf32>>)

// -----

%x = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
%r = "test.source"() : () -> !dataflow.stream<tensor<8x3xf32>>
// expected-error @+1 {{experts must be [batch, seq, k] integer expert indices, got 'tensor<?x4x2xf32>'}}
%w, %e, %p = dataflow.route %x, %r {top_k = 2 : i64} : (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<8x3xf32>>) -> (!dataflow.stream<tensor<?x4x2xf32>>, !dataflow.stream<tensor<?x4x2xf32>>, !dataflow.stream<tensor<?x4x3xf32>>)

// -----

%x = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xbf16>>
%r = "test.source"() : () -> !dataflow.stream<tensor<8x3xbf16>>
// expected-error @+1 {{weights must be f32, got 'bf16'}}
%w, %e, %p = dataflow.route %x, %r {top_k = 2 : i64} : (!dataflow.stream<tensor<?x4x8xbf16>>, !dataflow.stream<tensor<8x3xbf16>>) -> (!dataflow.stream<tensor<?x4x2xbf16>>, !dataflow.stream<tensor<?x4x2xi32>>, !dataflow.stream<tensor<?x4x3xf32>>)

// -----

%p = "test.source"() : () -> !dataflow.stream<tensor<?x4x3xf32>>
%e = "test.source"() : () -> !dataflow.stream<tensor<?x4x2xi32>>
// expected-error @+1 {{scale must be finite and 0 or more, got -1}}
%l = dataflow.balance_loss %p, %e {scale = -1.0 : f64} : (!dataflow.stream<tensor<?x4x3xf32>>, !dataflow.stream<tensor<?x4x2xi32>>) -> !dataflow.stream<tensor<f32>>

// -----

%p = "test.source"() : () -> !dataflow.stream<tensor<?x4x3xf32>>
%e = "test.source"() : () -> !dataflow.stream<tensor<?x4x2xi32>>
%w = "test.source"() : () -> !dataflow.stream<tensor<?x4x3xf32>>
%dw = "test.source"() : () -> !dataflow.stream<tensor<?x4x2xf32>>
// expected-error @+1 {{weights has shape [?, 4, 3] but experts [?, 4, 2] requires [?, 4, 2]}}
%d = dataflow.route_grad %p, %e, %w, %dw {balance_scale = 0.0 : f64} : (!dataflow.stream<tensor<?x4x3xf32>>, !dataflow.stream<tensor<?x4x2xi32>>, !dataflow.stream<tensor<?x4x3xf32>>, !dataflow.stream<tensor<?x4x2xf32>>) -> !dataflow.stream<tensor<?x4x3xf32>>

// -----

%x = "test.source"() : () -> !dataflow.stream<tensor<?x4x8xf32>>
%e = "test.source"() : () -> !dataflow.stream<tensor<?x4x2xi32>>
// expected-error @+1 {{result has 6 routed rows per sequence but 4 tokens of 2 choices each route 8}}
%r = dataflow.dispatch %x, %e : (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<?x4x2xi32>>) -> !dataflow.stream<tensor<?x6x8xf32>>

// -----

%o = "test.source"() : () -> !dataflow.stream<tensor<?x8x8xf32>>
// expected-error @+1 {{result [?, 3, 8] does not gather routed rows [?, 8, 8]: k rows per token of the same width}}
%y = dataflow.combine %o : (!dataflow.stream<tensor<?x8x8xf32>>) -> !dataflow.stream<tensor<?x3x8xf32>>

// -----

%o = "test.source"() : () -> !dataflow.stream<tensor<?x8x8xf32>>
%w = "test.source"() : () -> !dataflow.stream<tensor<?x4x2xf32>>
%dy = "test.source"() : () -> !dataflow.stream<tensor<?x4x6xf32>>
// expected-error @+1 {{grad has shape [?, 4, 6] but weights [?, 4, 2] and routed [?, 8, 8] requires [?, 4, 8]}}
%do, %dw = dataflow.combine_grad %o, %w, %dy : (!dataflow.stream<tensor<?x8x8xf32>>, !dataflow.stream<tensor<?x4x2xf32>>, !dataflow.stream<tensor<?x4x6xf32>>) -> (!dataflow.stream<tensor<?x8x8xf32>>, !dataflow.stream<tensor<?x4x2xf32>>)

// -----

%r = "test.source"() : () -> !dataflow.stream<tensor<?x8x8xf32>>
%w = "test.source"() : () -> !dataflow.stream<tensor<3x6x12xf32>>
%e = "test.source"() : () -> !dataflow.stream<tensor<?x4x2xi32>>
// expected-error @+1 {{contracts 8 columns of lhs [?, 8, 8] with 6 rows of each expert's rhs [3, 6, 12]}}
%h = dataflow.expert_matmul %r, %w, %e : (!dataflow.stream<tensor<?x8x8xf32>>, !dataflow.stream<tensor<3x6x12xf32>>, !dataflow.stream<tensor<?x4x2xi32>>) -> !dataflow.stream<tensor<?x8x12xf32>>

// -----

%r = "test.source"() : () -> !dataflow.stream<tensor<?x8x8xf32>>
%w = "test.source"() : () -> !dataflow.stream<tensor<3x8x12xf32>>
%b = "test.source"() : () -> !dataflow.stream<tensor<2x12xf32>>
%e = "test.source"() : () -> !dataflow.stream<tensor<?x4x2xi32>>
// expected-error @+1 {{bias has shape [2, 12] but lhs [?, 8, 8] and rhs [3, 8, 12] requires [3, 12]}}
%h = dataflow.expert_matmul %r, %w, %e bias %b : (!dataflow.stream<tensor<?x8x8xf32>>, !dataflow.stream<tensor<3x8x12xf32>>, !dataflow.stream<tensor<?x4x2xi32>>, !dataflow.stream<tensor<2x12xf32>>) -> !dataflow.stream<tensor<?x8x12xf32>>

// -----

%r = "test.source"() : () -> !dataflow.stream<tensor<?x8x8xf32>>
%g = "test.source"() : () -> !dataflow.stream<tensor<?x8x12xf32>>
%e = "test.source"() : () -> !dataflow.stream<tensor<?x4x2xi32>>
// expected-error @+1 {{result has shape [3, 12, 8] but lhs [?, 8, 8] and grad [?, 8, 12] requires [3, 8, 12]}}
%dw = dataflow.expert_weight_grad %r, %g, %e : (!dataflow.stream<tensor<?x8x8xf32>>, !dataflow.stream<tensor<?x8x12xf32>>, !dataflow.stream<tensor<?x4x2xi32>>) -> !dataflow.stream<tensor<3x12x8xf32>>

// -----

%g = "test.source"() : () -> !dataflow.stream<tensor<?x8x12xf32>>
%e = "test.source"() : () -> !dataflow.stream<tensor<?x4x2xi32>>
// expected-error @+1 {{result [3, 8] is not [experts, 12]}}
%db = dataflow.expert_bias_grad %g, %e : (!dataflow.stream<tensor<?x8x12xf32>>, !dataflow.stream<tensor<?x4x2xi32>>) -> !dataflow.stream<tensor<3x8xf32>>
