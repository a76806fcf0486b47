// RUN: cgpt-opt %cgpt_src/models/moe-tiny.yaml --convert-transformer-to-dataflow=recompute=none | FileCheck %s
// RUN: cgpt-opt %cgpt_src/models/moe-tiny.yaml --convert-transformer-to-dataflow=recompute=layer | FileCheck %s --check-prefix=LAYER

// A transformer.moe (4 experts, 2 per token, SwiGLU, balance 0.02 over 2
// layers and a global batch of 16: 6.25e-4 a sequence) lowers to the
// router, its balance loss, dispatch, three expert products and the
// weighted combine.
// CHECK-LABEL: dataflow.stage "h.0" forward
// CHECK:         %[[R:.+]] = dataflow.weight_in "h.0.moe.router.weight" bytes 1024
// CHECK:         %[[W:.+]], %[[E:.+]], %[[P:.+]] = dataflow.route %{{.+}}, %[[R]] {router_f32, top_k = 2 : i64}
// CHECK-SAME:      -> (!dataflow.stream<tensor<?x64x2xf32>>, !dataflow.stream<tensor<?x64x2xi32>>, !dataflow.stream<tensor<?x64x4xf32>>)
// CHECK:         %[[L:.+]] = dataflow.balance_loss %[[P]], %[[E]] {scale = 6.250000e-04 : f64}
// CHECK:         dataflow.loss_out %[[L]]
// CHECK:         %[[D:.+]] = dataflow.dispatch %{{.+}}, %[[E]] : {{.*}} -> !dataflow.stream<tensor<?x128x64xf32>>
// CHECK:         dataflow.expert_matmul %[[D]], %{{.+}}, %[[E]] : {{.*}} -> !dataflow.stream<tensor<?x128x128xf32>>
// CHECK:         dataflow.expert_matmul %[[D]], %{{.+}}, %[[E]]
// CHECK:         dataflow.map silu
// CHECK:         dataflow.map mul
// CHECK:         %[[O:.+]] = dataflow.expert_matmul %{{.+}}, %{{.+}}, %[[E]] : {{.*}} -> !dataflow.stream<tensor<?x128x64xf32>>
// CHECK:         dataflow.combine %[[O]] weights %[[W]] : {{.*}} -> !dataflow.stream<tensor<?x64x64xf32>>

// Backward, by hand: the combine's two gradients, each expert weight's
// gradient before its input's, the routed rows summed back to tokens, and
// the router's logits' gradient with the balance loss's share.
// CHECK-LABEL: dataflow.stage "h.1" backward
// CHECK:         %[[DO:.+]], %[[DW:.+]] = dataflow.combine_grad
// CHECK:         dataflow.expert_weight_grad %{{.+}}, %[[DO]], %{{.+}} : {{.*}} -> !dataflow.stream<tensor<4x128x64xf32>>
// CHECK:         dataflow.grad_out "h.1.moe.experts.proj.weight"
// CHECK:         dataflow.expert_matmul %[[DO]], %{{.+}}, %{{.+}} {transpose_rhs}
// CHECK:         dataflow.grad_out "h.1.moe.experts.gate.weight"
// CHECK:         dataflow.grad_out "h.1.moe.experts.fc.weight"
// CHECK:         dataflow.combine %{{.+}} : (!dataflow.stream<tensor<?x128x64xf32>>) -> !dataflow.stream<tensor<?x64x64xf32>>
// CHECK:         %[[DZ:.+]] = dataflow.route_grad %{{.+}}, %{{.+}}, %{{.+}}, %[[DW]] {balance_scale = 6.250000e-04 : f64}
// CHECK:         dataflow.matmul %{{.+}}, %[[DZ]] {reduce_batch, transpose_lhs}
// CHECK:         dataflow.grad_out "h.1.moe.router.weight"

// Recomputing a layer reruns the router but adds its balance loss once:
// two loss_out per layer would count it twice.
// LAYER-COUNT-2: dataflow.balance_loss
// LAYER-NOT:     dataflow.balance_loss
