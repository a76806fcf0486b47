//===- MemoryModelTest.cpp - what each core holds
//---------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The memory model against bytes computed by hand, on hand-written wafer IR
// (test/Dialect/Wafer/Inputs) placed by each placer: live activations and
// checkpoints spread as the layout spreads them, weight buffers, gradient
// accumulators over a region's own rectangle, a weight kernel's block of
// sums, and what a layer-pipelined slot holds for the whole step.
//
//===----------------------------------------------------------------------===//

#include "WaferFixture.h"

using namespace cgpt;
using namespace cgpt::wafer;

namespace {

using Kind = CheckpointPolicy::Kind;
using MemoryModelTest = test::WaferFixture;

/// two-layers.mlir at one sequence (64 tokens) on the 16 x 12 mini mesh,
/// whole-mesh: the forward stage splits features 16 ways, a segment along
/// each row, and tokens 11 ways (6 per core, as 12 would leave it, with a
/// shorter fill down the columns), so a core holds 6 tokens of
/// each activation, and ceil(256 / 16) = 16 B of each token of the
/// matmul's 16,384 live bytes per sequence (256 B per token): 96 B. The
/// two layers keep 8,192 B each per sequence (256 B per token in all):
/// 6 x 16 = 96 B.
TEST_F(MemoryModelTest, LiveAndCheckpointBytesByHand) {
  StepProgram program = programOf(parseInput("two-layers.mlir"));
  Placement placement = placeWith("whole-mesh", program, 1);
  const Layout &layout = placement.regions[0][0].layout;
  EXPECT_EQ(layout.tokenGroups, 11);
  EXPECT_EQ(layout.featureGroups, 16);
  CoreMemory memory =
      regionMemory(program, placement, 0, 1, 1, {Kind::keep, 0});
  EXPECT_EQ(memory.live, 96);
  EXPECT_EQ(memory.checkpoints, 96);
  EXPECT_EQ(memory.reserve, 8192);
  // The largest stage streams 8,192 B; double-buffered over 192 cores.
  EXPECT_EQ(memory.weightBuffers, 2 * 43);
  EXPECT_EQ(memory.accumulator, 0);
  // The weight gradient of a backward stage sums 16,384 B over 192 cores.
  EXPECT_EQ(
      regionMemory(program, placement, 2, 1, 1, {Kind::keep, 0}).accumulator,
      86);
  // Offloaded, the wafer holds the checkpoint in use and the next one:
  // 2 x 8,192 B per sequence, the same as keeping both layers here.
  EXPECT_EQ(
      regionMemory(program, placement, 0, 1, 1, {Kind::offload, 0}).checkpoints,
      96);
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
    return tokens *
           ((perToken + layout.featureGroups - 1) / layout.featureGroups);
  };
  const int64_t mib = 1 << 20;
  auto checkpoints = [&](CheckpointPolicy policy) {
    return regionMemory(program, placement, 0, 0, 1, policy).checkpoints;
  };
  EXPECT_EQ(checkpoints({Kind::keep, 0}), perCore(8 * mib));
  EXPECT_EQ(checkpoints({Kind::every, 2}), perCore(6 * mib));
  EXPECT_EQ(checkpoints({Kind::offload, 0}), perCore(4 * mib));
  // An interval past the model's four layers keeps layer 0 and rebuilds
  // the other three, whatever its size: no product of it overflows.
  EXPECT_EQ(checkpoints({Kind::every, 4}), perCore(8 * mib));
  EXPECT_EQ(checkpoints({Kind::every, 5}), perCore(8 * mib));
  EXPECT_EQ(checkpoints({Kind::every, int64_t(1) << 62}), perCore(8 * mib));
  int64_t sram = program.getTarget().getCoreSramBytes();
  EXPECT_GT(memoryPeak(program, placement, 1, {Kind::keep, 0}).memory.total(),
            sram);
  EXPECT_LE(memoryPeak(program, placement, 1, {Kind::every, 2}).memory.total(),
            sram);
  EXPECT_LE(
      memoryPeak(program, placement, 1, {Kind::offload, 0}).memory.total(),
      sram);
}

} // namespace

namespace {

/// independent.mlir side by side at its planned sequence: @dx runs on a
/// band of 7 x 12 = 84 cores, split 11 token groups by 7 feature groups
/// (a segment along each row, one row idle).
/// The stage's 65,536 B of live activations stay spread over the whole
/// mesh (65,536 / 192: 342 B a core), and @dx gathers what it reads and
/// writes onto its band: 16,384 B, 256 B per token, so ceil(64 tokens /
/// 11) = 6 tokens of ceil(256 / 7) = 37 B: 222 B. Its sums: 64 output
/// columns of f32 for its 6 tokens, and its own part of them as it comes
/// from the east in the reduce-scatter (ceil(64 / 7) = 10 columns): 74 x 6
/// x 4 = 1,776 B. @dw sums its 16,384 B
/// gradient over its own 84 cores: 196 B.
TEST_F(MemoryModelTest, SideBySideRegionsByHand) {
  DeviceOp device = parseInput("independent.mlir");
  device.setMicroBatch(1);
  device.setGradAccumSteps(1);
  StepProgram program = programOf(device);
  Placement placement = placeWith("side-by-side", program, 1);
  const RegionPlacement &dx = placement.regions[0][0];
  ASSERT_EQ(dx.rect.w, 7);
  ASSERT_EQ(dx.layout.tokenGroups, 11);
  ASSERT_EQ(dx.layout.featureGroups, 7);
  CoreMemory memory =
      regionMemory(program, placement, 0, 0, 1, {Kind::keep, 0});
  EXPECT_EQ(memory.live, 342 + 222);
  EXPECT_EQ(memory.sums, (64 + 10) * 6 * 4);
  ASSERT_EQ(placement.regions[0][1].rect.cores(), 84);
  EXPECT_EQ(
      regionMemory(program, placement, 0, 1, 1, {Kind::keep, 0}).accumulator,
      196);
  // The same region over the whole mesh holds the stage's live bytes at
  // its own split, and no copy of its operands.
  Placement whole = placeWith("whole-mesh", program, 1);
  const Layout &layout = whole.regions[0][0].layout;
  int64_t tokens = (64 + layout.tokenGroups - 1) / layout.tokenGroups;
  int64_t perToken = (1024 + layout.featureGroups - 1) / layout.featureGroups;
  EXPECT_EQ(regionMemory(program, whole, 0, 0, 1, {Kind::keep, 0}).live,
            tokens * perToken);
}

/// A weight matmul's sums take what its cores have left: two-layers.mlir's
/// @fc (64 output columns) at 16 sequences over the whole mesh, on copies
/// of mini whose SRAM leaves room for all 64 columns of f32 sums of a
/// core's tokens and its own part of them in the reduce-scatter over its k
/// feature groups (ceil(64 / k) columns more; no block), for 10 and their
/// part and a few bytes (7 blocks, spread evenly: ceil(64 / 7) = 10
/// columns each), and for none (one column at a time and its part, which
/// does not fit).
TEST_F(MemoryModelTest, SumsBlockedToWhatIsLeft) {
  std::string mini = test::builtinTargetText("mini");
  DeviceOp device = parseInput("two-layers.mlir");
  StepProgram program = programOf(device);
  Placement placement = placeWith("whole-mesh", program, 16);
  CoreMemory unblocked =
      regionMemory(program, placement, 0, 1, 16, {Kind::keep, 0});
  int64_t tokens = (16 * 64 + placement.regions[0][1].layout.tokenGroups - 1) /
                   placement.regions[0][1].layout.tokenGroups;
  int64_t k = placement.regions[0][1].layout.featureGroups;
  ASSERT_GT(k, 1);
  auto withPart = [&](int64_t columns) {
    return columns + (columns + k - 1) / k;
  };
  ASSERT_EQ(unblocked.sums, withPart(64) * tokens * 4);
  int64_t rest = unblocked.total() - unblocked.sums;
  auto blockWith = [&](int64_t sram) {
    std::string text = mini;
    size_t at = text.find("sram_bytes: 49152");
    text.replace(at, 17, "sram_bytes: " + std::to_string(sram));
    DeviceOp copy = parseInput("two-layers.mlir");
    copy.setTarget(test::writeTemporary(text, "yaml"));
    StepProgram smaller = programOf(copy);
    Placement blocked = withSumBlocks(
        smaller, placeWith("whole-mesh", smaller, 16), 16, {Kind::keep, 0});
    CoreMemory memory =
        regionMemory(smaller, blocked, 0, 1, 16, {Kind::keep, 0});
    return std::make_pair(blocked.regions[0][1].layout.sumBlock,
                          memory.total() - sram);
  };
  EXPECT_EQ(blockWith(rest + withPart(64) * tokens * 4),
            std::make_pair(int64_t(0), int64_t(0)));
  auto [block, over] = blockWith(rest + withPart(10) * tokens * 4 + 3);
  EXPECT_EQ(block, 10);
  EXPECT_EQ(over, -3);
  auto [one, beyond] = blockWith(rest + 1);
  EXPECT_EQ(one, 1);
  EXPECT_EQ(beyond, withPart(1) * tokens * 4 - 1);
}

/// The planner accounts a placement once and weighs every policy against
/// it: for each of deep-checkpoints.mlir's policies, one PlacedMemory's
/// peak is the region with the most memory by each policy's own account
/// (regionMemory of the placement with its sum blocks), the first of
/// equals.
TEST_F(MemoryModelTest, OneAccountServesEveryPolicy) {
  StepProgram program = programOf(parseInput("deep-checkpoints.mlir"));
  for (int64_t micro : {1, 4}) {
    Placement placement = placeWith("whole-mesh", program, micro);
    PlacedMemory memory(program, placement, micro);
    for (CheckpointPolicy policy : CheckpointPolicy::candidates(4)) {
      MemoryPeak peak;
      Placement blocked = placement;
      for (const PlacedMemory::SumBlock &block :
           memory.sumBlocks(policy, &peak))
        blocked.regions[block.stage][block.region].layout = block.layout;
      MemoryPeak largest;
      for (auto [s, stage] : llvm::enumerate(program.getStages()))
        for (auto [r, region] : llvm::enumerate(stage.regions)) {
          CoreMemory own = regionMemory(program, blocked, s, r, micro, policy);
          if (!largest.region || own.total() > largest.memory.total())
            largest = {region.op, own};
        }
      EXPECT_EQ(peak.region, largest.region) << policy.str();
      EXPECT_EQ(peak.memory.describe(), largest.memory.describe())
          << policy.str();
    }
  }
}

/// two-layers.mlir layer pipelined at one sequence: layer 0 on a band of
/// 8 x 12 = 96 cores holds its 8,192 B of weights (86 B a core) and the
/// 16,384 B f32 gradient its backward sums (171 B a core) all step, and the
/// checkpoints of the micro-batches in flight: with 2 slots, the first
/// holds 2 (8,192 B each per sequence): 171 B a core.
TEST_F(MemoryModelTest, PipelinedSlotByHand) {
  StepProgram program = programOf(parseInput("two-layers.mlir"));
  Placement placement = placeWith("pipelined", program, 1);
  ASSERT_EQ(placement.regions[0][0].rect.cores(), 96);
  CoreMemory memory =
      regionMemory(program, placement, 0, 1, 1, {Kind::keep, 0});
  EXPECT_TRUE(memory.resident);
  EXPECT_EQ(memory.weightBuffers, 86);
  EXPECT_EQ(memory.accumulator, 171);
  EXPECT_EQ(memory.checkpoints, 171);
  // The last slot holds one micro-batch in flight.
  EXPECT_EQ(
      regionMemory(program, placement, 1, 1, 1, {Kind::keep, 0}).checkpoints,
      86);
}

} // namespace
