//===- MemoryModelTest.cpp - what each core holds ---------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The memory model against bytes computed by hand, on hand-written wafer IR
// (test/Dialect/Wafer/Inputs) placed by each placer: live activations and
// checkpoints spread as the layout spreads them, weight buffers, gradient
// accumulators over a region's own rectangle, and what a layer-pipelined
// slot holds for the whole step.
//
//===----------------------------------------------------------------------===//

#include "WaferFixture.h"

using namespace cgpt;
using namespace cgpt::wafer;

namespace {

using Kind = CheckpointPolicy::Kind;
using MemoryModelTest = test::WaferFixture;

/// two-layers.mlir at one sequence (64 tokens) on the 16 x 12 mini mesh,
/// whole-mesh: the forward stage splits tokens 16 ways (4 per core, two
/// SIMD widths) and features 12 ways (192 cores), so a core holds 4 tokens
/// of each activation, and ceil(256 / 12) = 22 B of each token of the
/// matmul's 16,384 live bytes per sequence (256 B per token): 88 B. The two
/// layers keep 8,192 B each per sequence (256 B per token in all): 4 x 22 =
/// 88 B.
TEST_F(MemoryModelTest, LiveAndCheckpointBytesByHand) {
  StepProgram program = programOf(parseInput("two-layers.mlir"));
  Placement placement = placeWith("whole-mesh", program, 1);
  const Layout &layout = placement.regions[0][0].layout;
  EXPECT_EQ(layout.tokenGroups, 16);
  EXPECT_EQ(layout.featureGroups, 12);
  CoreMemory memory =
      regionMemory(program, placement, 0, 1, 1, {Kind::keep, 0});
  EXPECT_EQ(memory.live, 88);
  EXPECT_EQ(memory.checkpoints, 88);
  EXPECT_EQ(memory.reserve, 8192);
  // The largest stage streams 8,192 B; double-buffered over 192 cores.
  EXPECT_EQ(memory.weightBuffers, 2 * 43);
  EXPECT_EQ(memory.accumulator, 0);
  // The weight gradient of a backward stage sums 16,384 B over 192 cores.
  EXPECT_EQ(regionMemory(program, placement, 2, 1, 1, {Kind::keep, 0})
                .accumulator,
            86);
  // Offloaded, the wafer holds the checkpoint in use and the next one:
  // 2 x 8,192 B per sequence, the same as keeping both layers here.
  EXPECT_EQ(regionMemory(program, placement, 0, 1, 1, {Kind::offload, 0})
                .checkpoints,
            88);
}

/// deep-checkpoints.mlir: four layers of 2 MiB of checkpoint per sequence.
/// Keeping all four (8 MiB) does not fit; keeping every second layer holds
/// layers 0 and 2 and rebuilds one: 6 MiB; offloading holds two: 4 MiB.
TEST_F(MemoryModelTest, CheckpointPolicies) {
  StepProgram program = programOf(parseInput("deep-checkpoints.mlir"));
  Placement placement = placeWith("whole-mesh", program, 1);
  const Layout &layout = placement.regions[0][0].layout;
  auto perCore = [&](int64_t perSequence) {
    int64_t tokens = (64 + layout.tokenGroups - 1) / layout.tokenGroups;
    int64_t perToken = perSequence / 64;
    return tokens * ((perToken + layout.featureGroups - 1) /
                     layout.featureGroups);
  };
  const int64_t mib = 1 << 20;
  auto checkpoints = [&](CheckpointPolicy policy) {
    return regionMemory(program, placement, 0, 0, 1, policy).checkpoints;
  };
  EXPECT_EQ(checkpoints({Kind::keep, 0}), perCore(8 * mib));
  EXPECT_EQ(checkpoints({Kind::every, 2}), perCore(6 * mib));
  EXPECT_EQ(checkpoints({Kind::offload, 0}), perCore(4 * mib));
  int64_t sram = program.getTarget().getCoreSramBytes();
  EXPECT_GT(memoryPeak(program, placement, 1, {Kind::keep, 0}).memory.total(),
            sram);
  EXPECT_LE(
      memoryPeak(program, placement, 1, {Kind::every, 2}).memory.total(), sram);
  EXPECT_LE(
      memoryPeak(program, placement, 1, {Kind::offload, 0}).memory.total(),
      sram);
}

} // namespace
