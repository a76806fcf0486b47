// RUN: cgpt-opt %S/Inputs/one-layer.mlir --convert-transformer-to-dataflow=recompute=none | FileCheck %s

// The loss of a micro-batch is scaled by 1 / (global batch x tokens), so
// the losses of all micro-batches and systems add up to the step's mean.
// The row log-sum-exp is kept for the gradient, computed in the same stage.
// CHECK-LABEL: dataflow.stage "head" loss
// CHECK:         %[[LOSS:.+]], %[[LSE:.+]] = dataflow.cross_entropy %[[L:.+]], %labels {scale = 1.250000e-01 : f64} : (!dataflow.stream<tensor<?x4x16xf32>>, !dataflow.stream<tensor<?x4xi32>>) -> (!dataflow.stream<tensor<f32>>, !dataflow.stream<tensor<?x4xf32>>)
// CHECK:         dataflow.loss_out %[[LOSS]] : <tensor<f32>>
// CHECK:         dataflow.cross_entropy_grad %[[L]], %[[LSE]], %labels {scale = 1.250000e-01 : f64} : {{.*}} -> !dataflow.stream<tensor<?x4x16xf32>>
