//===- MeshSimulatorTest.cpp - the cycle-level mesh model -----------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Small programs whose cycle counts follow by hand from the mechanism (task
// activation, SIMD width, SRAM ports, hops, back-pressure), the values
// they carry, the malformed programs the model refuses, a program too big
// for a core's SRAM, a deadlock it reports, and the idle-cycle skipping
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
  c.readBytesPerCycle = 16;
  c.writeBytesPerCycle = 8;
  c.mixedFmacs = 2;
  c.f32Fmacs = 1;
  c.halfOps = 4;
  c.f32Ops = 2;
  return c;
}

/// A core program that, once started, sends `count` f32 from a buffer out
/// on `color`.
CoreProgram sender(int64_t count, int color = 0) {
  CoreProgram p;
  int data = p.addBuffer("data", count, ElementType::f32);
  Task send{false, -1, {}};
  send.body.push_back(Op::vector(Op::Kind::fmov, Dsd::out(color),
                                 Dsd::memory(data), Dsd(), count,
                                 ElementType::f32));
  p.startActive.push_back(p.addTask(std::move(send)));
  return p;
}

/// A core program with a data task per wavelet of color 0 that adds the
/// wavelet to `width` f32 sums (one operation of `width` elements).
CoreProgram accumulator(int64_t width) {
  CoreProgram p;
  int sums = p.addBuffer("sums", width, ElementType::f32);
  Task add{true, 0, {}};
  add.body.push_back(Op::vector(Op::Kind::fadd, Dsd::memory(sums),
                                Dsd::memory(sums), Dsd::argument(), width,
                                ElementType::f32));
  p.addTask(std::move(add));
  return p;
}

/// Core (0, 0) sends `count` wavelets east to core (1, 0), whose data task
/// adds each to `width` sums.
MeshProgram sendToNeighbour(int64_t count, int64_t width) {
  MeshProgram p(2, 1);
  p.routes[0].push_back({0, bit(ramp), bit(east)});
  p.routes[1].push_back({0, bit(west), bit(ramp)});
  p.programOf[0] = p.addProgram(sender(count));
  p.programOf[1] = p.addProgram(accumulator(width));
  return p;
}

/// Cycles of sendToNeighbour(count, width) under `c`.
int64_t sendCycles(int64_t count, int64_t width, const MeshConfig &c) {
  std::string error;
  std::optional<MeshResult> result =
      simulate(sendToNeighbour(count, width), c, error);
  EXPECT_TRUE(result) << error;
  return result ? result->cycles : -1;
}

/// Cycles of one local task of one vector operation on one core.
int64_t oneOperation(const Op &op, const std::vector<BufferDecl> &buffers,
                     const MeshConfig &c) {
  MeshProgram p(1, 1);
  CoreProgram code;
  code.buffers = buffers;
  Task task{false, -1, {op}};
  code.startActive.push_back(code.addTask(std::move(task)));
  p.programOf[0] = p.addProgram(std::move(code));
  std::string error;
  std::optional<MeshResult> result = simulate(p, c, error);
  EXPECT_TRUE(result) << error;
  return result ? result->cycles : -1;
}

/// Ten wavelets to a neighbour whose data task adds each to one sum: the
/// sender's activation (2 cycles), the first wavelet onto the sender's
/// router, across the hop and up the receiver's ramp (3 cycles, one each),
/// then ten tasks of an activation and a one-cycle add, one after another,
/// the link keeping the queue full: 2 + 3 + 10 x (2 + 1).
TEST(MeshSimulator, SendToNeighbourByHand) {
  std::string error;
  std::optional<MeshResult> result =
      simulate(sendToNeighbour(10, 1), config(), error);
  ASSERT_TRUE(result) << error;
  EXPECT_EQ(result->cycles, 2 + 3 + 10 * 3);
  EXPECT_EQ(result->coreCycles, 2 * result->cycles);
}

/// A ramp of 3 cycles each way: the first wavelet takes 3 onto the
/// sender's router and 3 up the receiver's ramp, 4 more than at one cycle;
/// the rest follow one a cycle behind it: 2 + (3 + 1 + 3) + 10 x (2 + 1).
TEST(MeshSimulator, RampLatencyIsPaidEachWay) {
  MeshConfig slowRamp = config();
  slowRamp.rampLatencyCycles = 3;
  EXPECT_EQ(sendCycles(10, 1, slowRamp), 2 + 7 + 10 * 3);
}

/// Activation is paid per task: at 5 cycles, 5 + 3 + 10 x (5 + 1).
TEST(MeshSimulator, ActivationIsPaidPerTask) {
  MeshConfig slow = config();
  slow.activationCycles = 5;
  EXPECT_EQ(sendCycles(10, 1, slow), 5 + 3 + 10 * 6);
}

/// A receiver slower than the link: back-pressure holds the sender, and the
/// receiver's tasks set the pace. Adding a wavelet to 10 f32 sums writes 40
/// bytes through an 8-byte port: 5 cycles (its SIMD width would take 5
/// too; its reads, 40 bytes at 16, 3), so 10 tasks of 2 + 5.
TEST(MeshSimulator, BackPressureSetsThePace) {
  EXPECT_EQ(sendCycles(10, 10, config()), 2 + 3 + 10 * (2 + 5));
}

/// A 16-bit FMAC into f32 sums, 64 elements: 32 cycles at 2 a cycle; it
/// reads 6 bytes an element (384 at 16 a cycle: 24) and writes 4 (256 at
/// 8: 32). Each rate moves the time as the mechanism says: a wider SIMD
/// leaves the write port the bound (32); a wider write port then leaves
/// the reads (24); a wider read port then the SIMD (16); an f32 FMAC runs
/// at the f32 width (64).
TEST(MeshSimulator, VectorTimeFollowsWidthAndPorts) {
  std::vector<BufferDecl> buffers = {{"sums", 64, ElementType::f32},
                                     {"inputs", 64, ElementType::bf16},
                                     {"weights", 64, ElementType::f32}};
  Op fmac = Op::fmacOp(Dsd::memory(0), Dsd::memory(0), Dsd::memory(1),
                       Dsd::memory(2, 0, -1, 0), 64, ElementType::bf16);
  MeshConfig c = config();
  int64_t activation = c.activationCycles;
  EXPECT_EQ(oneOperation(fmac, buffers, c), activation + 32);
  c.mixedFmacs = 4;
  EXPECT_EQ(oneOperation(fmac, buffers, c), activation + 32);
  c.writeBytesPerCycle = 16;
  EXPECT_EQ(oneOperation(fmac, buffers, c), activation + 24);
  c.readBytesPerCycle = 32;
  EXPECT_EQ(oneOperation(fmac, buffers, c), activation + 16);
  Op f32 = fmac;
  f32.type = ElementType::f32;
  EXPECT_EQ(oneOperation(f32, buffers, c), activation + 64);
}

/// A chain: (0, 0) sends its values east, (1, 0) adds its own and sends on,
/// and what leaves the east edge is recorded: the sums, in order.
TEST(MeshSimulator, ValuesTravelAndAdd) {
  MeshProgram p(2, 1);
  p.routes[0].push_back({0, bit(ramp), bit(east)});
  p.routes[1].push_back({0, bit(west), bit(ramp)});
  p.routes[1].push_back({1, bit(ramp), bit(east)});
  p.drains.push_back({1, 0, east, 1, true});
  p.programOf[0] = p.addProgram(sender(3));
  CoreProgram add;
  int own = add.addBuffer("own", 3, ElementType::f32);
  Task task{false, -1, {}};
  task.body.push_back(Op::vector(Op::Kind::fadd, Dsd::out(1), Dsd::in(0),
                                 Dsd::memory(own), 3, ElementType::f32));
  add.startActive.push_back(add.addTask(std::move(task)));
  p.programOf[1] = p.addProgram(std::move(add));
  MeshConfig c = config();
  c.values = true;
  auto load = [](int core, std::vector<std::vector<float>> &buffers) {
    float base = core == 0 ? 1 : 10;
    for (int i = 0; i < 3; ++i)
      buffers[0][i] = base * (i + 1);
  };
  std::string error;
  std::optional<MeshResult> result =
      simulate(p, c, error, CoreMemoryAccess{load, {}});
  ASSERT_TRUE(result) << error;
  ASSERT_EQ(result->drained.size(), 1u);
  ASSERT_EQ(result->drained[0].size(), 3u);
  EXPECT_EQ(result->drained[0][0].lo, 11);
  EXPECT_EQ(result->drained[0][1].lo, 22);
  EXPECT_EQ(result->drained[0][2].lo, 33);
}

/// A data task per wavelet of two 16-bit weights, with cursors: the
/// streamed-weight matmul of one core, y[c] += x[f] * w[f][c] for two
/// features and two columns, checked by hand; the wrap of the column
/// cursor activates the local task that counts blocks.
TEST(MeshSimulator, CursorsWalkAMatmul) {
  MeshProgram p(1, 1);
  p.routes[0].push_back({0, bit(north), bit(ramp)});
  // Weights in feature-major order, two to a wavelet: w[0][0], w[1][0] for
  // column 0, then w[0][1], w[1][1] for column 1.
  p.injectors.push_back({0, 0, north, 0, 2, {{1, 2}, {3, 4}}});
  CoreProgram code;
  int inputs = code.addBuffer("inputs", 2, ElementType::bf16);
  int sums = code.addBuffer("sums", 2, ElementType::f32);
  int blocks = code.addBuffer("blocks", 1, ElementType::f32);
  Task count{false, -1, {}};
  count.body.push_back(
      Op::vector(Op::Kind::fadd, Dsd::memory(blocks), Dsd::memory(blocks),
                 Dsd::memory(inputs, 0, -1, 0), 1, ElementType::f32));
  int counter = code.addTask(std::move(count));
  int column = code.addCursor({1, 2, -1, counter});
  int feature = code.addCursor({1, 2, column, -1});
  Task data{true, 0, {}};
  for (bool high : {false, true}) {
    data.body.push_back(Op::fmacOp(Dsd::memory(sums, 0, column),
                                   Dsd::memory(sums, 0, column),
                                   Dsd::memory(inputs, 0, feature),
                                   Dsd::argument(high), 1, ElementType::bf16));
    data.body.push_back(Op::advanceOp(feature));
  }
  code.addTask(std::move(data));
  p.programOf[0] = p.addProgram(std::move(code));
  MeshConfig c = config();
  c.values = true;
  std::vector<std::vector<float>> after;
  auto load = [](int, std::vector<std::vector<float>> &buffers) {
    buffers[0] = {10, 100};
  };
  auto store = [&](int, const std::vector<std::vector<float>> &buffers) {
    after = buffers;
  };
  std::string error;
  ASSERT_TRUE(simulate(p, c, error, CoreMemoryAccess{load, store})) << error;
  EXPECT_EQ(after[1][0], 10 * 1 + 100 * 2);
  EXPECT_EQ(after[1][1], 10 * 3 + 100 * 4);
  // Both columns wrapped once: the counter ran once (the wrap of the last
  // activates it; activations do not queue).
  EXPECT_EQ(after[2][0], 10);
}

/// A microthread takes a stream into memory beside the task that started
/// it and activates a task when it ends: the stream's 8 wavelets arrive
/// while a 20-cycle operation runs, so the whole takes activation + 20,
/// then the follow-up task's activation and its one-cycle operation.
TEST(MeshSimulator, MicrothreadRunsBesideTheTask) {
  MeshProgram p(1, 1);
  p.routes[0].push_back({0, bit(north), bit(ramp)});
  p.injectors.push_back({0, 0, north, 0, 8, {}});
  CoreProgram code;
  int in = code.addBuffer("in", 8, ElementType::f32);
  int work = code.addBuffer("work", 40, ElementType::f32);
  Task follow{false, -1, {}};
  follow.body.push_back(Op::vector(Op::Kind::fmov, Dsd::memory(work),
                                   Dsd::memory(in), Dsd(), 1,
                                   ElementType::f32));
  int followUp = code.addTask(std::move(follow));
  Task start{false, -1, {}};
  Op receive = Op::vector(Op::Kind::fmov, Dsd::memory(in), Dsd::in(0), Dsd(), 8,
                          ElementType::f32);
  receive.async = true;
  receive.onDone = followUp;
  start.body.push_back(receive);
  // 40 f32 adds: 20 cycles at 2 a cycle (reads 320 B at 16: 20; writes 160
  // at 8: 20).
  start.body.push_back(Op::vector(Op::Kind::fadd, Dsd::memory(work),
                                  Dsd::memory(work), Dsd::zero(), 40,
                                  ElementType::f32));
  code.startActive.push_back(code.addTask(std::move(start)));
  p.programOf[0] = p.addProgram(std::move(code));
  std::string error;
  std::optional<MeshResult> result = simulate(p, config(), error);
  ASSERT_TRUE(result) << error;
  EXPECT_EQ(result->cycles, 2 + 20 + 2 + 1);
}

/// Two asynchronous sends of one buffer's halves on one color, a cursor
/// advanced after each: each sends the half its cursor named when it was
/// issued, and the second waits for the first's microthread (they share a
/// queue), so the task's 20-cycle operation starts only when the first
/// send's 8 wavelets are out. By hand: activation (2), the first send's 8
/// wavelets (cycles 2 to 9), the second issued at 10, the operation from
/// 10 to 30; the second send's 8 wavelets leave meanwhile.
TEST(MeshSimulator, AsynchronousSendsOnOneQueueTakeTurns) {
  MeshProgram p(1, 1);
  p.routes[0].push_back({0, bit(ramp), bit(east)});
  p.drains.push_back({0, 0, east, 0, true});
  CoreProgram code;
  int rows = code.addBuffer("rows", 16, ElementType::f32);
  int work = code.addBuffer("work", 40, ElementType::f32);
  int turn = code.addCursor({8, 16});
  Task start{false, -1, {}};
  for (int i = 0; i < 2; ++i) {
    Op send =
        Op::vector(Op::Kind::fmov, Dsd::out(0), Dsd::memory(rows, 0, turn),
                   Dsd(), 8, ElementType::f32);
    send.async = true;
    start.body.push_back(send);
    start.body.push_back(Op::advanceOp(turn));
  }
  start.body.push_back(Op::vector(Op::Kind::fadd, Dsd::memory(work),
                                  Dsd::memory(work), Dsd::zero(), 40,
                                  ElementType::f32));
  code.startActive.push_back(code.addTask(std::move(start)));
  p.programOf[0] = p.addProgram(std::move(code));
  MeshConfig c = config();
  c.values = true;
  auto load = [](int, std::vector<std::vector<float>> &buffers) {
    for (int i = 0; i < 16; ++i)
      buffers[0][i] = static_cast<float>(i);
  };
  auto store = [](int, const std::vector<std::vector<float>> &) {};
  std::string error;
  std::optional<MeshResult> result =
      simulate(p, c, error, CoreMemoryAccess{load, store});
  ASSERT_TRUE(result) << error;
  ASSERT_EQ(result->drained[0].size(), 16u);
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(result->drained[0][i].lo, i);
  EXPECT_EQ(result->cycles, 2 + 8 + 20);
}

/// Runs the one-core program `p` with values: the first element of its
/// buffer `buffer` afterwards and the cycles (-1 and -1 if it fails).
static std::pair<float, int64_t> firstValueAfter(const MeshProgram &p,
                                                 int buffer) {
  MeshConfig c = config();
  c.values = true;
  float value = -1;
  auto store = [&](int, const std::vector<std::vector<float>> &buffers) {
    value = buffers[buffer][0];
  };
  std::string error;
  std::optional<MeshResult> result =
      simulate(p, c, error, CoreMemoryAccess{nullptr, store});
  EXPECT_TRUE(result) << error;
  return {value, result ? result->cycles : -1};
}

/// Two microthreads joined by a blocked task: four wavelets arrive from
/// the north and ten from the west, each stream taken by a microthread; the
/// short one's end activates the join, which starts blocked, and the long
/// one's end starts a task that unblocks it. So the join runs once both are
/// in, and reads the long stream's last value; unblocked from the start,
/// it runs after the short one and reads 0 there.
TEST(MeshSimulator, BlockedTaskJoinsTwoMicrothreads) {
  auto run = [](bool blocked) {
    MeshProgram p(1, 1);
    p.routes[0].push_back({0, bit(north), bit(ramp)});
    p.routes[0].push_back({1, bit(west), bit(ramp)});
    p.injectors.push_back({0, 0, north, 0, 4, {}});
    p.injectors.push_back({0, 0, west, 1, 10, {}});
    for (int i = 0; i < 10; ++i)
      p.injectors.back().payload.push_back({static_cast<float>(i + 1), 0});
    p.injectors.front().payload.assign(4, Wavelet{1, 0});
    CoreProgram code;
    int shortIn = code.addBuffer("short", 4, ElementType::f32);
    int longIn = code.addBuffer("long", 10, ElementType::f32);
    int seen = code.addBuffer("seen", 1, ElementType::f32);
    int join = code.addTask(
        {false,
         -1,
         {Op::vector(Op::Kind::fmov, Dsd::memory(seen), Dsd::memory(longIn, 9),
                     Dsd(), 1, ElementType::f32)}});
    int unblock = code.addTask({false, -1, {Op::unblockOp(join)}});
    if (blocked)
      code.startBlocked.push_back(join);
    Op shortReceive = Op::vector(Op::Kind::fmov, Dsd::memory(shortIn),
                                 Dsd::in(0), Dsd(), 4, ElementType::f32);
    shortReceive.async = true;
    shortReceive.onDone = join;
    Op longReceive = Op::vector(Op::Kind::fmov, Dsd::memory(longIn), Dsd::in(1),
                                Dsd(), 10, ElementType::f32);
    longReceive.async = true;
    longReceive.onDone = unblock;
    code.startActive.push_back(
        code.addTask({false, -1, {shortReceive, longReceive}}));
    p.programOf[0] = p.addProgram(std::move(code));
    return firstValueAfter(p, seen).first;
  };
  EXPECT_EQ(run(true), 10);
  EXPECT_EQ(run(false), 0);
}

/// A blocked data task leaves its wavelets waiting: a local task blocks
/// the data task that adds each wavelet to a sum, runs a 20-cycle
/// operation, doubles the sum and unblocks it. The sum is then doubled
/// before any wavelet is added: 0 doubled, then 1 + 2 + 3.
TEST(MeshSimulator, BlockedDataTaskWaits) {
  MeshProgram p(1, 1);
  p.routes[0].push_back({0, bit(north), bit(ramp)});
  p.injectors.push_back({0, 0, north, 0, 3, {}});
  for (int i = 0; i < 3; ++i)
    p.injectors.back().payload.push_back({static_cast<float>(i + 1), 0});
  CoreProgram code;
  int sum = code.addBuffer("sum", 1, ElementType::f32);
  int work = code.addBuffer("work", 40, ElementType::f32);
  int add = code.addTask(
      {true,
       0,
       {Op::vector(Op::Kind::fadd, Dsd::memory(sum), Dsd::memory(sum),
                   Dsd::argument(), 1, ElementType::f32)}});
  Task first{false, -1, {}};
  first.body.push_back(Op::blockOp(add));
  first.body.push_back(Op::vector(Op::Kind::fadd, Dsd::memory(work),
                                  Dsd::memory(work), Dsd::zero(), 40,
                                  ElementType::f32));
  first.body.push_back(Op::vector(Op::Kind::fadd, Dsd::memory(sum),
                                  Dsd::memory(sum), Dsd::memory(sum), 1,
                                  ElementType::f32));
  first.body.push_back(Op::unblockOp(add));
  code.startActive.push_back(code.addTask(std::move(first)));
  p.programOf[0] = p.addProgram(std::move(code));
  auto [value, cycles] = firstValueAfter(p, sum);
  EXPECT_EQ(value, 6);
  // The local task's activation and 20 cycles, its one-element add, then
  // the three data tasks, an activation and an add each.
  EXPECT_GE(cycles, 2 + 20 + 1 + 3 * (2 + 1));
}

/// A program that starts a task it does not have blocked is refused.
TEST(MeshSimulator, BlockedTaskOutOfRange) {
  MeshProgram p(1, 1);
  CoreProgram code;
  int data = code.addBuffer("data", 1, ElementType::f32);
  code.startActive.push_back(
      code.addTask({false,
                    -1,
                    {Op::vector(Op::Kind::fmov, Dsd::memory(data), Dsd::zero(),
                                Dsd(), 1, ElementType::f32)}}));
  code.startBlocked.push_back(7);
  p.programOf[0] = p.addProgram(std::move(code));
  std::string error;
  EXPECT_FALSE(simulate(p, config(), error));
  EXPECT_NE(error.find("starts task 7 active or blocked, which its program "
                       "does not have"),
            std::string::npos)
      << error;
}

/// A program whose buffers exceed the core's SRAM beside its reserve does
/// not load, and says which core, buffer and bytes.
TEST(MeshSimulator, ProgramTooBigForSram) {
  MeshProgram p(1, 1);
  CoreProgram code;
  code.addBuffer("inputs", 4097, ElementType::bf16);
  code.addBuffer("sums", 8192, ElementType::f32);
  p.programOf[0] = p.addProgram(std::move(code));
  std::string error;
  EXPECT_FALSE(simulate(p, config(), error));
  EXPECT_EQ(error, "core (0, 0) cannot load its program: buffer 'sums' "
                   "(32768 B) brings its buffers to 40962 B, over the 40960 "
                   "B a core has beside its 8192 B reserve");
}

/// An operation past the end of its buffer stops the run with the buffer's
/// name, instead of writing elsewhere.
TEST(MeshSimulator, ElementOutOfItsBuffer) {
  MeshConfig c = config();
  c.values = true;
  MeshProgram p(1, 1);
  CoreProgram code;
  int small = code.addBuffer("small", 4, ElementType::f32);
  Task task{false, -1, {}};
  task.body.push_back(Op::vector(Op::Kind::fmov, Dsd::memory(small, 2),
                                 Dsd::zero(), Dsd(), 4, ElementType::f32));
  code.startActive.push_back(code.addTask(std::move(task)));
  p.programOf[0] = p.addProgram(std::move(code));
  std::string error;
  EXPECT_FALSE(simulate(p, c, error));
  EXPECT_EQ(error, "core (0, 0) reads or writes element 4 of buffer 'small', "
                   "which has 4");
}

/// A DSD whose offset the task reads from memory (the loss gradient's
/// label): each of two steps adds 1 at the place the index buffer holds
/// for it; a place outside the buffer stops the run with its name.
TEST(MeshSimulator, OffsetReadFromMemory) {
  MeshConfig c = config();
  c.values = true;
  MeshProgram p(1, 1);
  CoreProgram code;
  int data = code.addBuffer("data", 4, ElementType::f32);
  int places = code.addBuffer("places", 2, ElementType::f32);
  int one = code.addConstants("one", {1.0f});
  int step = code.addCursor({1, 2});
  Dsd at = Dsd::indexed(data, places, step);
  Task task{false, -1, {}};
  task.body.push_back(Op::loopOp(2, 2));
  task.body.push_back(Op::vector(
      Op::Kind::fadd, at, at, Dsd::memory(one, 0, -1, 0), 1, ElementType::f32));
  task.body.push_back(Op::advanceOp(step));
  code.startActive.push_back(code.addTask(std::move(task)));
  p.programOf[0] = p.addProgram(std::move(code));
  float second = 1;
  auto load = [&](int, std::vector<std::vector<float>> &buffers) {
    buffers[places] = {3, second};
  };
  std::vector<float> after;
  auto store = [&](int, const std::vector<std::vector<float>> &buffers) {
    after = buffers[data];
  };
  std::string error;
  ASSERT_TRUE(simulate(p, c, error, CoreMemoryAccess{load, store})) << error;
  EXPECT_EQ(after, (std::vector<float>{0, 1, 0, 1}));
  second = 9;
  EXPECT_FALSE(simulate(p, c, error, CoreMemoryAccess{load, store}));
  EXPECT_EQ(error, "core (0, 0) reads or writes element 9 of buffer 'data', "
                   "which has 4");
}

/// A fabric operation's length read from memory (`@set_dsd_length`): five
/// wavelets split 2 and 3 between two buffers by the receiver's lengths,
/// in the cycles a run without values takes (5 and 0, its static lengths),
/// a length of 0 taking none; then the first added into the second. A length
/// that is no count fails the run; a length from data on an operation over
/// memory alone fails to load.
TEST(MeshSimulator, LengthReadFromMemory) {
  MeshConfig c = config();
  auto build = [](bool onMemory) {
    MeshProgram p(2, 1);
    p.routes[0].push_back({0, bit(ramp), bit(east)});
    p.routes[1].push_back({0, bit(west), bit(ramp)});
    CoreProgram sent = sender(5);
    sent.buffers[0].initial = {1, 2, 3, 4, 5};
    p.programOf[0] = p.addProgram(std::move(sent));
    CoreProgram code;
    int first = code.addBuffer("first", 5, ElementType::f32);
    int second = code.addBuffer("second", 5, ElementType::f32);
    int lengths = code.addBuffer("lengths", 2, ElementType::f32);
    int at = code.addCursor({1, 0});
    Dsd from = onMemory ? Dsd::memory(first) : Dsd::in(0);
    Task task{false, -1, {}};
    task.body.push_back(
        Op::lengthFromData(Op::vector(Op::Kind::fmov, Dsd::memory(first), from,
                                      Dsd(), 5, ElementType::f32),
                           lengths, at));
    task.body.push_back(Op::advanceOp(at));
    task.body.push_back(
        Op::lengthFromData(Op::vector(Op::Kind::fmov, Dsd::memory(second),
                                      Dsd::in(0), Dsd(), 0, ElementType::f32),
                           lengths, at));
    // The task ends alike both ways: the free advance before a last
    // operation of no elements would otherwise count a cycle of its own.
    task.body.push_back(Op::vector(Op::Kind::fadd, Dsd::memory(second),
                                   Dsd::memory(second), Dsd::memory(first), 5,
                                   ElementType::f32));
    code.startActive.push_back(code.addTask(std::move(task)));
    p.programOf[1] = p.addProgram(std::move(code));
    return p;
  };
  std::string error;
  std::optional<MeshResult> timed = simulate(build(false), c, error);
  ASSERT_TRUE(timed) << error;
  std::vector<float> split = {2, 3};
  auto load = [&](int core, std::vector<std::vector<float>> &buffers) {
    if (core == 1)
      buffers[2] = split;
  };
  std::vector<float> first, second;
  auto store = [&](int core, const std::vector<std::vector<float>> &buffers) {
    if (core == 1) {
      first = buffers[0];
      second = buffers[1];
    }
  };
  c.values = true;
  std::optional<MeshResult> valued =
      simulate(build(false), c, error, CoreMemoryAccess{load, store});
  ASSERT_TRUE(valued) << error;
  EXPECT_EQ(first, (std::vector<float>{1, 2, 0, 0, 0}));
  EXPECT_EQ(second, (std::vector<float>{4, 6, 5, 0, 0}));
  EXPECT_EQ(valued->cycles, timed->cycles);
  split = {2.5f, 2.5f};
  EXPECT_FALSE(simulate(build(false), c, error, CoreMemoryAccess{load, store}));
  EXPECT_EQ(error, "core (1, 0) sets an operation's length from element 0 of "
                   "buffer 'lengths', which holds no count of elements");
  EXPECT_FALSE(simulate(build(true), c, error));
  EXPECT_EQ(error, "core (1, 0) sets a length from data on an operation that "
                   "is not a task's fabric operation, or from a buffer or "
                   "cursor its program does not have");
}

/// A vector operation reads and writes element after element, as the
/// core's datapath does: one whose output overlaps its input a step ahead
/// reads what it just wrote; a circular operand wraps around its buffer.
TEST(MeshSimulator, VectorOperationsGoElementByElement) {
  MeshConfig c = config();
  c.values = true;
  MeshProgram p(1, 1);
  CoreProgram code;
  int shifted = code.addBuffer("shifted", 8, ElementType::f32);
  int ring = code.addBuffer("ring", 8, ElementType::f32);
  int copy = code.addBuffer("copy", 4, ElementType::f32);
  Task task{false, -1, {}};
  task.body.push_back(Op::vector(Op::Kind::fadd, Dsd::memory(shifted, 1),
                                 Dsd::memory(shifted), Dsd::zero(), 7,
                                 ElementType::f32));
  Dsd wrapping = Dsd::ring(ring);
  wrapping.offset = 6;
  task.body.push_back(Op::vector(Op::Kind::fmov, Dsd::memory(copy), wrapping,
                                 Dsd(), 4, ElementType::f32));
  code.startActive.push_back(code.addTask(std::move(task)));
  p.programOf[0] = p.addProgram(std::move(code));
  auto load = [&](int, std::vector<std::vector<float>> &buffers) {
    for (int i = 0; i < 8; ++i)
      buffers[shifted][i] = buffers[ring][i] = static_cast<float>(i + 1);
  };
  std::vector<std::vector<float>> stored;
  auto store = [&](int, const std::vector<std::vector<float>> &buffers) {
    stored = buffers;
  };
  std::string error;
  ASSERT_TRUE(simulate(p, c, error, CoreMemoryAccess{load, store})) << error;
  EXPECT_EQ(stored[shifted], std::vector<float>(8, 1.0f));
  EXPECT_EQ(stored[copy], (std::vector<float>{7, 8, 1, 2}));
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
  cgpt::wafer::KernelShape grad = matmul;
  grad.kind = cgpt::wafer::KernelKind::weight_grad;
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
  for (const cgpt::wafer::KernelShape &kernel :
       {matmul, grad, norm, attention}) {
    MeshProgram program = buildKernelProgram(kernel, rectangleLayout(4, 4), 1,
                                             *target, {0, 0, 4, 4})
                              .mesh;
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
    p.injectors.push_back({0, 0, west, color, 20, {}});
    p.drains.push_back({1, 0, east, color, false});
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

TEST(MeshSimulator, ReadWithoutRoute) {
  MeshProgram p(1, 1);
  p.programOf[0] = p.addProgram(accumulator(1));
  std::string error;
  EXPECT_FALSE(simulate(p, config(), error));
  EXPECT_EQ(error, "core (0, 0) has a data task on color 0, which its router "
                   "never sends to the ramp");
}

/// Inside the mesh, a stream may enter at the edge of the rectangle a
/// region runs on (regions side by side), as it enters at the mesh's.
TEST(MeshSimulator, InjectorAtARectangleEdge) {
  MeshProgram p(2, 1);
  p.routes[1].push_back({0, bit(west), bit(ramp)});
  p.programOf[1] = p.addProgram(accumulator(1));
  p.injectors.push_back({1, 0, west, 0, 4, {}});
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
  p.injectors.push_back({1, 0, west, 0, 4, {}});
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
  p.programOf[0] = p.addProgram(sender(4));
  p.drains.push_back({0, 0, east, 0, true});
  std::string error;
  std::optional<MeshResult> result = simulate(p, config(), error);
  ASSERT_TRUE(result) << error;
  EXPECT_EQ(result->drained[0].size(), 4u);
}

/// A core waits for wavelets nobody sends: the model stops at once and
/// names the core and the color, instead of running on.
TEST(MeshSimulator, DeadlockIsReported) {
  MeshProgram p(2, 1);
  p.routes[0].push_back({0, bit(ramp), bit(east)});
  p.routes[1].push_back({0, bit(west), bit(ramp)});
  p.programOf[0] = p.addProgram(sender(3));
  CoreProgram receive;
  int in = receive.addBuffer("in", 5, ElementType::f32);
  Task task{false, -1, {}};
  task.body.push_back(Op::vector(Op::Kind::fmov, Dsd::memory(in), Dsd::in(0),
                                 Dsd(), 5, ElementType::f32));
  receive.startActive.push_back(receive.addTask(std::move(task)));
  p.programOf[1] = p.addProgram(std::move(receive));
  std::string error;
  EXPECT_FALSE(simulate(p, config(), error));
  EXPECT_NE(error.find("deadlock at cycle"), std::string::npos) << error;
  EXPECT_NE(error.find("core (1, 0) is stuck in a task on color 0 with 2 "
                       "elements to go"),
            std::string::npos)
      << error;
}

/// Cerebras-GPT 111M's feed-forward matmul (768 -> 3072) at micro-batch 120
/// on 4096 token groups of 60 tokens: summing every output column at once
/// needs 737,280 B of partial sums a core, and the program does not load;
/// blocked 96 columns at a time, as a layout's sum_block says, it loads
/// and runs (23,040 B of sums beside the core's 7,680 B of outputs, its
/// part of each block's reduce-scatter).
TEST(MeshSimulator, UnblockedPartialSumsDoNotFit) {
  mlir::MLIRContext context;
  auto target = cgpt::target::WaferTargetModel::load("wse2", &context);
  ASSERT_TRUE(mlir::succeeded(target));
  cgpt::wafer::KernelShape k;
  k.kind = cgpt::wafer::KernelKind::weight_matmul;
  k.rows = 2048;
  k.columns = 3072;
  k.contracted = 768;
  k.flops = 2 * k.rows * k.columns * k.contracted;
  cgpt::wafer::Layout layout{4096, 48, cgpt::wafer::Edge::north, 0};
  cgpt::wafer::Rect window{0, 0, 48, 2};
  std::string error;
  EXPECT_FALSE(
      simulate(buildKernelProgram(k, layout, 120, *target, window).mesh,
               meshConfig(*target), error));
  EXPECT_EQ(error, "core (0, 0) cannot load its program: buffer 'sums' "
                   "(737280 B) brings its buffers to 739200 B, over the "
                   "40960 B a core has beside its 8192 B reserve");
  layout.sumBlock = 96;
  EXPECT_TRUE(simulate(buildKernelProgram(k, layout, 120, *target, window).mesh,
                       meshConfig(*target), error))
      << error;
}

/// A layer norm and an RMS norm of 2 tokens by 4 f32 features on one core,
/// their gradients and the loss's gradient
/// (mini: 2 f32 operations or 1 f32 FMAC a cycle, 16 B read and 8 B
/// written a cycle), by hand. The layer norm: the task's activation, 2;
/// per token, the row's sum, squares and sum of squares, 2 cycles each:
/// 12; over the 2 tokens, 27 (the mean, the variance's multiply-adds and
/// the Newton steps' one each at 2 cycles, 8 of them, 16; the products at
/// 1, 9; the estimate's two passes, 2); the rows' multiply-adds, 4 each: 8;
/// the gain and the shift over 8 elements, 4 each: 8. An FMAC twice as
/// wide halves the multiply-adds: 11 fewer. The RMS norm: 2; the squares
/// and their sum, 8; over the tokens 19 (the mean square's and the Newton
/// steps' multiply-adds, 8; the products, 9; the estimate, 2); the rows, 8;
/// the gain, 4. The wider FMAC: 8 fewer.
///
/// Their gradients. The layer norm's: 2; the shift over the 2 tokens, a
/// product, 1, and a multiply-add, 2; per token the normalizing
/// multiply-add, 4, and seven operations of 2 (the products and sums of the
/// gain's and shift's gradients, the gain's product, the two row sums),
/// 18 each: 36; over the tokens, the coefficients' two multiply-adds and a
/// product, 5; per token the two multiply-adds of dx, 8: 16. The last
/// row's cursors advance as the task ends, in no cycle of their own (a
/// task's control takes none). The wider FMAC: 1 + 4 + 2 + 8 = 15 fewer.
/// The RMS norm's: 2; per token 4 and five of 2, 28; the coefficient, 2;
/// dx, 16. The wider FMAC: 4 + 1 + 8 = 13 fewer.
///
/// The loss's gradient over the same block, 2 tokens by 4 logits: 2; per
/// token, five multiply-adds of 4 cycles (the log-sum-exp's subtraction,
/// log2 e's product, the fraction, the polynomial's first, the scale's):
/// 20; thirteen operations of 2 (the clamp, the rounding's two sums, the
/// polynomial's five products and five sums): 26; the power of two's two
/// integer passes, 4; the label's one element, 1: 51 a token, 102. The
/// wider FMAC: 2 cycles off each multiply-add, 20.
///
/// The loss over the same block, in one chunk: 2; the maxima's start over
/// the 2 tokens, 1; per token the row's maximum, 2: 4; per token, the
/// logits less the maximum, 4, the exponential, 42 (its three multiply-adds
/// at 4, its eight products and sums and its clamp and rounding at 2, its
/// power of two's two passes, 4), the sum, 2, and the label's logit, 1: 49
/// a token, 98. Over the tokens: the merge, 51 (the larger maximum, 1; two
/// differences, 2 each, and their exponentials, 21 each; two products, a
/// sum and a move, 1 each); the logarithm, 75 (the bits' conversion, 1,
/// its multiply-add, 2, three Newton steps of an exponential, 21, and three
/// operations, 1 each); the log-sum-exp, its weighted sum into the loss and
/// the scale, 1 each. The wider FMAC: 2 off each of 4 multiply-adds a token
/// over 4 logits (16), 1 off each of the 18 over the tokens (the merge's 8,
/// the logarithm's 10): 34.
TEST(MeshSimulator, NormsOnOneCoreByHand) {
  mlir::MLIRContext context;
  auto target = cgpt::target::WaferTargetModel::load("mini", &context);
  ASSERT_TRUE(mlir::succeeded(target));
  cgpt::wafer::KernelShape k;
  k.kind = cgpt::wafer::KernelKind::reduction;
  k.rows = 2;
  k.columns = 4;
  k.elementBytes = 4;
  cgpt::wafer::Layout layout{1, 1, cgpt::wafer::Edge::none, 0};
  struct Expected {
    cgpt::wafer::RowFunction function;
    int64_t cycles, widerFmac;
  };
  for (Expected e :
       {Expected{cgpt::wafer::RowFunction::layerNorm, 2 + 12 + 27 + 8 + 8, 11},
        Expected{cgpt::wafer::RowFunction::rmsNorm, 2 + 8 + 19 + 8 + 4, 8},
        Expected{cgpt::wafer::RowFunction::layerNormGrad, 2 + 3 + 36 + 5 + 16,
                 15},
        Expected{cgpt::wafer::RowFunction::rmsNormGrad, 2 + 28 + 2 + 16, 13},
        Expected{cgpt::wafer::RowFunction::crossEntropyGrad,
                 2 + 2 * (20 + 26 + 4 + 1), 20},
        Expected{cgpt::wafer::RowFunction::crossEntropy,
                 2 + 1 + 4 + 2 * 49 + 51 + 75 + 3 + 1, 34}}) {
    k.function = e.function;
    MeshProgram program =
        buildKernelProgram(k, layout, 1, *target, {0, 0, 1, 1}).mesh;
    MeshConfig c = meshConfig(*target);
    std::string error;
    std::optional<MeshResult> run = simulate(program, c, error);
    ASSERT_TRUE(run) << error;
    EXPECT_EQ(run->cycles, e.cycles);
    c.f32Fmacs = 2;
    run = simulate(program, c, error);
    ASSERT_TRUE(run) << error;
    EXPECT_EQ(run->cycles, e.cycles - e.widerFmac);
  }
}

/// A stream sent to a neighbour that never takes it fills the queues and
/// stops the sender.
TEST(MeshSimulator, QueueThatNeverDrains) {
  MeshProgram p(2, 1);
  p.routes[0].push_back({0, bit(ramp), bit(east)});
  p.routes[1].push_back({0, bit(west), bit(ramp)});
  p.programOf[0] = p.addProgram(sender(20));
  std::string error;
  EXPECT_FALSE(simulate(p, config(), error));
  EXPECT_NE(error.find("core (0, 0) is stuck in a task on color 0"),
            std::string::npos)
      << error;
}

} // namespace
