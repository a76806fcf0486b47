// RUN: cgpt-opt %S/Inputs/one-layer.mlir --convert-transformer-to-dataflow=recompute=none | FileCheck %s

// CHECK-LABEL: dataflow.stage "embed" forward
// CHECK:         %[[X:.+]] = dataflow.gather
// CHECK:         %[[WPE:.+]] = dataflow.weight_in "wpe" bytes 128 : <tensor<4x8xf32>>
// CHECK:         dataflow.add_positions %[[X]], %[[WPE]] : (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<4x8xf32>>) -> !dataflow.stream<tensor<?x4x8xf32>>
// The gradient passes through to the token embedding and, summed over the
// batch, is the table's gradient.
// CHECK-LABEL: dataflow.stage "embed" backward
// CHECK:         %[[DT:.+]] = dataflow.position_grad %[[G:.+]] : (!dataflow.stream<tensor<?x4x8xf32>>) -> !dataflow.stream<tensor<4x8xf32>>
// CHECK:         dataflow.grad_out "wpe", %[[DT]] bytes 128
// CHECK:         dataflow.scatter_add %tokens, %[[G]]
