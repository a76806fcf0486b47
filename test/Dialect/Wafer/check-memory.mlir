// wafer-check-memory counts, for every region as the IR places it, what a
// core holds while it runs; over SRAM is an error with the memory map.
// (Weight streaming's refusal is in plan-batch.mlir; its bytes by hand in
// test/Unit/MemoryModelTest.cpp.)

// Layer pipelined, two layers on bands of 8 x 12 = 96 cores: layer 0's
// band holds its 8,192 B of weights (86 B a core) and the f32 gradient it
// sums (16,384 B: 171 B a core) all step, and the checkpoints of the
// micro-batches between its forward and its backward: with 2 slots, 2 of
// them. At 8 MiB of checkpoint per sequence that is 2 x 8,388,608 / 96 =
// 174,763 B a core, over the core's SRAM.
// RUN: cgpt-opt %S/Inputs/two-layers.mlir --wafer-plan-batch=placer=pipelined --wafer-place --wafer-check-memory | FileCheck %s --check-prefix=PIPELINED
// PIPELINED: grad_accum_steps = 16 : i64, {{.*}}micro_batch = 1 : i64, {{.*}}placer = "pipelined"
// PIPELINED: wafer.region @norm {{.*}}sram_bytes = {{[0-9]+}} : i64
// RUN: cgpt-opt %S/Inputs/two-layers.mlir --wafer-plan-batch=placer=pipelined --wafer-place | sed 's/checkpoint_bytes = 8192/checkpoint_bytes = 8388608/g; s/kept_bytes_per_sequence = 16384/kept_bytes_per_sequence = 16777216/' | not cgpt-opt --wafer-check-memory 2>&1 | FileCheck %s --check-prefix=IN-FLIGHT
// IN-FLIGHT: error: 'wafer.region' op @norm needs 183,596 B per core on its 96 cores at micro-batch 1 with checkpoints 'keep', over the 49,152 B of SRAM a core of target 'mini' has
// IN-FLIGHT: note: memory map per core: reserve 8,192 B, resident weights 86 B, checkpoints 174,763 B, live activations 384 B, gradient accumulator 171 B

// A region with no placement cannot be sized: refused by name.
// RUN: cgpt-opt %S/Inputs/two-layers.mlir --wafer-plan-batch | not cgpt-opt --wafer-check-memory 2>&1 | FileCheck %s --check-prefix=UNPLACED
// UNPLACED: error: 'wafer.region' op @norm has no placement; run wafer-place

// Weight streaming on the whole mini mesh at micro-batch 1, region by
// region (the memory map through -debug-only). @fc splits each token's
// 256 B 16 ways, a segment along each row, and its 64 tokens 11 ways: 6
// tokens of 16 B, 96 B live and as much of the two layers' checkpoints
// (8,192 B each per sequence), and 64 columns of f32 sums for its 6
// tokens and its own part of them from its reduce-scatter (ceil(64 / 16)
// = 4 columns), 68 x 6 x 4 = 1,632 B; the
// largest stage's 8,192 B of weights double-buffered over 192 cores,
// 2 x 43 = 86 B; @dw sums its 16,384 B f32 gradient over the same cores,
// 86 B. Each region's total is its sram_bytes in the IR.
// RUN: sed 's/micro_batch<auto>/micro_batch<1>/' %S/Inputs/two-layers.mlir | cgpt-opt --wafer-plan-batch --wafer-place --wafer-check-memory -debug-only=wafer-check-memory 2>&1 | FileCheck %s --check-prefix=MAP
// MAP: [wafer-check-memory] @h.0.forward @fc: 10102 of 49152 B per core: reserve 8,192 B, weight buffers 86 B, checkpoints 96 B, live activations 96 B, gradient accumulator 0 B, partial sums 1,632 B
// MAP: [wafer-check-memory] @h.1.backward @dw: 9580 of 49152 B per core: reserve 8,192 B, weight buffers 86 B, checkpoints 96 B, live activations 96 B, gradient accumulator 86 B, partial sums 1,024 B
// MAP: wafer.region @fc {{.*}}sram_bytes = 10102 : i64

// The IR is the contract: @fc edited onto 4 x 3 cores (3 token groups of
// 4 feature groups) is counted as placed, 22 tokens a core, its partial
// sums 64 columns of f32 for each and its own part of 16: 7,040 B, 15,490
// B in all.
// RUN: sed 's/micro_batch<auto>/micro_batch<1>/' %S/Inputs/two-layers.mlir | cgpt-opt --wafer-plan-batch --wafer-place | sed 's/@fc weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 11, feature_groups = 16,/@fc weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 4, h = 3> layout <token_groups = 3, feature_groups = 4,/' | cgpt-opt --wafer-check-memory | FileCheck %s --check-prefix=EDITED
// EDITED: wafer.region @fc {{.*}}at <x = 0, y = 0, w = 4, h = 3>{{.*}}sram_bytes = 15490 : i64

// On a target of 9,000 B a core the same plan does not fit: the first
// regions over are refused in full with their memory maps, the rest
// counted, the largest named.
// RUN: sed 's/sram_bytes: 49152/sram_bytes: 9000/' %cgpt_src/lib/Target/targets/mini.yaml > %t.small.yaml
// RUN: sed 's/micro_batch<auto>/micro_batch<1>/' %S/Inputs/two-layers.mlir | cgpt-opt --wafer-plan-batch --wafer-place | sed 's|target "mini"|target "%t.small.yaml"|' | not cgpt-opt --wafer-check-memory 2>&1 | FileCheck %s --check-prefix=SMALL
// SMALL: error: 'wafer.region' op @fc needs 10,102 B per core on its 192 cores at micro-batch 1 with checkpoints 'keep', over the 9,000 B of SRAM a core of target '{{.*}}small.yaml' has
// SMALL: note: memory map per core: reserve 8,192 B, weight buffers 86 B, checkpoints 96 B, live activations 96 B, gradient accumulator 0 B, partial sums 1,632 B
// SMALL: error: 'wafer.device' op has 3 more regions over the 9,000 B of SRAM a core has; the largest, @fc, needs 10,102 B per core

// Not planned: there is no micro-batch to count for.
// RUN: not cgpt-opt %S/Inputs/two-layers.mlir --wafer-place --wafer-check-memory 2>&1 | FileCheck %s --check-prefix=UNPLANNED
// UNPLANNED: error: 'wafer.device' op is not planned; run wafer-plan-batch before wafer-check-memory
