// RUN: cgpt-opt %S/Inputs/one-layer.mlir --convert-transformer-to-dataflow=recompute=none | FileCheck %s
// RUN: cgpt-opt %S/Inputs/one-layer-gptj.mlir --convert-transformer-to-dataflow=recompute=none | FileCheck %s --check-prefix=GPTJ

// Forward: the table streams in; tokens pick its rows.
// CHECK-LABEL: dataflow.stage "embed" forward
// CHECK:         %[[WTE:.+]] = dataflow.weight_in "wte" bytes 512 : <tensor<16x8xf32>>
// CHECK:         dataflow.gather %[[WTE]], %tokens : (!dataflow.stream<tensor<16x8xf32>>, !dataflow.stream<tensor<?x4xi32>>) -> !dataflow.stream<tensor<?x4x8xf32>>
// Backward: each token's gradient row added at its id, streamed out.
// CHECK-LABEL: dataflow.stage "embed" backward
// CHECK:         %[[DW:.+]] = dataflow.scatter_add %tokens, %{{.+}} : (!dataflow.stream<tensor<?x4xi32>>, !dataflow.stream<tensor<?x4x8xf32>>) -> !dataflow.stream<tensor<16x8xf32>>
// CHECK:         dataflow.grad_out "wte", %[[DW]] bytes 512

// muP scales the lookup and so its gradient.
// GPTJ-LABEL: dataflow.stage "embed" forward
// GPTJ:         dataflow.gather %{{.+}}, %tokens {scale = 1.000000e+01 : f64}
// GPTJ-LABEL: dataflow.stage "embed" backward
// GPTJ:         dataflow.scatter_add %tokens, %{{.+}} {scale = 1.000000e+01 : f64}
