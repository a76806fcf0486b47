// Steps convert-transformer-to-dataflow rejects (see structure.mlir).

// expected-error @+1 {{needs embeddings, at least one decoder layer and an output head to be lowered}}
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 2 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}
