//===- ExecutionModelTest.cpp - the wafer's execution model ---------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The execution model against hand-computed values on hand-written wafer IR
// (test/Dialect/Wafer/Inputs), and its invariants on real models: a pass is
// never faster than its weights' I/O or its FLOPs at peak; time per sample
// never rises as the micro-batch doubles; a model whose checkpoints do not
// fit gets a policy that does; more SRAM or more systems never slow a step.
//
//===----------------------------------------------------------------------===//

#include "TestModels.h"

#include "cgpt/Dialect/Wafer/Analysis/ExecutionModel.h"
#include "cgpt/InitAllDialects.h"
#include "cgpt/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace cgpt;
using namespace cgpt::wafer;

namespace {

using Kind = CheckpointPolicy::Kind;

class ExecutionModelTest : public ::testing::Test {
protected:
  ExecutionModelTest() : context(registry()) {
    context.loadAllAvailableDialects();
  }

  static mlir::DialectRegistry registry() {
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    return registry;
  }

  /// Parses hand-written wafer IR from test/Dialect/Wafer/Inputs.
  DeviceOp parseInput(const std::string &name) {
    module = mlir::parseSourceFile<mlir::ModuleOp>(
        test::sourcePath("test/Dialect/Wafer/Inputs/" + name), &context);
    EXPECT_TRUE(module) << name;
    return *module->getOps<DeviceOp>().begin();
  }

  /// Imports a model file and lowers it to planned wafer IR for `target`
  /// on `systems` systems.
  DeviceOp compile(const std::string &file, const std::string &target,
                   int64_t systems = 1) {
    module = test::importSourceModel(file, &context);
    EXPECT_TRUE(module) << file;
    module->walk([&](transformer::TrainStepOp step) {
      step.setNumCsx(systems);
    });
    mlir::PassManager pm(&context);
    LowerToDataflowOptions options;
    options.target = target;
    buildLowerToWaferPipeline(pm, options);
    EXPECT_TRUE(mlir::succeeded(pm.run(*module))) << file;
    return *module->getOps<DeviceOp>().begin();
  }

  /// The planned step's estimate for `device`: its micro-batch and policy.
  static StepEstimate plannedStep(DeviceOp device) {
    return ExecutionModel::build(device)->estimate(
        device.getMicroBatch(),
        CheckpointPolicy::fromAttr(*device.getCheckpoint()));
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

/// Small and large models on each target, for the invariants.
const std::pair<const char *, const char *> kModels[] = {
    {"models/tiny.yaml", "mini"},
    {"models/cerebras-gpt-111m.yaml", "wse2"},
    {"models/cerebras-gpt-1.3b.yaml", "wse3"}};

/// Live and checkpoint bytes per core, computed by hand. two-layers.mlir at
/// one sequence (64 tokens) on the 16 x 12 mini mesh: the forward stage
/// splits tokens 16 ways (4 per core, two SIMD widths) and features 12 ways
/// (192 cores), so a core holds 4 tokens of each activation, and
/// ceil(256 / 12) = 22 B of each token of the matmul's 16,384 live bytes
/// per sequence (256 B per token): 88 B. The two layers keep 8,192 B each
/// per sequence (256 B per token in all): 4 x 22 = 88 B.
TEST_F(ExecutionModelTest, LiveAndCheckpointBytesByHand) {
  DeviceOp device = parseInput("two-layers.mlir");
  mlir::FailureOr<ExecutionModel> model = ExecutionModel::build(device);
  ASSERT_TRUE(mlir::succeeded(model));
  Layout layout = model->stageLayout(0, 1);
  EXPECT_EQ(layout.tokenGroups, 16);
  EXPECT_EQ(layout.featureGroups, 12);
  CoreMemory memory = model->regionMemory(0, 1, 1, {Kind::keep, 0});
  EXPECT_EQ(memory.live, 88);
  EXPECT_EQ(memory.checkpoints, 88);
  EXPECT_EQ(memory.reserve, 8192);
  // The largest stage streams 8,192 B; double-buffered over 192 cores.
  EXPECT_EQ(memory.weightBuffers, 2 * 43);
  EXPECT_EQ(memory.accumulator, 0);
  // The weight gradient of a backward stage sums 16,384 B over 192 cores.
  EXPECT_EQ(model->regionMemory(2, 1, 1, {Kind::keep, 0}).accumulator, 86);
  // Offloaded, the wafer holds the checkpoint in use and the next one:
  // 2 x 8,192 B per sequence, the same as keeping both layers here.
  EXPECT_EQ(model->regionMemory(0, 1, 1, {Kind::offload, 0}).checkpoints, 88);
}

/// deep-checkpoints.mlir: four layers of 2 MiB of checkpoint per sequence.
/// Keeping all four (8 MiB) does not fit; keeping every second layer holds
/// layers 0 and 2 and rebuilds one: 6 MiB; offloading holds two: 4 MiB.
TEST_F(ExecutionModelTest, CheckpointPolicies) {
  DeviceOp device = parseInput("deep-checkpoints.mlir");
  mlir::FailureOr<ExecutionModel> model = ExecutionModel::build(device);
  ASSERT_TRUE(mlir::succeeded(model));
  Layout layout = model->stageLayout(0, 1);
  auto perCore = [&](int64_t perSequence) {
    int64_t tokens = (64 + layout.tokenGroups - 1) / layout.tokenGroups;
    int64_t perToken = perSequence / 64;
    return tokens * ((perToken + layout.featureGroups - 1) /
                     layout.featureGroups);
  };
  const int64_t mib = 1 << 20;
  EXPECT_EQ(model->regionMemory(0, 0, 1, {Kind::keep, 0}).checkpoints,
            perCore(8 * mib));
  EXPECT_EQ(model->regionMemory(0, 0, 1, {Kind::every, 2}).checkpoints,
            perCore(6 * mib));
  EXPECT_EQ(model->regionMemory(0, 0, 1, {Kind::offload, 0}).checkpoints,
            perCore(4 * mib));
  int64_t sram = model->getTarget().getCoreSramBytes();
  EXPECT_GT(model->memoryPeak(1, {Kind::keep, 0}).memory.total(), sram);
  EXPECT_LE(model->memoryPeak(1, {Kind::every, 2}).memory.total(), sram);
  EXPECT_LE(model->memoryPeak(1, {Kind::offload, 0}).memory.total(), sram);
  // Offloading brings every checkpoint back over the system's I/O: a pass
  // takes at least the weights and the four layers' 2 MiB coming in.
  const target::WaferTargetModel &t = model->getTarget();
  double weightBytes = 0;
  device.walk([&](IngressOp in) { weightBytes += in.getBytes(); });
  EXPECT_GE(model->estimate(1, {Kind::offload, 0}).firstPassSeconds,
            (weightBytes + 4 * 2 * mib) / t.getIoBytesPerSecond());
  // Recomputing streams the rebuilt layers' weights again and runs them
  // again: slower than a policy that keeps, at the same micro-batch.
  EXPECT_GT(model->estimate(1, {Kind::every, 2}).firstPassSeconds,
            model->estimate(1, {Kind::keep, 0}).firstPassSeconds);
}

/// A pass takes at least its weights' I/O (in, forward and backward) and
/// its FLOPs at the mesh's peak.
TEST_F(ExecutionModelTest, PassLowerBounds) {
  for (auto [file, target] : kModels) {
    DeviceOp device = compile(file, target);
    const target::WaferTargetModel &t = **device.getTargetModel();
    double weightBytes = 0;
    device.walk([&](IngressOp in) { weightBytes += in.getBytes(); });
    int64_t micro = device.getMicroBatch();
    double pass = plannedStep(device).firstPassSeconds;
    EXPECT_GE(pass, weightBytes / t.getIoBytesPerSecond()) << file;
    EXPECT_GE(pass, static_cast<double>(device.getFlopsPerSequence()) *
                        micro / t.getPeakFlopsPerSecond())
        << file;
  }
}

/// At a fixed policy, a larger micro-batch never makes a sequence slower:
/// fills and streamed weights are shared by more tokens, and the layout
/// search can give each core whole SIMD widths of tokens. Splits are whole
/// numbers of cores, tokens and features, so between two micro-batches the
/// best split can leave a core a fraction of a percent more per token: the
/// check allows 0.5% (docs/wafer.md).
TEST_F(ExecutionModelTest, TimePerSampleNeverRisesWithTheMicroBatch) {
  for (auto [file, target] : kModels) {
    DeviceOp device = compile(file, target);
    mlir::FailureOr<ExecutionModel> model = ExecutionModel::build(device);
    ASSERT_TRUE(mlir::succeeded(model));
    int64_t sram = model->getTarget().getCoreSramBytes();
    for (CheckpointPolicy policy :
         {CheckpointPolicy{Kind::keep, 0}, CheckpointPolicy{Kind::offload, 0}}) {
      double previous = 0;
      for (int64_t micro = 1; micro <= device.getPerSystemBatch(); ++micro) {
        if (device.getPerSystemBatch() % micro != 0)
          continue;
        if (model->memoryPeak(micro, policy).memory.total() > sram)
          break;
        double perSample =
            model->estimate(micro, policy).firstPassSeconds / micro;
        if (previous > 0) {
          EXPECT_LE(perSample, previous * 1.005)
              << file << " at " << micro << " with " << policy.str();
        }
        previous = perSample;
      }
    }
  }
}

/// More systems never make a step slower, and the reduce tree's depth
/// (fan-out 4) shows in its tail: 16 systems, two levels.
TEST_F(ExecutionModelTest, MoreSystemsNeverSlower) {
  double previous = 0;
  for (int64_t systems : {1, 2, 4, 8, 16}) {
    DeviceOp device = compile("models/cerebras-gpt-1.3b.yaml", "wse2", systems);
    StepEstimate step = plannedStep(device);
    if (previous > 0) {
      EXPECT_GE(step.samplesPerSecond, previous) << systems;
    }
    previous = step.samplesPerSecond;
    if (systems == 16) {
      EXPECT_GE(step.reduceSeconds,
                2 * (*device.getTargetModel())->getReduceLevelLatencySeconds());
    }
  }
}

/// A target with twice the SRAM per core never trains slower: the planner
/// can keep every earlier choice.
TEST_F(ExecutionModelTest, MoreSramNeverSlower) {
  std::ifstream in(test::sourcePath("lib/Target/targets/mini.yaml"));
  std::stringstream text;
  text << in.rdbuf();
  std::string doubled = text.str();
  size_t at = doubled.find("sram_bytes: 49152");
  ASSERT_NE(at, std::string::npos);
  doubled.replace(at, 17, "sram_bytes: 98304");
  std::string path = test::writeTemporary(doubled, "yaml");
  double smallRate =
      plannedStep(compile("models/tiny.yaml", "mini")).samplesPerSecond;
  double largeRate =
      plannedStep(compile("models/tiny.yaml", path)).samplesPerSecond;
  EXPECT_GE(largeRate, smallRate);
}

/// `target`'s built-in file with each of `keys` (the first line giving
/// each, indented as a section's key) multiplied by `factor`, written to a
/// temporary file.
std::string scaledTarget(const std::string &target,
                         llvm::ArrayRef<const char *> keys, double factor) {
  std::ifstream in(test::sourcePath("lib/Target/targets/" + target + ".yaml"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  for (const char *key : keys) {
    size_t at = text.find("\n  " + std::string(key) + ": ");
    EXPECT_NE(at, std::string::npos) << key;
    size_t start = text.find(": ", at) + 2, end = text.find('\n', start);
    std::string value = text.substr(start, end - start);
    bool integer = value.find_first_of(".e") == std::string::npos;
    std::string scaled =
        integer ? std::to_string(static_cast<int64_t>(std::stod(value) * factor))
                : llvm::formatv("{0:e6}", std::stod(value) * factor).str();
    text.replace(start, end - start, scaled);
  }
  return test::writeTemporary(text, "yaml");
}

/// Over every built-in target and models from 111M to 20B: twice the SRAM,
/// twice the FLOPs per cycle, twice the I/O, link or weight-server
/// bandwidth, or more systems never make a planned step slower. The planner
/// weighs every earlier choice again, and none of them gets slower.
TEST_F(ExecutionModelTest, MoreOfAnyResourceNeverSlower) {
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
    }
    // More systems share the batch, so a step never takes longer, except by
    // the latency a deeper reduce tree adds on the step's first weights and
    // last gradients (two crossings per added level): a step too small to
    // shrink with its batch (tiny on a whole wafer) shows exactly that.
    StepEstimate previous = plannedStep(compile(file, target));
    int64_t previousDepth = 0;
    for (int64_t systems : {2, 4, 8, 16}) {
      DeviceOp device = compile(file, target, systems);
      const target::WaferTargetModel &t = **device.getTargetModel();
      int64_t depth = 0;
      for (int64_t reach = 1; reach < systems; reach *= t.getReduceFanout())
        ++depth;
      StepEstimate step = plannedStep(device);
      EXPECT_LE(step.stepSeconds,
                previous.stepSeconds +
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
