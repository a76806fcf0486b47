// RUN: cgpt-opt %S/Inputs/one-layer-gptj.mlir --convert-transformer-to-dataflow=recompute=none | FileCheck %s --check-prefix=GPTJ

// The angles are computed once, in the embedding stage, and read by every
// layer's forward and backward stage.
// GPTJ-LABEL: dataflow.stage "embed" forward
// GPTJ:         %[[ANGLES:.+]] = dataflow.rotary_angles dim 2 base 1.000000e+04 : <tensor<4x1x2xf32>>
// GPTJ:         dataflow.yield {{.*}}%[[ANGLES]]
// Queries and keys rotate after the split...
// GPTJ-LABEL: dataflow.stage "h.0" forward
// GPTJ:         %[[Q:.+]], %[[K:.+]], %{{.+}} = dataflow.split_heads
// GPTJ:         dataflow.rotary %[[Q]], %[[A:.+]] : (!dataflow.stream<tensor<?x2x4x4xf32>>, !dataflow.stream<tensor<4x1x2xf32>>) -> !dataflow.stream<tensor<?x2x4x4xf32>>
// GPTJ:         dataflow.rotary %[[K]], %[[A]]
// ... and their gradients rotate back before the join.
// GPTJ-LABEL: dataflow.stage "h.0" backward
// GPTJ:         %[[DQ:.+]] = dataflow.rotary %{{.+}}, %{{.+}} {inverse}
// GPTJ:         %[[DK:.+]] = dataflow.rotary %{{.+}}, %{{.+}} {inverse}
// GPTJ:         dataflow.join_heads %[[DQ]], %[[DK]], %{{.+}}
