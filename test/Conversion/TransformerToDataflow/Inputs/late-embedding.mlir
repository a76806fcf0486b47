// An embedding after a decoder layer cannot be placed in a stage.
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 2 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %w1 = transformer.weight "h.0.mlp.fc.weight" layer 0 : tensor<8x32xf32>
  %w2 = transformer.weight "h.0.mlp.proj.weight" layer 0 : tensor<32x8xf32>
  %f = transformer.ffn %x up(%w1) down(%w2) activation gelu : (tensor<?x4x8xf32>, tensor<8x32xf32>, tensor<32x8xf32>) -> tensor<?x4x8xf32>
  %wpe = transformer.weight "wpe" : tensor<4x8xf32>
  // expected-error @below {{comes after a decoder layer; embeddings must come first}}
  %p = transformer.position_embedding %f, %wpe : tensor<?x4x8xf32>, tensor<4x8xf32>
  %logits = transformer.output_head %p, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}
