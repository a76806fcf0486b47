// wafer-place runs a placer and writes its decisions into the IR: every
// region's rectangle, layout and wave, every stage's slot, the device's
// placer and execution mode. One placer at a time, on hand-written IR.

//===----------------------------------------------------------------------===//
// whole-mesh: every kernel over the whole 16 x 12 mini mesh, one after
// another, a stage's token-major kernels sharing the split that makes them
// fastest at one sequence (64 tokens) before planning.
//===----------------------------------------------------------------------===//

// RUN: cgpt-opt %S/Inputs/two-layers.mlir --wafer-place | FileCheck %s --check-prefix=WHOLE
// WHOLE: wafer.device @two target "mini" attributes {execution = #wafer.execution<weight_streaming>
// WHOLE-SAME: placer = "whole-mesh"
// Forward: 16 feature groups, a segment along each row, by 11 token
// groups (6 tokens a core, as 12 would leave it; the twelfth row would only
// lengthen the fills down the columns); the norm reads no weight, the
// matmul streams its own from the north edge.
// WHOLE-LABEL: wafer.stage @h.0.forward order 0 "forward" layer 0 attributes
// WHOLE-NEXT: wafer.region @norm reduction "dataflow.layer_norm" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 11, feature_groups = 16, weights = none, partials = none> wave 0
// WHOLE-NEXT: wafer.region @fc weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 11, feature_groups = 16, weights = north, partials = rows> wave 1
// In the backward stage the weight gradient reduces its partial sums down
// the columns, over the token groups (11: the same 6 tokens a core, one
// row idle and one stage less); no stage has a slot.
// WHOLE-LABEL: wafer.stage @h.1.backward order 2 "backward" layer 1 {
// WHOLE-NEXT: wafer.region @dx weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 11, feature_groups = 16, weights = north, partials = rows> wave 0
// WHOLE-NEXT: wafer.region @dw weight_grad "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 11, feature_groups = 16, weights = none, partials = columns> wave 1
// WHOLE-NOT: slot

// Attention takes its own split of each (sequence, head) into query and
// key blocks; the kernels around it share the stage's (16 feature groups
// for 8 features: the biases' rows then fall in an idle group's padding).
// RUN: cgpt-opt %S/../../Conversion/TransformerToDataflow/Inputs/one-layer.mlir --cgpt-lower-to-dataflow=target=mini --convert-dataflow-to-wafer --wafer-place | FileCheck %s --check-prefix=ATTENTION
// ATTENTION-LABEL: wafer.stage @h.0.forward
// ATTENTION: wafer.region @matmul.1 weight_matmul {{.*}} layout <token_groups = 4, feature_groups = 16, weights = north, partials = rows> wave 1
// ATTENTION-NEXT: wafer.region @matmul.2 attention {{.*}} layout <token_groups = 4, feature_groups = 2, weights = none, partials = rows> wave 2
// ATTENTION-NEXT: wafer.region @matmul.3 weight_matmul {{.*}} layout <token_groups = 4, feature_groups = 16, weights = north, partials = rows> wave 3

// Independent regions stay one after another on the whole mesh.
// RUN: cgpt-opt %S/Inputs/independent.mlir --wafer-place=placer=whole-mesh | FileCheck %s --check-prefix=WHOLE-INDEPENDENT
// WHOLE-INDEPENDENT: wafer.region @dx {{.*}} at <x = 0, y = 0, w = 16, h = 12> {{.*}} wave 0
// WHOLE-INDEPENDENT-NEXT: wafer.region @dw {{.*}} at <x = 0, y = 0, w = 16, h = 12> {{.*}} wave 1
// WHOLE-INDEPENDENT-NEXT: wafer.region @db {{.*}} at <x = 0, y = 0, w = 16, h = 12> {{.*}} wave 2
// WHOLE-INDEPENDENT-NEXT: wafer.region @act {{.*}} at <x = 0, y = 0, w = 16, h = 12> {{.*}} wave 3

// At the planned micro-batch the layout follows it: 4 sequences, 256
// tokens, a whole SIMD width more per core.
// RUN: sed 's/micro_batch = 0 : i64/micro_batch = 4 : i64/; s/grad_accum_steps = 0 : i64/grad_accum_steps = 1 : i64/; s/global_batch = 1 : i64/global_batch = 4 : i64/' %S/Inputs/independent.mlir | cgpt-opt --wafer-place=placer=whole-mesh | FileCheck %s --check-prefix=WHOLE-PLANNED
// WHOLE-PLANNED: wafer.region @dx {{.*}} layout <token_groups = 24, feature_groups = 8, weights = north, partials = rows> wave 0

//===----------------------------------------------------------------------===//
// side-by-side: a run of regions that read none of each other's results
// shares the mesh in one wave, each on its own band of columns, when that
// ends sooner.
//===----------------------------------------------------------------------===//

// The input, weight and bias gradients: one wave on bands of 7, 7 and 2
// columns that cover the mesh, sized by their work and balanced; each has
// its own layout on its band. @act reads @dx: the next wave, whole mesh.
// RUN: cgpt-opt %S/Inputs/independent.mlir --wafer-place=placer=side-by-side | FileCheck %s --check-prefix=SIDE
// SIDE: placer = "side-by-side"
// SIDE: wafer.region @dx weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 7, h = 12> layout <token_groups = 11, feature_groups = 7, weights = north, partials = rows> wave 0
// SIDE-NEXT: wafer.region @dw weight_grad "dataflow.matmul" at <x = 7, y = 0, w = 7, h = 12> layout <token_groups = 11, feature_groups = 7, weights = none, partials = columns> wave 0
// SIDE-NEXT: wafer.region @db token_sum "dataflow.sum_batch" at <x = 14, y = 0, w = 2, h = 12> layout <token_groups = 11, feature_groups = 2, weights = none, partials = columns> wave 0
// SIDE-NEXT: wafer.region @act elementwise "dataflow.map" map relu at <x = 0, y = 0, w = 16, h = 12> {{.*}} wave 1

// Without `reads`, a region is taken to read every earlier one: nothing
// shares the mesh.
// RUN: sed 's/reads = \[[^]]*\], //' %S/Inputs/independent.mlir | cgpt-opt --wafer-place=placer=side-by-side | FileCheck %s --check-prefix=UNKNOWN-READS
// UNKNOWN-READS: wafer.region @dx {{.*}} at <x = 0, y = 0, w = 16, h = 12> {{.*}} wave 0
// UNKNOWN-READS-NEXT: wafer.region @dw {{.*}} at <x = 0, y = 0, w = 16, h = 12> {{.*}} wave 1

// A region gathers what it reads and writes onto its band: when the
// operands of the three fill more than the stage's live bytes allow on 16
// columns, they stay on the whole mesh.
// RUN: sed 's/operand_bytes = 16384/operand_bytes = 65536/' %S/Inputs/independent.mlir | cgpt-opt --wafer-place=placer=side-by-side | FileCheck %s --check-prefix=NO-ROOM
// NO-ROOM: wafer.region @dx {{.*}} at <x = 0, y = 0, w = 16, h = 12> {{.*}} wave 0
// NO-ROOM-NEXT: wafer.region @dw {{.*}} at <x = 0, y = 0, w = 16, h = 12> {{.*}} wave 1

// A dependent chain (two-layers.mlir states no reads) places as whole-mesh.
// RUN: cgpt-opt %S/Inputs/two-layers.mlir --wafer-place=placer=side-by-side | FileCheck %s --check-prefix=CHAIN
// CHAIN: wafer.region @dw weight_grad "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 11, feature_groups = 16, weights = none, partials = columns> wave 1

// Every region of a real model is placed inside the mesh and every wave's
// regions on cores of their own (the verifier's rule): the loss
// turn-around's input and embedding gradients share the mesh.
// RUN: cgpt-opt %cgpt_src/models/tiny.yaml --cgpt-lower-to-wafer=target=mini | FileCheck %s --check-prefix=TINY
// TINY-LABEL: wafer.stage @head.loss
// TINY: wafer.region @matmul.4 weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = {{[0-9]+}}, h = 12> {{.*}} wave [[WAVE:[0-9]+]]
// TINY-NEXT: wafer.region @matmul.5 weight_grad "dataflow.matmul" at <x = {{[1-9][0-9]*}}, y = 0, w = {{[0-9]+}}, h = 12> {{.*}} wave [[WAVE]]

//===----------------------------------------------------------------------===//
// pipelined: each layer resident on its own band of columns, a slot shared
// by its forward and backward stages; the matmuls hold their weights.
//===----------------------------------------------------------------------===//

// RUN: cgpt-opt %S/Inputs/two-layers.mlir --wafer-place=placer=pipelined | FileCheck %s --check-prefix=PIPE
// PIPE: wafer.device @two target "mini" attributes {execution = #wafer.execution<layer_pipelined>
// PIPE-SAME: placer = "pipelined"
// PIPE-LABEL: wafer.stage @h.0.forward order 0 "forward" layer 0 slot 0
// PIPE-NEXT: wafer.region @norm reduction "dataflow.layer_norm" at <x = 0, y = 0, w = 8, h = 12> layout <token_groups = 96, feature_groups = 1, weights = none, partials = none> wave 0
// PIPE-NEXT: wafer.region @fc weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 8, h = 12> layout <token_groups = 11, feature_groups = 8, weights = resident, partials = rows> wave 1
// PIPE-LABEL: wafer.stage @h.1.forward order 1 "forward" layer 1 slot 1
// PIPE-NEXT: wafer.region @norm {{.*}} at <x = 8, y = 0, w = 8, h = 12>
// The backward stage of layer 1 runs on layer 1's band; its weight
// gradient sums into the resident accumulator, reducing nothing.
// PIPE-LABEL: wafer.stage @h.1.backward order 2 "backward" layer 1 slot 1
// PIPE-NEXT: wafer.region @dx weight_matmul {{.*}} at <x = 8, y = 0, w = 8, h = 12> {{.*}} weights = resident, partials = rows> wave 0
// PIPE-NEXT: wafer.region @dw weight_grad {{.*}} at <x = 8, y = 0, w = 8, h = 12> {{.*}} weights = resident, partials = none> wave 1
// PIPE-LABEL: wafer.stage @h.0.backward order 3 "backward" layer 0 slot 0
// PIPE-NEXT: wafer.region @dx {{.*}} at <x = 0, y = 0, w = 8, h = 12>

// A planned device is placed with the placer its plan chose.
// RUN: sed 's/micro_batch = 0 : i64/micro_batch = 2 : i64/; s/grad_accum_steps = 0 : i64/grad_accum_steps = 8 : i64/; s/num_csx = 1 : i64/num_csx = 1 : i64, placer = "pipelined"/' %S/Inputs/two-layers.mlir | cgpt-opt --wafer-place | FileCheck %s --check-prefix=PLANNED
// PLANNED: execution = #wafer.execution<layer_pipelined>
// PLANNED: wafer.stage @h.0.forward order 0 "forward" layer 0 slot 0

// What the placers refuse, each with the limit.
// RUN: not cgpt-opt %S/Inputs/two-layers.mlir --wafer-place=placer=diagonal 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: 'wafer.device' op names unknown placer 'diagonal'; the placers are whole-mesh, side-by-side, pipelined
// RUN: sed 's|target "mini"|target "%S/Inputs/two-by-two.yaml"|' %S/Inputs/deep-checkpoints.mlir | not cgpt-opt --wafer-place=placer=pipelined 2>&1 | FileCheck %s --check-prefix=NARROW
// NARROW: error: 'wafer.device' op cannot be placed by the pipelined placer: layer pipelining needs a band of at least one column for each of its 4 slots, and the mesh has 2 columns
// RUN: sed 's/bytes 8192$/bytes 800000000/' %S/Inputs/two-layers.mlir | not cgpt-opt --wafer-place=placer=pipelined 2>&1 | FileCheck %s --check-prefix=HEAVY
// HEAVY: error: 'wafer.device' op cannot be placed by the pipelined placer: its slots' weights and gradients need 6512 columns of cores at half of each core's free SRAM, and the mesh has 16

// RUN: cgpt-opt %s -split-input-file -verify-diagnostics --wafer-place

// expected-error @+1 {{has no stages; the runtime needs at least one}}
wafer.device @empty target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 1 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
}
