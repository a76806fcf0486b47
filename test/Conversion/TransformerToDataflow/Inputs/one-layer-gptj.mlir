// A one-layer GPT-J style step: rotary, parallel block, untied head with a
// bias, no attention biases, muP, ReLU.
module {
  transformer.train_step @gj(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 2 : i64, max_gradient_norm = 0.000000e+00 : f64, micro_batch = #training.micro_batch<auto>, mup = #training.mup<embeddings_scale = 10.0, output_logits_scale = 0.5, decoder_kernel_lr_scale = 1.0>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-06, weight_decay = 0.0>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
    %wte = transformer.weight "wte" : tensor<16x8xf32>
    %0 = transformer.token_embedding %tokens, %wte scale 1.000000e+01 : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
    %1 = transformer.rotary_embedding dim 2 base 1.000000e+04 : tensor<4x1x2xf32>
    %h.0.ln_1.weight = transformer.weight "h.0.ln_1.weight" layer 0 : tensor<8xf32>
    %h.0.ln_1.bias = transformer.weight "h.0.ln_1.bias" layer 0 : tensor<8xf32>
    %2 = transformer.layer_norm %0, %h.0.ln_1.weight, %h.0.ln_1.bias eps 1.000000e-05 : tensor<?x4x8xf32>, tensor<8xf32>
    %h.0.attn.qkv.weight = transformer.weight "h.0.attn.qkv.weight" layer 0 : tensor<8x24xf32>
    %h.0.attn.proj.weight = transformer.weight "h.0.attn.proj.weight" layer 0 : tensor<8x8xf32>
    %3 = transformer.attention %2 qkv(%h.0.attn.qkv.weight) out(%h.0.attn.proj.weight) rotary(%1) heads 2 head_size 4 scaling inv_head_size : (tensor<?x4x8xf32>, tensor<8x24xf32>, tensor<8x8xf32>, tensor<4x1x2xf32>) -> tensor<?x4x8xf32>
    %h.0.mlp.fc.weight = transformer.weight "h.0.mlp.fc.weight" layer 0 : tensor<8x32xf32>
    %h.0.mlp.fc.bias = transformer.weight "h.0.mlp.fc.bias" layer 0 : tensor<32xf32>
    %h.0.mlp.proj.weight = transformer.weight "h.0.mlp.proj.weight" layer 0 : tensor<32x8xf32>
    %h.0.mlp.proj.bias = transformer.weight "h.0.mlp.proj.bias" layer 0 : tensor<8xf32>
    %4 = transformer.ffn %2 up(%h.0.mlp.fc.weight, %h.0.mlp.fc.bias) down(%h.0.mlp.proj.weight, %h.0.mlp.proj.bias) activation relu : (tensor<?x4x8xf32>, tensor<8x32xf32>, tensor<32xf32>, tensor<32x8xf32>, tensor<8xf32>) -> tensor<?x4x8xf32>
    %5 = transformer.residual_add %0, %3 : tensor<?x4x8xf32>
    %6 = transformer.residual_add %5, %4 : tensor<?x4x8xf32>
    %ln_f.weight = transformer.weight "ln_f.weight" : tensor<8xf32>
    %ln_f.bias = transformer.weight "ln_f.bias" : tensor<8xf32>
    %7 = transformer.layer_norm %6, %ln_f.weight, %ln_f.bias eps 1.000000e-05 : tensor<?x4x8xf32>, tensor<8xf32>
    %lm_head.weight = transformer.weight "lm_head.weight" : tensor<16x8xf32>
    %lm_head.bias = transformer.weight "lm_head.bias" : tensor<16xf32>
    %8 = transformer.output_head %7, %lm_head.weight bias(%lm_head.bias : tensor<16xf32>) scale 5.000000e-01 : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
    %9 = transformer.cross_entropy %8, %labels scaling num_tokens weight 1.000000e+00 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
    transformer.yield %9 : tensor<f32>
  }
}

