// RUN: cgpt-opt %S/Inputs/one-layer.mlir --convert-transformer-to-dataflow=recompute=none | FileCheck %s
// RUN: cgpt-opt %S/Inputs/one-layer-gptj.mlir --convert-transformer-to-dataflow=recompute=none | FileCheck %s --check-prefix=GPTJ

// A tied head reads the token embedding: it streams in for the turn-around
// stage, and its gradient leaves as a second "wte" gradient (the weight
// servers add the two).
// CHECK-LABEL: dataflow.stage "head" loss
// CHECK:         %[[W:.+]] = dataflow.weight_in "wte" bytes 512 : <tensor<16x8xf32>>
// CHECK:         %[[L:.+]] = dataflow.matmul %[[H:.+]], %[[W]] {transpose_rhs} : {{.*}} -> !dataflow.stream<tensor<?x4x16xf32>>
// CHECK:         %[[DL:.+]] = dataflow.cross_entropy_grad %[[L]]
// CHECK:         dataflow.matmul %[[DL]], %[[W]] : {{.*}} -> !dataflow.stream<tensor<?x4x8xf32>>
// CHECK:         %[[DW:.+]] = dataflow.matmul %[[DL]], %[[H]] {reduce_batch, transpose_lhs} : {{.*}} -> !dataflow.stream<tensor<16x8xf32>>
// CHECK:         dataflow.grad_out "wte", %[[DW]] bytes 512
// CHECK-LABEL: dataflow.stage "embed" backward
// CHECK:         dataflow.grad_out "wte"

// An untied head has its own weight and here a bias and muP's logit scale.
// GPTJ-LABEL: dataflow.stage "head" loss
// GPTJ:         %[[W:.+]] = dataflow.weight_in "lm_head.weight" bytes 512
// GPTJ:         %[[B:.+]] = dataflow.weight_in "lm_head.bias" bytes 64
// GPTJ:         dataflow.matmul %{{.+}}, %[[W]] bias %[[B]] {scale = 5.000000e-01 : f64, transpose_rhs}
// GPTJ:         dataflow.matmul %{{.+}}, %[[W]] {scale = 5.000000e-01 : f64}
// GPTJ:         dataflow.matmul %{{.+}}, %{{.+}} {reduce_batch, scale = 5.000000e-01 : f64, transpose_lhs}
// GPTJ:         dataflow.grad_out "lm_head.weight"
// GPTJ:         dataflow.sum_batch
// GPTJ:         dataflow.grad_out "lm_head.bias", %{{.+}} bytes 64
