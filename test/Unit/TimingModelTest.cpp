//===- TimingModelTest.cpp - pieces of the runtime's timing model ---------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Each piece of the timing model checked against the formula it stands for,
// with every constant read from the built-in targets.
//
//===----------------------------------------------------------------------===//

#include "cgpt/InitAllDialects.h"
#include "cgpt/Sim/Simulator.h"
#include "cgpt/Sim/WaferModel.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <string>

using namespace cgpt;
using namespace cgpt::wafer;

namespace {

class TimingModel : public ::testing::Test {
protected:
  TimingModel() : context(registry()) {
    context.loadAllAvailableDialects();
    target = *target::WaferTargetModel::load("mini", &context);
  }

  static mlir::DialectRegistry registry() {
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    return registry;
  }

  /// A planned one-system device on the mini mesh (16 x 12) whose only
  /// stage holds `body`; one micro-batch of one sequence.
  DeviceOp parseDevice(const std::string &body) {
    std::string text =
        "wafer.device @d target \"mini\" mesh 16 x 12 attributes "
        "{flops_per_sequence = 1 : i64, global_batch = 1 : i64, "
        "grad_accum_steps = 1 : i64, kept_bytes_per_sequence = 0 : i64, "
        "micro_batch = 1 : i64, micro_batch_request = "
        "#transformer.micro_batch<auto>, num_csx = 1 : i64, parameters = 1 "
        ": i64, seq_len = 4 : i64, sram_bytes = 49152 : i64} {\n"
        "wafer.stage @s order 0 \"forward\" {\n" +
        body + "}\n}\n";
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    EXPECT_TRUE(module) << text;
    return *module->getOps<DeviceOp>().begin();
  }

  /// A region of `cores` = w x h at (x, 0) executing `flops` in one tile.
  static std::string region(const std::string &name, int64_t x, int64_t w,
                            int64_t h, int64_t flops) {
    return "wafer.region @" + name +
           " \"dataflow.map\" at <x = " + std::to_string(x) +
           ", y = 0, w = " + std::to_string(w) + ", h = " + std::to_string(h) +
           "> {accumulator = 0 : i64, efficiency = 1.0 : f64, flops = " +
           std::to_string(flops) +
           " : i64, sram_bytes = 0 : i64, stationary = 0 : i64, "
           "stream_buffers = 0 : i64, tile = array<i64: 1, 1>, tiles = " +
           std::to_string(w * h) + " : i64, working_set = 0 : i64}\n";
  }

  mlir::MLIRContext context;
  target::WaferTargetModel target;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

/// A transfer pays its bytes over the narrower region's half-perimeter of
/// links, plus one hop latency per mesh hop: k hops cost k latencies.
TEST_F(TimingModel, TransferAcrossKHops) {
  const int64_t bytes = 1 << 20;
  auto transfer = [&](int64_t destX) {
    DeviceOp device = parseDevice(
        region("a", 0, 1, 2, 1) + region("b", destX, 2, 2, 1) +
        "wafer.flow @a -> @b bytes " + std::to_string(bytes) +
        " color 0 route [0, 0, " + std::to_string(destX) + ", 0]\n");
    auto stage = *device.getBody().front().getOps<StageOp>().begin();
    auto flow = *stage.getBody().front().getOps<FlowOp>().begin();
    EXPECT_EQ(flow.getHops(), destX);
    return sim::flowSeconds(flow, stage, target, /*microBatch=*/1);
  };
  double clock = target.getClockHz();
  // Region a is 1 x 2: three links across its boundary.
  double streaming =
      static_cast<double>(bytes) / (3 * target.getLinkBytesPerCycle() * clock);
  double hop = target.getHopLatencyCycles() / clock;
  for (int64_t k : {1, 4, 12})
    EXPECT_DOUBLE_EQ(transfer(k), streaming + k * hop) << k << " hops";
}

/// The reduce tree has ceil(log2 N) levels, each a latency; the bytes
/// cross it once at the reduce bandwidth. One system reduces nothing.
TEST_F(TimingModel, ReduceOverNSystems) {
  const double bytes = 1e9;
  EXPECT_EQ(sim::reduceSeconds(target, 1, bytes), 0);
  double stream = bytes / target.getReduceBytesPerSecond();
  double level = target.getReduceLevelLatencySeconds();
  EXPECT_DOUBLE_EQ(sim::reduceSeconds(target, 2, bytes), stream + level);
  EXPECT_DOUBLE_EQ(sim::reduceSeconds(target, 5, bytes), stream + 3 * level);
  EXPECT_DOUBLE_EQ(sim::reduceSeconds(target, 16, bytes), stream + 4 * level);
}

/// A layer with large weights and little work waits on the system's I/O;
/// one with much work and few weights waits on its cores.
TEST_F(TimingModel, IoBoundVersusComputeBound) {
  const int64_t weightBytes = 64 << 20;
  DeviceOp ioBound =
      parseDevice(region("a", 0, 4, 4, 1) + "wafer.ingress \"w\" -> @a bytes " +
                  std::to_string(weightBytes) + " at [0, 0]\n");
  sim::SimulationResult io = *sim::simulateStep(ioBound, target);
  ASSERT_EQ(io.stages.size(), 1u);
  EXPECT_EQ(io.stages[0].bound, "weights in");
  double inRate = std::min(target.getIoBytesPerSecond(),
                           target.getWeightServerBytesPerSecond());
  // The token ids and labels of the one sequence come in first.
  double tokenBytes = 2.0 * 4 * 4;
  EXPECT_DOUBLE_EQ(io.stages[0].end - io.stages[0].start,
                   (weightBytes + tokenBytes) / inRate);

  const int64_t flops = int64_t(1) << 40;
  DeviceOp computeBound =
      parseDevice(region("a", 0, 4, 4, flops) +
                  "wafer.ingress \"w\" -> @a bytes 1024 at [0, 0]\n");
  sim::SimulationResult compute = *sim::simulateStep(computeBound, target);
  ASSERT_EQ(compute.stages.size(), 1u);
  EXPECT_EQ(compute.stages[0].bound, "compute");
  double peak = 16 * target.getFlopsPerCycle() * target.getClockHz();
  EXPECT_DOUBLE_EQ(compute.stages[0].end - compute.stages[0].start,
                   static_cast<double>(flops) / peak);
}

/// Accumulation repeats the pass; the step is the passes, then the reduce
/// and the optimizer.
TEST_F(TimingModel, StepIsPassesThenReduceThenOptimizer) {
  DeviceOp device = parseDevice(region("a", 0, 4, 4, 1 << 30));
  device->setAttr("global_batch", mlir::IntegerAttr::get(
                                      mlir::IntegerType::get(&context, 64), 4));
  device->setAttr(
      "grad_accum_steps",
      mlir::IntegerAttr::get(mlir::IntegerType::get(&context, 64), 4));
  sim::SimulationResult result = *sim::simulateStep(device, target);
  EXPECT_EQ(result.passes, 4);
  EXPECT_NEAR(result.systemSeconds, 4 * result.firstPassSeconds,
              1e-12 * result.systemSeconds);
  EXPECT_DOUBLE_EQ(result.stepSeconds, result.systemSeconds +
                                           result.reduceSeconds +
                                           result.optimizerSeconds);
}

} // namespace
