//===- CostTermsTest.cpp - each cost term, worked by hand -----------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// One test per term of the step's cost that a pinned total would hide: the
// bytes each stage streams in, the live bytes of an attention stage, the
// optimizer's tail and the FLOPs of the norms' kernels, each worked out by
// hand from the mechanism the docs give, not read back from a run.
//
//===----------------------------------------------------------------------===//

#include "WaferFixture.h"

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"
#include "cgpt/Pipelines/Pipelines.h"

#include "mlir/Pass/PassManager.h"

using namespace cgpt;
using namespace cgpt::wafer;

namespace {

using Kind = CheckpointPolicy::Kind;
using CostTerms = test::WaferFixture;

/// Where weight `weight` enters `device`'s stage `stage`: the region its
/// ingress op names.
std::string entryOf(DeviceOp device, llvm::StringRef stage,
                    llvm::StringRef weight) {
  std::string region;
  device.walk([&](StageOp s) {
    if (s.getSymName() == stage)
      s.walk([&](IngressOp in) {
        if (in.getWeight() == weight)
          region = in.getDest().str();
      });
  });
  return region;
}

/// The weight bytes `device`'s stage `name` streams in: its ingress ops.
int64_t streamedBytes(DeviceOp device, llvm::StringRef name) {
  int64_t bytes = 0;
  device.walk([&](StageOp stage) {
    if (stage.getSymName() == name)
      stage.walk([&](IngressOp in) { bytes += in.getBytes(); });
  });
  return bytes;
}

/// tiny (d_model 64, 4 heads, d_ffn 256, f32 weights) on mini. A layer's
/// weights: two layer norms of 2 x 64, the fused QKV 64 x 192 + 192, the
/// attention's projection 64 x 64 + 64, the feed-forward 64 x 256 + 256 and
/// 256 x 64 + 64: 49,984 parameters, 199,936 B. The forward stage streams
/// each once. The backward stage recomputes the layer's forward (policy
/// `layer`) up to the last projection, whose output it does not need, and
/// takes every weight's gradient: every weight but that projection's bias
/// is read by two kernels there, and still streams in once, 199,680 B, at
/// the first kernel that reads it, which waits for it.
TEST_F(CostTerms, EachWeightEntersItsStageOnceAtItsFirstReader) {
  DeviceOp device = compile("models/tiny.yaml", "mini");
  EXPECT_EQ(streamedBytes(device, "h.0.forward"), 199936);
  EXPECT_EQ(streamedBytes(device, "h.1.forward"), 199936);
  EXPECT_EQ(streamedBytes(device, "h.1.backward"), 199936 - 256);
  // The embeddings: the token table (256 x 64) and positions (64 x 64).
  EXPECT_EQ(streamedBytes(device, "embed.forward"), (256 + 64) * 64 * 4);
  // The loss stage reads the final norm twice (forward and its gradient)
  // and the tied token table twice (logits and their gradient): once each.
  EXPECT_EQ(streamedBytes(device, "head.loss"), (2 * 64 + 256 * 64) * 4);
  // The final norm's gain enters at the norm, not at its gradient; the
  // QKV weight at the recomputed product, not at its input gradient.
  EXPECT_EQ(entryOf(device, "head.loss", "ln_f.weight"), "layer_norm.0");
  EXPECT_EQ(entryOf(device, "h.1.backward", "h.1.attn.qkv.weight"), "matmul.1");
}

/// two-layers.mlir (8,192 parameters, each weight's 8,192 B gradient out)
/// with clipping: the servers update every tensor once the last gradient
/// has arrived, reading and writing the f32 weight and its two Adam moments
/// and reading the f32 gradient, 28 B a parameter, at the target's
/// optimizer bandwidth.
TEST_F(CostTerms, OptimizerTailByHand) {
  DeviceOp device = parseInput("two-layers.mlir");
  device.setMaxGradientNormAttr(
      mlir::FloatAttr::get(mlir::Float64Type::get(&context), 1.0));
  StepProgram program = programOf(device);
  ASSERT_TRUE(program.clipsGradients());
  double rate = program.getTarget().getOptimizerBytesPerSecond();
  StepEstimate step = estimate(program, placeWith("whole-mesh", program, 1), 1,
                               {Kind::keep, 0});
  double expected = 8192 * 28 / rate;
  EXPECT_NEAR(step.optimizerSeconds, expected, 1e-12 * expected);
}

/// An attention region on the whole mini mesh (16 x 12 = 192 cores) after
/// the QKV product that left its operands there. A core holds its share of
/// the live activations as the product spread them, and attention's
/// buffers (wafer::AttentionBlock) for the (sequence, head) blocks it
/// takes: the keys and values of its key group, a query row, and for each
/// query it takes at once its f32 scores, maximum, partial output and sum
/// and mask offset; the key positions, slopes, the exponential's rows and
/// the constants.
TEST_F(CostTerms, AttentionStageLiveBytesByHand) {
  DeviceOp device = parseText(R"mlir(
wafer.device @attend target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 16 : i64, grad_accum_steps = 0 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 0 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 12288 : i64, seq_len = 64 : i64} {
  wafer.stage @h.0.forward order 0 "forward" layer 0 {
    wafer.region @qkv weight_matmul "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 1572864 : i64, live = 32768 : i64, operand_bytes = 8192 : i64, shape = array<i64: 64, 192, 64>, weight_bytes = 24576 : i64}
    wafer.region @attend attention "dataflow.matmul" {accumulator = 0 : i64, element_bytes = 2 : i64, flops = 1048576 : i64, live = 32768 : i64, operand_bytes = 24576 : i64, shape = array<i64: 256, 64, 16>}
    wafer.ingress "h.0.qkv" -> @qkv bytes 24576
  }
}
)mlir");
  StepProgram program = programOf(device);
  Placement placement = placeWith("whole-mesh", program, 1);
  const Layout &qkv = placement.regions[0][0].layout;
  const Layout &attend = placement.regions[0][1].layout;
  ASSERT_EQ(placement.regions[0][1].rect.cores(), 192);
  // The product splits each token's features 16 ways, a segment along
  // each row, and the 64 tokens 11 ways (a twelfth group would leave a
  // core no fewer than ceil(64 / 11) = 6 and lengthen the column's fill):
  // a core holds 6 tokens of ceil(ceil(32,768 / 64) / 16) = 32 B each.
  ASSERT_EQ(qkv.tokenGroups, 11);
  ASSERT_EQ(qkv.featureGroups, 16);
  int64_t spread = 6 * 32;
  CoreMemory memory =
      regionMemory(program, placement, 0, 1, 1, {Kind::keep, 0});
  EXPECT_EQ(memory.live, spread);
  // 4 heads of 64 queries over the attention's query groups, the 64 keys
  // over its key groups; the blocks the mesh holds take the 4 pairs in
  // turn; head size 16, bf16.
  int64_t queries = (64 + attend.tokenGroups - 1) / attend.tokenGroups;
  int64_t keys = (64 + attend.featureGroups - 1) / attend.featureGroups;
  int64_t blocks = (16 / attend.featureGroups) * (12 / attend.tokenGroups);
  int64_t pairs = (4 + blocks - 1) / blocks;
  int64_t chunk = attend.sumBlock > 0 ? attend.sumBlock : queries;
  int64_t chunks = (queries + chunk - 1) / chunk;
  EXPECT_EQ(memory.attention,
            (2 * keys * 16 + 16) * 2 +
                (chunk * keys + chunk + chunk * 17 + chunks * chunk) * 4 +
                (keys + pairs + 3 * keys + 16 + 2 * keys) * 4);
}

/// The layer norms' FLOPs per element of their [tokens, d] input, counted
/// as docs/dataflow.md counts them (a multiply-add is two). Forward, 7:
/// the mean's sum 1, centring 1, the variance's square and sum 2, scaling
/// by rstd 1, gain and bias 2. Gradient, 14: x-hat again 2; g dy 1; the
/// row sums of g dy and of g dy x-hat 3; dx = rstd / d (d g dy - sum - x-hat
/// sum') 5; the gain's gradient dy x-hat summed 2 and the bias's, dy summed,
/// 1. tiny's layers take 64 tokens of 64 features.
TEST_F(CostTerms, LayerNormFlopsPerElementByHand) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      test::importSourceModel("models/tiny.yaml", &context);
  ASSERT_TRUE(module);
  mlir::PassManager pm(&context);
  buildLowerToDataflowPipeline(pm, LowerToDataflowOptions());
  ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
  const int64_t elements = 64 * 64;
  int64_t forward = 0, backward = 0;
  module->walk([&](dataflow::LayerNormOp op) {
    EXPECT_EQ(op.getFlopsPerSequence(), 7 * elements);
    ++forward;
  });
  module->walk([&](dataflow::LayerNormGradOp op) {
    EXPECT_EQ(op.getFlopsPerSequence(), 14 * elements);
    ++backward;
  });
  // Two per layer and the final one; recomputed forwards count again.
  EXPECT_GE(forward, 5);
  EXPECT_EQ(backward, 5);
}

} // namespace
