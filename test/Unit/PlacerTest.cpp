//===- PlacerTest.cpp - strategies that lay a step out on the mesh --------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Every placer on real models, at their planned micro-batch: what any
// placement must be (regions inside the mesh with layouts that fit their
// rectangles, segments along rows, a
// wave's regions on cores of their own and reading none of each other, a
// layer-pipelined step's slots on bands of their own), and what each
// placer promises beyond that.
//
//===----------------------------------------------------------------------===//

#include "WaferFixture.h"

#include "cgpt/Dialect/Wafer/Analysis/KernelCost.h"
#include "cgpt/Dialect/Wafer/Analysis/LayoutSearch.h"

#include <map>

using namespace cgpt;
using namespace cgpt::wafer;

namespace {

using PlacerTest = test::WaferFixture;

/// Models of different shapes: GPT-2 style, parallel attention and FFN
/// (GPT-J), grouped-query attention with SwiGLU (LLaMA-style), on a small
/// and a whole-wafer mesh.
const std::pair<const char *, const char *> kModels[] = {
    {"models/tiny.yaml", "mini"},
    {"models/tiny.yaml", "wse2"},
    {"models/cerebras-gpt-111m.yaml", "wse2"},
    {"models/gptj-6b.yaml", "wse3"},
    {"models/llama-2-7b.yaml", "wse2"}};

/// What every placement must be.
void expectSound(const StepProgram &program, const Placement &placement,
                 const std::string &what) {
  Rect mesh = program.getMesh();
  ASSERT_EQ(placement.regions.size(), program.getStages().size()) << what;
  std::map<int64_t, Rect> bands;
  for (auto [s, stage] : llvm::enumerate(program.getStages())) {
    const std::vector<RegionPlacement> &regions = placement.regions[s];
    ASSERT_EQ(regions.size(), stage.regions.size()) << what;
    for (auto [r, placed] : llvm::enumerate(regions)) {
      std::string where = what + " " + stage.name + " @" +
                          stage.regions[r].op.getSymName().str();
      const Rect &rect = placed.rect;
      EXPECT_TRUE(rect.x >= 0 && rect.y >= 0 && rect.w >= 1 && rect.h >= 1 &&
                  rect.x + rect.w <= mesh.w && rect.y + rect.h <= mesh.h)
          << where;
      // A token group's feature groups run along one row.
      EXPECT_LE(placed.layout.featureGroups, rect.w) << where;
      EXPECT_LE(placed.layout.tokenGroups,
                tokenGroupsOn(rect, placed.layout.featureGroups))
          << where;
      if (r > 0) {
        EXPECT_GE(placed.wave, regions[r - 1].wave) << where;
      }
      for (size_t other = 0; other < r; ++other) {
        if (regions[other].wave != placed.wave)
          continue;
        EXPECT_FALSE(rect.overlaps(regions[other].rect)) << where;
        EXPECT_FALSE(llvm::is_contained(stage.regions[r].reads, other))
            << where;
      }
    }
    if (std::optional<int64_t> slot = placement.slots[s]) {
      auto [it, inserted] = bands.try_emplace(*slot, regions.front().rect);
      for (const RegionPlacement &placed : regions)
        EXPECT_EQ(placed.rect, it->second) << what << " " << stage.name;
    }
  }
  for (auto first = bands.begin(); first != bands.end(); ++first)
    for (auto second = std::next(first); second != bands.end(); ++second)
      EXPECT_FALSE(first->second.overlaps(second->second))
          << what << " slots " << first->first << " and " << second->first;
}

/// The splits a search tries fit the rectangle, and each count of groups
/// takes the widest segments that hold it: on 16 x 12 cores, 20 items in
/// 20 groups take two segments a row, 8 wide; in 10 groups down to 1, one
/// segment a row, 16 wide; powers of two make 192 groups of 1 to 12 of 16.
/// Attention's blocks are the widest for each count along and down: 16,
/// 8, 5, 4, 3, 2, 1 wide by 12, 6, 4, 3, 2, 1 high.
TEST_F(PlacerTest, CandidatesFitTheirRectangle) {
  Rect rect{0, 0, 16, 12};
  llvm::SmallVector<Layout> tried =
      layoutCandidates(rect, 20, /*lanes=*/1, Edge::north);
  for (const Layout &layout : tried) {
    EXPECT_LE(layout.featureGroups, rect.w);
    EXPECT_LE(layout.tokenGroups, tokenGroupsOn(rect, layout.featureGroups));
  }
  auto has = [&](int64_t tokenGroups, int64_t featureGroups) {
    return llvm::any_of(tried, [&](const Layout &layout) {
      return layout.tokenGroups == tokenGroups &&
             layout.featureGroups == featureGroups;
    });
  };
  EXPECT_TRUE(has(192, 1));
  EXPECT_TRUE(has(12, 16));
  EXPECT_TRUE(has(20, 8));
  EXPECT_TRUE(has(10, 16));
  EXPECT_TRUE(has(1, 16));
  llvm::SmallVector<Layout> blocks =
      attentionCandidates(/*seqLen=*/64, rect, Edge::none);
  EXPECT_EQ(blocks.size(), 7u * 6u);
  EXPECT_EQ(blocks.front().tokenGroups, 12);
  EXPECT_EQ(blocks.front().featureGroups, 16);
  // Four heads of 64 sequences: 256 pairs shared by the whole blocks.
  for (const Layout &block : blocks) {
    int64_t whole =
        (rect.w / block.featureGroups) * (rect.h / block.tokenGroups);
    EXPECT_EQ(attentionPass({KernelKind::attention, 256, 64, 16}, block, rect,
                            /*microBatch=*/64)
                  .pairsPerBlock,
              (256 + whole - 1) / whole);
  }
}

TEST_F(PlacerTest, EveryPlacementIsSound) {
  for (auto [file, target] : kModels) {
    DeviceOp device = compile(file, target);
    StepProgram program = programOf(device);
    for (llvm::StringRef name : getPlacerNames()) {
      std::string whyNot,
          what = std::string(file) + " on " + target + " by " + name.str();
      std::optional<Placement> placement =
          createPlacer(name)->place(program, device.getMicroBatch(), whyNot);
      if (!placement) {
        // Only layer pipelining may refuse, and only for want of room.
        EXPECT_EQ(name, "pipelined") << what << ": " << whyNot;
        continue;
      }
      EXPECT_EQ(placement->placer, name.str());
      expectSound(program, *placement, what);
    }
  }
}

/// whole-mesh: every region on the whole mesh, one wave each, a stage's
/// token-major regions on one split.
TEST_F(PlacerTest, WholeMeshRunsOneKernelAtATime) {
  DeviceOp device = compile("models/cerebras-gpt-111m.yaml", "wse2");
  StepProgram program = programOf(device);
  Placement placement =
      placeWith("whole-mesh", program, device.getMicroBatch());
  EXPECT_EQ(placement.mode, ExecutionMode::weight_streaming);
  for (auto [s, stage] : llvm::enumerate(program.getStages())) {
    std::optional<Layout> shared;
    for (auto [r, region] : llvm::enumerate(stage.regions)) {
      const RegionPlacement &placed = placement.regions[s][r];
      EXPECT_EQ(placed.rect, program.getMesh());
      EXPECT_EQ(placed.wave, static_cast<int64_t>(r));
      if (region.shape.kind == KernelKind::attention)
        continue;
      if (!shared)
        shared = placed.layout;
      EXPECT_EQ(placed.layout.tokenGroups, shared->tokenGroups);
      EXPECT_EQ(placed.layout.featureGroups, shared->featureGroups);
    }
  }
}

/// side-by-side: a stage never takes longer than one after another on the
/// whole mesh (kernel by kernel, before any weight arrives), and a layer's
/// independent gradients share the mesh somewhere.
TEST_F(PlacerTest, SideBySideNeverSlowerThanOneAfterAnother) {
  for (auto [file, target] : kModels) {
    DeviceOp device = compile(file, target);
    StepProgram program = programOf(device);
    int64_t micro = device.getMicroBatch();
    TimedPlacement whole = TimedPlacement::of(
        program, placeWith("whole-mesh", program, micro), micro);
    TimedPlacement side = TimedPlacement::of(
        program, placeWith("side-by-side", program, micro), micro);
    for (size_t s = 0; s < program.getStages().size(); ++s) {
      double sequential = 0, waves = 0, wave = 0;
      for (size_t r = 0; r < whole.times[s].size(); ++r) {
        sequential += whole.times[s][r].cycles();
        if (r > 0 && side.placement.regions[s][r].wave !=
                         side.placement.regions[s][r - 1].wave) {
          waves += wave;
          wave = 0;
        }
        wave = std::max(wave, side.times[s][r].cycles());
      }
      waves += wave;
      EXPECT_LE(waves, sequential * (1 + 1e-12))
          << file << " on " << target << " " << program.getStages()[s].name;
    }
  }
}

/// pipelined: a slot per layer, the embedding and the loss, in the order
/// the forward pass reaches them, west to east; a layer's backward stage on
/// its forward stage's band; weights held, not streamed.
TEST_F(PlacerTest, PipelinedSlotsFollowTheForwardPass) {
  DeviceOp device = compile("models/tiny.yaml", "mini");
  StepProgram program = programOf(device);
  Placement placement = placeWith("pipelined", program, 1);
  EXPECT_EQ(placement.mode, ExecutionMode::layer_pipelined);
  // embed, h.0, h.1, head.
  EXPECT_EQ(placement.numSlots(), program.getLayers() + 2);
  std::map<std::string, int64_t> slotOf;
  int64_t previousX = -1;
  for (auto [s, stage] : llvm::enumerate(program.getStages())) {
    int64_t slot = *placement.slots[s];
    if (stage.phase == "forward" && stage.layer) {
      slotOf["h." + std::to_string(*stage.layer)] = slot;
      EXPECT_GT(placement.regions[s][0].rect.x, previousX);
      previousX = placement.regions[s][0].rect.x;
    }
    if (stage.phase == "backward" && stage.layer) {
      EXPECT_EQ(slot, slotOf["h." + std::to_string(*stage.layer)]);
    }
    for (auto [r, region] : llvm::enumerate(stage.regions))
      if (region.shape.kind == KernelKind::weight_matmul) {
        EXPECT_EQ(placement.regions[s][r].layout.weights, Edge::resident);
      }
  }
}

} // namespace
