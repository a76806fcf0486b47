//===- KernelCostTest.cpp - a kernel's time on its rectangle --------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The kernel cost model: a kernel's own cost model reached through
// KernelCostOpInterface, and the standard algorithms' terms computed by
// hand on the mini target (2 mixed FMACs a cycle, 2 cycles a task, 4 B
// links: two bf16 a wavelet, 16 B read and 8 B written a cycle, 1 cycle a
// hop, 2 cycles across a ramp).
//
//===----------------------------------------------------------------------===//

#include "WaferFixture.h"

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"

using namespace cgpt;
using namespace cgpt::wafer;

namespace {

/// A stand-in kernel whose algorithm is its own: 1,000 cycles a sequence.
struct OwnCost
    : KernelCostOpInterface::ExternalModel<OwnCost, dataflow::RotaryAnglesOp> {
  static KernelTime getMeshCost(const KernelCostQuery &query) {
    KernelTime time;
    time.compute = 1000.0 * static_cast<double>(query.microBatch);
    return time;
  }
};

const target::WaferTargetModel &mini(mlir::MLIRContext &context) {
  return **target::WaferTargetModel::loadShared("mini", &context);
}

/// A 64 x 64 weight against 64 tokens a sequence, bf16.
KernelShape matmul64() {
  KernelShape shape;
  shape.kind = KernelKind::weight_matmul;
  shape.rows = shape.columns = shape.contracted = 64;
  shape.flops = 2 * 64 * 64 * 64;
  return shape;
}

/// A region runs its kernel's own cost when the kernel brings one, and the
/// standard algorithm of its kind otherwise.
TEST(KernelCost, OwnCostThroughTheInterface) {
  mlir::DialectRegistry registry = test::allDialects();
  registry.addExtension(
      +[](mlir::MLIRContext *context, dataflow::DataflowDialect *) {
        dataflow::RotaryAnglesOp::attachInterface<OwnCost>(*context);
      });
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  KernelShape shape;
  shape.kind = KernelKind::elementwise;
  shape.rows = 64;
  shape.columns = 16;
  shape.flops = 1024;
  KernelCostQuery query{
      shape, {4, 4, Edge::none}, {0, 0, 16, 12}, 3, mini(context)};
  auto own = KernelCostModel::forKernel(
      mlir::StringAttr::get(&context, "dataflow.rotary_angles"));
  EXPECT_EQ(own(query).cycles(), 3000);
  auto standard = KernelCostModel::forKernel(
      mlir::StringAttr::get(&context, "dataflow.map"));
  EXPECT_EQ(standard(query).cycles(), kernelTime(query).cycles());
  EXPECT_NE(standard(query).cycles(), 3000);
}

/// A weight-streaming matmul of 64 tokens x 64 inputs x 64 outputs on the
/// whole mini mesh, 16 token groups by 12 feature groups: a core holds 4
/// tokens and ceil(64 / 12) = 6 input features, so 6 x 64 = 384 weight
/// elements arrive (192 wavelets, a task each: 384 cycles) and each is an
/// FMAC over 4 tokens (2 cycles: 768). Then the block is reduce-scattered
/// along the segment of 12 cores, core p owning columns 64p/12 on
/// (5, 5, 6, 5, 5, 6, ...: 64 = 5 x 12 + 4), after a task (2). A middle
/// core with 6 columns takes in the block and its part, (64 + 6) x 4 = 280
/// sums, and the east-going chain's latency is charged 10 steps of 5
/// cycles (a hop and the ramps out and in) and 10 tasks more (the cores
/// after the first that own a part, less one): 350. The east-going front,
/// by hand: core 1's 5 columns (20 sums) arrive at 2 + 5 = 7, done at 27,
/// before the west-going parts reach it at 50; core 2's 6 columns arrive
/// at 27 + 2 + 5 = 34 and stream in until the west-going parts reach it
/// at 45 (11 of their 24 sums), then wait out that stream (to 45 + 16 x 4
/// = 109): done at 109 + 13 = 122; then a task, a step and the part,
/// core by core: 149, 176, 207, 234, 261, 292, 319, 346, 377, and a task:
/// 379, 29 more than the 350, paid once. A task (2) then stores the core's
/// 6 x 4 = 24 sums (6 cycles at 4 a cycle; the SRAM reads their two
/// halves, 8 B each over 16 B a cycle: 12). Fill: down 12 rows and across
/// the feature group's ceil(16 / 12) = 2 columns.
TEST(KernelCost, StreamedMatmulByHand) {
  mlir::MLIRContext context(test::allDialects());
  KernelShape shape = matmul64();
  KernelTime time = kernelTime(
      {shape, {16, 12, Edge::north}, {0, 0, 16, 12}, 1, mini(context)});
  EXPECT_EQ(time.compute, 384 + 768 + 2 + 350 + 2 + 6);
  EXPECT_EQ(time.fabric, 192 + 280);
  // Per FMAC the SRAM ports keep pace: reading the tokens' operands and
  // their f32 sums (4 x 6 B over 16 B a cycle) and writing the sums (4 x 4
  // B over 8 B) take 2 cycles, as the SIMD width does.
  EXPECT_EQ(time.sram, time.compute + 12 - 6);
  EXPECT_EQ(time.fixed, (12 + 2) + 29);
  // Streamed from the north edge onto a rectangle 4 rows down, the weights
  // cross 4 more cores first.
  KernelTime lower = kernelTime(
      {shape, {16, 12, Edge::north}, {0, 4, 16, 12}, 1, mini(context)});
  EXPECT_EQ(lower.fixed - time.fixed, 4);
}

/// A token sum (a bias gradient) of 64 tokens x 64 features on 16 x 4
/// cores, 4 token groups by 2 feature groups: a core holds 16 tokens of 32
/// features and adds them, a row of 32 an operation, into f32 sums: 16
/// operations of 16 cycles each (the 2-wide f32 adds; the SRAM's writes of
/// 32 x 4 B over 8 B a cycle keep pace), after a task's 2 cycles; then the
/// 32 sums pass down the column's 4 token groups (32 wavelets), filling
/// 4 hops and 3 stages in and out of a ramp (2 x 2 x 3). Summing 12
/// features at a time, 3 blocks: 48 operations of 6 cycles, 36 sums
/// passed, and each block's sums cleared (6 cycles a block).
TEST(KernelCost, TokenSumByHand) {
  mlir::MLIRContext context(test::allDialects());
  KernelShape shape;
  shape.kind = KernelKind::token_sum;
  shape.rows = 64;
  shape.columns = 64;
  shape.flops = 64 * 64;
  KernelTime time =
      kernelTime({shape, {4, 2, Edge::none}, {0, 0, 16, 4}, 1, mini(context)});
  EXPECT_EQ(time.compute, 2 + 16 * 16 + 32);
  EXPECT_EQ(time.sram, time.compute);
  EXPECT_EQ(time.fabric, 32);
  EXPECT_EQ(time.fixed, 4 + 2 * 2 * 3);
  KernelTime blocked = kernelTime(
      {shape, {4, 2, Edge::none, 12}, {0, 0, 16, 4}, 1, mini(context)});
  EXPECT_EQ(blocked.compute, 2 + 48 * 6 + 36 + 3 * 6);
  EXPECT_EQ(blocked.fabric, 36);
  EXPECT_EQ(blocked.fixed, time.fixed);
}

/// A strip taller than its token groups: the 4 groups fill its top 4 rows
/// and nothing crosses the 8 below them, so the token sum above and a
/// weight gradient on 16 x 12 cores take as long as on 16 x 4.
TEST(KernelCost, IdleRowsCostNothing) {
  mlir::MLIRContext context(test::allDialects());
  KernelShape sum;
  sum.kind = KernelKind::token_sum;
  sum.rows = sum.columns = 64;
  sum.flops = 64 * 64;
  KernelShape gradient = matmul64();
  gradient.kind = KernelKind::weight_grad;
  for (const KernelShape &shape : {sum, gradient}) {
    Layout layout{4, 2, Edge::none};
    KernelTime fitted =
        kernelTime({shape, layout, {0, 0, 16, 4}, 1, mini(context)});
    KernelTime tall =
        kernelTime({shape, layout, {0, 0, 16, 12}, 1, mini(context)});
    EXPECT_EQ(tall.cycles(), fitted.cycles());
    EXPECT_EQ(tall.fixed, fitted.fixed);
  }
  EXPECT_EQ(tokenRowsOn({0, 0, 16, 12}, 4), 4);
  EXPECT_EQ(tokenRowsOn({0, 0, 16, 12}, 40), 12);
}

/// mini with `queue_wavelets` wavelets a router queue.
target::WaferTargetModel miniWithQueues(mlir::MLIRContext &context, int queue) {
  std::string yaml = test::builtinTargetText("mini");
  std::string key = "queue_wavelets: 4";
  yaml.replace(yaml.find(key), key.size(),
               "queue_wavelets: " + std::to_string(queue));
  mlir::FailureOr<target::WaferTargetModel> model =
      target::WaferTargetModel::parse(yaml, "mini.yaml", &context);
  EXPECT_TRUE(mlir::succeeded(model));
  return *model;
}

/// A queue's place is held for the link's latency and the freeing's way
/// back, 3 cycles across mini's 2-cycle ramp: 3 or more wavelets a queue
/// keep a stream at one a cycle, 2 at two every three cycles, 1 at one
/// every three. The streamed matmul above: its weights' and sums' 472
/// wavelets, and the 280 a middle core of its reduce-scatter takes in on
/// its own engine.
TEST(KernelCost, ShallowQueuesSlowEveryStream) {
  mlir::MLIRContext context(test::allDialects());
  KernelShape shape = matmul64();
  auto timed = [&](int queue) {
    return kernelTime({shape,
                       {16, 12, Edge::north},
                       {0, 0, 16, 12},
                       1,
                       miniWithQueues(context, queue)});
  };
  for (int queue : {3, 4, 16}) {
    EXPECT_EQ(timed(queue).fabric, 192 + 280) << queue;
    EXPECT_EQ(timed(queue).compute, 384 + 768 + 2 + 350 + 2 + 6) << queue;
  }
  EXPECT_EQ(timed(2).fabric, (192 + 280) * 1.5);
  EXPECT_EQ(timed(2).compute, 384 + 768 + 2 + 280 * 1.5 + 70 + 2 + 6);
  EXPECT_EQ(timed(1).fabric, (192 + 280) * 3);
  EXPECT_EQ(timed(1).compute, 384 + 768 + 2 + 280 * 3 + 70 + 2 + 6);
}

/// The same matmul summing 16 of its 64 output columns at a time: four
/// blocks, each of 6 x 16 = 96 weights (48 wavelets: 96 cycles of tasks,
/// 192 of FMACs), then the block's reduce-scatter after a task (2): parts
/// of 1, 1, 2, 1, 1, 2, ... columns (16 = 12 + 4), a middle core of 2
/// taking in (16 + 2) x 4 = 72 sums, with 10 steps and 10 tasks: 142; a
/// task (2) and the store of its 2 x 4 sums (2), and the sums cleared for
/// the next block (64 f32 written at 8 B a cycle: 32). The east-going
/// front (as above, 154 by hand) is 12 more than the 142, paid once: a
/// core later in the segment starts each block as much later.
TEST(KernelCost, BlockedMatmulByHand) {
  mlir::MLIRContext context(test::allDialects());
  KernelShape shape = matmul64();
  Layout blocked{16, 12, Edge::north, 16};
  KernelTime time =
      kernelTime({shape, blocked, {0, 0, 16, 12}, 1, mini(context)});
  EXPECT_EQ(time.compute, 4 * (96 + 192 + 2 + 142 + 2 + 2 + 32));
  EXPECT_EQ(time.fabric, 192 + 4 * 72);
  EXPECT_EQ(time.fixed, (12 + 2) + 12);
}

/// The same matmul with its weights resident (layer pipelined) on a band of
/// 8 x 12 cores, 16 groups of output columns by 6 of inputs: a core holds
/// ceil(64 / 16) = 4 outputs of ceil(64 / 6) = 11 inputs. Every token's 11
/// inputs stream in (704 elements, 352 wavelets: 704 cycles of tasks), each
/// an FMAC over 4 outputs (2 cycles: 1,408); then 64 tokens x 4 partial
/// sums pass along the row (2 + 256). Fill: 12 rows and ceil(8 / 6) = 2
/// columns down, a chain of 6 groups along their segment of 6 cores (6 + 2
/// x 2 x 5).
TEST(KernelCost, ResidentMatmulByHand) {
  mlir::MLIRContext context(test::allDialects());
  KernelShape shape = matmul64();
  KernelTime time = kernelTime(
      {shape, {16, 6, Edge::resident}, {0, 0, 8, 12}, 1, mini(context)});
  EXPECT_EQ(time.compute, 704 + 1408 + 258);
  EXPECT_EQ(time.fabric, 352 + 256);
  EXPECT_EQ(time.sram, time.compute);
  EXPECT_EQ(time.fixed, (12 + 2) + (6 + 20));
  EXPECT_EQ(time.cycles(), 2370 + 40);
}

/// Attention blocks that outnumber the rectangle's room take turns: on a
/// rectangle with room for half the (sequence, head) pairs at once, each
/// block does twice the work.
TEST(KernelCost, AttentionBlocksTakeTurns) {
  mlir::MLIRContext context(test::allDialects());
  KernelShape shape;
  shape.kind = KernelKind::attention;
  shape.rows = 4 * 64; // 4 heads of 64 tokens
  shape.columns = 64;
  shape.contracted = 16;
  shape.flops = 4 * (2 * 2 * 64 * 64 * 16);
  const target::WaferTargetModel &t = mini(context);
  // 4 pairs at one sequence; 2 x 2 blocks of 4 cores.
  KernelTime roomy =
      kernelTime({shape, {2, 2, Edge::none}, {0, 0, 4, 4}, 1, t});
  KernelTime crowded =
      kernelTime({shape, {2, 2, Edge::none}, {0, 0, 4, 2}, 1, t});
  EXPECT_GT(crowded.compute, 1.9 * (roomy.compute - 2 * 2));
}

/// What a core of an attention block holds, by hand: 64-token sequences,
/// head size 16, bf16, on blocks of 2 query by 4 key groups: 32 queries
/// and 16 keys a core, four heads of one sequence taking the block in
/// turn. Forward, all queries at once: keys and values 2 x 16 x 16 x 2 =
/// 1,024 B, a query row 32 B, f32 scores 32 x 16 x 4 = 2,048 B, maxima
/// 128 B, partial outputs and sums 32 x 17 x 4 = 2,176 B, mask offsets
/// 128 B, key positions 64 B, slopes 16 B, the exponential's three rows of
/// 16 keys 192 B, the constants (6, the mask's 32, the exponential's 10)
/// 192 B: 6,000 B. In chunks of 5 (7 chunks, the offsets padded to 35):
/// 2,340 B. Backward: the keys twice and the values, 3 x 256 x 2 =
/// 1,536 B; queries and output gradients 2 x 1,024 B; probabilities and
/// their gradients 2 x 2,048 B; statistics 4 x 32 x 4 = 512 B; query
/// gradients 2,048 B; key and value gradients 2 x 16 x 16 x 4 = 2,048 B;
/// then as forward, 592 B: 12,880 B.
TEST(KernelCost, AttentionBlockBytesByHand) {
  KernelShape shape;
  shape.kind = KernelKind::attention;
  shape.function = RowFunction::attention;
  shape.rows = 4 * 64;
  shape.columns = 64;
  shape.contracted = 16;
  shape.elementBytes = 2;
  shape.flops = 4 * (2 * 2 * 64 * 64 * 16);
  Rect rect{0, 0, 4, 2};
  AttentionBlock block =
      attentionBlock(attentionPass(shape, {2, 4, Edge::none}, rect, 1), 2);
  EXPECT_EQ(block.queries, 32);
  EXPECT_EQ(block.keys, 16);
  EXPECT_EQ(block.pairs, 4);
  EXPECT_EQ(block.bytes(0), 6000);
  EXPECT_EQ(block.chunks(5), 7);
  EXPECT_EQ(block.bytes(5), 2340);
  // The fewest even chunks that fit: 7 of 5 queries in 2,340 B, 8 of 4 in
  // one byte less (2,192 B), all at once in 6,000 B.
  EXPECT_EQ(attentionChunkFor(block, 2340), 5);
  EXPECT_EQ(attentionChunkFor(block, 2339), 4);
  EXPECT_EQ(attentionChunkFor(block, 6000), 0);
  EXPECT_EQ(attentionChunkFor(block, 100), 1);
  shape.function = RowFunction::attentionGrad;
  AttentionBlock backward =
      attentionBlock(attentionPass(shape, {2, 4, Edge::none}, rect, 1), 2);
  EXPECT_EQ(backward.bytes(0), 12880);
  EXPECT_EQ(attentionPass(shape, {2, 4, Edge::none}, rect, 1).pairsPerBlock, 4);
  EXPECT_EQ(
      attentionPass(shape, {2, 4, Edge::none}, {0, 0, 8, 4}, 1).pairsPerBlock,
      1);
}

/// The load a static program plans for an expert: the mean plus the
/// binomial spread times the expected largest of E standard normals
/// (1.0294 for 4, 1.4236 for 8: the order statistics' tables), never more
/// than every row.
TEST(KernelCost, ExpectedLargestExpertLoad) {
  EXPECT_EQ(expectedLargestLoad(131072, 8), 16555.0);
  EXPECT_EQ(expectedLargestLoad(2048, 4), 533.0);
  EXPECT_EQ(expectedLargestLoad(3, 2), 2.0);
  EXPECT_EQ(expectedLargestLoad(100, 1), 100.0);
  // The imbalance shrinks as 1 / sqrt(rows).
  double small = expectedLargestLoad(800, 8) / 100.0;
  double large = expectedLargestLoad(80000, 8) / 10000.0;
  EXPECT_GT(small - 1.0, 9.0 * (large - 1.0));
}

/// A routed kernel runs expert after expert: E passes of one expert's
/// product on the most loaded expert's rows, with one expert's weight.
TEST(KernelCost, RoutedKernelRunsOnePassAnExpert) {
  mlir::MLIRContext context(test::allDialects());
  KernelShape routed = matmul64();
  routed.rows = 128; // 64 tokens a sequence, 2 choices each
  routed.flops = 2 * 128 * 64 * 64;
  routed.weightBytes = 4 * 64 * 64 * 2;
  routed.experts = 4;
  KernelShape pass = expertPass(routed, 2);
  EXPECT_EQ(pass.experts, 0);
  EXPECT_EQ(pass.rows, static_cast<int64_t>(expectedLargestLoad(256, 4)));
  EXPECT_EQ(pass.weightBytes, 64 * 64 * 2);
  Layout layout{16, 12, Edge::north};
  Rect rect{0, 0, 16, 12};
  KernelTime all = kernelTime({routed, layout, rect, 2, mini(context)});
  KernelTime one = kernelTime({pass, layout, rect, 1, mini(context)});
  EXPECT_EQ(all.compute, 4 * one.compute);
  EXPECT_EQ(all.fabric, 4 * one.fabric);
  EXPECT_EQ(all.fixed, 4 * one.fixed);
  // A weight gradient's routed rows are the tokens it sums over.
  KernelShape grad = routed;
  grad.kind = KernelKind::weight_grad;
  std::swap(grad.rows, grad.contracted);
  EXPECT_EQ(expertPass(grad, 2).contracted, pass.rows);
}

} // namespace
