// RUN: cgpt-opt %S/Inputs/one-layer.mlir --convert-transformer-to-dataflow=recompute=none | FileCheck %s
// RUN: cgpt-opt %S/Inputs/one-layer-gptj.mlir --convert-transformer-to-dataflow=recompute=none | FileCheck %s --check-prefix=GPTJ

// CHECK-LABEL: dataflow.stage "h.0" forward
// CHECK:         %[[W1:.+]] = dataflow.weight_in "h.0.mlp.fc.weight" bytes 1024
// CHECK:         %[[H:.+]] = dataflow.matmul %{{.+}}, %[[W1]] bias %{{.+}} : {{.*}} -> !dataflow.stream<tensor<?x4x32xf32>>
// CHECK:         %[[A:.+]] = dataflow.map gelu %[[H]] : (!dataflow.stream<tensor<?x4x32xf32>>) -> !dataflow.stream<tensor<?x4x32xf32>>
// CHECK:         %[[W2:.+]] = dataflow.weight_in "h.0.mlp.proj.weight" bytes 1024
// CHECK:         dataflow.matmul %[[A]], %[[W2]] bias %{{.+}} : {{.*}} -> !dataflow.stream<tensor<?x4x8xf32>>
// Backward: dW2 = A^T dY, dA = dY W2^T, dH = gelu'(H) dA, dW1 = X^T dH,
// dX = dH W1^T, bias gradients summed over tokens. Each weight gradient
// comes before its input's gradient, so that the activation it reads is
// dead before the input's gradient, as wide, is made.
// CHECK-LABEL: dataflow.stage "h.0" backward
// CHECK:         %[[FH:.+]] = dataflow.fetch %{{.+}}#13 : <tensor<?x4x32xf32>>
// CHECK:         %[[FA:.+]] = dataflow.fetch %{{.+}}#14 : <tensor<?x4x32xf32>>
// CHECK:         %[[W2B:.+]] = dataflow.weight_in "h.0.mlp.proj.weight"
// CHECK:         %[[DW2:.+]] = dataflow.matmul %[[FA]], %[[DY:.+]] {reduce_batch, transpose_lhs} : {{.*}} -> !dataflow.stream<tensor<32x8xf32>>
// CHECK:         dataflow.grad_out "h.0.mlp.proj.weight", %[[DW2]]
// CHECK:         dataflow.grad_out "h.0.mlp.proj.bias"
// CHECK:         %[[DA:.+]] = dataflow.matmul %[[DY]], %[[W2B]] {transpose_rhs}
// CHECK:         %[[DH:.+]] = dataflow.map gelu_grad %[[FH]], %[[DA]]
// CHECK:         %[[W1B:.+]] = dataflow.weight_in "h.0.mlp.fc.weight"
// CHECK:         %[[DW1:.+]] = dataflow.matmul %{{.+}}, %[[DH]] {reduce_batch, transpose_lhs} : {{.*}} -> !dataflow.stream<tensor<8x32xf32>>
// CHECK:         dataflow.grad_out "h.0.mlp.fc.weight", %[[DW1]]
// CHECK:         dataflow.grad_out "h.0.mlp.fc.bias"
// CHECK:         dataflow.matmul %[[DH]], %[[W1B]] {transpose_rhs}

// The nonlinearity follows the model: ReLU and its derivative.
// GPTJ: dataflow.map relu
// GPTJ: dataflow.map relu_grad
