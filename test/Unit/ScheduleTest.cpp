//===- ScheduleTest.cpp - a placed step as a timeline ---------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The schedule on hand-written wafer IR (test/Dialect/Wafer/Inputs), and its
// invariants on real models: a pass is never faster than its weights' I/O
// or its FLOPs at peak; time per sample never rises as the micro-batch
// doubles; more of any hardware resource or more systems (every count to 64)
// never slow a step, and less never speeds it up. And the contract:
// the schedule times what the IR places, so an edited layout or a wave of
// regions side by side changes the step by what the kernel terms say.
//
//===----------------------------------------------------------------------===//

#include "WaferFixture.h"

#include "Dialect/Wafer/Analysis/ScheduleTail.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

#include <set>

using namespace cgpt;
using namespace cgpt::wafer;

namespace {

using Kind = CheckpointPolicy::Kind;
using ScheduleTest = test::WaferFixture;

/// Small and large models on each target, for the invariants.
const std::pair<const char *, const char *> kModels[] = {
    {"models/tiny.yaml", "mini"},
    {"models/cerebras-gpt-111m.yaml", "wse2"},
    {"models/cerebras-gpt-1.3b.yaml", "wse3"}};

/// deep-checkpoints.mlir: offloading brings every checkpoint back over the
/// system's I/O, and recomputing streams the rebuilt layers' weights again.
TEST_F(ScheduleTest, CheckpointPoliciesCost) {
  DeviceOp device = parseInput("deep-checkpoints.mlir");
  StepProgram program = programOf(device);
  Placement placement = placeWith("whole-mesh", program, 1);
  const int64_t mib = 1 << 20;
  // A pass takes at least the weights and the four layers' 2 MiB coming in.
  const target::WaferTargetModel &t = program.getTarget();
  double weightBytes = 0;
  device.walk([&](IngressOp in) { weightBytes += in.getBytes(); });
  EXPECT_GE(
      estimate(program, placement, 1, {Kind::offload, 0}).firstPassSeconds,
      (weightBytes + 4 * 2 * mib) / t.getIoBytesPerSecond());
  // Recomputing streams the rebuilt layers' weights again and runs them
  // again: slower than a policy that keeps, at the same micro-batch.
  EXPECT_GT(estimate(program, placement, 1, {Kind::every, 2}).firstPassSeconds,
            estimate(program, placement, 1, {Kind::keep, 0}).firstPassSeconds);
}

/// A pass takes at least its weights' I/O (in, forward and backward) and
/// its FLOPs at the mesh's peak.
TEST_F(ScheduleTest, PassLowerBounds) {
  for (auto [file, target] : kModels) {
    DeviceOp device = compile(file, target);
    const target::WaferTargetModel &t = **device.getTargetModel();
    double weightBytes = 0;
    device.walk([&](IngressOp in) { weightBytes += in.getBytes(); });
    int64_t micro = device.getMicroBatch();
    double pass = plannedStep(device).firstPassSeconds;
    EXPECT_GE(pass, weightBytes / t.getIoBytesPerSecond()) << file;
    EXPECT_GE(pass, static_cast<double>(device.getFlopsPerSequence()) * micro /
                        t.getPeakFlopsPerSecond())
        << file;
  }
}

/// At a fixed policy, a larger micro-batch never makes a sequence slower:
/// fills and streamed weights are shared by more tokens, and the layout
/// search can give each core whole SIMD widths of tokens. Splits are whole
/// numbers of cores, tokens and features, so between two micro-batches the
/// best split can leave a core a fraction of a percent more per token: the
/// check allows 0.5% (docs/wafer.md).
TEST_F(ScheduleTest, TimePerSampleNeverRisesWithTheMicroBatch) {
  for (auto [file, target] : kModels) {
    DeviceOp device = compile(file, target);
    StepProgram program = programOf(device);
    int64_t sram = program.getTarget().getCoreSramBytes();
    for (CheckpointPolicy policy : {CheckpointPolicy{Kind::keep, 0},
                                    CheckpointPolicy{Kind::offload, 0}}) {
      double previous = 0;
      for (int64_t micro = 1; micro <= device.getPerSystemBatch(); ++micro) {
        if (device.getPerSystemBatch() % micro != 0)
          continue;
        Placement placement = placeWith("whole-mesh", program, micro);
        if (memoryPeak(program, placement, micro, policy).memory.total() > sram)
          break;
        double perSample =
            estimate(program, placement, micro, policy).firstPassSeconds /
            micro;
        if (previous > 0) {
          EXPECT_LE(perSample, previous * 1.005)
              << file << " at " << micro << " with " << policy.str();
        }
        previous = perSample;
      }
    }
  }
}

/// The reduce tree's depth (fan-out 4) shows in the step's tail: 16
/// systems, two levels.
TEST_F(ScheduleTest, SixteenSystemsReduceThroughTwoLevels) {
  DeviceOp device = compile("models/cerebras-gpt-1.3b.yaml", "wse2", 16);
  EXPECT_GE(plannedStep(device).reduceSeconds,
            2 * (*device.getTargetModel())->getReduceLevelLatencySeconds());
}

/// The broadcast/reduce tree between the weight servers and N systems has
/// fan-out 4 on every target: ceil(log4 N) levels, each paying the
/// target's level latency: none for one system, one for 2 to 4, two for 5
/// to 16, three for 17 to 64.
TEST_F(ScheduleTest, ReduceTreeDepthIsLogOfTheFanOut) {
  for (const char *name : {"wse2", "wse3", "mini"}) {
    const target::WaferTargetModel &t =
        **target::WaferTargetModel::loadShared(name, &context);
    ASSERT_EQ(t.getReduceFanout(), 4) << name;
    double level = t.getReduceLevelLatencySeconds();
    for (int64_t systems = 1; systems <= 64; ++systems) {
      int64_t depth = systems == 1    ? 0
                      : systems <= 4  ? 1
                      : systems <= 16 ? 2
                                      : 3;
      EXPECT_DOUBLE_EQ(detail::Cluster::of(t, systems).treeLatency,
                       depth * level)
          << name << ", " << systems << " systems";
    }
  }
}

/// Clipping scales every gradient by the norm of all of them, so the
/// weight servers update nothing before the last gradient has arrived:
/// then every parameter, 28 B each at the servers' 1.2 TB/s. tiny on mini:
/// 120,576 x 28 / 1.2e12 = 2.81344e-6 s; Cerebras-GPT 1.3B on WSE-2:
/// 1,315,723,264 x 28 / 1.2e12 = 3.07002095e-2 s. Unclipped, a tensor is
/// updated as soon as its gradient is in, mostly while the last pass runs.
TEST_F(ScheduleTest, ClippedUpdateWaitsForTheLastGradient) {
  for (auto [file, target, optimizer] :
       {std::tuple{"models/tiny.yaml", "mini", 2.81344e-6},
        std::tuple{"models/cerebras-gpt-1.3b.yaml", "wse2", 3.07002095e-2}}) {
    DeviceOp device = compile(file, target);
    ASSERT_GT(device.getMaxGradientNorm().convertToDouble(), 0) << file;
    StepEstimate clipped = plannedStep(device);
    EXPECT_NEAR(clipped.optimizerSeconds, optimizer, 1e-9 * optimizer) << file;
    device.setMaxGradientNormAttr(
        mlir::FloatAttr::get(mlir::Float64Type::get(&context), 0.0));
    StepEstimate unclipped = plannedStep(device);
    EXPECT_LT(unclipped.optimizerSeconds, clipped.optimizerSeconds) << file;
    EXPECT_DOUBLE_EQ(unclipped.passesSeconds, clipped.passesSeconds) << file;
    EXPECT_NEAR(clipped.stepSeconds - unclipped.stepSeconds,
                clipped.optimizerSeconds - unclipped.optimizerSeconds,
                1e-12 * clipped.stepSeconds)
        << file;
  }
}

/// `target`'s built-in file with each of `keys` (the first line giving
/// each, indented as a section's key) multiplied by `factor`, written to a
/// temporary file.
std::string scaledTarget(const std::string &target,
                         llvm::ArrayRef<const char *> keys, double factor) {
  std::string text = test::builtinTargetText(target);
  for (const char *key : keys) {
    size_t at = text.find("\n  " + std::string(key) + ": ");
    EXPECT_NE(at, std::string::npos) << key;
    size_t start = text.find(": ", at) + 2, end = text.find('\n', start);
    std::string value = text.substr(start, end - start);
    bool integer = value.find_first_of(".e") == std::string::npos;
    std::string scaled =
        integer
            ? std::to_string(static_cast<int64_t>(std::stod(value) * factor))
            : llvm::formatv("{0:e6}", std::stod(value) * factor).str();
    text.replace(start, end - start, scaled);
  }
  return test::writeTemporary(text, "yaml");
}

/// Over every built-in target and models from 111M to 20B: twice the SRAM,
/// twice the FLOPs per cycle, twice the I/O, link or weight-server
/// bandwidth never make a planned step slower, and half of any never makes
/// it faster (or it no longer compiles). The planner weighs every earlier
/// choice again, and none of them gets slower.
TEST_F(ScheduleTest, MoreOfAnyResourceNeverSlower) {
  const std::pair<const char *, const char *> cases[] = {
      {"models/tiny.yaml", "mini"},
      {"models/tiny.yaml", "wse2"},
      {"models/cerebras-gpt-111m.yaml", "wse2"},
      {"models/cerebras-gpt-111m.yaml", "wse3"},
      {"models/cerebras-gpt-1.3b.yaml", "wse2"},
      {"models/cerebras-gpt-1.3b.yaml", "wse3"},
      {"models/cerebras-gpt-13b.yaml", "wse2"},
      {"models/gpt-neox-20b.yaml", "wse3"}};
  // Keys as the target files indent them; bandwidth_bytes_per_second is
  // the weight servers' (the first that file gives).
  const std::vector<std::vector<const char *>> resources = {
      {"sram_bytes"},
      {"flops_per_cycle", "mixed_fmacs_per_cycle", "f32_fmacs_per_cycle"},
      {"io_bytes_per_second"},
      {"link_bytes_per_cycle"},
      {"bandwidth_bytes_per_second", "optimizer_bytes_per_second"}};
  for (auto [file, target] : cases) {
    double base = plannedStep(compile(file, target)).samplesPerSecond;
    for (const std::vector<const char *> &keys : resources) {
      std::string more = scaledTarget(target, keys, 2.0);
      double rate = plannedStep(compile(file, more)).samplesPerSecond;
      EXPECT_GE(rate, base * (1 - 1e-12))
          << file << " on " << target << " with twice " << keys.front();
      llvm::sys::fs::remove(more);
      std::string less = scaledTarget(target, keys, 0.5);
      if (std::optional<StepEstimate> halved = plannedStepIfAny(file, less)) {
        EXPECT_LE(halved->samplesPerSecond, base * (1 + 1e-12))
            << file << " on " << target << " with half " << keys.front();
      }
      llvm::sys::fs::remove(less);
    }
  }
}

/// More systems share the batch, so a step never takes longer, whether or
/// not the micro-batch divides each system's share, at every count from 1
/// to 64 on four models of different shapes (dense GPT-3 at two sizes, a
/// LLaMA block, GPT-NeoX's parallel block), except by the latency a deeper
/// reduce tree adds on the step's first weights and last gradients (two
/// crossings per added level).
TEST_F(ScheduleTest, MoreSystemsNeverSlower) {
  const std::pair<const char *, const char *> cases[] = {
      {"models/cerebras-gpt-111m.yaml", "wse2"},
      {"models/cerebras-gpt-13b.yaml", "wse2"},
      {"models/llama-2-7b.yaml", "wse3"},
      {"models/gpt-neox-20b.yaml", "wse3"}};
  for (auto [file, target] : cases) {
    StepEstimate previous = plannedStep(compile(file, target));
    int64_t previousDepth = 0;
    for (int64_t systems = 2; systems <= 64; ++systems) {
      DeviceOp device = compile(file, target, systems);
      const target::WaferTargetModel &t = **device.getTargetModel();
      int64_t depth = 0;
      for (int64_t reach = 1; reach < systems; reach *= t.getReduceFanout())
        ++depth;
      StepEstimate step = plannedStep(device);
      EXPECT_LE(step.stepSeconds, previous.stepSeconds +
                                      2 * (depth - previousDepth) *
                                          t.getReduceLevelLatencySeconds() +
                                      1e-12 * previous.stepSeconds)
          << file << " on " << target << " at " << systems << " systems";
      previous = step;
      previousDepth = depth;
    }
  }
}

} // namespace

namespace {

/// The region of `program`'s stage `stageName` named `regionName`, by
/// index: {stage, region}.
std::pair<size_t, size_t> find(const StepProgram &program,
                               llvm::StringRef stageName,
                               llvm::StringRef regionName) {
  for (auto [s, stage] : llvm::enumerate(program.getStages()))
    for (auto [r, region] : llvm::enumerate(stage.regions))
      if (stage.name == stageName && region.op.getSymName() == regionName)
        return {s, r};
  ADD_FAILURE() << "no region @" << regionName.str() << " in "
                << stageName.str();
  return {0, 0};
}

/// Editing a region's layout in the placed IR moves the step by exactly
/// what the kernel terms say at the new layout: the schedule times the IR
/// and nothing else.
TEST_F(ScheduleTest, HalvedFeatureGroupsMoveTheStepByTheKernelTerms) {
  DeviceOp device = compile("models/tiny.yaml", "mini", 1, "whole-mesh");
  StepProgram program = programOf(device);
  const target::WaferTargetModel &t = program.getTarget();
  int64_t micro = device.getMicroBatch();
  CheckpointPolicy policy = CheckpointPolicy::fromAttr(*device.getCheckpoint());
  auto [s, r] = find(program, "h.0.forward", "matmul.5");
  const ProgramRegion &region = program.getStages()[s].regions[r];
  Placement before = *Placement::fromIR(program);
  const RegionPlacement &placed = before.regions[s][r];
  Layout halved = placed.layout;
  halved.featureGroups /= 2;
  double cyclesBefore =
      kernelTime({region.shape, placed.layout, placed.rect, micro, t}).cycles();
  double cyclesAfter =
      kernelTime({region.shape, halved, placed.rect, micro, t}).cycles();
  ASSERT_GT(cyclesAfter, cyclesBefore);

  LayoutAttr layout = region.op.getLayoutAttr();
  region.op.setLayoutAttr(LayoutAttr::get(
      &context, layout.getTokenGroups(), layout.getFeatureGroups() / 2,
      layout.getWeights(), layout.getPartials(), layout.getSumBlock(),
      layout.getKeyBlock()));
  Placement after = *Placement::fromIR(program);
  double moved = estimate(program, after, micro, policy).passesSeconds -
                 estimate(program, before, micro, policy).passesSeconds;
  EXPECT_NEAR(moved, (cyclesAfter - cyclesBefore) / t.getClockHz(),
              1e-9 * moved);
}

/// Two weight matmuls of one stage on the 16 x 12 mini mesh, read nothing
/// of each other: one after another over the whole mesh, or side by side
/// in one wave, each on half the columns. The stage takes the sum of their
/// times in the first case and the longer of the two in the second.
constexpr llvm::StringLiteral kTwoMatmuls = R"mlir(
wafer.device @pair target "mini" attributes {checkpoint = #wafer.checkpoint<keep>, execution = #wafer.execution<weight_streaming>, flops_per_sequence = 1048576 : i64, global_batch = 4 : i64, grad_accum_steps = 1 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 4 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 8192 : i64, placer = "side-by-side", seq_len = 64 : i64} {
  wafer.stage @s order 0 "forward" {
    wafer.region @a weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = WA, h = 12> layout <token_groups = 12, feature_groups = GA, weights = north, partials = rows> wave 0 {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 524288 : i64, live = 16384 : i64, reads = [], shape = array<i64: 64, 64, 64>, weight_bytes = 8192 : i64}
    wafer.region @b weight_matmul "dataflow.matmul" at <x = XB, y = 0, w = WB, h = 12> layout <token_groups = 12, feature_groups = GB, weights = north, partials = rows> wave WAVE {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 524288 : i64, live = 16384 : i64, reads = [], shape = array<i64: 64, 64, 64>, weight_bytes = 8192 : i64}
  }
}
)mlir";

TEST_F(ScheduleTest, RegionsOfAWaveRunAtOnce) {
  auto stageSeconds = [&](bool sideBySide) {
    std::string text = kTwoMatmuls.str();
    auto set = [&](llvm::StringRef key, int64_t value) {
      size_t at = text.find(key.str());
      ASSERT_NE(at, std::string::npos) << key.str();
      text.replace(at, key.size(), std::to_string(value));
    };
    // Waves first: "WA" would also match the start of "WAVE".
    set("WAVE", sideBySide ? 0 : 1);
    set("WA", sideBySide ? 8 : 16);
    set("GA", sideBySide ? 8 : 16);
    set("XB", sideBySide ? 8 : 0);
    set("WB", sideBySide ? 8 : 16);
    set("GB", sideBySide ? 8 : 16);
    StepProgram program = programOf(parseText(text));
    Placement placement = *Placement::fromIR(program);
    double seconds = 0;
    for (auto [r, region] : llvm::enumerate(program.getStages()[0].regions)) {
      double cycles =
          region
              .cost({region.shape, placement.regions[0][r].layout,
                     placement.regions[0][r].rect, 4, program.getTarget()})
              .cycles();
      double regionSeconds = cycles / program.getTarget().getClockHz();
      seconds = sideBySide ? std::max(seconds, regionSeconds)
                           : seconds + regionSeconds;
    }
    struct Stages : ScheduleObserver {
      double seconds = 0;
      void interval(llvm::StringRef, llvm::StringRef, double, double,
                    const IntervalFacts &) override {}
      void stage(const StageRun &run) override {
        seconds = run.end - run.start;
      }
    } observer;
    estimateStep(program, TimedPlacement::of(program, placement, 4),
                 CheckpointPolicy{}, &observer);
    EXPECT_NEAR(observer.seconds, seconds, 1e-12) << sideBySide;
    return observer.seconds;
  };
  double oneAfterAnother = stageSeconds(false);
  double sideBySide = stageSeconds(true);
  EXPECT_LT(sideBySide, oneAfterAnother);
}

/// Regions whose shapes differ only in what their programs do (a map's
/// function, a lookup's fused positions, a router's choice) cost apart,
/// so the layout search and the timing, which decide once a class, do not
/// take one for the other.
TEST_F(ScheduleTest, RegionsThatRunOtherProgramsAreOtherCostClasses) {
  StepProgram program = programOf(parseText(R"mlir(
wafer.device @d target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 8 : i64, grad_accum_steps = 2 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 4 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 : i64, seq_len = 4 : i64} {
  wafer.stage @s0 order 0 "forward" {
    wafer.region @gelu elementwise "dataflow.map" map gelu {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 1>}
    wafer.region @mul elementwise "dataflow.map" map mul {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 1>}
    wafer.region @lookup embedding "dataflow.gather" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 2, 1>, weight_bytes = 64 : i64}
    wafer.region @positioned embedding "dataflow.gather" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, fused = ["dataflow.add_positions"], live = 16 : i64, shape = array<i64: 4, 2, 1>, weight_bytes = 64 : i64}
    wafer.region @top1 weight_matmul "dataflow.route" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 3, 2>, top_k = 1 : i64, weight_bytes = 12 : i64}
    wafer.region @top2 weight_matmul "dataflow.route" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, shape = array<i64: 4, 3, 2>, top_k = 2 : i64, weight_bytes = 12 : i64}
    wafer.region @null weight_matmul "dataflow.route" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, null_expert = 0.5 : f64, shape = array<i64: 4, 3, 2>, top_k = 2 : i64, weight_bytes = 12 : i64}
    wafer.region @f32 weight_matmul "dataflow.route" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 8 : i64, live = 16 : i64, router_f32, shape = array<i64: 4, 3, 2>, top_k = 2 : i64, weight_bytes = 12 : i64}
  }
}
)mlir"));
  std::set<int64_t> classes;
  for (const ProgramRegion &region : program.getStages()[0].regions)
    classes.insert(region.costClass);
  EXPECT_EQ(classes.size(), program.getStages()[0].regions.size());
}

} // namespace
