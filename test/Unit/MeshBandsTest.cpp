//===- MeshBandsTest.cpp - the mesh run cut into bands of rows ------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// A cycle-level run split over threads, in bands of rows, gives what one
// worker gives, bit for bit: cycles, when each row worked, what the drains
// took off and what the cores' buffers hold; a failure or a deadlock says
// the same thing. Also the rule that makes that possible (a freed place in
// a queue reaches its sender a cycle later), the clean stop and the memory
// estimate.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/KernelPrograms.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace cgpt::sim::mesh;

namespace {

uint8_t bit(Port port) { return static_cast<uint8_t>(1u << port); }

MeshConfig config(bool values = false) {
  MeshConfig c;
  c.colors = 4;
  c.queueDepth = 2;
  c.values = values;
  return c;
}

MeshWorkers threads(int count) {
  MeshWorkers workers;
  workers.threads = count;
  workers.minCoresPerThread = 1;
  return workers;
}

/// A column of `height` cores: each adds its own values (buffer "own", one
/// f32 per wavelet) to what comes from the north and sends the sums south,
/// keeping a copy of what came in "seen". The colors alternate by row: row
/// y takes color y % 2 and sends the other. The first row's come from an
/// injector, the last row's go to a recording drain.
MeshProgram column(int height, int64_t count) {
  MeshProgram p(1, height);
  int programs[2];
  for (int parity : {0, 1}) {
    CoreProgram code;
    int own = code.addBuffer("own", count, ElementType::f32);
    int seen = code.addBuffer("seen", count, ElementType::f32);
    Task pass{false, -1, {}};
    pass.body.push_back(Op::vector(Op::Kind::fmov, Dsd::memory(seen),
                                   Dsd::in(parity), Dsd(), count,
                                   ElementType::f32));
    pass.body.push_back(Op::vector(Op::Kind::fadd, Dsd::out(1 - parity),
                                   Dsd::memory(seen), Dsd::memory(own), count,
                                   ElementType::f32));
    code.startActive.push_back(code.addTask(std::move(pass)));
    programs[parity] = p.addProgram(std::move(code));
  }
  for (int y = 0; y < height; ++y) {
    p.programOf[p.index(0, y)] = programs[y % 2];
    p.routes[p.index(0, y)].push_back({y % 2, bit(north), bit(ramp)});
    p.routes[p.index(0, y)].push_back({1 - y % 2, bit(ramp), bit(south)});
  }
  std::vector<Wavelet> payload;
  for (int64_t i = 0; i < count; ++i)
    payload.push_back({static_cast<float>(i), 0});
  p.injectors.push_back({0, 0, north, 0, count, payload});
  p.drains.push_back({0, height - 1, south, height % 2, true});
  return p;
}

/// Every kernel kind's program, as the cycle-level run builds them.
std::vector<MeshProgram> kernelPrograms(const cgpt::target::WaferTargetModel &t,
                                        int width, int height) {
  cgpt::wafer::KernelShape matmul;
  matmul.kind = cgpt::wafer::KernelKind::weight_matmul;
  matmul.rows = 4 * height;
  matmul.columns = 48;
  matmul.contracted = 16 * width;
  matmul.flops = 2 * matmul.rows * matmul.columns * matmul.contracted;
  cgpt::wafer::KernelShape grad = matmul;
  grad.kind = cgpt::wafer::KernelKind::weight_grad;
  cgpt::wafer::KernelShape norm;
  norm.kind = cgpt::wafer::KernelKind::reduction;
  norm.rows = 4 * height;
  norm.columns = 8 * width;
  norm.flops = 7 * norm.rows * norm.columns;
  cgpt::wafer::KernelShape attention;
  attention.kind = cgpt::wafer::KernelKind::attention;
  attention.rows = attention.columns = 4 * height;
  attention.contracted = 8;
  attention.flops = 4 * attention.rows * attention.columns * 8;
  std::vector<MeshProgram> programs;
  for (const cgpt::wafer::KernelShape &kernel : {matmul, grad, norm, attention})
    programs.push_back(buildKernelProgram(kernel,
                                          rectangleLayout(width, height), 1, t,
                                          {0, 0, width, height})
                           .mesh);
  return programs;
}

/// A program of every kernel kind on an 8 x 7 mesh, run by 1 to 7 threads
/// (bands of one row at the most): the same cycles and row activity.
TEST(MeshBands, KernelsGiveTheSameCyclesOnAnyNumberOfThreads) {
  mlir::MLIRContext context;
  auto target = cgpt::target::WaferTargetModel::load("mini", &context);
  ASSERT_TRUE(mlir::succeeded(target));
  MeshConfig c = meshConfig(*target);
  for (const MeshProgram &program : kernelPrograms(*target, 8, 7)) {
    std::string error;
    std::optional<MeshResult> alone = simulate(program, c, error);
    ASSERT_TRUE(alone) << error;
    for (int count : {2, 3, 4, 7}) {
      std::optional<MeshResult> split =
          simulate(program, c, error, {}, threads(count));
      ASSERT_TRUE(split) << error;
      EXPECT_EQ(split->cycles, alone->cycles) << count << " threads";
      EXPECT_EQ(split->coreCycles, alone->coreCycles);
      EXPECT_EQ(split->rowActivity, alone->rowActivity);
    }
  }
}

/// Values down a column of 9 cores that every cut crosses: the drained
/// sums and every core's buffers are the same on 1 to 9 threads, and the
/// sums are what the cores add: sum over the rows of each row's own value,
/// plus the injected one.
TEST(MeshBands, ValuesCrossTheCutsUnchanged) {
  constexpr int kHeight = 9;
  constexpr int64_t kCount = 5;
  MeshProgram program = column(kHeight, kCount);
  auto load = [](int core, std::vector<std::vector<float>> &buffers) {
    for (int64_t i = 0; i < kCount; ++i)
      buffers[0][i] = static_cast<float>(core * 10 + i);
  };
  std::vector<std::vector<float>> stored;
  auto store = [&](int core, const std::vector<std::vector<float>> &buffers) {
    stored.push_back(buffers[1]);
  };
  std::string error;
  std::optional<MeshResult> alone =
      simulate(program, config(true), error, CoreMemoryAccess{load, store});
  ASSERT_TRUE(alone) << error;
  std::vector<std::vector<float>> storedAlone = stored;
  ASSERT_EQ(alone->drained.size(), 1u);
  ASSERT_EQ(alone->drained[0].size(), static_cast<size_t>(kCount));
  for (int64_t i = 0; i < kCount; ++i) {
    float expected = static_cast<float>(i);
    for (int y = 0; y < kHeight; ++y)
      expected += static_cast<float>(y * 10 + i);
    EXPECT_EQ(alone->drained[0][i].lo, expected);
  }
  for (int count : {2, 3, 9}) {
    stored.clear();
    std::optional<MeshResult> split =
        simulate(program, config(true), error, CoreMemoryAccess{load, store},
                 threads(count));
    ASSERT_TRUE(split) << error;
    EXPECT_EQ(split->cycles, alone->cycles);
    ASSERT_EQ(split->drained[0].size(), alone->drained[0].size());
    for (size_t i = 0; i < alone->drained[0].size(); ++i)
      EXPECT_EQ(split->drained[0][i].lo, alone->drained[0][i].lo);
    EXPECT_EQ(stored, storedAlone) << count << " threads";
  }
}

/// A queue of one place between routers: a wavelet taken out frees the
/// place for its sender the next cycle, so a link carries one wavelet every
/// two cycles. Ten wavelets through three cores of one-place queues: the
/// last leaves the third core at cycle 2 x 9 + 3, and the run ends a cycle
/// after it moved.
TEST(MeshBands, AFreedPlaceReachesItsSenderNextCycle) {
  MeshProgram p(3, 1);
  for (int x = 0; x < 3; ++x)
    p.routes[x].push_back({0, bit(west), bit(east)});
  p.injectors.push_back({0, 0, west, 0, 10, {}});
  p.drains.push_back({2, 0, east, 0, false});
  MeshConfig c = config();
  c.queueDepth = 1;
  std::string error;
  std::optional<MeshResult> result = simulate(p, c, error);
  ASSERT_TRUE(result) << error;
  EXPECT_EQ(result->cycles, 2 * 9 + 3 + 1);
}

/// A failure inside a band and a deadlock read the same on any number of
/// threads.
TEST(MeshBands, FailuresReadTheSame) {
  // A core reads past its buffer, in the last row.
  MeshProgram outOfBuffer(2, 4);
  CoreProgram code;
  int data = code.addBuffer("data", 4, ElementType::f32);
  Task task{false, -1, {}};
  task.body.push_back(Op::vector(Op::Kind::fmov, Dsd::memory(data, 2),
                                 Dsd::memory(data), Dsd(), 4,
                                 ElementType::f32));
  code.startActive.push_back(code.addTask(std::move(task)));
  outOfBuffer.programOf[outOfBuffer.index(1, 3)] =
      outOfBuffer.addProgram(std::move(code));
  // Wavelets sent south into a core whose router never forwards them.
  MeshProgram stuck(1, 4);
  stuck.routes[0].push_back({0, bit(north), bit(south)});
  stuck.routes[1].push_back({0, bit(north), bit(south)});
  stuck.routes[2].push_back({0, bit(north), bit(south)});
  stuck.routes[3].push_back({0, bit(north), bit(ramp)});
  stuck.injectors.push_back({0, 0, north, 0, 20, {}});
  for (const MeshProgram *program : {&outOfBuffer, &stuck}) {
    std::string alone, split;
    EXPECT_FALSE(simulate(*program, config(true), alone));
    EXPECT_FALSE(simulate(*program, config(true), split, {}, threads(4)));
    EXPECT_FALSE(alone.empty());
    EXPECT_EQ(split, alone);
  }
}

/// A stop asked for before the run: it ends after its first cycle, on one
/// thread and on several, and says so.
TEST(MeshBands, StopEndsTheRunCleanly) {
  mlir::MLIRContext context;
  auto target = cgpt::target::WaferTargetModel::load("mini", &context);
  ASSERT_TRUE(mlir::succeeded(target));
  MeshProgram program = kernelPrograms(*target, 8, 8).front();
  std::atomic<bool> stop{true};
  for (int count : {1, 4}) {
    MeshWorkers workers = threads(count);
    workers.stop = &stop;
    std::string error;
    std::optional<MeshResult> result =
        simulate(program, meshConfig(*target), error, {}, workers);
    ASSERT_TRUE(result) << error;
    EXPECT_TRUE(result->stopped);
    EXPECT_EQ(result->cycles, 1);
  }
}

/// A run given a time ends, on one thread and on several, at the same
/// cycle on every band, after about that much host time, which it reports;
/// with no time given it runs to the end.
TEST(MeshBands, TimeLimitEndsTheRunCleanly) {
  mlir::MLIRContext context;
  auto target = cgpt::target::WaferTargetModel::load("mini", &context);
  ASSERT_TRUE(mlir::succeeded(target));
  MeshProgram program = kernelPrograms(*target, 64, 64).front();
  std::string error;
  std::optional<MeshResult> whole =
      simulate(program, meshConfig(*target), error, {}, threads(1));
  ASSERT_TRUE(whole) << error;
  EXPECT_FALSE(whole->stopped);
  EXPECT_GT(whole->seconds, 0);
  for (int count : {1, 4}) {
    MeshWorkers workers = threads(count);
    workers.stopAfterSeconds = whole->seconds / 10;
    std::optional<MeshResult> result =
        simulate(program, meshConfig(*target), error, {}, workers);
    ASSERT_TRUE(result) << error;
    EXPECT_TRUE(result->stopped);
    EXPECT_LT(result->cycles, whole->cycles);
    EXPECT_GE(result->seconds, workers.stopAfterSeconds);
  }
}

/// The estimate follows what a process holds: more with values, and two
/// halo rows more for a second band.
TEST(MeshBands, MemoryEstimateFollowsTheBand) {
  mlir::MLIRContext context;
  auto target = cgpt::target::WaferTargetModel::load("mini", &context);
  ASSERT_TRUE(mlir::succeeded(target));
  MeshProgram program = kernelPrograms(*target, 64, 64).front();
  MeshConfig timing = meshConfig(*target), values = timing;
  values.values = true;
  int64_t alone = estimateHostBytes(program, timing, {});
  EXPECT_GT(alone, int64_t(64) * 64 * 100);
  EXPECT_GT(estimateHostBytes(program, values, {}), alone);
  // Two threads of one process hold the same cores, and two halo rows
  // more.
  EXPECT_GT(estimateHostBytes(program, timing, threads(2)), alone);
}

} // namespace
