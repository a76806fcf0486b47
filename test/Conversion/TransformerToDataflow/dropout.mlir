// RUN: cgpt-opt %S/Inputs/one-layer-dropout.mlir --convert-transformer-to-dataflow=recompute=none | FileCheck %s

// Forward: each site becomes one dataflow.dropout with its rate and site;
// the probabilities are dropped before they weigh the values.
// CHECK-LABEL: dataflow.stage "embed" forward
// CHECK:         %[[E:.+]] = dataflow.add_positions
// CHECK:         dataflow.dropout %[[E]] rate 1.000000e-01 site 0
// CHECK-LABEL: dataflow.stage "h.0" forward
// CHECK:         %[[P:.+]] = dataflow.softmax
// CHECK:         %[[DP:.+]] = dataflow.dropout %[[P]] rate 2.000000e-01 site 1
// CHECK:         dataflow.matmul %[[DP]], %{{.+}} :
// CHECK:         %[[A:.+]] = dataflow.dropout %{{.+}} rate 1.000000e-01 site 2
// CHECK:         dataflow.map add %{{.+}}, %[[A]]
// CHECK:         %[[F:.+]] = dataflow.dropout %{{.+}} rate 1.000000e-01 site 3
// CHECK:         dataflow.map add %{{.+}}, %[[F]]
// No mask is kept: the backward draws each site's mask again, the same
// kernel over the gradient; P is recomputed and dropped again for dV, and
// dP goes back through the mask before the softmax gradient.
// CHECK-LABEL: dataflow.stage "h.0" backward
// CHECK:         dataflow.dropout %{{.+}} rate 1.000000e-01 site 3 :
// CHECK:         dataflow.dropout %{{.+}} rate 1.000000e-01 site 2 :
// CHECK:         %[[RP:.+]] = dataflow.softmax %{{.+}} {causal, head_size = 4 : i64, recompute, scale = 5.000000e-01 : f64}
// CHECK:         %[[RDP:.+]] = dataflow.dropout %[[RP]] rate 2.000000e-01 site 1 {recompute}
// CHECK:         %[[DDROP:.+]] = dataflow.matmul %{{.+}}, %{{.+}} {transpose_rhs}
// CHECK:         dataflow.matmul %[[RDP]], %{{.+}} {transpose_lhs}
// CHECK:         %[[DPROBS:.+]] = dataflow.dropout %[[DDROP]] rate 2.000000e-01 site 1 :
// CHECK:         dataflow.softmax_grad %[[RP]], %[[DPROBS]]
// CHECK-LABEL: dataflow.stage "embed" backward
// CHECK:         dataflow.dropout %{{.+}} rate 1.000000e-01 site 0 :
