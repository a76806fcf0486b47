//===- MeshSimulatorTest.cpp - the cycle-level mesh model -----------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Small programs whose cycle counts follow by hand, the malformed programs
// the model refuses, a deadlock it reports, and the idle-cycle skipping
// that must give what stepping every cycle gives.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/KernelPrograms.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace cgpt::sim::mesh;

namespace {

uint8_t bit(Port port) { return static_cast<uint8_t>(1u << port); }

MeshConfig config() {
  MeshConfig c;
  c.colors = 4;
  c.queueDepth = 2;
  c.activationCycles = 2;
  return c;
}

/// A row of `n` cores; the first sends `count` wavelets east on color 0,
/// every other core takes them in from the west and multicasts them on.
MeshProgram rowBroadcast(int n, int64_t count, int64_t work) {
  MeshProgram p(n, 1);
  for (int x = 0; x < n; ++x) {
    bool last = x + 1 == n;
    if (x == 0) {
      p.routes[0].push_back({0, bit(ramp), last ? uint8_t(0) : bit(east)});
      p.programs[0].push_back({Instruction::send, 0, 0, count, 1});
    } else {
      p.routes[x].push_back(
          {0, bit(west), uint8_t(bit(ramp) | (last ? 0 : bit(east)))});
      p.programs[x].push_back({Instruction::receive, 0, 0, count, work});
    }
  }
  return p;
}

/// Ten wavelets to a neighbour whose tasks take 3 cycles each (activation
/// 2, work 1): the sender's activation (2 cycles), the first wavelet's way
/// into the sender's router, across the hop and up the receiver's ramp (3
/// cycles, one each), then one task after another, the link keeping the
/// queue full: 2 + 3 + 10 x 3.
TEST(MeshSimulator, SendToNeighbourByHand) {
  std::string error;
  std::optional<MeshResult> result =
      simulate(rowBroadcast(2, 10, 1), config(), error);
  ASSERT_TRUE(result) << error;
  EXPECT_EQ(result->cycles, 2 + 3 + 10 * 3);
  EXPECT_EQ(result->coreCycles, 2 * result->cycles);
}

/// A receiver slower than the link: back-pressure holds the sender, and the
/// receiver's tasks set the pace: 10 tasks of activation + 5 cycles.
TEST(MeshSimulator, BackPressureSetsThePace) {
  std::string error;
  std::optional<MeshResult> result =
      simulate(rowBroadcast(2, 10, 5), config(), error);
  ASSERT_TRUE(result) << error;
  EXPECT_GE(result->cycles, 10 * (2 + 5));
  EXPECT_LE(result->cycles, 10 * (2 + 5) + 6);
}

/// Skipping idle cycles gives what stepping every cycle gives, on every
/// kernel kind the generator builds.
TEST(MeshSimulator, SkippingIdleCyclesChangesNothing) {
  mlir::MLIRContext context;
  auto target = cgpt::target::WaferTargetModel::load("wse2", &context);
  ASSERT_TRUE(mlir::succeeded(target));
  MeshConfig skipping = meshConfig(*target), stepping = skipping;
  stepping.skipIdleCycles = false;
  cgpt::wafer::KernelShape matmul;
  matmul.kind = cgpt::wafer::KernelKind::weight_matmul;
  matmul.rows = 16;
  matmul.columns = 32;
  matmul.contracted = 64;
  matmul.flops = 2 * 16 * 32 * 64;
  cgpt::wafer::KernelShape norm;
  norm.kind = cgpt::wafer::KernelKind::reduction;
  norm.rows = 64;
  norm.columns = 64;
  norm.flops = 7 * 64 * 64;
  cgpt::wafer::KernelShape attention;
  attention.kind = cgpt::wafer::KernelKind::attention;
  attention.rows = attention.columns = 32;
  attention.contracted = 8;
  attention.flops = 4 * 32 * 32 * 8;
  for (const cgpt::wafer::KernelShape &kernel : {matmul, norm, attention}) {
    MeshProgram program =
        buildKernelProgram(kernel, rectangleLayout(4, 4), 1, *target, 4, 4);
    std::string error;
    std::optional<MeshResult> fast = simulate(program, skipping, error);
    ASSERT_TRUE(fast) << error;
    std::optional<MeshResult> slow = simulate(program, stepping, error);
    ASSERT_TRUE(slow) << error;
    EXPECT_EQ(fast->cycles, slow->cycles);
  }
}

/// Two colors share one link: together they move one wavelet a cycle.
/// Twenty of each enter core (0, 0) from the west and leave core (1, 0) to
/// the east: forty cycles at least, whatever the colors.
TEST(MeshSimulator, ColorsShareALink) {
  MeshProgram p(2, 1);
  for (int color : {0, 1}) {
    p.routes[0].push_back({color, bit(west), bit(east)});
    p.routes[1].push_back({color, bit(west), bit(east)});
    p.injectors.push_back({0, 0, west, color, 20});
    p.drains.push_back({1, 0, east, color});
  }
  std::string error;
  std::optional<MeshResult> result = simulate(p, config(), error);
  ASSERT_TRUE(result) << error;
  EXPECT_GE(result->cycles, 40);
  EXPECT_LE(result->cycles, 44);
}

TEST(MeshSimulator, RouteOffTheMesh) {
  MeshProgram p(2, 1);
  p.routes[1].push_back({0, bit(ramp), bit(east)});
  std::string error;
  EXPECT_FALSE(simulate(p, config(), error));
  EXPECT_EQ(error, "core (1, 0) routes color 0 east, off the mesh");
}

TEST(MeshSimulator, ColorRoutedTwice) {
  MeshProgram p(1, 1);
  p.routes[0].push_back({1, bit(ramp), 0});
  p.routes[0].push_back({1, bit(north), bit(ramp)});
  std::string error;
  EXPECT_FALSE(simulate(p, config(), error));
  EXPECT_EQ(error, "core (0, 0) routes color 1 twice; a color takes one "
                   "route through a router");
}

TEST(MeshSimulator, ColorOutOfRange) {
  MeshProgram p(1, 1);
  p.routes[0].push_back({9, bit(ramp), 0});
  std::string error;
  EXPECT_FALSE(simulate(p, config(), error));
  EXPECT_EQ(error, "core (0, 0) routes color 9; the target has colors 0 to 3");
}

TEST(MeshSimulator, ReceiveWithoutRoute) {
  MeshProgram p(1, 1);
  p.programs[0].push_back({Instruction::receive, 2, 2, 1, 1});
  std::string error;
  EXPECT_FALSE(simulate(p, config(), error));
  EXPECT_EQ(error, "core (0, 0) receives color 2, which its router never "
                   "sends to the ramp");
}

/// Inside the mesh, a stream may enter at the edge of the rectangle a
/// region runs on (regions side by side), as it enters at the mesh's.
TEST(MeshSimulator, InjectorAtARectangleEdge) {
  MeshProgram p(2, 1);
  p.routes[1].push_back({0, bit(west), bit(ramp)});
  p.programs[1].push_back({Instruction::receive, 0, 0, 4, 1});
  p.injectors.push_back({1, 0, west, 0, 4});
  std::string error;
  std::optional<MeshResult> result = simulate(p, config(), error);
  ASSERT_TRUE(result) << error;
  EXPECT_GT(result->cycles, 4);
}

/// But not where the neighbour across that edge sends the same color in.
TEST(MeshSimulator, InjectorAgainstTheNeighbour) {
  MeshProgram p(2, 1);
  p.routes[0].push_back({0, bit(ramp), bit(east)});
  p.routes[1].push_back({0, bit(west), bit(ramp)});
  p.injectors.push_back({1, 0, west, 0, 4});
  std::string error;
  EXPECT_FALSE(simulate(p, config(), error));
  EXPECT_EQ(error, "an injector at core (1, 0) enters through west on color "
                   "0, which the neighbour there also sends this way");
}

/// A drain at a rectangle's edge inside the mesh takes what leaves there:
/// nothing reaches the neighbour.
TEST(MeshSimulator, DrainAtARectangleEdge) {
  MeshProgram p(2, 1);
  p.routes[0].push_back({0, bit(ramp), bit(east)});
  p.programs[0].push_back({Instruction::send, 0, 0, 4, 1});
  p.drains.push_back({0, 0, east, 0});
  std::string error;
  std::optional<MeshResult> result = simulate(p, config(), error);
  ASSERT_TRUE(result) << error;
}

/// A core waits for wavelets nobody sends: the model stops at once and
/// names the core and the color, instead of running on.
TEST(MeshSimulator, DeadlockIsReported) {
  MeshProgram p(2, 1);
  p.routes[0].push_back({0, bit(ramp), bit(east)});
  p.routes[1].push_back({0, bit(west), bit(ramp)});
  p.programs[0].push_back({Instruction::send, 0, 0, 3, 1});
  p.programs[1].push_back({Instruction::receive, 0, 0, 5, 1});
  std::string error;
  EXPECT_FALSE(simulate(p, config(), error));
  EXPECT_NE(error.find("deadlock at cycle"), std::string::npos) << error;
  EXPECT_NE(error.find("core (1, 0) is stuck receiving color 0 with 2 "
                       "wavelets to go"),
            std::string::npos)
      << error;
}

/// A stream sent to a neighbour that never takes it fills the queues and
/// stops the sender.
TEST(MeshSimulator, QueueThatNeverDrains) {
  MeshProgram p(2, 1);
  p.routes[0].push_back({0, bit(ramp), bit(east)});
  p.routes[1].push_back({0, bit(west), bit(ramp)});
  p.programs[0].push_back({Instruction::send, 0, 0, 20, 1});
  std::string error;
  EXPECT_FALSE(simulate(p, config(), error));
  EXPECT_NE(error.find("core (0, 0) is stuck sending color 0"),
            std::string::npos)
      << error;
}

} // namespace
