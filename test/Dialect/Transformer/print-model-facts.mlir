// One RUN line from a Model Zoo params file to transformer IR and a pass.
// RUN: cgpt-opt %cgpt_src/models/cerebras-gpt-111m.yaml --transformer-print-model-facts -o /dev/null | FileCheck %s --check-prefix=M111
// M111: model cerebras_gpt_111m: parameters 111050496, layers 10, hidden 768, heads 12x64, ffn 3072, vocab 50257, seq 2048, batch 120 on 1 system(s)
// RUN: cgpt-opt %cgpt_src/models/cerebras-gpt-13b.yaml --transformer-print-model-facts -o /dev/null | FileCheck %s --check-prefix=M13B
// M13B: model cerebras_gpt_13b: parameters 12853386240, layers 40, hidden 5120, heads 40x128
// RUN: cgpt-opt %cgpt_src/models/tiny.yaml | FileCheck %s --check-prefix=IR
// IR: transformer.train_step @tiny(%tokens: tensor<?x64xi32>, %labels: tensor<?x64xi32>)

// What it rejects: a step that is not a GPT.
// RUN: cgpt-opt %s --transformer-print-model-facts -verify-diagnostics -o /dev/null

// expected-error @+1 {{is not a GPT: it needs a token_embedding, an attention and an ffn}}
transformer.train_step @empty(%tokens: tensor<?x4xi32>, %labels: tensor<?x4xi32>) attributes {global_batch = 8 : i64, max_gradient_norm = 1.0 : f64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1.0e-08, weight_decay = 0.1>, precision = #training.precision<storage = f32, accumulate = f32>, schedule = [#training.lr_phase<kind = constant, start = 0.001, end = 0.001, steps = 0>], seq_len = 4 : i64} {
  %wte = transformer.weight "wte" : tensor<16x8xf32>
  %x = transformer.token_embedding %tokens, %wte : tensor<?x4xi32>, tensor<16x8xf32> -> tensor<?x4x8xf32>
  %logits = transformer.output_head %x, %wte tied : tensor<?x4x8xf32>, tensor<16x8xf32> -> tensor<?x4x16xf32>
  %loss = transformer.cross_entropy %logits, %labels scaling num_tokens weight 1.0 : tensor<?x4x16xf32>, tensor<?x4xi32> -> tensor<f32>
  transformer.yield %loss : tensor<f32>
}
