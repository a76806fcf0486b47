// RUN: cgpt-opt %S/Inputs/one-layer.mlir --convert-transformer-to-dataflow=recompute=none | FileCheck %s

// CHECK-LABEL: dataflow.stage "h.0" forward
// CHECK:         %[[G:.+]] = dataflow.weight_in "h.0.ln_1.weight" bytes 32
// CHECK:         %[[B:.+]] = dataflow.weight_in "h.0.ln_1.bias" bytes 32
// CHECK:         %[[Y:.+]], %[[MEAN:.+]], %[[RSTD:.+]] = dataflow.layer_norm %[[X:.+]], %[[G]], %[[B]] eps 1.000000e-05 : (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<8xf32>>, !dataflow.stream<tensor<8xf32>>) -> (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<?x4xf32>>, !dataflow.stream<tensor<?x4xf32>>)
// The gradient needs the input and its row statistics: kept.
// CHECK:         dataflow.stash %[[X]] :
// CHECK:         dataflow.stash %[[MEAN]] : <tensor<?x4xf32>>
// CHECK:         dataflow.stash %[[RSTD]] : <tensor<?x4xf32>>
// The scale streams in again for the backward stage.
// CHECK-LABEL: dataflow.stage "h.0" backward
// CHECK:         %[[G2:.+]] = dataflow.weight_in "h.0.ln_1.weight" bytes 32
// CHECK:         %[[DX:.+]], %[[DG:.+]], %[[DB:.+]] = dataflow.layer_norm_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[G2]] : (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<?x4xf32>>, !dataflow.stream<tensor<?x4xf32>>, !dataflow.stream<tensor<8xf32>>) -> (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<8xf32>>, !dataflow.stream<tensor<8xf32>>)
// CHECK:         dataflow.grad_out "h.0.ln_1.weight", %[[DG]] bytes 32
// CHECK:         dataflow.grad_out "h.0.ln_1.bias", %[[DB]] bytes 32
