// RUN: cgpt-opt %S/Inputs/one-layer.mlir --convert-transformer-to-dataflow=recompute=none | FileCheck %s
// RUN: cgpt-opt %S/Inputs/one-layer-gptj.mlir --convert-transformer-to-dataflow=recompute=none | FileCheck %s --check-prefix=GPTJ

// Forward: the block's output joins the residual stream.
// CHECK-LABEL: dataflow.stage "h.0" forward
// CHECK:         %[[R1:.+]] = dataflow.map add %[[X:.+]], %{{.+}} : (!dataflow.stream<tensor<?x4x8xf32>>, !dataflow.stream<tensor<?x4x8xf32>>) -> !dataflow.stream<tensor<?x4x8xf32>>
// CHECK:         dataflow.map add %[[R1]], %{{.+}}
// Backward: the residual's gradient flows on unchanged and meets the
// gradient through the block's layer norm.
// CHECK-LABEL: dataflow.stage "h.0" backward
// CHECK:         %[[LN2:.+]], %{{.+}}, %{{.+}} = dataflow.layer_norm_grad %{{.+}}
// CHECK:         %[[D1:.+]] = dataflow.map add %[[DY:.+]], %[[LN2]]
// CHECK:         %[[LN1:.+]], %{{.+}}, %{{.+}} = dataflow.layer_norm_grad %{{.+}}
// CHECK:         %[[DX:.+]] = dataflow.map add %[[D1]], %[[LN1]]
// CHECK:         dataflow.yield %[[DX]]

// A parallel block adds both branches; the shared layer norm's output gets
// the sum of their gradients.
// GPTJ-LABEL: dataflow.stage "h.0" backward
// GPTJ:         %[[DFFN:.+]] = dataflow.matmul %{{.+}}, %{{.+}} {transpose_rhs} : (!dataflow.stream<tensor<?x4x32xf32>>, !dataflow.stream<tensor<8x32xf32>>)
// GPTJ:         %[[DATT:.+]] = dataflow.matmul %{{.+}}, %{{.+}} {transpose_rhs} : (!dataflow.stream<tensor<?x4x24xf32>>, !dataflow.stream<tensor<8x24xf32>>)
// GPTJ:         dataflow.map add %[[DFFN]], %[[DATT]]
