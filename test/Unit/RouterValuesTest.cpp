//===- RouterValuesTest.cpp - the router's choice on the mesh -------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The router's product runs on the mini target's cores as a weight matmul,
// and the chain's last core of each segment then chooses its tokens'
// experts (docs/runtime.md, "The router on the mesh"): the probabilities,
// the chosen experts and their weights are the executor's
// (exec::routeFromLogits of the same logits), on layouts whose groups do
// not divide the operands, blocks of experts (the logits gathered block
// by block), token groups in two columns of segments, one core alone and
// one core alone with blocks; with and without a null expert, in f32 and
// in 16-bit streams. Equal probabilities go to the lower index first, as
// the executor's stable sort puts them. The last core holds what the
// memory model counts; rounded logits and resident weights leave the
// choice to the host.
//
//===----------------------------------------------------------------------===//

#include "MeshValuesFixture.h"
#include "cgpt/Exec/MixtureOfExperts.h"
#include "cgpt/Sim/Mesh/KernelValues.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace cgpt;
using namespace cgpt::sim::mesh;
using cgpt::wafer::Edge;
using cgpt::wafer::KernelKind;
using cgpt::wafer::KernelShape;
using cgpt::wafer::Layout;

namespace {

using RouterValues = test::MeshValuesFixture;

KernelShape router(int64_t tokensPerSequence, int64_t experts, int64_t features,
                   int64_t choices, int64_t bytes,
                   std::optional<double> nullLogit) {
  KernelShape k;
  k.kind = KernelKind::weight_matmul;
  k.rows = tokensPerSequence;
  k.columns = experts;
  k.contracted = features;
  k.flops = 2 * tokensPerSequence * experts * features;
  k.elementBytes = bytes;
  k.choices = choices;
  k.nullLogit = nullLogit;
  return k;
}

struct Case {
  const char *what;
  int64_t sequences, tokensPerSequence, features, experts, choices, bytes;
  Layout layout;
  wafer::Rect rect;
};

const Case kCases[] = {
    {"groups that do not divide",
     2,
     5,
     10,
     7,
     2,
     4,
     {3, 4, Edge::north, 0},
     {0, 0, 4, 3}},
    {"blocks of experts, a last block short",
     2,
     5,
     10,
     7,
     3,
     4,
     {3, 4, Edge::north, 3},
     {0, 0, 4, 3}},
    {"token groups in two columns of segments",
     1,
     12,
     8,
     6,
     2,
     2,
     {6, 2, Edge::north, 0},
     {0, 0, 4, 3}},
    {"one core", 1, 3, 5, 4, 1, 2, {1, 1, Edge::north, 0}, {0, 0, 1, 1}},
    {"one core, blocks of one expert",
     1,
     4,
     6,
     5,
     5,
     4,
     {1, 1, Edge::north, 1},
     {0, 0, 1, 1}},
};

/// The executor's choice from the logits [T, E] the mesh summed.
exec::RouteResult executors(const std::vector<float> &logits, int64_t tokens,
                            int64_t experts, int64_t choices,
                            std::optional<double> nullLogit) {
  exec::Tensor whole({1, tokens, experts});
  whole.data = logits;
  return exec::routeFromLogits(std::move(whole), choices, nullLogit,
                               /*roundLogits=*/false);
}

void expectChoice(const WeightKernelRun &run, int64_t tokens, int64_t experts,
                  int64_t choices, std::optional<double> nullLogit) {
  ASSERT_TRUE(run.choice);
  exec::RouteResult want =
      executors(run.values, tokens, experts, choices, nullLogit);
  EXPECT_EQ(run.choice->experts, want.experts.data);
  test::expectClose(run.choice->probabilities, want.probs.data, 1e-5f);
  test::expectClose(run.choice->weights, want.weights.data, 1e-5f);
}

TEST_F(RouterValues, ChoiceIsTheExecutors) {
  for (const Case &c : kCases)
    for (std::optional<double> nullLogit : {std::optional<double>(), {0.3}}) {
      SCOPED_TRACE(::testing::Message()
                   << c.what << (nullLogit ? ", a null expert" : ""));
      KernelShape k = router(c.tokensPerSequence, c.experts, c.features,
                             c.choices, c.bytes, nullLogit);
      int64_t tokens = c.sequences * c.tokensPerSequence;
      // Logits of a few units, so that the softmax is far from uniform.
      std::vector<float> x = test::uniformValues(tokens * c.features, 1);
      std::vector<float> w = test::uniformValues(c.features * c.experts, 2);
      for (float &v : w)
        v *= 3.0f;
      std::string error;
      std::optional<WeightKernelRun> run = runWeightKernel(
          k, c.layout, c.sequences, mini(), c.rect, x, w, error);
      ASSERT_TRUE(run) << error;
      expectChoice(*run, tokens, c.experts, c.choices, nullLogit);
    }
}

TEST_F(RouterValues, TiesGoToTheLowerIndex) {
  // Experts 1 and 3 have the same weights, so every token's logits tie
  // there; 0 and 4 too.
  const Case &c = kCases[0];
  KernelShape k = router(c.tokensPerSequence, 5, c.features, 4, c.bytes, {});
  int64_t tokens = c.sequences * c.tokensPerSequence;
  std::vector<float> x = test::uniformValues(tokens * c.features, 3);
  std::vector<float> w = test::uniformValues(c.features * 5, 4);
  for (int64_t f = 0; f < c.features; ++f) {
    w[f * 5 + 3] = w[f * 5 + 1];
    w[f * 5 + 4] = w[f * 5 + 0];
  }
  std::string error;
  std::optional<WeightKernelRun> run =
      runWeightKernel(k, c.layout, c.sequences, mini(), c.rect, x, w, error);
  ASSERT_TRUE(run) << error;
  expectChoice(*run, tokens, 5, 4, {});
}

TEST_F(RouterValues, ProgramsHoldWhatMemoryCounts) {
  for (const Case &c : kCases)
    for (bool round : {false, true}) {
      SCOPED_TRACE(::testing::Message()
                   << c.what << (round ? ", rounded logits" : ""));
      KernelShape k = router(c.tokensPerSequence, c.experts, c.features,
                             c.choices, 2, {0.5});
      k.roundLogits = round;
      KernelProgram built =
          buildKernelProgram(k, c.layout, c.sequences, mini(), c.rect, {});
      const MeshProgram &mesh = built.mesh;
      const CoreProgram &last =
          mesh.programs[mesh.programOf[mesh.index(built.segment - 1, 0)]];
      int64_t router = last.bytes() - last.buffers[kProductInputs].bytes() -
                       last.buffers[kProductSums].bytes();
      EXPECT_EQ(wafer::routerChoiceBytes(k, c.layout, c.sequences), router);
    }
}

TEST_F(RouterValues, RoundedLogitsOrResidentWeightsLeaveTheChoice) {
  const Case &c = kCases[0];
  KernelShape k = router(c.tokensPerSequence, c.experts, c.features, 2, 2, {});
  int64_t tokens = c.sequences * c.tokensPerSequence;
  std::vector<float> x = test::uniformValues(tokens * c.features, 5);
  std::vector<float> w = test::uniformValues(c.features * c.experts, 6);
  std::string error;
  k.roundLogits = true;
  std::optional<WeightKernelRun> rounded =
      runWeightKernel(k, c.layout, c.sequences, mini(), c.rect, x, w, error);
  ASSERT_TRUE(rounded) << error;
  EXPECT_FALSE(rounded->choice);
  k.roundLogits = false;
  Layout resident = c.layout;
  resident.weights = Edge::resident;
  EXPECT_FALSE(wafer::choosesOnChain(k, resident));
  std::optional<WeightKernelRun> kept =
      runWeightKernel(k, resident, c.sequences, mini(), c.rect, x, w, error);
  ASSERT_TRUE(kept) << error;
  EXPECT_FALSE(kept->choice);
  EXPECT_EQ(routerChoiceRefusal(k, resident),
            "its weights are resident, each core summing a share of the "
            "experts");
  k.roundLogits = true;
  EXPECT_EQ(routerChoiceRefusal(k, c.layout),
            "its logits round to 16 bits, which the engine's f32 memory does "
            "not");
  k.roundLogits = false;
  k.chunks = 2;
  EXPECT_FALSE(wafer::choosesOnChain(k, c.layout));
  EXPECT_EQ(routerChoiceRefusal(k, c.layout),
            "its experts come in chunks, no core holding all of a token's");
  // Both still sum the logits.
  ASSERT_EQ(rounded->values.size(), kept->values.size());
  for (size_t i = 0; i < kept->values.size(); ++i)
    EXPECT_NEAR(rounded->values[i], kept->values[i], 1e-4f);
}

} // namespace
