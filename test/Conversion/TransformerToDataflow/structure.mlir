// RUN: cgpt-opt %S/Inputs/one-layer.mlir --convert-transformer-to-dataflow=recompute=none | FileCheck %s

// Stages run embed, each layer forward, the loss turn-around, each layer
// backward in reverse, embed backward; the optimizer runs on the weight
// servers after the loop.
// CHECK:       dataflow.program @one attributes {global_batch = 2 : i64, micro_batch = #training.micro_batch<auto>, num_csx = 1 : i64, recompute = #dataflow<recompute none>, seq_len = 4 : i64}
// CHECK:         dataflow.micro_batch_loop(%tokens: !dataflow.stream<tensor<?x4xi32>>, %labels: !dataflow.stream<tensor<?x4xi32>>) attributes {grad_accum_steps = 0 : i64, micro_batch = 0 : i64}
// CHECK:           dataflow.stage "embed" forward
// CHECK:           dataflow.stage "h.0" forward layer 0
// CHECK:           dataflow.stage "head" loss
// CHECK:           dataflow.stage "h.0" backward layer 0
// CHECK:           dataflow.stage "embed" backward
// CHECK:         dataflow.optimizer_step {max_gradient_norm = 0.000000e+00 : f64, optimizer = #training.adamw<beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-06, weight_decay = 0.0>, parameters = 1048 : i64, schedule = [#training.lr_phase<kind = constant, start = 0.0006, end = 0.0006, steps = 0>]}

// A layer's weights stream in for its forward stage and again for its
// backward stage; each leaves once, as a gradient.
// RUN: cgpt-opt %S/Inputs/one-layer.mlir --convert-transformer-to-dataflow | FileCheck %s --check-prefix=STREAMS
// STREAMS-LABEL: dataflow.stage "h.0" forward
// STREAMS:         weight_in "h.0.attn.qkv.weight"
// STREAMS-NOT:     grad_out
// STREAMS-LABEL: dataflow.stage "head" loss
// STREAMS-LABEL: dataflow.stage "h.0" backward
// STREAMS:         weight_in "h.0.attn.qkv.weight"
// STREAMS:         grad_out "h.0.attn.qkv.weight"
// STREAMS-NOT:     grad_out "h.0.attn.qkv.weight"

// What it rejects: a step without a decoder layer.
// RUN: cgpt-opt %S/Inputs/no-layer.mlir --convert-transformer-to-dataflow -verify-diagnostics
// RUN: cgpt-opt %S/Inputs/late-embedding.mlir --convert-transformer-to-dataflow -verify-diagnostics
