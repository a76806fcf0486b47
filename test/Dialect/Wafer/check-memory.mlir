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
