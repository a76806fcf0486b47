// one-layer.mlir with dropout at every site: the embeddings (site 0), the
// probabilities (site 1, rate 0.2) and both blocks' outputs (sites 2, 3).
module {
  transformer.train_step @one(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 2 : i64, max_gradient_norm = 0.000000e+00 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-06, weight_decay = 0.0>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.0006, end = 0.0006, steps = 0>], seq_len = 4 : i64} {
    %wte = transformer.weight "wte" : tensor<16x8xf32>
    %0 = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
    %wpe = transformer.weight "wpe" : tensor<4x8xf32>
    %e = transformer.position_embedding %0, %wpe : tensor<?x4x8xf32>, tensor<4x8xf32>
    %1 = transformer.dropout %e rate 1.000000e-01 site 0 : tensor<?x4x8xf32>
    %h.0.ln_1.weight = transformer.weight "h.0.ln_1.weight" layer 0 : tensor<8xf32>
    %h.0.ln_1.bias = transformer.weight "h.0.ln_1.bias" layer 0 : tensor<8xf32>
    %2 = transformer.layer_norm %1, %h.0.ln_1.weight, %h.0.ln_1.bias eps 1.000000e-05 : tensor<?x4x8xf32>, tensor<8xf32>
    %h.0.attn.qkv.weight = transformer.weight "h.0.attn.qkv.weight" layer 0 : tensor<8x24xf32>
    %h.0.attn.qkv.bias = transformer.weight "h.0.attn.qkv.bias" layer 0 : tensor<24xf32>
    %h.0.attn.proj.weight = transformer.weight "h.0.attn.proj.weight" layer 0 : tensor<8x8xf32>
    %h.0.attn.proj.bias = transformer.weight "h.0.attn.proj.bias" layer 0 : tensor<8xf32>
    %3 = transformer.attention %2 qkv(%h.0.attn.qkv.weight, %h.0.attn.qkv.bias) out(%h.0.attn.proj.weight, %h.0.attn.proj.bias) heads 2 head_size 4 scaling inv_sqrt_head_size dropout 2.000000e-01 site 1 : (tensor<?x4x8xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x4x8xf32>
    %d3 = transformer.dropout %3 rate 1.000000e-01 site 2 : tensor<?x4x8xf32>
    %4 = transformer.residual_add %1, %d3 : tensor<?x4x8xf32>
    %h.0.ln_2.weight = transformer.weight "h.0.ln_2.weight" layer 0 : tensor<8xf32>
    %h.0.ln_2.bias = transformer.weight "h.0.ln_2.bias" layer 0 : tensor<8xf32>
    %5 = transformer.layer_norm %4, %h.0.ln_2.weight, %h.0.ln_2.bias eps 1.000000e-05 : tensor<?x4x8xf32>, tensor<8xf32>
    %h.0.mlp.fc.weight = transformer.weight "h.0.mlp.fc.weight" layer 0 : tensor<8x32xf32>
    %h.0.mlp.fc.bias = transformer.weight "h.0.mlp.fc.bias" layer 0 : tensor<32xf32>
    %h.0.mlp.proj.weight = transformer.weight "h.0.mlp.proj.weight" layer 0 : tensor<32x8xf32>
    %h.0.mlp.proj.bias = transformer.weight "h.0.mlp.proj.bias" layer 0 : tensor<8xf32>
    %6 = transformer.ffn %5 up(%h.0.mlp.fc.weight, %h.0.mlp.fc.bias) down(%h.0.mlp.proj.weight, %h.0.mlp.proj.bias) activation gelu : (tensor<?x4x8xf32>, tensor<8x32xf32>, tensor<32xf32>, tensor<32x8xf32>, tensor<8xf32>) -> tensor<?x4x8xf32>
    %d6 = transformer.dropout %6 rate 1.000000e-01 site 3 : tensor<?x4x8xf32>
    %7 = transformer.residual_add %4, %d6 : tensor<?x4x8xf32>
    %ln_f.weight = transformer.weight "ln_f.weight" : tensor<8xf32>
    %ln_f.bias = transformer.weight "ln_f.bias" : tensor<8xf32>
    %8 = transformer.layer_norm %7, %ln_f.weight, %ln_f.bias eps 1.000000e-05 : tensor<?x4x8xf32>, tensor<8xf32>
    %9 = transformer.output_head %8, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
    %10 = transformer.cross_entropy %9, %labels scaling num_tokens weight 1.000000e+00 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
    transformer.yield %10 : tensor<f32>
  }
}

