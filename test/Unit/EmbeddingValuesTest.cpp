//===- EmbeddingValuesTest.cpp - embeddings on the mesh, with numbers -----===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The embedding's lookup (with the learned positions fused with it, or
// without) and its gradient, run as their mesh programs on
// the mini target's cores with values, give what the functional executor
// gives (exec::gather, exec::scatterAdd) for ids with repeats, the table's
// first and last rows among them, on layouts whose groups do not divide
// the operands, with two columns of segments and on one core, in 16-bit
// and f32 storage. The lists each core's lengths come from change where
// the stream's rows go, not how many wavelets move: a run with values
// takes the cycles of the run without. The runners refuse another kernel,
// ids outside the table and operands of the wrong size.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/EmbeddingValues.h"
#include "MeshValuesFixture.h"
#include "cgpt/Exec/Kernels.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace cgpt;
using namespace cgpt::sim::mesh;
using cgpt::wafer::Edge;
using cgpt::wafer::KernelKind;
using cgpt::wafer::KernelShape;
using cgpt::wafer::Layout;
using cgpt::wafer::RowFunction;

namespace {

using EmbeddingValues = test::MeshValuesFixture;

/// The region of a lookup (or, with `gradient`, of the embedding's
/// gradient) in a table of `vocab` rows of `features` of `bytes`; a lookup
/// with `positions` adds the learned positions fused with it.
KernelShape embeddingShape(bool gradient, int64_t tokensPerSequence,
                           int64_t features, int64_t vocab, int64_t bytes,
                           bool positions = false) {
  KernelShape k;
  k.kind = KernelKind::embedding;
  k.function = gradient ? RowFunction::scatterAdd : RowFunction::gather;
  k.rows = tokensPerSequence;
  k.columns = features;
  k.elementBytes = bytes;
  k.flops = (positions ? 2 : 1) * tokensPerSequence * features;
  k.positionRows = positions ? tokensPerSequence : 0;
  if (gradient)
    k.accumulator = vocab * features * 4;
  else
    k.weightBytes = vocab * features * bytes;
  return k;
}

struct EmbeddingCase {
  const char *what;
  int64_t sequences, tokensPerSequence, features, vocab, bytes;
  Layout layout;
  wafer::Rect rect;
  /// Whether a lookup adds learned positions.
  bool positions;
};

const EmbeddingCase kEmbeddingCases[] = {
    {"groups that do not divide, positions",
     2,
     5,
     7,
     11,
     2,
     {3, 4, Edge::north, 0},
     {0, 0, 4, 3},
     true},
    {"token groups in two columns of segments, f32",
     1,
     12,
     6,
     9,
     4,
     {6, 2, Edge::north, 0},
     {0, 0, 4, 3},
     false},
    {"one core, positions",
     1,
     3,
     5,
     4,
     2,
     {1, 1, Edge::north, 0},
     {0, 0, 1, 1},
     true},
};

/// `count` ids of a table of `vocab` rows, its first and last rows and
/// repeats among them.
exec::IdTensor ids(int64_t sequences, int64_t perSequence, int64_t vocab) {
  exec::IdTensor out;
  out.shape = {sequences, perSequence};
  std::mt19937 generator(7);
  std::uniform_int_distribution<int32_t> id(0, static_cast<int32_t>(vocab - 1));
  for (int64_t i = 0; i < sequences * perSequence; ++i)
    out.data.push_back(i == 0   ? 0
                       : i == 1 ? vocab - 1
                       : i == 2 ? 0
                                : id(generator));
  return out;
}

exec::Tensor uniform(llvm::SmallVector<int64_t, 3> shape, unsigned seed) {
  exec::Tensor out(shape);
  out.data = test::uniformValues(out.numel(), seed, 2.0f);
  return out;
}

TEST_F(EmbeddingValues, LookupTakesEachTokensRow) {
  for (const EmbeddingCase &c : kEmbeddingCases) {
    SCOPED_TRACE(c.what);
    exec::IdTensor tokens = ids(c.sequences, c.tokensPerSequence, c.vocab);
    exec::Tensor table = uniform({c.vocab, c.features}, 3);
    // More positions than a sequence has: the rows past it are never read.
    exec::Tensor positions = uniform({c.tokensPerSequence + 2, c.features}, 4);
    KernelShape k = embeddingShape(false, c.tokensPerSequence, c.features,
                                   c.vocab, c.bytes, c.positions);
    std::string error;
    std::optional<EmbeddingRun> ran = runGather(
        k, c.layout, c.sequences, mini(), c.rect, table.data, tokens.data, 0.5,
        c.positions ? llvm::ArrayRef<float>(positions.data)
                    : llvm::ArrayRef<float>(),
        error);
    ASSERT_TRUE(ran) << error;
    exec::Tensor want = exec::gather(table, tokens, 0.5f, {1, c.features});
    if (c.positions)
      want = exec::addPositions(want, positions, {1, c.features});
    ASSERT_EQ(ran->values.size(), want.data.size());
    for (size_t i = 0; i < want.data.size(); ++i)
      EXPECT_EQ(ran->values[i], want.data[i]) << "element " << i;
  }
}

TEST_F(EmbeddingValues, GradientSumsEachIdsRows) {
  for (const EmbeddingCase &c : kEmbeddingCases) {
    SCOPED_TRACE(c.what);
    exec::IdTensor tokens = ids(c.sequences, c.tokensPerSequence, c.vocab);
    exec::Tensor gradient =
        uniform({c.sequences, c.tokensPerSequence, c.features}, 5);
    KernelShape k =
        embeddingShape(true, c.tokensPerSequence, c.features, c.vocab, c.bytes);
    std::string error;
    std::optional<EmbeddingRun> ran =
        runScatterAdd(k, c.layout, c.sequences, mini(), c.rect, tokens.data,
                      gradient.data, 2.0, error);
    ASSERT_TRUE(ran) << error;
    exec::Tensor want =
        exec::scatterAdd(tokens, gradient, c.vocab, 2.0f, {1, c.features});
    ASSERT_EQ(ran->values.size(), want.data.size());
    for (size_t i = 0; i < want.data.size(); ++i)
      EXPECT_NEAR(ran->values[i], want.data[i],
                  1e-5 * (1.0 + std::abs(want.data[i])))
          << "element " << i;
  }
}

TEST_F(EmbeddingValues, IdsMoveNoCycle) {
  for (bool gradient : {false, true})
    for (const EmbeddingCase &c : kEmbeddingCases) {
      SCOPED_TRACE(std::string(c.what) + (gradient ? ", gradient" : ""));
      exec::IdTensor tokens = ids(c.sequences, c.tokensPerSequence, c.vocab);
      KernelShape k =
          embeddingShape(gradient, c.tokensPerSequence, c.features, c.vocab,
                         c.bytes, c.positions && !gradient);
      std::string error;
      std::optional<EmbeddingRun> ran =
          gradient
              ? runScatterAdd(
                    k, c.layout, c.sequences, mini(), c.rect, tokens.data,
                    std::vector<float>(tokens.data.size() * c.features), 1.0,
                    error)
              : runGather(k, c.layout, c.sequences, mini(), c.rect,
                          std::vector<float>(c.vocab * c.features), tokens.data,
                          1.0, std::vector<float>(k.positionRows * c.features),
                          error);
      ASSERT_TRUE(ran) << error;
      KernelProgram built = buildKernelProgram(
          k, c.layout, c.sequences, mini(), c.rect, {/*allTokenGroups=*/true});
      std::optional<MeshResult> timed =
          simulate(built.mesh, meshConfig(mini()), error);
      ASSERT_TRUE(timed) << error;
      EXPECT_EQ(ran->cycles, timed->cycles);
    }
}

TEST_F(EmbeddingValues, MemoryCountsWhatTheProgramsDeclare) {
  for (bool gradient : {false, true})
    for (const EmbeddingCase &c : kEmbeddingCases) {
      SCOPED_TRACE(std::string(c.what) + (gradient ? ", gradient" : ""));
      KernelShape k =
          embeddingShape(gradient, c.tokensPerSequence, c.features, c.vocab,
                         c.bytes, c.positions && !gradient);
      KernelProgram built =
          buildKernelProgram(k, c.layout, c.sequences, mini(), c.rect, {});
      const CoreProgram &core = built.mesh.programs.front();
      // Everything beside the tokens' rows: the lists, the row passed over
      // or the sums, the scale, a lookup's positions' rows and lists.
      int64_t work = core.bytes() - core.buffers.front().bytes();
      EXPECT_EQ(core.buffers.front().elements, built.tokens * built.features);
      EXPECT_EQ(
          wafer::embeddingWorkBytes(k, built.tokens, built.features, mini()),
          work);
    }
}

TEST_F(EmbeddingValues, RefusesWhatItCannotCarry) {
  Layout layout{3, 4, Edge::north, 0};
  wafer::Rect rect{0, 0, 4, 3};
  KernelShape lookup = embeddingShape(false, 5, 7, 11, 2);
  std::vector<float> table(11 * 7, 1.0f);
  exec::IdTensor tokens = ids(2, 5, 11);
  std::string error;
  KernelShape other = lookup;
  other.function = RowFunction::other;
  EXPECT_FALSE(runGather(other, layout, 2, mini(), rect, table, tokens.data,
                         1.0, {}, error));
  EXPECT_EQ(error, "it is not an embedding lookup");
  EXPECT_FALSE(runScatterAdd(lookup, layout, 2, mini(), rect, tokens.data,
                             table, 1.0, error));
  EXPECT_EQ(error, "it is not an embedding gradient");
  EXPECT_FALSE(runGather(embeddingShape(false, 5, 7, 11, 2, true), layout, 2,
                         mini(), rect, table, tokens.data, 1.0, {}, error));
  EXPECT_EQ(error, "the positions' table has 0 elements; the kernel adds 5 x "
                   "7");
  tokens.data[3] = 11;
  EXPECT_FALSE(runGather(lookup, layout, 2, mini(), rect, table, tokens.data,
                         1.0, {}, error));
  EXPECT_EQ(error, "token id 11 is outside the table's 11 rows");
  tokens.data.pop_back();
  EXPECT_FALSE(runGather(lookup, layout, 2, mini(), rect, table, tokens.data,
                         1.0, {}, error));
  EXPECT_EQ(error, "the ids and the table have 9 and 77 elements; the kernel "
                   "takes 10 and 11 x 7");
}

} // namespace
