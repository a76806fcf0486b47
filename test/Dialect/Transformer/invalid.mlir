// RUN: cgpt-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

// Every verifier rule of the transformer dialect, one case each.

// expected-error @+1 {{global_batch must be 1 to 16777216, got 0}}
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 0 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

// RUN: cgpt-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

// Every verifier rule of the transformer dialect, one case each.

// expected-error @+1 {{global_batch must be 1 to 16777216, got -8}}
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = -8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

// expected-error @+1 {{num_csx must be positive, got 0}}
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 0 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

// expected-error @+1 {{global_batch (2) is smaller than num_csx (3): every system needs a sequence}}
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 2 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 3 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

// expected-error @+1 {{max_gradient_norm must be non-negative (0 disables clipping), got -1.0}}
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = -1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

// expected-error @+1 {{schedule must have at least one lr_phase}}
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

// expected-error @+1 {{lr_phase #0 has steps = 0 (until the end) but is not the last phase}}
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>, #training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

// expected-error @+1 {{body argument #0 must be tensor<?x4xi32> (batch symbolic, seq_len 4), got 'tensor<2x4xi32>'}}
transformer.train_step @s(%tokens: tensor<2x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<2x4xi32>, tensor<16x8xf32> -> tensor<2x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<2x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

// expected-error @+1 {{body argument #0 must be tensor<?x5xi32> (batch symbolic, seq_len 5), got 'tensor<?x4xi32>'}}
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 5 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  // expected-note @below {{first declared here}}
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  // expected-error @below {{redeclares weight 'wte'}}
  %dup = transformer.weight "wte" : tensor<16x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = bf16, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  // expected-error @below {{weight 'wte' stores 'f32' but the step's storage type is 'bf16'}}
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, mup = #training.mup<embeddings_scale = 10.0, output_logits_scale = 1.0, decoder_kernel_lr_scale = 1.0>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  // expected-error @below {{scale must equal the step's mup embeddings_scale (10.0)}}
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, mup = #training.mup<embeddings_scale = 1.0, output_logits_scale = 0.5, decoder_kernel_lr_scale = 1.0>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  // expected-error @below {{scale must equal the step's mup output_logits_scale (0.5)}}
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

// expected-error @+1 {{body must end with transformer.yield}}
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  "test.terminator"() : () -> ()
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  // expected-error @below {{weight name must not be empty}}
  %w = transformer.weight "" : tensor<4xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  // expected-error @below {{weight 'w' must have a static shape, got [?, 4]}}
  %w = transformer.weight "w" : tensor<?x4xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  // expected-error @below {{weight 'w' has an empty dimension in shape [0, 4]}}
  %w = transformer.weight "w" : tensor<0x4xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  // expected-error @below {{weight 'w' has a negative layer index -1}}
  %w = transformer.weight "w" layer -1 : tensor<4xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  // expected-error @below {{result has shape [?, 4, 6] but tokens [?, 4] and table [16, 8] requires [?, 4, 8]}}
  %y = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x6xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %t = transformer.weight "t" : tensor<16x8xf32>
  // expected-error @below {{mixes element types 'f32' and 'f16'; all tensors of one op share the storage type}}
  %y = transformer.token_embedding %tokens, %t : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf16>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  // expected-error @below {{scale must be positive, got -1.0}}
  %y = transformer.token_embedding %tokens, %wte scale -1.0 : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %wpe = transformer.weight "wpe" : tensor<4x6xf32>
  // expected-error @below {{table has shape [4, 6] but the input's feature size is 8}}
  %p = transformer.position_embedding %x, %wpe : tensor<?x4x8xf32>, tensor<4x6xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %wpe = transformer.weight "wpe" : tensor<2x8xf32>
  // expected-error @below {{table holds 2 positions but the sequence has 4}}
  %p = transformer.position_embedding %x, %wpe : tensor<?x4x8xf32>, tensor<2x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  // expected-error @below {{dim must be positive and even, got 3}}
  %r = transformer.rotary_embedding dim 3 base 10000.0 : tensor<4x1x2xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  // expected-error @below {{base must be greater than 1, got 1.0}}
  %r = transformer.rotary_embedding dim 4 base 1.0 : tensor<4x2x2xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  // expected-error @below {{result has shape [4, 3, 2] but dim 4 requires [seq_len, 2, 2] with a static seq_len}}
  %r = transformer.rotary_embedding dim 4 base 10000.0 : tensor<4x3x2xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %g = transformer.weight "g" : tensor<6xf32>
  %b = transformer.weight "b" : tensor<6xf32>
  // expected-error @below {{gamma has shape [6] but feature size 8 requires [8]}}
  %n = transformer.layer_norm %x, %g, %b eps 1.0e-5 : tensor<?x4x8xf32>, tensor<6xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %g = transformer.weight "g" : tensor<8xf32>
  %b = transformer.weight "b" : tensor<8xf32>
  // expected-error @below {{epsilon must be positive, got 0.0}}
  %n = transformer.layer_norm %x, %g, %b eps 0.0 : tensor<?x4x8xf32>, tensor<8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %wqkv = transformer.weight "wqkv" : tensor<8x24xf32>
  %wo = transformer.weight "wo" : tensor<8x8xf32>
  // expected-error @below {{num_heads and head_size must be positive, got 0 and 4}}
  %a = transformer.attention %x qkv(%wqkv) out(%wo) heads 0 head_size 4 scaling inv_sqrt_head_size : (tensor<?x4x8xf32>, tensor<8x24xf32>, tensor<8x8xf32>) -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %wqkv = transformer.weight "wqkv" : tensor<8x16xf32>
  %wo = transformer.weight "wo" : tensor<8x8xf32>
  // expected-error @below {{qkv_weight has shape [8, 16] but 2 heads of size 4 on d_model 8 requires [8, 24]}}
  %a = transformer.attention %x qkv(%wqkv) out(%wo) heads 2 head_size 4 scaling inv_sqrt_head_size : (tensor<?x4x8xf32>, tensor<8x16xf32>, tensor<8x8xf32>) -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %wqkv = transformer.weight "wqkv" : tensor<8x24xf32>
  %wo = transformer.weight "wo" : tensor<4x8xf32>
  // expected-error @below {{out_weight has shape [4, 8] but 2 heads of size 4 on d_model 8 requires [8, 8]}}
  %a = transformer.attention %x qkv(%wqkv) out(%wo) heads 2 head_size 4 scaling inv_sqrt_head_size : (tensor<?x4x8xf32>, tensor<8x24xf32>, tensor<4x8xf32>) -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %wqkv = transformer.weight "wqkv" : tensor<8x24xf32>
  %wo = transformer.weight "wo" : tensor<8x8xf32>
  %bq = transformer.weight "bq" : tensor<16xf32>
  // expected-error @below {{qkv_bias has shape [16] but 2 heads of size 4 on d_model 8 requires [24]}}
  %a = transformer.attention %x qkv(%wqkv, %bq) out(%wo) heads 2 head_size 4 scaling inv_sqrt_head_size : (tensor<?x4x8xf32>, tensor<8x24xf32>, tensor<16xf32>, tensor<8x8xf32>) -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %wqkv = transformer.weight "wqkv" : tensor<8x24xf32>
  %wo = transformer.weight "wo" : tensor<8x8xf32>
  %bo = transformer.weight "bo" : tensor<4xf32>
  // expected-error @below {{out_bias has shape [4] but 2 heads of size 4 on d_model 8 requires [8]}}
  %a = transformer.attention %x qkv(%wqkv) out(%wo, %bo) heads 2 head_size 4 scaling inv_sqrt_head_size : (tensor<?x4x8xf32>, tensor<8x24xf32>, tensor<8x8xf32>, tensor<4xf32>) -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %wqkv = transformer.weight "wqkv" : tensor<8x24xf32>
  %wo = transformer.weight "wo" : tensor<8x8xf32>
  %rope = transformer.rotary_embedding dim 6 base 10000.0 : tensor<4x3x2xf32>
  // expected-error @below {{rotary embedding rotates 6 channels but head_size is only 4}}
  %a = transformer.attention %x qkv(%wqkv) out(%wo) rotary(%rope) heads 2 head_size 4 scaling inv_sqrt_head_size : (tensor<?x4x8xf32>, tensor<8x24xf32>, tensor<8x8xf32>, tensor<4x3x2xf32>) -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %wqkv = transformer.weight "wqkv" : tensor<8x24xf32>
  %wo = transformer.weight "wo" : tensor<8x8xf32>
  %rope = transformer.rotary_embedding dim 4 base 10000.0 : tensor<2x2x2xf32>
  // expected-error @below {{rotary embedding covers 2 positions but the sequence has 4}}
  %a = transformer.attention %x qkv(%wqkv) out(%wo) rotary(%rope) heads 2 head_size 4 scaling inv_sqrt_head_size : (tensor<?x4x8xf32>, tensor<8x24xf32>, tensor<8x8xf32>, tensor<2x2x2xf32>) -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %w1 = transformer.weight "w1" : tensor<6x32xf32>
  %w2 = transformer.weight "w2" : tensor<32x8xf32>
  // expected-error @below {{up_weight has shape [6, 32] but d_model is 8}}
  %f = transformer.ffn %x up(%w1) down(%w2) activation gelu : (tensor<?x4x8xf32>, tensor<6x32xf32>, tensor<32x8xf32>) -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %w1 = transformer.weight "w1" : tensor<8x32xf32>
  %w2 = transformer.weight "w2" : tensor<16x8xf32>
  // expected-error @below {{down_weight has shape [16, 8] but d_model 8 and d_ffn 32 requires [32, 8]}}
  %f = transformer.ffn %x up(%w1) down(%w2) activation gelu : (tensor<?x4x8xf32>, tensor<8x32xf32>, tensor<16x8xf32>) -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %w1 = transformer.weight "w1" : tensor<8x32xf32>
  %w2 = transformer.weight "w2" : tensor<32x8xf32>
  %b1 = transformer.weight "b1" : tensor<16xf32>
  // expected-error @below {{up_bias has shape [16] but d_model 8 and d_ffn 32 requires [32]}}
  %f = transformer.ffn %x up(%w1, %b1) down(%w2) activation gelu : (tensor<?x4x8xf32>, tensor<8x32xf32>, tensor<16xf32>, tensor<32x8xf32>) -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %w1 = transformer.weight "w1" : tensor<8x32xf32>
  %w2 = transformer.weight "w2" : tensor<32x8xf32>
  %b2 = transformer.weight "b2" : tensor<4xf32>
  // expected-error @below {{down_bias has shape [4] but d_model 8 and d_ffn 32 requires [8]}}
  %f = transformer.ffn %x up(%w1) down(%w2, %b2) activation gelu : (tensor<?x4x8xf32>, tensor<8x32xf32>, tensor<32x8xf32>, tensor<4xf32>) -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %h = transformer.weight "h" : tensor<16x6xf32>
  // expected-error @below {{weight has shape [16, 6] but the input's feature size is 8 (the head weight is [vocab, d_model])}}
  %o = transformer.output_head %x, %h : tensor<?x4x8xf32>, tensor<16x6xf32> -> tensor<?x4x16xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %h = transformer.weight "h" : tensor<16x8xf32>
  // expected-error @below {{result has shape [?, 4, 12] but input [?, 4, 8] and weight [16, 8] requires [?, 4, 16]}}
  %o = transformer.output_head %x, %h : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x12xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %h = transformer.weight "h" : tensor<16x8xf32>
  %hb = transformer.weight "hb" : tensor<8xf32>
  // expected-error @below {{bias has shape [8] but input [?, 4, 8] and weight [16, 8] requires [16]}}
  %o = transformer.output_head %x, %h bias(%hb : tensor<8xf32>) : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %h = transformer.weight "h" : tensor<16x8xf32>
  // expected-error @below {{is marked tied but its weight is not the token embedding table}}
  %o = transformer.output_head %x, %h tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  // expected-error @below {{uses the token embedding table but is not marked tied}}
  %logits = transformer.output_head %x, %wte : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  // expected-error @below {{scale must be positive, got 0.0}}
  %logits = transformer.output_head %x, %wte tied scale 0.0 : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  // expected-error @below {{weight must be positive, got 0.0}}
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 0.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

// expected-error @+1 {{adamw beta1 must be in [0, 1), got 1.0}}
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 1.0, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

// expected-error @+1 {{adamw beta2 must be in [0, 1), got -0.5}}
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = -0.5, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

// expected-error @+1 {{adamw epsilon must be positive, got 0.0}}
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 0.0, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

// expected-error @+1 {{adamw weight_decay must be non-negative, got -0.1}}
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = -0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

// expected-error @+1 {{a constant lr_phase must have start == end, got 0.001 and 0.002}}
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.002, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

// expected-error @+1 {{learning rates must be non-negative, got start -0.001 and end 0.002}}
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = linear, start = -0.001, end = 0.002, steps = 5>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

// expected-error @+1 {{lr_phase steps must be non-negative, got -5}}
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = linear, start = 0.001, end = 0.002, steps = -5>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

// expected-error @+1 {{precision types must be floats, got storage 'i16' and accumulate 'f32'}}
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = i16, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

// expected-error @+1 {{accumulate type 'bf16' is narrower than storage type 'f32'}}
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = bf16>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

// expected-error @+1 {{mup multipliers must be positive, got embeddings_scale 0.0, output_logits_scale 1.0, decoder_kernel_lr_scale 1.0}}
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, mup = #training.mup<embeddings_scale = 0.0, output_logits_scale = 1.0, decoder_kernel_lr_scale = 1.0>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

// expected-error @+1 {{micro-batch size must be positive, got 0}}
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<0>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

// expected-error @+1 {{micro-batch explore range must satisfy 0 <= min <= max (0 = unbounded), got 8 to 2}}
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<explore 8 to 2>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

// expected-error @+1 {{expected an integer, 'auto', 'explore' or 'none', got 'sometimes'}}
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<sometimes>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %short = "test.labels"() : () -> tensor<?x3xi32>
  // expected-error @below {{labels has shape [?, 3] but logits [?, 4, 16] requires [?, 4]}}
  %loss = transformer.cross_entropy %logits, %short scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x3xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %g = transformer.weight "g" : tensor<6xf32>
  // expected-error @below {{gamma has shape [6] but feature size 8 requires [8]}}
  %n = transformer.rms_norm %x, %g eps 1.0e-5 : tensor<?x4x8xf32>, tensor<6xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %g = transformer.weight "g" : tensor<8xf32>
  // expected-error @below {{epsilon must be positive, got -1.0}}
  %n = transformer.rms_norm %x, %g eps -1.0 : tensor<?x4x8xf32>, tensor<8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %wqkv = transformer.weight "qkv" : tensor<8x16xf32>
  %wo = transformer.weight "o" : tensor<8x8xf32>
  // expected-error @below {{kv_heads must divide num_heads 4, got 3}}
  %a = transformer.attention %x qkv(%wqkv) out(%wo) heads 4 kv_heads 3 head_size 2 scaling inv_sqrt_head_size  : (tensor<?x4x8xf32>, tensor<8x16xf32>, tensor<8x8xf32>) -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %wqkv = transformer.weight "qkv" : tensor<8x24xf32>
  %wo = transformer.weight "o" : tensor<8x8xf32>
  // expected-error @below {{qkv_weight has shape [8, 24] but 4 heads of size 2 on d_model 8 with 2 key/value heads requires [8, 16]}}
  %a = transformer.attention %x qkv(%wqkv) out(%wo) heads 4 kv_heads 2 head_size 2 scaling inv_sqrt_head_size  : (tensor<?x4x8xf32>, tensor<8x24xf32>, tensor<8x8xf32>) -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %up = transformer.weight "up" : tensor<8x12xf32>
  %gate = transformer.weight "gate" : tensor<8x10xf32>
  %down = transformer.weight "down" : tensor<12x8xf32>
  // expected-error @below {{gate_weight has shape [8, 10] but d_model 8 and d_ffn 12 requires [8, 12]}}
  %f = transformer.ffn %x up(%up) gate(%gate) down(%down) activation silu : (tensor<?x4x8xf32>, tensor<8x12xf32>, tensor<8x10xf32>, tensor<12x8xf32>) -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

// Dropout: a rate in [0, 1), a site of its own.
transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  // expected-error @below {{dropout rate must be in [0, 1), got 1}}
  %d = transformer.dropout %x rate 1.0 site 0 : tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  // expected-error @below {{site must be non-negative, got -1}}
  %d = transformer.dropout %x rate 0.1 site -1 : tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %wqkv = transformer.weight "wqkv" : tensor<8x24xf32>
  %wo = transformer.weight "wo" : tensor<8x8xf32>
  // expected-error @below {{dropout rate must be in [0, 1), got -0.5}}
  %a = transformer.attention %x qkv(%wqkv) out(%wo) heads 2 head_size 4 scaling inv_sqrt_head_size dropout -0.5 site 0 : (tensor<?x4x8xf32>, tensor<8x24xf32>, tensor<8x8xf32>) -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %wqkv = transformer.weight "wqkv" : tensor<8x24xf32>
  %wo = transformer.weight "wo" : tensor<8x8xf32>
  // expected-error @below {{takes a dropout rate and its site together}}
  %a = transformer.attention %x qkv(%wqkv) out(%wo) heads 2 head_size 4 scaling inv_sqrt_head_size {dropout_site = 3 : i64} : (tensor<?x4x8xf32>, tensor<8x24xf32>, tensor<8x8xf32>) -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  // expected-note @below {{site 2 is here}}
  %d = transformer.dropout %x rate 0.1 site 2 : tensor<?x4x8xf32>
  // expected-error @below {{uses dropout site 2, which another op already draws from}}
  %e = transformer.dropout %d rate 0.1 site 2 : tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}

// -----

transformer.train_step @s(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %wqkv = transformer.weight "wqkv" : tensor<8x24xf32>
  %wo = transformer.weight "wo" : tensor<8x8xf32>
  // expected-error @below {{logits_alpha must be positive and finite, got 0}}
  %a = transformer.attention %x qkv(%wqkv) out(%wo) heads 2 head_size 4 scaling inv_sqrt_head_size alpha 0.0 : (tensor<?x4x8xf32>, tensor<8x24xf32>, tensor<8x8xf32>) -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}
