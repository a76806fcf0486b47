//===- KernelValuesTest.cpp - kernels on the mesh, with numbers ----------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The weight matmul and weight gradient programs run with values on the
// mini target's cores give the plain product, with the weights streamed
// and with them resident (the token groups then split the output
// columns): layouts whose groups do not
// divide the operands (padding), blocked sums (a block's chain, then the
// next), token groups folded into several columns of segments, one core
// alone (no chain), more token groups than the rectangle folds (a second
// pass), 16-bit and f32 streams, and kernels run in chunks; a weight
// matmul's epilogue (scale, bias, maps fused into it) gives the executor's
// product and maps on those layouts; and the token
// sum's (a bias gradient's) gives the plain sum over the tokens, on layouts
// of the same kinds, with one row of token groups (no chain; with blocks,
// each block leaves the core); and the layer and RMS norms' give the plain
// norms and their statistics (mean, reciprocal standard deviation), summed
// along segments of one and of several cores; and attention's forward pass
// gives the softmax of the scores times the values, causal or not, with
// ALiBi's biases or not, on one core, on blocks of query groups by key
// groups that do not divide the sequence (a key group all padding among
// them), on blocks side by side, and on queries too many for a core's
// buffers, taken a chunk at a time; and its backward pass the gradients
// of the queries, keys and values. The engine
// sums in another order than the reference, hence the tolerance.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/KernelValues.h"
#include "MeshValuesFixture.h"
#include "cgpt/Exec/Kernels.h"
#include "cgpt/Sim/Mesh/AttentionValues.h"
#include "cgpt/Sim/Mesh/LossValues.h"
#include "cgpt/Sim/Mesh/NormValues.h"
#include "cgpt/Sim/Mesh/TokenSumValues.h"

#include "gtest/gtest.h"

#include <cmath>
#include <tuple>

using namespace cgpt;
using namespace cgpt::sim::mesh;
using cgpt::wafer::Edge;
using cgpt::wafer::KernelKind;
using cgpt::wafer::KernelShape;
using cgpt::wafer::Layout;

namespace {

using KernelValues = test::MeshValuesFixture;

/// C [m, n] = A^T B or A B, in double.
std::vector<float> product(const std::vector<float> &a,
                           const std::vector<float> &b, int64_t m, int64_t n,
                           int64_t k, bool transposeA) {
  std::vector<float> c(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p)
        sum += static_cast<double>(transposeA ? a[p * m + i] : a[i * k + p]) *
               b[p * n + j];
      c[i * n + j] = static_cast<float>(sum);
    }
  return c;
}

/// The engine sums in another order than the reference.
void expectClose(const std::vector<float> &got,
                 const std::vector<float> &want) {
  test::expectClose(got, want, 1e-4f);
}

KernelShape weightKernel(KernelKind kind, int64_t rows, int64_t columns,
                         int64_t contracted, int64_t bytes) {
  KernelShape k;
  k.kind = kind;
  k.rows = rows;
  k.columns = columns;
  k.contracted = contracted;
  k.flops = 2 * rows * columns * contracted;
  k.elementBytes = bytes;
  return k;
}

struct Case {
  const char *what;
  int64_t sequences, tokensPerSequence, inputs, outputs, bytes;
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
     {3, 4, Edge::north, 0},
     {0, 0, 4, 3}},
    {"blocked sums, a last block short",
     2,
     5,
     10,
     7,
     2,
     {3, 4, Edge::north, 3},
     {0, 0, 4, 3}},
    {"token groups in two columns of segments",
     1,
     12,
     8,
     6,
     2,
     {6, 2, Edge::north, 0},
     {0, 0, 4, 3}},
    {"fewer token groups than the rectangle's segments: one idle",
     2,
     10,
     8,
     6,
     2,
     {5, 2, Edge::north, 2},
     {0, 0, 4, 3}},
    {"one core", 1, 3, 5, 4, 2, {1, 1, Edge::north, 0}, {0, 0, 1, 1}},
    // A weight gradient's chain crosses between columns of segments on
    // rows of its own; with fewer rows than a segment has cores, in bands
    // of colors.
    {"two columns of segments on one row",
     1,
     6,
     8,
     6,
     2,
     {2, 2, Edge::north, 0},
     {0, 0, 4, 1}},
    {"segments wider than the rectangle is high, blocked",
     1,
     8,
     9,
     5,
     2,
     {4, 3, Edge::north, 2},
     {0, 0, 6, 2}},
    {"f32 stream, blocks of one column",
     1,
     4,
     6,
     5,
     4,
     {2, 3, Edge::north, 1},
     {0, 0, 3, 2}},
};

/// Each case with the weights streamed, as laid out, and resident, the
/// token groups then splitting the output columns.
template <typename Fn> void forEachLayout(Fn check) {
  for (const Case &c : kCases)
    for (Edge weights : {Edge::north, Edge::resident}) {
      SCOPED_TRACE(::testing::Message()
                   << c.what
                   << (weights == Edge::resident ? ", resident" : ""));
      Layout layout = c.layout;
      layout.weights = weights;
      check(c, layout);
    }
}

TEST_F(KernelValues, WeightMatmulIsTheProduct) {
  forEachLayout([&](const Case &c, const Layout &layout) {
    KernelShape k = weightKernel(KernelKind::weight_matmul, c.tokensPerSequence,
                                 c.outputs, c.inputs, c.bytes);
    int64_t tokens = c.sequences * c.tokensPerSequence;
    std::vector<float> x = test::uniformValues(tokens * c.inputs, 1);
    std::vector<float> w = test::uniformValues(c.inputs * c.outputs, 2);
    std::string error;
    std::optional<WeightKernelRun> y =
        runWeightKernel(k, layout, c.sequences, mini(), c.rect, x, w, error);
    ASSERT_TRUE(y) << error;
    expectClose(y->values, product(x, w, tokens, c.outputs, c.inputs, false));
  });
}

TEST_F(KernelValues, WeightGradientIsTheProduct) {
  forEachLayout([&](const Case &c, const Layout &layout) {
    KernelShape k = weightKernel(KernelKind::weight_grad, c.inputs, c.outputs,
                                 c.tokensPerSequence, c.bytes);
    int64_t tokens = c.sequences * c.tokensPerSequence;
    std::vector<float> x = test::uniformValues(tokens * c.inputs, 3);
    std::vector<float> dy = test::uniformValues(tokens * c.outputs, 4);
    std::string error;
    std::optional<WeightKernelRun> dw =
        runWeightKernel(k, layout, c.sequences, mini(), c.rect, x, dy, error);
    ASSERT_TRUE(dw) << error;
    expectClose(dw->values, product(x, dy, c.inputs, c.outputs, tokens, true));
  });
}

/// A kernel run in chunks of its widest dimension, whichever it is: the
/// outputs (concatenated), the features or the tokens (summed where they
/// are the sum, concatenated where not); its weights streamed or
/// resident.
TEST_F(KernelValues, ChunksMakeTheWholeProduct) {
  struct Chunked {
    KernelKind kind;
    int64_t rows, columns, contracted;
  };
  const Chunked cases[] = {
      {KernelKind::weight_matmul, 4, 11, 5},
      {KernelKind::weight_matmul, 4, 5, 11},
      {KernelKind::weight_matmul, 11, 5, 4},
      {KernelKind::weight_grad, 11, 5, 4},
      {KernelKind::weight_grad, 5, 11, 4},
      {KernelKind::weight_grad, 5, 4, 11},
  };
  int64_t sequences = 2;
  for (const Chunked &c : cases)
    for (Edge weights : {Edge::north, Edge::resident}) {
      SCOPED_TRACE(
          ::testing::Message()
          << (c.kind == KernelKind::weight_matmul ? "matmul " : "gradient ")
          << c.rows << " x " << c.columns << " x " << c.contracted
          << (weights == Edge::resident ? ", resident" : ""));
      KernelShape k =
          weightKernel(c.kind, c.rows, c.columns, c.contracted, /*bytes=*/2);
      k.chunks = 3;
      bool matmul = c.kind == KernelKind::weight_matmul;
      int64_t tokens = sequences * (matmul ? c.rows : c.contracted);
      int64_t features = matmul ? c.contracted : c.rows;
      std::vector<float> held = test::uniformValues(tokens * features, 5);
      std::vector<float> streamed =
          test::uniformValues((matmul ? features : tokens) * c.columns, 6);
      std::string error;
      std::optional<WeightKernelRun> ran =
          runWeightKernel(k, {2, 2, weights, 0}, sequences, mini(),
                          {0, 0, 4, 3}, held, streamed, error);
      ASSERT_TRUE(ran) << error;
      EXPECT_EQ(ran->runs, 3);
      expectClose(
          ran->values,
          matmul ? product(held, streamed, tokens, c.columns, features, false)
                 : product(held, streamed, features, c.columns, tokens, true));
    }
}

/// A weight matmul's epilogue on each core's part of its outputs: scale,
/// bias, then maps that take the running value as either input, keeping
/// it where asked, against the executor's product and maps, on every
/// streamed layout (blocked, padded, one core, idle token groups).
TEST_F(KernelValues, EpilogueRunsOnEachCoresPart) {
  using dataflow::MapKind;
  struct Epilogue {
    const char *what;
    bool bias;
    double scale;
    std::vector<wafer::EpilogueMap> maps;
  };
  const Epilogue epilogues[] = {
      {"bias and GELU", true, 0, {{MapKind::gelu, 0, false}}},
      {"residual add, the product second", true, 0, {{MapKind::add, 1, false}}},
      {"scaled SiLU kept, then a product",
       false,
       0.5,
       {{MapKind::silu, 0, true}, {MapKind::mul, 0, false}}},
      {"product kept, then GELU's gradient of another input",
       true,
       0,
       {{MapKind::mul, 0, true}, {MapKind::gelu_grad, 1, false}}},
  };
  for (const Case &c : kCases)
    for (const Epilogue &e : epilogues) {
      SCOPED_TRACE(::testing::Message() << c.what << ", " << e.what);
      KernelShape k =
          weightKernel(KernelKind::weight_matmul, c.tokensPerSequence,
                       c.outputs, c.inputs, c.bytes);
      k.bias = e.bias;
      if (e.scale != 0)
        k.scale = e.scale;
      k.epilogue.assign(e.maps.begin(), e.maps.end());
      int64_t tokens = c.sequences * c.tokensPerSequence, n = c.outputs;
      exec::Tensor x({tokens, c.inputs}), w({c.inputs, n}), bias({n});
      x.data = test::uniformValues(tokens * c.inputs, 7);
      w.data = test::uniformValues(c.inputs * n, 8);
      bias.data = test::uniformValues(n, 9);
      std::vector<exec::Tensor> others;
      EpilogueOperands operands;
      if (e.bias)
        operands.bias = bias.data;
      for (auto [index, map] : llvm::enumerate(e.maps)) {
        exec::Tensor other({tokens, n});
        if (dataflow::mapArity(map.kind) > 1)
          other.data = test::uniformValues(tokens * n, 10 + index);
        others.push_back(std::move(other));
      }
      for (auto [map, other] : llvm::zip(e.maps, others))
        operands.held.push_back(dataflow::mapArity(map.kind) > 1
                                    ? llvm::ArrayRef<float>(other.data)
                                    : llvm::ArrayRef<float>());

      std::string error;
      std::optional<WeightKernelRun> ran =
          runWeightKernel(k, c.layout, c.sequences, mini(), c.rect, x.data,
                          w.data, error, operands);
      ASSERT_TRUE(ran) << error;

      // The executor's: scale x W + bias, then each map.
      exec::MatmulOptions options;
      options.scale = static_cast<float>(e.scale != 0 ? e.scale : 1.0);
      exec::Tensor running =
          exec::matmul(x, w, e.bias ? &bias : nullptr, options, {tokens, n});
      if (e.maps.front().kept)
        expectClose(ran->values, running.data);
      else
        EXPECT_TRUE(ran->values.empty());
      ASSERT_EQ(ran->mapped.size(), e.maps.size());
      for (auto [index, map] : llvm::enumerate(e.maps)) {
        std::vector<const exec::Tensor *> inputs = {&running};
        if (dataflow::mapArity(map.kind) > 1)
          inputs.insert(inputs.begin() + (map.running == 0 ? 1 : 0),
                        &others[index]);
        running = exec::map(map.kind, inputs, {1, n});
        if (index + 1 == e.maps.size() || e.maps[index + 1].kept)
          expectClose(ran->mapped[index], running.data);
        else
          EXPECT_TRUE(ran->mapped[index].empty());
      }
    }
}

/// A weight matmul run in chunks of its outputs or of its tokens runs its
/// epilogue chunk by chunk, each on its slice of the bias and of the maps'
/// other inputs; in chunks of its features, which divide the sum, it
/// refuses.
TEST_F(KernelValues, EpilogueRunsChunkByChunk) {
  using dataflow::MapKind;
  struct Chunked {
    const char *what;
    int64_t rows, columns, contracted;
  };
  const Chunked cases[] = {{"chunks of the outputs", 4, 11, 5},
                           {"chunks of the tokens", 11, 5, 4}};
  // A residual's add, the product second, then GELU, each keeping what it
  // reads: the product and every map's result come back.
  const std::vector<wafer::EpilogueMap> maps = {{MapKind::add, 1, true},
                                                {MapKind::gelu, 0, true}};
  int64_t sequences = 2;
  for (const Chunked &c : cases) {
    SCOPED_TRACE(c.what);
    KernelShape k = weightKernel(KernelKind::weight_matmul, c.rows, c.columns,
                                 c.contracted, /*bytes=*/2);
    k.chunks = 3;
    k.bias = true;
    k.epilogue.assign(maps.begin(), maps.end());
    int64_t tokens = sequences * c.rows, n = c.columns;
    exec::Tensor x({tokens, c.contracted}), w({c.contracted, n}), bias({n}),
        residual({tokens, n});
    x.data = test::uniformValues(tokens * c.contracted, 7);
    w.data = test::uniformValues(c.contracted * n, 8);
    bias.data = test::uniformValues(n, 9);
    residual.data = test::uniformValues(tokens * n, 10);
    EpilogueOperands operands{bias.data, {residual.data, {}}};

    std::string error;
    std::optional<WeightKernelRun> ran =
        runWeightKernel(k, {2, 2, Edge::north, 0}, sequences, mini(),
                        {0, 0, 4, 3}, x.data, w.data, error, operands);
    ASSERT_TRUE(ran) << error;
    EXPECT_EQ(ran->runs, 3);
    exec::Tensor product =
        exec::matmul(x, w, &bias, exec::MatmulOptions(), {tokens, n});
    expectClose(ran->values, product.data);
    exec::Tensor added = exec::map(MapKind::add, {&residual, &product}, {1, n});
    ASSERT_EQ(ran->mapped.size(), 2u);
    expectClose(ran->mapped[0], added.data);
    expectClose(ran->mapped[1],
                exec::map(MapKind::gelu, {&added}, {1, n}).data);
  }

  KernelShape k = weightKernel(KernelKind::weight_matmul, 4, 5, 11, 2);
  k.chunks = 3;
  k.bias = true;
  std::vector<float> x = test::uniformValues(2 * 4 * 11, 7),
                     w = test::uniformValues(11 * 5, 8),
                     bias = test::uniformValues(5, 9);
  std::string error;
  EXPECT_FALSE(runWeightKernel(k, {2, 2, Edge::north, 0}, 2, mini(),
                               {0, 0, 4, 3}, x, w, error, {bias, {}}));
  EXPECT_EQ(error,
            "its epilogue follows the whole sum, and its 3 chunks divide the "
            "sum");
}

/// The epilogue's operands as the kernel takes them, or an error that says
/// what they should be.
TEST_F(KernelValues, EpilogueRefusesOperandsItCannotUse) {
  KernelShape k = weightKernel(KernelKind::weight_matmul, 4, 6, 5, 2);
  k.bias = true;
  k.epilogue.push_back({dataflow::MapKind::add, 1, false});
  std::vector<float> x(4 * 5), w(5 * 6), bias(6), residual(4 * 6);
  std::string error;
  EXPECT_FALSE(runWeightKernel(k, {2, 2, Edge::north, 0}, 1, mini(),
                               {0, 0, 4, 3}, x, w, error, {bias, {}}));
  EXPECT_EQ(error, "its epilogue's operands are not its bias of 6 elements "
                   "and a [4, 6] input to each binary map");
  // Resident weights chain their sums to the segment's last core: the
  // epilogue is the host's there.
  EXPECT_FALSE(runWeightKernel(k, {2, 2, Edge::resident, 0}, 1, mini(),
                               {0, 0, 4, 3}, x, w, error, {bias, {residual}}));
  EXPECT_EQ(
      error,
      "it runs no epilogue on the mesh: its sums are not reduce-scattered");
  EXPECT_TRUE(runWeightKernel(k, {2, 2, Edge::north, 0}, 1, mini(),
                              {0, 0, 4, 3}, x, w, error, {bias, {residual}}))
      << error;
}

/// What memory counts for a reduce-scattered matmul's sums and epilogue
/// (SumBlockShape::bytes, epilogueConstantBytes) is what the program of
/// the core with the largest part declares: the block's sums (the maps'
/// work rows lie in them), its own part from the east and the bias of its
/// columns; the maps' constants and the scale.
TEST_F(KernelValues, EpilogueProgramsHoldWhatMemoryCounts) {
  KernelShape k = weightKernel(KernelKind::weight_matmul, 6, 16, 9, 2);
  k.bias = true;
  k.scale = 0.25;
  k.epilogue = {{dataflow::MapKind::gelu, 0, true},
                {dataflow::MapKind::add, 1, false}};
  // Blocks of 8 columns on segments of 3 cores: parts of 2, 3 and 3, the
  // middle core's from the east too.
  Layout layout{2, 3, Edge::north, 8};
  KernelProgram built =
      buildKernelProgram(k, layout, 2, mini(), {0, 0, 3, 2}, {});
  const MeshProgram &mesh = built.mesh;
  const CoreProgram &middle = mesh.programs[mesh.programOf[mesh.index(1, 0)]];
  int64_t sums = 0, constants = 0;
  for (const BufferDecl &buffer : middle.buffers) {
    llvm::StringRef name = buffer.name;
    if (name == "sums" || name == "own part from the east" || name == "bias")
      sums += buffer.bytes();
    else if (name == "scale" || name.ends_with("'s constants"))
      constants += buffer.bytes();
  }
  EXPECT_EQ(wafer::sumBlockShape(k, layout, 2).bytes(layout.sumBlock), sums);
  EXPECT_EQ(wafer::epilogueConstantBytes(k), constants);
}

TEST_F(KernelValues, RefusesWhatItCannotCarry) {
  KernelShape k = weightKernel(KernelKind::weight_grad, 8, 6, 12, 2);
  std::vector<float> x(12 * 8), dy(12 * 6);
  std::string error;
  EXPECT_FALSE(runWeightKernel(k, {2, 5, Edge::north, 0}, 1, mini(),
                               {0, 0, 4, 3}, x, dy, error));
  EXPECT_EQ(error, "its layout of 2 x 5 groups does not fit its 4 x 3 "
                   "rectangle in segments along its rows");
  std::vector<float> tooShort(5);
  EXPECT_FALSE(runWeightKernel(k, {3, 2, Edge::north, 0}, 1, mini(),
                               {0, 0, 4, 3}, x, tooShort, error));
  EXPECT_EQ(error, "the operands have 96 and 5 elements; the kernel takes 96 "
                   "and 72");
  KernelShape attention = k;
  attention.kind = KernelKind::attention;
  EXPECT_FALSE(runWeightKernel(attention, {3, 2, Edge::north, 0}, 1, mini(),
                               {0, 0, 4, 3}, x, dy, error));
}

KernelShape tokenSum(int64_t tokensPerSequence, int64_t features,
                     int64_t bytes) {
  KernelShape k;
  k.kind = KernelKind::token_sum;
  k.rows = tokensPerSequence;
  k.columns = features;
  k.flops = tokensPerSequence * features;
  k.elementBytes = bytes;
  return k;
}

struct TokenSumCase {
  const char *what;
  int64_t sequences, tokensPerSequence, features, bytes;
  Layout layout;
  wafer::Rect rect;
};

const TokenSumCase kTokenSumCases[] = {
    {"groups that do not divide",
     2,
     5,
     7,
     2,
     {3, 4, Edge::none, 0},
     {0, 0, 4, 3}},
    {"blocked sums, a last block short",
     2,
     5,
     10,
     2,
     {3, 2, Edge::none, 2},
     {0, 0, 4, 3}},
    {"token groups in two columns of segments",
     1,
     12,
     6,
     2,
     {6, 2, Edge::none, 0},
     {0, 0, 4, 3}},
    {"one row of token groups, blocks leave the core",
     1,
     8,
     9,
     4,
     {2, 2, Edge::none, 2},
     {0, 0, 4, 1}},
    {"one row of token groups, sums stay",
     1,
     8,
     9,
     4,
     {2, 2, Edge::none, 0},
     {0, 0, 4, 1}},
    {"one core", 1, 3, 5, 2, {1, 1, Edge::none, 0}, {0, 0, 1, 1}},
};

TEST_F(KernelValues, TokenSumIsTheSumOverTheTokens) {
  for (const TokenSumCase &c : kTokenSumCases) {
    SCOPED_TRACE(c.what);
    int64_t tokens = c.sequences * c.tokensPerSequence;
    std::vector<float> input = test::uniformValues(tokens * c.features, 7);
    std::vector<double> want(c.features, 0.0);
    for (int64_t t = 0; t < tokens; ++t)
      for (int64_t n = 0; n < c.features; ++n)
        want[n] += input[t * c.features + n];
    std::string error;
    std::optional<TokenSumRun> ran =
        runTokenSum(tokenSum(c.tokensPerSequence, c.features, c.bytes),
                    c.layout, c.sequences, mini(), c.rect, input, error);
    ASSERT_TRUE(ran) << error;
    EXPECT_GT(ran->cycles, 0);
    ASSERT_EQ(ran->values.size(), want.size());
    for (size_t n = 0; n < want.size(); ++n)
      EXPECT_NEAR(ran->values[n], want[n], 1e-5 * (1.0 + std::abs(want[n])))
          << "feature " << n;
  }
}

TEST_F(KernelValues, TokenSumRefusesWhatItCannotCarry) {
  wafer::Rect rect{0, 0, 4, 3};
  Layout layout{3, 2, Edge::none, 0};
  std::string error;
  std::vector<float> input(2 * 5 * 7, 1.0f);
  KernelShape routed = tokenSum(5, 7, 2);
  routed.experts = 4;
  EXPECT_FALSE(runTokenSum(routed, layout, 2, mini(), rect, input, error));
  EXPECT_EQ(error, "it is routed: its experts' rows are chosen as it runs");
  KernelShape matmul = tokenSum(5, 7, 2);
  matmul.kind = KernelKind::weight_matmul;
  EXPECT_FALSE(runTokenSum(matmul, layout, 2, mini(), rect, input, error));
  EXPECT_EQ(error, "it is not a token sum");
  EXPECT_FALSE(runTokenSum(tokenSum(5, 7, 2), {7, 2, Edge::none, 0}, 2, mini(),
                           rect, input, error));
  EXPECT_EQ(error, "its layout of 7 x 2 groups does not fit its 4 x 3 "
                   "rectangle in segments along its rows");
  EXPECT_FALSE(runTokenSum(tokenSum(5, 7, 2), layout, 2, mini(), rect,
                           std::vector<float>(3), error));
  EXPECT_EQ(error, "the input has 3 elements; the kernel takes 10 x 7");
}

KernelShape norm(wafer::RowFunction function, int64_t tokensPerSequence,
                 int64_t features, int64_t bytes) {
  KernelShape k;
  k.kind = KernelKind::reduction;
  k.function = function;
  k.rows = tokensPerSequence;
  k.columns = features;
  k.elementBytes = bytes;
  return k;
}

const TokenSumCase kNormCases[] = {
    {"groups that do not divide",
     2,
     5,
     7,
     4,
     {3, 4, Edge::none, 0},
     {0, 0, 4, 3}},
    {"token groups in two columns of segments",
     1,
     12,
     6,
     2,
     {6, 2, Edge::none, 0},
     {0, 0, 4, 3}},
    {"one feature a core", 1, 3, 4, 4, {2, 4, Edge::none, 0}, {0, 0, 4, 2}},
    {"one core", 1, 3, 5, 2, {1, 1, Edge::none, 0}, {0, 0, 1, 1}},
};

TEST_F(KernelValues, NormsAreTheNorms) {
  constexpr double kEpsilon = 1e-5;
  for (auto function :
       {wafer::RowFunction::layerNorm, wafer::RowFunction::rmsNorm})
    for (const TokenSumCase &c : kNormCases) {
      bool centered = function == wafer::RowFunction::layerNorm;
      SCOPED_TRACE(std::string(centered ? "layer norm, " : "RMS norm, ") +
                   c.what);
      int64_t tokens = c.sequences * c.tokensPerSequence, n = c.features;
      std::vector<float> input = test::uniformValues(tokens * n, 11),
                         gain = test::uniformValues(n, 12),
                         shift = centered ? test::uniformValues(n, 13)
                                          : std::vector<float>();
      // Rows far from zero mean, as a residual stream's can be.
      for (int64_t i = 0; i < tokens * n; ++i)
        input[i] = 3.0f * input[i] + 0.5f;
      std::string error;
      std::optional<NormRun> ran = runNorm(
          norm(function, c.tokensPerSequence, n, c.bytes), c.layout,
          c.sequences, mini(), c.rect, input, gain, shift, kEpsilon, error);
      ASSERT_TRUE(ran) << error;
      EXPECT_GT(ran->cycles, 0);
      ASSERT_EQ(ran->mean.size(), static_cast<size_t>(centered ? tokens : 0));
      for (int64_t t = 0; t < tokens; ++t) {
        double mean = 0, variance = 0;
        for (int64_t i = 0; i < n; ++i)
          mean += centered ? input[t * n + i] : 0.0;
        mean /= static_cast<double>(n);
        for (int64_t i = 0; i < n; ++i)
          variance += (input[t * n + i] - mean) * (input[t * n + i] - mean);
        double rstd =
            1.0 / std::sqrt(variance / static_cast<double>(n) + kEpsilon);
        if (centered) {
          EXPECT_NEAR(ran->mean[t], mean, 1e-5 * (1.0 + std::abs(mean)))
              << "token " << t;
        }
        EXPECT_NEAR(ran->rstd[t], rstd, 1e-5 * rstd) << "token " << t;
        for (int64_t i = 0; i < n; ++i) {
          double want = (input[t * n + i] - mean) * rstd * gain[i] +
                        (centered ? shift[i] : 0.0);
          EXPECT_NEAR(ran->result[t * n + i], want,
                      1e-4 * (1.0 + std::abs(want)))
              << "token " << t << ", feature " << i;
        }
      }
    }
}

TEST_F(KernelValues, NormGradientsAreTheGradients) {
  for (auto function :
       {wafer::RowFunction::layerNormGrad, wafer::RowFunction::rmsNormGrad})
    for (const TokenSumCase &c : kNormCases) {
      bool centered = function == wafer::RowFunction::layerNormGrad;
      SCOPED_TRACE(std::string(centered ? "layer norm's gradient, "
                                        : "RMS norm's gradient, ") +
                   c.what);
      int64_t tokens = c.sequences * c.tokensPerSequence, n = c.features;
      std::vector<float> input = test::uniformValues(tokens * n, 21),
                         outputGrad = test::uniformValues(tokens * n, 22),
                         gain = test::uniformValues(n, 23),
                         mean(centered ? tokens : 0), rstd(tokens);
      // Rows far from zero mean, with the statistics the forward saved.
      for (int64_t t = 0; t < tokens; ++t) {
        double sum = 0, squares = 0;
        for (int64_t i = 0; i < n; ++i) {
          float &x = input[t * n + i];
          x = 3.0f * x + 0.5f;
          sum += x;
          squares += static_cast<double>(x) * x;
        }
        double m = centered ? sum / static_cast<double>(n) : 0.0;
        if (centered)
          mean[t] = static_cast<float>(m);
        rstd[t] = static_cast<float>(
            1.0 / std::sqrt(squares / static_cast<double>(n) - m * m + 1e-5));
      }
      std::string error;
      std::optional<NormGradRun> ran =
          runNormGrad(norm(function, c.tokensPerSequence, n, c.bytes), c.layout,
                      c.sequences, mini(), c.rect,
                      {outputGrad, input, mean, rstd, gain}, error);
      ASSERT_TRUE(ran) << error;
      EXPECT_GT(ran->cycles, 0);
      ASSERT_EQ(ran->shift.size(), static_cast<size_t>(centered ? n : 0));
      // In float64: xhat, g = dy gain, dx = rstd (g - mean(g) - xhat
      // mean(g xhat)) (an RMS norm's without mean(g)); the gain's gradient
      // sums dy xhat over the tokens, the shift's dy.
      std::vector<double> gainGrad(n), shiftGrad(n);
      for (int64_t t = 0; t < tokens; ++t) {
        auto xhat = [&](int64_t i) {
          return (input[t * n + i] - (centered ? mean[t] : 0.0)) * rstd[t];
        };
        double meanG = 0, meanGX = 0;
        for (int64_t i = 0; i < n; ++i) {
          double g = static_cast<double>(outputGrad[t * n + i]) * gain[i];
          meanG += centered ? g : 0.0;
          meanGX += g * xhat(i);
          gainGrad[i] += outputGrad[t * n + i] * xhat(i);
          shiftGrad[i] += outputGrad[t * n + i];
        }
        meanG /= static_cast<double>(n);
        meanGX /= static_cast<double>(n);
        for (int64_t i = 0; i < n; ++i) {
          double g = static_cast<double>(outputGrad[t * n + i]) * gain[i];
          double want = rstd[t] * (g - meanG - xhat(i) * meanGX);
          EXPECT_NEAR(ran->input[t * n + i], want,
                      1e-4 * (1.0 + std::abs(want)))
              << "token " << t << ", feature " << i;
        }
      }
      for (int64_t i = 0; i < n; ++i) {
        EXPECT_NEAR(ran->gain[i], gainGrad[i],
                    1e-4 * (1.0 + std::abs(gainGrad[i])))
            << "feature " << i;
        if (centered) {
          EXPECT_NEAR(ran->shift[i], shiftGrad[i],
                      1e-4 * (1.0 + std::abs(shiftGrad[i])))
              << "feature " << i;
        }
      }
    }
}

TEST_F(KernelValues, LossGradientIsTheGradient) {
  constexpr double kScale = 0.125;
  for (int64_t chunks : {1, 3})
    for (const TokenSumCase &c : kNormCases) {
      SCOPED_TRACE(std::string(c.what) + ", " + std::to_string(chunks) +
                   " chunk(s)");
      // The features are the vocabulary, wide enough for three chunks.
      int64_t tokens = c.sequences * c.tokensPerSequence, n = 3 * c.features;
      KernelShape k = norm(wafer::RowFunction::crossEntropyGrad,
                           c.tokensPerSequence, n, c.bytes);
      k.chunks = chunks;
      std::vector<float> logits = test::uniformValues(tokens * n, 31),
                         logSumExp(tokens);
      std::vector<int32_t> labels(tokens);
      for (int64_t t = 0; t < tokens; ++t) {
        double sum = 0;
        for (int64_t i = 0; i < n; ++i) {
          float &x = logits[t * n + i];
          x = 8.0f * x - 3.0f;
          sum += std::exp(static_cast<double>(x));
        }
        logSumExp[t] = static_cast<float>(std::log(sum));
        labels[t] = static_cast<int32_t>((7 * t + 3) % n);
      }
      std::string error;
      std::optional<LossGradRun> ran =
          runLossGrad(k, c.layout, c.sequences, mini(), c.rect,
                      {logits, logSumExp, labels, kScale}, error);
      ASSERT_TRUE(ran) << error;
      EXPECT_GT(ran->cycles, 0);
      EXPECT_EQ(ran->runs, chunks);
      for (int64_t t = 0; t < tokens; ++t)
        for (int64_t i = 0; i < n; ++i) {
          double p =
              std::exp(static_cast<double>(logits[t * n + i]) - logSumExp[t]);
          double want = kScale * (p - (i == labels[t] ? 1.0 : 0.0));
          EXPECT_NEAR(ran->gradient[t * n + i], want,
                      1e-6 * (kScale + std::abs(want)))
              << "token " << t << ", logit " << i;
        }
    }
}

TEST_F(KernelValues, LossIsTheLoss) {
  constexpr double kScale = 0.125;
  for (int64_t chunks : {1, 3})
    for (const TokenSumCase &c : kNormCases) {
      SCOPED_TRACE(std::string(c.what) + ", " + std::to_string(chunks) +
                   " chunk(s)");
      // The features are the vocabulary, wide enough for three chunks.
      int64_t tokens = c.sequences * c.tokensPerSequence, n = 3 * c.features;
      KernelShape k = norm(wafer::RowFunction::crossEntropy,
                           c.tokensPerSequence, n, c.bytes);
      k.chunks = chunks;
      std::vector<float> logits = test::uniformValues(tokens * n, 37);
      std::vector<int32_t> labels(tokens);
      std::vector<double> logSumExp(tokens);
      double loss = 0;
      for (int64_t t = 0; t < tokens; ++t) {
        // Logits spread over 80, so that a maximum taken wrongly
        // shows.
        double sum = 0;
        for (int64_t i = 0; i < n; ++i) {
          float &x = logits[t * n + i];
          x = 40.0f * x - 10.0f + static_cast<float>(t);
          sum += std::exp(static_cast<double>(x) - 40.0);
        }
        logSumExp[t] = 40.0 + std::log(sum);
        labels[t] = static_cast<int32_t>((5 * t + 2) % n);
        loss += logSumExp[t] - logits[t * n + labels[t]];
      }
      loss *= kScale;
      std::string error;
      std::optional<CrossEntropyRun> ran =
          runCrossEntropy(k, c.layout, c.sequences, mini(), c.rect,
                          {logits, labels, kScale}, error);
      ASSERT_TRUE(ran) << error;
      EXPECT_GT(ran->cycles, 0);
      EXPECT_EQ(ran->runs, chunks);
      for (int64_t t = 0; t < tokens; ++t)
        EXPECT_NEAR(ran->logSumExp[t], logSumExp[t],
                    1e-6 * (1.0 + std::abs(logSumExp[t])))
            << "token " << t;
      EXPECT_NEAR(ran->loss, loss, 1e-6 * std::abs(loss));
    }
}

TEST_F(KernelValues, NormRefusesWhatItCannotCarry) {
  wafer::Rect rect{0, 0, 4, 3};
  Layout layout{3, 2, Edge::none, 0};
  std::string error;
  std::vector<float> input(2 * 5 * 7, 1.0f), features(7, 1.0f);
  KernelShape layerNorm = norm(wafer::RowFunction::layerNorm, 5, 7, 4);
  EXPECT_FALSE(runNorm(norm(wafer::RowFunction::other, 5, 7, 4), layout, 2,
                       mini(), rect, input, features, features, 1e-5, error));
  EXPECT_EQ(error, "it is not a layer or RMS norm");
  EXPECT_FALSE(runNorm(layerNorm, {7, 2, Edge::none, 0}, 2, mini(), rect, input,
                       features, features, 1e-5, error));
  EXPECT_EQ(error, "its layout of 7 x 2 groups does not fit its 4 x 3 "
                   "rectangle in segments along its rows");
  EXPECT_FALSE(runNorm(layerNorm, layout, 2, mini(), rect, input,
                       std::vector<float>(3), features, 1e-5, error));
  EXPECT_EQ(error, "the operands have 70, 3 and 7 elements; the kernel takes "
                   "10 x 7, 7 and 7");
  // An RMS norm has no shift.
  EXPECT_FALSE(runNorm(norm(wafer::RowFunction::rmsNorm, 5, 7, 4), layout, 2,
                       mini(), rect, input, features, features, 1e-5, error));
  EXPECT_EQ(error, "the operands have 70, 7 and 7 elements; the kernel takes "
                   "10 x 7, 7 and 0");
  // A gradient: no forward norm, nor the forward's statistics missing.
  std::vector<float> tokens(10, 1.0f);
  NormGradOperands operands{input, input, tokens, tokens, features};
  EXPECT_FALSE(
      runNormGrad(layerNorm, layout, 2, mini(), rect, operands, error));
  EXPECT_EQ(error, "it is not a layer or RMS norm's gradient");
  EXPECT_FALSE(runNormGrad(norm(wafer::RowFunction::rmsNormGrad, 5, 7, 4),
                           layout, 2, mini(), rect, operands, error));
  EXPECT_EQ(error, "the operands have 70, 70, 10, 10 and 7 elements; the "
                   "kernel takes 10 x 7 twice, 0, 10 and 7");
  // The loss's gradient: another kernel, the wrong sizes, a label outside
  // the vocabulary, chunks that divide the tokens.
  KernelShape loss = norm(wafer::RowFunction::crossEntropyGrad, 5, 7, 4);
  std::vector<int32_t> labels(10, 6);
  EXPECT_FALSE(runLossGrad(layerNorm, layout, 2, mini(), rect,
                           {input, tokens, labels, 1.0}, error));
  EXPECT_EQ(error, "it is not the loss's gradient");
  EXPECT_FALSE(runLossGrad(loss, layout, 2, mini(), rect,
                           {input, features, labels, 1.0}, error));
  EXPECT_EQ(error, "the operands have 70, 7 and 10 elements; the kernel "
                   "takes 10 x 7, 10 and 10");
  labels[4] = 7;
  EXPECT_FALSE(runLossGrad(loss, layout, 2, mini(), rect,
                           {input, tokens, labels, 1.0}, error));
  EXPECT_EQ(error, "label 7 is outside the vocabulary of 7");
  KernelShape tall = norm(wafer::RowFunction::crossEntropyGrad, 9, 7, 4);
  tall.chunks = 2;
  EXPECT_FALSE(runLossGrad(tall, layout, 2, mini(), rect,
                           {input, tokens, labels, 1.0}, error));
  EXPECT_EQ(error, "its chunks divide the tokens, not the vocabulary");
  // The loss: the same refusals, and no log-sum-exp to give.
  KernelShape forward = norm(wafer::RowFunction::crossEntropy, 5, 7, 4);
  EXPECT_FALSE(runCrossEntropy(loss, layout, 2, mini(), rect,
                               {input, labels, 1.0}, error));
  EXPECT_EQ(error, "it is not the loss");
  EXPECT_FALSE(runCrossEntropy(forward, layout, 2, mini(), rect,
                               {features, labels, 1.0}, error));
  EXPECT_EQ(error, "the operands have 7 and 10 elements; the kernel takes "
                   "10 x 7 and 10");
  EXPECT_FALSE(runCrossEntropy(forward, layout, 2, mini(), rect,
                               {input, labels, 1.0}, error));
  EXPECT_EQ(error, "label 7 is outside the vocabulary of 7");
  tall.function = wafer::RowFunction::crossEntropy;
  EXPECT_FALSE(runCrossEntropy(tall, layout, 2, mini(), rect,
                               {input, labels, 1.0}, error));
  EXPECT_EQ(error, "its chunks divide the tokens, not the vocabulary");
}

struct AttentionCase {
  const char *what;
  int64_t sequences, heads, seq, headSize, bytes;
  Layout layout;
  wafer::Rect rect;
};

const AttentionCase kAttentionCases[] = {
    {"one core", 2, 2, 5, 4, 4, {1, 1, Edge::none, 0}, {0, 0, 1, 1}},
    {"groups that do not divide",
     2,
     2,
     10,
     6,
     4,
     {3, 4, Edge::none, 0},
     {0, 0, 4, 3}},
    {"a key group all padding",
     1,
     2,
     5,
     4,
     4,
     {2, 4, Edge::none, 0},
     {0, 0, 4, 2}},
    {"blocks side by side", 1, 3, 7, 4, 4, {2, 3, Edge::none, 0}, {0, 0, 6, 4}},
    {"16-bit operands", 1, 1, 9, 8, 2, {3, 3, Edge::none, 0}, {0, 0, 3, 3}},
    // A core's queries a chunk at a time (the layout's `sum_block`): 52
    // chunks of 5 (the last padded), and 32 of 4.
    {"queries in chunks", 1, 1, 256, 4, 4, {1, 1, Edge::none, 5}, {0, 0, 1, 1}},
    {"queries in chunks along a segment",
     1,
     2,
     256,
     4,
     4,
     {2, 2, Edge::none, 4},
     {0, 0, 2, 2}},
};

/// The cases with a core's keys in blocks (the layout's `key_block`,
/// attentionForwardByKeys and attentionBackwardByKeys): 10 keys in 4
/// blocks of 3 (the
/// last padded); along a segment of 2 with 3 query groups, 12 keys a core
/// in blocks of 5 and 8 queries in chunks of 4; 16-bit operands; and a
/// key group all padding, a key at a time.
const AttentionCase kKeyBlockCases[] = {
    {"keys in blocks", 1, 2, 10, 4, 4, {1, 1, Edge::none, 0, 3}, {0, 0, 1, 1}},
    {"keys in blocks along a segment, queries in chunks",
     2,
     2,
     23,
     6,
     4,
     {3, 2, Edge::none, 4, 5},
     {0, 0, 2, 3}},
    {"16-bit keys in blocks",
     1,
     1,
     17,
     8,
     2,
     {2, 3, Edge::none, 3, 2},
     {0, 0, 3, 2}},
    {"a key group all padding, in blocks",
     1,
     2,
     5,
     4,
     4,
     {2, 4, Edge::none, 0, 1},
     {0, 0, 4, 2}},
};

/// The attention region's shape of case `c`, charged `perScore` FLOPs a
/// score and head dimension (the programs that compute it read no FLOPs).
KernelShape attentionKernel(const AttentionCase &c, int64_t perScore) {
  KernelShape k;
  k.kind = KernelKind::attention;
  k.rows = c.heads * c.seq;
  k.columns = c.seq;
  k.contracted = c.headSize;
  k.flops = c.heads * c.seq * c.seq * perScore * c.headSize;
  k.elementBytes = c.bytes;
  return k;
}

/// Each of `cases`, causal or not, with ALiBi's biases or not.
template <typename Fn>
void forEachAttention(llvm::ArrayRef<AttentionCase> cases, Fn check) {
  for (const AttentionCase &c : cases)
    for (bool causal : {true, false})
      for (bool alibi : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << c.what << (causal ? ", causal" : "")
                     << (alibi ? ", ALiBi" : ""));
        check(c, causal, alibi);
      }
}

/// A core takes its block's queries the layout's `sum_block` at a time,
/// or all at once.
void expectChunks(const AttentionCase &c, int64_t queriesAtOnce) {
  int64_t queries = (c.seq + c.layout.tokenGroups - 1) / c.layout.tokenGroups;
  EXPECT_EQ(queriesAtOnce, c.layout.sumBlock > 0
                               ? std::min(c.layout.sumBlock, queries)
                               : queries);
}

/// Case `c`'s random operands, [pairs, S, D] each: the queries three times
/// the others' range, so that the softmax is far from even.
struct AttentionInputs {
  std::vector<float> query, key, value, outputGrad;
  AttentionSoftmax softmax;
};
AttentionInputs attentionInputs(const AttentionCase &c, bool causal, bool alibi,
                                unsigned seed) {
  int64_t n = c.sequences * c.heads * c.seq * c.headSize;
  AttentionInputs in{
      test::uniformValues(n, seed),
      test::uniformValues(n, seed + 1),
      test::uniformValues(n, seed + 2),
      test::uniformValues(n, seed + 3),
      {1.0 / std::sqrt(static_cast<double>(c.headSize)), causal, alibi}};
  for (float &q : in.query)
    q *= 3.0f;
  return in;
}

/// The probabilities of query `i` of pair `p` over the keys it sees, in
/// float64, for case `c`'s operands [pairs, S, D].
std::vector<double> probabilities(const AttentionCase &c,
                                  const std::vector<float> &query,
                                  const std::vector<float> &key, int64_t p,
                                  int64_t i, bool causal, bool alibi) {
  int64_t s = c.seq, d = c.headSize;
  double scale = 1.0 / std::sqrt(static_cast<double>(d));
  double slope = exec::alibiSlopes(c.heads)[p % c.heads];
  std::vector<double> weights(causal ? i + 1 : s);
  double most = -INFINITY, sum = 0;
  for (int64_t j = 0; j < static_cast<int64_t>(weights.size()); ++j) {
    double score = 0;
    for (int64_t e = 0; e < d; ++e)
      score += static_cast<double>(query[(p * s + i) * d + e]) *
               key[(p * s + j) * d + e];
    weights[j] = scale * score + (alibi ? slope * (j - i) : 0.0);
    most = std::max(most, weights[j]);
  }
  for (double &w : weights)
    sum += w = std::exp(w - most);
  for (double &w : weights)
    w /= sum;
  return weights;
}

/// Every case, keys resident and in blocks.
std::vector<AttentionCase> allAttentionCases() {
  std::vector<AttentionCase> cases(std::begin(kAttentionCases),
                                   std::end(kAttentionCases));
  cases.insert(cases.end(), std::begin(kKeyBlockCases),
               std::end(kKeyBlockCases));
  return cases;
}

TEST_F(KernelValues, AttentionIsTheSoftmaxOfTheScoresTimesTheValues) {
  forEachAttention(allAttentionCases(), [&](const AttentionCase &c, bool causal,
                                            bool alibi) {
    int64_t pairs = c.sequences * c.heads, d = c.headSize, s = c.seq;
    AttentionInputs in = attentionInputs(c, causal, alibi, 21);
    const std::vector<float> &query = in.query, &key = in.key,
                             &value = in.value;
    std::string error;
    std::optional<AttentionRun> ran =
        runAttention(attentionKernel(c, 4), c.layout, c.sequences, mini(),
                     c.rect, {query, key, value, in.softmax}, error);
    ASSERT_TRUE(ran) << error;
    EXPECT_GT(ran->cycles, 0);
    expectChunks(c, ran->queriesAtOnce);
    for (int64_t p = 0; p < pairs; ++p)
      for (int64_t i = 0; i < s; ++i) {
        std::vector<double> weights =
            probabilities(c, query, key, p, i, causal, alibi);
        for (int64_t e = 0; e < d; ++e) {
          double want = 0;
          for (size_t j = 0; j < weights.size(); ++j)
            want += weights[j] * value[(p * s + j) * d + e];
          EXPECT_NEAR(ran->output[(p * s + i) * d + e], want,
                      1e-4 * (1.0 + std::abs(want)))
              << "pair " << p << ", query " << i << ", dimension " << e;
        }
      }
  });
}

TEST_F(KernelValues, AttentionGradientsAreTheGradients) {
  forEachAttention(allAttentionCases(), [&](const AttentionCase &c, bool causal,
                                            bool alibi) {
    int64_t pairs = c.sequences * c.heads, d = c.headSize, s = c.seq;
    AttentionInputs in = attentionInputs(c, causal, alibi, 31);
    const std::vector<float> &query = in.query, &key = in.key,
                             &value = in.value, &outputGrad = in.outputGrad;
    double scale = in.softmax.scale;
    std::string error;
    std::optional<AttentionGradRun> ran = runAttentionGrad(
        attentionKernel(c, 10), c.layout, c.sequences, mini(), c.rect,
        {query, key, value, outputGrad, in.softmax}, error);
    ASSERT_TRUE(ran) << error;
    EXPECT_GT(ran->cycles, 0);
    expectChunks(c, ran->queriesAtOnce);
    std::vector<double> dq(pairs * s * d), dk(pairs * s * d), dv(pairs * s * d);
    auto at = [&](const std::vector<float> &m, int64_t p, int64_t i,
                  int64_t e) {
      return static_cast<double>(m[(p * s + i) * d + e]);
    };
    for (int64_t p = 0; p < pairs; ++p)
      for (int64_t i = 0; i < s; ++i) {
        std::vector<double> prob =
            probabilities(c, query, key, p, i, causal, alibi);
        int64_t seen = static_cast<int64_t>(prob.size());
        std::vector<double> gradProb(seen);
        double dot = 0;
        for (int64_t j = 0; j < seen; ++j) {
          for (int64_t e = 0; e < d; ++e)
            gradProb[j] += at(outputGrad, p, i, e) * at(value, p, j, e);
          dot += prob[j] * gradProb[j];
        }
        for (int64_t j = 0; j < seen; ++j) {
          double gradScore = scale * prob[j] * (gradProb[j] - dot);
          for (int64_t e = 0; e < d; ++e) {
            dv[(p * s + j) * d + e] += prob[j] * at(outputGrad, p, i, e);
            dq[(p * s + i) * d + e] += gradScore * at(key, p, j, e);
            dk[(p * s + j) * d + e] += gradScore * at(query, p, i, e);
          }
        }
      }
    for (auto [got, want, what] : {std::tuple{&ran->query, &dq, "query"},
                                   std::tuple{&ran->key, &dk, "key"},
                                   std::tuple{&ran->value, &dv, "value"}})
      for (size_t e = 0; e < want->size(); ++e)
        ASSERT_NEAR((*got)[e], (*want)[e], 1e-4 * (1.0 + std::abs((*want)[e])))
            << what << " gradient, element " << e;
  });
}

/// The buffers attention's programs declare are the ones the memory model
/// counts (wafer::AttentionBlock), name by name and byte by byte: forward
/// and backward, 16-bit and f32 operands, all queries at once and in
/// chunks of 3 (the last padded), all keys at once and in blocks of 2.
TEST_F(KernelValues, AttentionProgramsHoldWhatMemoryCounts) {
  for (auto function :
       {wafer::RowFunction::attention, wafer::RowFunction::attentionGrad})
    for (int64_t bytes : {2, 4})
      for (int64_t sumBlock : {0, 3})
        for (int64_t keyBlock : {0, 2}) {
          SCOPED_TRACE(::testing::Message()
                       << (function == wafer::RowFunction::attention
                               ? "forward"
                               : "backward")
                       << ", " << bytes << "-byte operands, sum_block "
                       << sumBlock << ", key_block " << keyBlock);
          AttentionCase c{"",
                          1,
                          4,
                          20,
                          6,
                          bytes,
                          {2, 4, Edge::none, sumBlock, keyBlock},
                          {0, 0, 4, 2}};
          KernelShape k = attentionKernel(c, 4);
          k.function = function;
          wafer::AttentionPass pass =
              wafer::attentionPass(k, c.layout, c.rect, c.sequences);
          KernelProgram built = buildKernelProgram(
              pass.pair, pass.block, pass.pairsPerBlock, mini(), c.rect);
          std::vector<wafer::CoreBuffer> counted =
              wafer::attentionBlock(pass,
                                    wafer::elementsPerWavelet(mini(), bytes))
                  .buffers(sumBlock, keyBlock);
          const std::vector<BufferDecl> &held =
              built.mesh.programs.front().buffers;
          ASSERT_EQ(held.size(), counted.size());
          for (auto [decl, count] : llvm::zip_equal(held, counted)) {
            EXPECT_EQ(decl.name, count.name);
            EXPECT_EQ(decl.bytes(), count.bytes) << decl.name;
          }
        }
}

TEST_F(KernelValues, AttentionRefusesWhatItCannotCarry) {
  KernelShape k;
  k.kind = KernelKind::attention;
  k.rows = 2 * 6;
  k.columns = 6;
  k.contracted = 4;
  k.elementBytes = 4;
  std::vector<float> operand(2 * 6 * 4, 1.0f);
  AttentionOperands operands{operand, operand, operand, {0.5, true, false}};
  std::string error;
  KernelShape other = k;
  other.kind = KernelKind::reduction;
  EXPECT_FALSE(runAttention(other, {2, 2, Edge::none, 0}, 1, mini(),
                            {0, 0, 2, 2}, operands, error));
  EXPECT_EQ(error, "it is not attention");
  EXPECT_FALSE(runAttention(k, {3, 2, Edge::none, 0}, 1, mini(), {0, 0, 2, 2},
                            operands, error));
  EXPECT_EQ(error, "its 3 query groups do not fit down its 2 rows");
  EXPECT_FALSE(runAttention(k, {2, 2, Edge::none, 0}, 2, mini(), {0, 0, 2, 2},
                            operands, error));
  EXPECT_EQ(error, "the operands have 48, 48 and 48 elements; the kernel "
                   "takes 4 x 6 x 4 each");
  // The backward pass alike, its output gradient the wrong size.
  std::vector<float> half(2 * 6 * 2, 1.0f);
  EXPECT_FALSE(
      runAttentionGrad(other, {2, 2, Edge::none, 0}, 1, mini(), {0, 0, 2, 2},
                       {operand, operand, operand, operand, {}}, error));
  EXPECT_EQ(error, "it is not attention");
  EXPECT_FALSE(runAttentionGrad(k, {2, 2, Edge::none, 0}, 1, mini(),
                                {0, 0, 2, 2},
                                {operand, operand, operand, half, {}}, error));
  EXPECT_EQ(error, "the operands have 48, 48, 48 and 24 elements; the kernel "
                   "takes 2 x 6 x 4 each");
}

} // namespace
