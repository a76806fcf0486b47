// RUN: cgpt-opt %s | FileCheck %s
// RUN: cgpt-opt %s | cgpt-opt | FileCheck %s
// RUN: cgpt-opt %s -mlir-print-op-generic | cgpt-opt | FileCheck %s

// A learned-position, tied-embedding step with every optional bias present.
// CHECK-LABEL: transformer.train_step @learned
// CHECK-SAME:    (%tokens: tensor<?x8xi32>, %labels: tensor<?x8xi32>)
// CHECK-SAME:    micro_batch = #training.micro_batch<auto>
// CHECK-SAME:    optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>
// CHECK-SAME:    precision = #training.precision<storage = bf16, accumulate = f32>
// CHECK-SAME:    schedule = [#training.lr_phase<kind = linear, start = 0.0, end = 0.0002, steps = 10>, #training.lr_phase<kind = cosine, start = 0.0002, end = 2.0e-05, steps = 0>]
transformer.train_step @learned(%tokens: tensor<?x8xi32>, %labels: tensor<?x8xi32>) attributes {
    global_batch = 16 : i64, num_csx = 2 : i64, seq_len = 8 : i64,
    micro_batch = #training.micro_batch<auto>,
    optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>,
    schedule = [#training.lr_phase<kind = linear, start = 0.0, end = 0.0002, steps = 10>,
                #training.lr_phase<kind = cosine, start = 0.0002, end = 2.0e-05, steps = 0>],
    max_gradient_norm = 1.0 : f64,
    precision = #training.precision<storage = bf16, accumulate = f32>} {
  // CHECK: %wte = transformer.weight "wte" : tensor<32x16xbf16>
  %wte = transformer.weight "wte" : tensor<32x16xbf16>
  // CHECK: %[[X:.+]] = transformer.token_embedding %tokens, %wte : tensor<?x8xi32>, tensor<32x16xbf16> -> tensor<?x8x16xbf16>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x8xi32>, tensor<32x16xbf16> -> tensor<?x8x16xbf16>
  %wpe = transformer.weight "wpe" : tensor<8x16xbf16>
  // CHECK: %[[P:.+]] = transformer.position_embedding %[[X]], %wpe : tensor<?x8x16xbf16>, tensor<8x16xbf16>
  %p = transformer.position_embedding %x, %wpe : tensor<?x8x16xbf16>, tensor<8x16xbf16>
  // CHECK: %h.0.ln_1.weight = transformer.weight "h.0.ln_1.weight" layer 0 : tensor<16xbf16>
  %g = transformer.weight "h.0.ln_1.weight" layer 0 : tensor<16xbf16>
  %b = transformer.weight "h.0.ln_1.bias" layer 0 : tensor<16xbf16>
  // CHECK: %[[N:.+]] = transformer.layer_norm %[[P]], %h.0.ln_1.weight, %h.0.ln_1.bias eps 1.000000e-05 : tensor<?x8x16xbf16>, tensor<16xbf16>
  %n = transformer.layer_norm %p, %g, %b eps 1.0e-5 : tensor<?x8x16xbf16>, tensor<16xbf16>
  %wqkv = transformer.weight "h.0.attn.qkv.weight" layer 0 : tensor<16x48xbf16>
  %bqkv = transformer.weight "h.0.attn.qkv.bias" layer 0 : tensor<48xbf16>
  %wo = transformer.weight "h.0.attn.proj.weight" layer 0 : tensor<16x16xbf16>
  %bo = transformer.weight "h.0.attn.proj.bias" layer 0 : tensor<16xbf16>
  // CHECK: %[[A:.+]] = transformer.attention %[[N]] qkv(%h.0.attn.qkv.weight, %h.0.attn.qkv.bias) out(%h.0.attn.proj.weight, %h.0.attn.proj.bias) heads 2 head_size 8 scaling inv_sqrt_head_size : (tensor<?x8x16xbf16>, tensor<16x48xbf16>, tensor<48xbf16>, tensor<16x16xbf16>, tensor<16xbf16>) -> tensor<?x8x16xbf16>
  %a = transformer.attention %n qkv(%wqkv, %bqkv) out(%wo, %bo) heads 2 head_size 8 scaling inv_sqrt_head_size
      : (tensor<?x8x16xbf16>, tensor<16x48xbf16>, tensor<48xbf16>, tensor<16x16xbf16>, tensor<16xbf16>) -> tensor<?x8x16xbf16>
  // CHECK: %[[R:.+]] = transformer.residual_add %[[P]], %[[A]] : tensor<?x8x16xbf16>
  %r = transformer.residual_add %p, %a : tensor<?x8x16xbf16>
  // Dropout of the probabilities and of a block's output, each its site.
  // CHECK: transformer.attention %[[N]] {{.*}} scaling inv_sqrt_head_size dropout 1.000000e-01 site 0 :
  %ad = transformer.attention %n qkv(%wqkv, %bqkv) out(%wo, %bo) heads 2 head_size 8 scaling inv_sqrt_head_size dropout 0.1 site 0
      : (tensor<?x8x16xbf16>, tensor<16x48xbf16>, tensor<48xbf16>, tensor<16x16xbf16>, tensor<16xbf16>) -> tensor<?x8x16xbf16>
  // CHECK: transformer.dropout %{{.+}} rate 2.500000e-01 site 1 : tensor<?x8x16xbf16>
  %dd = transformer.dropout %ad rate 0.25 site 1 : tensor<?x8x16xbf16>
  %w1 = transformer.weight "h.0.mlp.fc.weight" layer 0 : tensor<16x32xbf16>
  %b1 = transformer.weight "h.0.mlp.fc.bias" layer 0 : tensor<32xbf16>
  %w2 = transformer.weight "h.0.mlp.proj.weight" layer 0 : tensor<32x16xbf16>
  %b2 = transformer.weight "h.0.mlp.proj.bias" layer 0 : tensor<16xbf16>
  // CHECK: %[[F:.+]] = transformer.ffn %[[R]] up(%h.0.mlp.fc.weight, %h.0.mlp.fc.bias) down(%h.0.mlp.proj.weight, %h.0.mlp.proj.bias) activation gelu : (tensor<?x8x16xbf16>, tensor<16x32xbf16>, tensor<32xbf16>, tensor<32x16xbf16>, tensor<16xbf16>) -> tensor<?x8x16xbf16>
  %f = transformer.ffn %r up(%w1, %b1) down(%w2, %b2) activation gelu
      : (tensor<?x8x16xbf16>, tensor<16x32xbf16>, tensor<32xbf16>, tensor<32x16xbf16>, tensor<16xbf16>) -> tensor<?x8x16xbf16>
  %y = transformer.residual_add %r, %f : tensor<?x8x16xbf16>
  // CHECK: %[[L:.+]] = transformer.output_head %{{.+}}, %wte tied : tensor<?x8x16xbf16>, tensor<32x16xbf16> -> tensor<?x8x32xbf16>
  %logits = transformer.output_head %y, %wte tied : tensor<?x8x16xbf16>, tensor<32x16xbf16> -> tensor<?x8x32xbf16>
  // CHECK: %[[LOSS:.+]] = transformer.cross_entropy %[[L]], %labels scaling num_tokens weight 1.000000e+00 : tensor<?x8x32xbf16>, tensor<?x8xi32> -> tensor<f32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x8x32xbf16>, tensor<?x8xi32> -> tensor<f32>
  // CHECK: transformer.yield %[[LOSS]] : tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// A rotary, untied, muP step without attention biases, with a head bias.
// CHECK-LABEL: transformer.train_step @rotary_mup
// CHECK-SAME:    micro_batch = #training.micro_batch<explore 2 to 8>
// CHECK-SAME:    mup = #training.mup<embeddings_scale = 10.0, output_logits_scale = 0.3333333333333333, decoder_kernel_lr_scale = 0.3333333333333333>
transformer.train_step @rotary_mup(%tokens: tensor<?x8xi32>, %labels: tensor<?x8xi32>) attributes {
    global_batch = 8 : i64, num_csx = 1 : i64, seq_len = 8 : i64,
    micro_batch = #training.micro_batch<explore 2 to 8>,
    optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-06, weight_decay = 0.0>,
    schedule = [#training.lr_phase<kind = constant, start = 0.006, end = 0.006, steps = 0>],
    max_gradient_norm = 0.0 : f64,
    precision = #training.precision<storage = f32, accumulate = f32>,
    mup = #training.mup<embeddings_scale = 10.0, output_logits_scale = 0.3333333333333333, decoder_kernel_lr_scale = 0.3333333333333333>} {
  %wte = transformer.weight "wte" : tensor<32x16xf32>
  // CHECK: transformer.token_embedding %tokens, %wte scale 1.000000e+01
  %x = transformer.token_embedding %tokens, %wte scale 10.0 : tensor<?x8xi32>, tensor<32x16xf32> -> tensor<?x8x16xf32>
  // CHECK: %[[ROPE:.+]] = transformer.rotary_embedding dim 4 base 1.000000e+04 : tensor<8x2x2xf32>
  %rope = transformer.rotary_embedding dim 4 base 10000.0 : tensor<8x2x2xf32>
  %g = transformer.weight "h.0.ln_1.weight" layer 0 : tensor<16xf32>
  %b = transformer.weight "h.0.ln_1.bias" layer 0 : tensor<16xf32>
  %n = transformer.layer_norm %x, %g, %b eps 1.0e-5 : tensor<?x8x16xf32>, tensor<16xf32>
  %wqkv = transformer.weight "h.0.attn.qkv.weight" layer 0 : tensor<16x48xf32>
  %wo = transformer.weight "h.0.attn.proj.weight" layer 0 : tensor<16x16xf32>
  // CHECK: transformer.attention %{{.+}} qkv(%h.0.attn.qkv.weight) out(%h.0.attn.proj.weight) rotary(%[[ROPE]]) heads 2 head_size 8 scaling inv_head_size
  %a = transformer.attention %n qkv(%wqkv) out(%wo) rotary(%rope) heads 2 head_size 8 scaling inv_head_size
      : (tensor<?x8x16xf32>, tensor<16x48xf32>, tensor<16x16xf32>, tensor<8x2x2xf32>) -> tensor<?x8x16xf32>
  %w1 = transformer.weight "h.0.mlp.fc.weight" layer 0 : tensor<16x32xf32>
  %w2 = transformer.weight "h.0.mlp.proj.weight" layer 0 : tensor<32x16xf32>
  // CHECK: transformer.ffn %{{.+}} up(%h.0.mlp.fc.weight) down(%h.0.mlp.proj.weight) activation relu
  %f = transformer.ffn %n up(%w1) down(%w2) activation relu
      : (tensor<?x8x16xf32>, tensor<16x32xf32>, tensor<32x16xf32>) -> tensor<?x8x16xf32>
  %s = transformer.residual_add %x, %a : tensor<?x8x16xf32>
  %y = transformer.residual_add %s, %f : tensor<?x8x16xf32>
  %head = transformer.weight "lm_head.weight" : tensor<32x16xf32>
  %hb = transformer.weight "lm_head.bias" : tensor<32xf32>
  // CHECK: transformer.output_head %{{.+}}, %lm_head.weight bias(%lm_head.bias : tensor<32xf32>) scale 0.33333333333333331
  %logits = transformer.output_head %y, %head bias(%hb : tensor<32xf32>) scale 0.3333333333333333 : tensor<?x8x16xf32>, tensor<32x16xf32> -> tensor<?x8x32xf32>
  // CHECK: transformer.cross_entropy %{{.+}}, %labels scaling batch_size weight 4.8828125E-4
  %loss = transformer.cross_entropy %logits, %labels scaling batch_size weight 0.00048828125 : tensor<?x8x32xf32>, tensor<?x8xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// The other micro-batch forms.
// CHECK-LABEL: transformer.train_step @fixed_micro_batch
// CHECK-SAME:    micro_batch = #training.micro_batch<4>
// CHECK-LABEL: transformer.train_step @no_micro_batch
// CHECK-SAME:    micro_batch = #training.micro_batch<none>
// CHECK-LABEL: transformer.train_step @unbounded_explore
// CHECK-SAME:    micro_batch = #training.micro_batch<explore>

transformer.train_step @fixed_micro_batch(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {
    global_batch = 8 : i64, num_csx = 1 : i64, seq_len = 4 : i64,
    micro_batch = #training.micro_batch<4>,
    optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>,
    schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>],
    max_gradient_norm = 1.0 : f64,
    precision = #training.precision<storage = f32, accumulate = f32>} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %wqkv = transformer.weight "h.0.attn.qkv.weight" layer 0 : tensor<8x24xf32>
  %wo = transformer.weight "h.0.attn.proj.weight" layer 0 : tensor<8x8xf32>
  %a = transformer.attention %x qkv(%wqkv) out(%wo) heads 1 head_size 8 scaling inv_sqrt_head_size
      : (tensor<?x4x8xf32>, tensor<8x24xf32>, tensor<8x8xf32>) -> tensor<?x4x8xf32>
  %logits = transformer.output_head %a, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

transformer.train_step @no_micro_batch(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {
    global_batch = 8 : i64, num_csx = 1 : i64, seq_len = 4 : i64,
    micro_batch = #training.micro_batch<none>,
    optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>,
    schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>],
    max_gradient_norm = 1.0 : f64,
    precision = #training.precision<storage = f32, accumulate = f32>} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %wqkv = transformer.weight "h.0.attn.qkv.weight" layer 0 : tensor<8x24xf32>
  %wo = transformer.weight "h.0.attn.proj.weight" layer 0 : tensor<8x8xf32>
  %a = transformer.attention %x qkv(%wqkv) out(%wo) heads 1 head_size 8 scaling inv_sqrt_head_size
      : (tensor<?x4x8xf32>, tensor<8x24xf32>, tensor<8x8xf32>) -> tensor<?x4x8xf32>
  %logits = transformer.output_head %a, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

transformer.train_step @unbounded_explore(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {
    global_batch = 8 : i64, num_csx = 1 : i64, seq_len = 4 : i64,
    micro_batch = #training.micro_batch<explore>,
    optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>,
    schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>],
    max_gradient_norm = 1.0 : f64,
    precision = #training.precision<storage = f32, accumulate = f32>} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %wqkv = transformer.weight "h.0.attn.qkv.weight" layer 0 : tensor<8x24xf32>
  %wo = transformer.weight "h.0.attn.proj.weight" layer 0 : tensor<8x8xf32>
  %a = transformer.attention %x qkv(%wqkv) out(%wo) heads 1 head_size 8 scaling inv_sqrt_head_size
      : (tensor<?x4x8xf32>, tensor<8x24xf32>, tensor<8x8xf32>) -> tensor<?x4x8xf32>
  %logits = transformer.output_head %a, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}
