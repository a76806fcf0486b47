// RUN: cgpt-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

// Every verifier rule of transformer.moe, one case each.

%x = "test.source"() : () -> tensor<?x4x8xf32>
%r = "test.source"() : () -> tensor<6x4xf32>
%up = "test.source"() : () -> tensor<4x8x12xf32>
%down = "test.source"() : () -> tensor<4x12x8xf32>
// expected-error @+1 {{router_weight has shape [6, 4] but d_model is 8 (the router is [d_model, experts])}}
%m = transformer.moe %x router(%r) up(%up) down(%down) activation gelu top_k 2 : (tensor<?x4x8xf32>, tensor<6x4xf32>, tensor<4x8x12xf32>, tensor<4x12x8xf32>) -> tensor<?x4x8xf32>

// -----

%x = "test.source"() : () -> tensor<?x4x8xf32>
%r = "test.source"() : () -> tensor<8x1xf32>
%up = "test.source"() : () -> tensor<1x8x12xf32>
%down = "test.source"() : () -> tensor<1x12x8xf32>
// expected-error @+1 {{routes to 1 experts; a mixture needs at least 2}}
%m = transformer.moe %x router(%r) up(%up) down(%down) activation gelu top_k 2 : (tensor<?x4x8xf32>, tensor<8x1xf32>, tensor<1x8x12xf32>, tensor<1x12x8xf32>) -> tensor<?x4x8xf32>

// -----

%x = "test.source"() : () -> tensor<?x4x8xf32>
%r = "test.source"() : () -> tensor<8x4xf32>
%up = "test.source"() : () -> tensor<4x8x12xf32>
%down = "test.source"() : () -> tensor<4x12x8xf32>
// expected-error @+1 {{top_k must be between 1 and the 4 experts, got 5}}
%m = transformer.moe %x router(%r) up(%up) down(%down) activation gelu top_k 5 : (tensor<?x4x8xf32>, tensor<8x4xf32>, tensor<4x8x12xf32>, tensor<4x12x8xf32>) -> tensor<?x4x8xf32>

// -----

%x = "test.source"() : () -> tensor<?x4x8xf32>
%r = "test.source"() : () -> tensor<8x4xf32>
%up = "test.source"() : () -> tensor<3x8x12xf32>
%down = "test.source"() : () -> tensor<4x12x8xf32>
// expected-error @+1 {{up_weight has shape [3, 8, 12] but 4 experts of d_model 8 require [4, 8, d_ffn]}}
%m = transformer.moe %x router(%r) up(%up) down(%down) activation gelu top_k 2 : (tensor<?x4x8xf32>, tensor<8x4xf32>, tensor<3x8x12xf32>, tensor<4x12x8xf32>) -> tensor<?x4x8xf32>

// -----

%x = "test.source"() : () -> tensor<?x4x8xf32>
%r = "test.source"() : () -> tensor<8x4xf32>
%up = "test.source"() : () -> tensor<4x8x12xf32>
%down = "test.source"() : () -> tensor<4x8x12xf32>
// expected-error @+1 {{down_weight has shape [4, 8, 12] but 4 experts, d_model 8 and d_ffn 12 requires [4, 12, 8]}}
%m = transformer.moe %x router(%r) up(%up) down(%down) activation gelu top_k 2 : (tensor<?x4x8xf32>, tensor<8x4xf32>, tensor<4x8x12xf32>, tensor<4x8x12xf32>) -> tensor<?x4x8xf32>

// -----

%x = "test.source"() : () -> tensor<?x4x8xf32>
%r = "test.source"() : () -> tensor<8x4xf32>
%up = "test.source"() : () -> tensor<4x8x12xf32>
%down = "test.source"() : () -> tensor<4x12x8xf32>
// expected-error @+1 {{balance must be a finite weight of 0 or more, got -0.5}}
%m = transformer.moe %x router(%r) up(%up) down(%down) activation gelu top_k 2 balance -0.5 : (tensor<?x4x8xf32>, tensor<8x4xf32>, tensor<4x8x12xf32>, tensor<4x12x8xf32>) -> tensor<?x4x8xf32>

// -----

%x = "test.source"() : () -> tensor<?x4x8xf32>
%r = "test.source"() : () -> tensor<8x4xf32>
%up = "test.source"() : () -> tensor<4x8x12xf32>
%b = "test.source"() : () -> tensor<4x8xf32>
%down = "test.source"() : () -> tensor<4x12x8xf32>
// expected-error @+1 {{up_bias has shape [4, 8] but 4 experts, d_model 8 and d_ffn 12 requires [4, 12]}}
%m = transformer.moe %x router(%r) up(%up, %b) down(%down) activation gelu top_k 1 : (tensor<?x4x8xf32>, tensor<8x4xf32>, tensor<4x8x12xf32>, tensor<4x8xf32>, tensor<4x12x8xf32>) -> tensor<?x4x8xf32>

// -----

%x = "test.source"() : () -> tensor<?x4x8xf32>
%r = "test.source"() : () -> tensor<8x4xbf16>
%up = "test.source"() : () -> tensor<4x8x12xf32>
%down = "test.source"() : () -> tensor<4x12x8xf32>
// expected-error @+1 {{mixes element types 'f32' and 'bf16'}}
%m = transformer.moe %x router(%r) up(%up) down(%down) activation gelu top_k 1 : (tensor<?x4x8xf32>, tensor<8x4xbf16>, tensor<4x8x12xf32>, tensor<4x12x8xf32>) -> tensor<?x4x8xf32>
