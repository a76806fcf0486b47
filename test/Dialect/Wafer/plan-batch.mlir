// RUN: cgpt-opt %S/Inputs/deep-checkpoints.mlir --wafer-plan-batch --wafer-place --wafer-check-memory | FileCheck %s
// RUN: sed 's/micro_batch<auto>/micro_batch<explore>/' %S/Inputs/deep-checkpoints.mlir | cgpt-opt --wafer-plan-batch --wafer-place | FileCheck %s --check-prefix=EXPLORE
// RUN: sed 's/checkpoint_bytes = 2097152/checkpoint_bytes = 8388608/; s/kept_bytes_per_sequence = 8388608/kept_bytes_per_sequence = 33554432/' %S/Inputs/deep-checkpoints.mlir | not cgpt-opt --wafer-plan-batch --wafer-place 2>&1 | FileCheck %s --check-prefix=NOFIT
// RUN: sed 's/micro_batch<auto>/micro_batch<2>/' %S/Inputs/deep-checkpoints.mlir | not cgpt-opt --wafer-plan-batch --wafer-place 2>&1 | FileCheck %s --check-prefix=FIXED
// RUN: sed 's|target "mini"|target "%S/Inputs/small-servers.yaml"|; s/parameters = 16384/parameters = 100000/' %S/Inputs/deep-checkpoints.mlir | not cgpt-opt --wafer-plan-batch --wafer-place 2>&1 | FileCheck %s --check-prefix=SERVERS
// RUN: not cgpt-opt %S/Inputs/deep-checkpoints.mlir --wafer-check-memory 2>&1 | FileCheck %s --check-prefix=UNPLANNED
// RUN: cgpt-opt %S/Inputs/deep-checkpoints.mlir --wafer-plan-batch --wafer-place | sed 's/micro_batch = 1 : i64/micro_batch = 2 : i64/; s/grad_accum_steps = 2 : i64/grad_accum_steps = 1 : i64/; s/#wafer.checkpoint<[a-z0-9 ]*>/#wafer.checkpoint<keep>/' | not cgpt-opt --wafer-check-memory 2>&1 | FileCheck %s --check-prefix=OVER

// Four layers whose checkpoints (8 MiB per sequence) do not fit the mini
// mesh beside the reserve, though each layer does: the planner keeps one
// sequence per micro-batch and a checkpoint policy other than keep.
// CHECK: wafer.device @deep target "mini" attributes {checkpoint = #wafer.checkpoint<{{every [0-9]+|offload}}>
// CHECK-SAME: grad_accum_steps = 2 : i64
// CHECK-SAME: micro_batch = 1 : i64
// CHECK-SAME: placer = "{{whole-mesh|side-by-side}}"
// CHECK-SAME: plan = "auto: of 2 even splits of 2, 2 placers and 4 checkpoint policies, 1 with '{{every [0-9]+|offload}}' on the {{whole-mesh|side-by-side}} placer fits and predicts the most samples per second; 2 needs {{[0-9,]+}} B per core even with
// Every region records its per-core peak.
// CHECK: wafer.region @norm {{.*}}sram_bytes = {{[0-9]+}} : i64

// explore: one candidate per micro-batch with its best policy, or its
// leanest when none fits (and then no rate).
// EXPLORE: explored = [#wafer.candidate<micro_batch = 1, placer = "whole-mesh", checkpoint = <{{every [0-9]+|offload}}>, fits = true, sram_peak = {{[0-9]+}}, samples_per_second = {{[0-9.e+-]+}}>, #wafer.candidate<micro_batch = 1, placer = "side-by-side", {{.*}}>, #wafer.candidate<micro_batch = 1, placer = "pipelined", {{.*}}>, #wafer.candidate<micro_batch = 2, placer = "whole-mesh", checkpoint = <{{every [0-9]+|offload}}>, fits = false, sram_peak = {{[0-9]+}}, samples_per_second = 0.0{{0*}}>

// NOFIT: error: 'wafer.region' op even micro-batch 1 does not fit with any checkpoint policy: even with 'offload' on the {{whole-mesh|side-by-side}} placer, @dw (dataflow.matmul) of stage @h.3.backward (layer 3) needs {{[0-9,]+}} B per core; the core has 49,152 B, {{[0-9,]+}} B short
// NOFIT: note: memory map per core: reserve 8,192 B, weight buffers 86 B, checkpoints {{[0-9,]+}} B, live activations {{[0-9,]+}} B, gradient accumulator {{[0-9,]+}} B

// FIXED: error: 'wafer.region' op micro-batch 2 does not fit with any checkpoint policy

// SERVERS: error: 'wafer.device' op needs 1,200,000 B on the weight servers (12 B for each of 100,000 parameters: f32 weights and two Adam moments), but target '{{.*}}small-servers.yaml' holds 1,000,000 B: 200,000 B short

// UNPLANNED: error: 'wafer.device' op is not planned; run wafer-plan-batch before wafer-check-memory

// OVER: error: 'wafer.region' op @{{[a-z]+}} needs {{[0-9,]+}} B per core on its 192 cores at micro-batch 2 with checkpoints 'keep', over the 49,152 B of SRAM a core of target 'mini' has
// OVER: note: memory map per core: reserve 8,192 B
