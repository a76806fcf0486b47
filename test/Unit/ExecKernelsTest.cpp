//===- ExecKernelsTest.cpp - the functional mode's kernels and formats ----===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The tiled kernels against plain loops in double, whatever the tile; the
// bfloat16 rounding; the learning-rate schedule; safetensors in and out.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Transformer/IR/Transformer.h"
#include "cgpt/Exec/Executor.h"
#include "cgpt/Exec/Safetensors.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace cgpt;
using namespace cgpt::exec;

namespace {

Tensor randomTensor(llvm::ArrayRef<int64_t> shape, uint64_t seed) {
  Tensor tensor(shape);
  RandomStream stream(seed);
  for (float &value : tensor.data)
    value = static_cast<float>(stream.normal());
  return tensor;
}

/// `op(lhs) @ op(rhs)` in double, per batch matrix (rhs broadcast when 2-D,
/// summed over the batch when `reduce`).
std::vector<double> referenceMatmul(const Tensor &lhs, const Tensor &rhs,
                                    bool transposeLhs, bool transposeRhs,
                                    bool reduce) {
  int64_t lr = lhs.dim(-2), lc = lhs.dim(-1), rr = rhs.dim(-2),
          rc = rhs.dim(-1);
  int64_t m = transposeLhs ? lc : lr, k = transposeLhs ? lr : lc,
          n = transposeRhs ? rr : rc;
  int64_t batch = lhs.numel() / (lr * lc);
  bool broadcast = rhs.shape.size() == 2;
  std::vector<double> out(reduce ? m * n : batch * m * n, 0.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          float x =
              lhs.data[b * lr * lc + (transposeLhs ? p * lc + i : i * lc + p)];
          int64_t rb = broadcast ? 0 : b * rr * rc;
          float y = rhs.data[rb + (transposeRhs ? j * rc + p : p * rc + j)];
          sum += static_cast<double>(x) * y;
        }
        out[(reduce ? 0 : b * m * n) + i * n + j] += sum;
      }
  return out;
}

void expectClose(const Tensor &actual, const std::vector<double> &expected) {
  ASSERT_EQ(actual.numel(), static_cast<int64_t>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i)
    ASSERT_NEAR(actual.data[i], expected[i],
                1e-4 * (1 + std::fabs(expected[i])))
        << "element " << i;
}

TEST(ExecKernels, MatmulMatchesPlainLoopsForEveryTileAndLayout) {
  // Sizes no tile divides; tiles smaller than, equal to and past the edge.
  Tensor x = randomTensor({3, 13, 7}, 1), w = randomTensor({7, 11}, 2);
  Tensor wt = randomTensor({11, 7}, 3), y = randomTensor({3, 13, 11}, 4);
  Tensor q = randomTensor({2, 3, 9, 5}, 5), k = randomTensor({2, 3, 9, 5}, 6);
  for (std::vector<int64_t> tile :
       {std::vector<int64_t>{1, 1, 1}, {4, 8, 3}, {13, 11, 7}, {5, 3, 2}}) {
    MatmulOptions plain;
    expectClose(matmul(x, w, nullptr, plain, tile),
                referenceMatmul(x, w, false, false, false));
    MatmulOptions transposed;
    transposed.transposeRhs = true;
    expectClose(matmul(x, wt, nullptr, transposed, tile),
                referenceMatmul(x, wt, false, true, false));
    expectClose(matmul(q, k, nullptr, transposed, tile),
                referenceMatmul(q, k, false, true, false));
    MatmulOptions gradient;
    gradient.transposeLhs = gradient.reduceBatch = true;
    expectClose(matmul(x, y, nullptr, gradient, tile),
                referenceMatmul(x, y, true, false, true));
  }
}

TEST(ExecKernels, MatmulRowAndColumnTilesDoNotChangeTheResult) {
  // Only K tiles change the order of the sums; M and N tiles must not.
  Tensor x = randomTensor({2, 17, 19}, 7), w = randomTensor({19, 23}, 8);
  MatmulOptions options;
  Tensor whole = matmul(x, w, nullptr, options, {34, 23, 8});
  Tensor cut = matmul(x, w, nullptr, options, {5, 3, 8});
  EXPECT_EQ(whole.data, cut.data);
}

TEST(ExecKernels, MatmulAddsBiasAfterScaling) {
  Tensor x({1, 1, 2}), w({2, 1}), bias({1});
  x.data = {1, 2};
  w.data = {3, 4};
  bias.data = {0.5f};
  MatmulOptions options;
  options.scale = 0.25f;
  EXPECT_FLOAT_EQ(matmul(x, w, &bias, options, {1, 1, 1}).data[0],
                  0.25f * 11 + 0.5f);
}

TEST(ExecKernels, LayerNormMatchesItsDefinitionAcrossColumnTiles) {
  Tensor x = randomTensor({2, 3, 10}, 9);
  Tensor gamma = randomTensor({10}, 10), beta = randomTensor({10}, 11);
  LayerNormResult r = layerNorm(x, gamma, beta, 1e-5, {2, 3});
  for (int64_t row = 0; row < 6; ++row) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < 10; ++c)
      mean += x.data[row * 10 + c] / 10.0;
    for (int64_t c = 0; c < 10; ++c)
      var += std::pow(x.data[row * 10 + c] - mean, 2) / 10.0;
    for (int64_t c = 0; c < 10; ++c)
      EXPECT_NEAR(r.result.data[row * 10 + c],
                  (x.data[row * 10 + c] - mean) / std::sqrt(var + 1e-5) *
                          gamma.data[c] +
                      beta.data[c],
                  1e-5);
  }
}

TEST(ExecKernels, CausalSoftmaxRowsSumToOneAndHideTheFuture) {
  Tensor scores = randomTensor({1, 2, 5, 5}, 12);
  Tensor p = softmax(scores, 0.5f, /*causal=*/true, {3, 2});
  for (int64_t row = 0; row < 10; ++row) {
    double sum = 0;
    for (int64_t c = 0; c < 5; ++c) {
      sum += p.data[row * 5 + c];
      if (c > row % 5) {
        EXPECT_EQ(p.data[row * 5 + c], 0.0f);
      }
    }
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
}

TEST(ExecKernels, ReluGradientIsZeroAtZero) {
  Tensor x({1, 1, 3}), dy({1, 1, 3});
  x.data = {-1, 0, 2};
  dy.data = {5, 5, 5};
  Tensor dx = map(dataflow::MapKind::relu_grad, {&x, &dy}, {1, 3});
  EXPECT_EQ(dx.data, (std::vector<float>{0, 0, 5}));
}

TEST(ExecKernels, RotaryTurnsPairsByPositionAndItsInverseTurnsBack) {
  // Head size 6 with 2 rotated pairs; odd column tiles split a pair.
  Tensor x = randomTensor({1, 2, 3, 6}, 14);
  Tensor angles = rotaryAngles(3, 4, 10000.0);
  Tensor turned = rotary(x, angles, /*inverse=*/false, {2, 3});
  // Position 1, pair 0 turns by 1 radian; channels past 4 stay.
  float x0 = x.data[6], x1 = x.data[7];
  EXPECT_NEAR(turned.data[6], x0 * std::cos(1.0) - x1 * std::sin(1.0), 1e-6);
  EXPECT_NEAR(turned.data[7], x0 * std::sin(1.0) + x1 * std::cos(1.0), 1e-6);
  EXPECT_EQ(turned.data[10], x.data[10]);
  Tensor back = rotary(turned, angles, /*inverse=*/true, {1, 6});
  for (int64_t i = 0; i < x.numel(); ++i)
    EXPECT_NEAR(back.data[i], x.data[i], 1e-6);
}

TEST(ExecKernels, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(roundToBF16(1.0f), 1.0f);
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to the even 1.
  EXPECT_EQ(roundToBF16(1.0f + 0x1.0p-8f), 1.0f);
  EXPECT_EQ(roundToBF16(1.0f + 0x1.8p-8f), 1.0f + 0x1.0p-7f);
  EXPECT_EQ(roundToBF16(-3.0f), -3.0f);
  EXPECT_TRUE(std::isinf(roundToBF16(INFINITY)));
}

TEST(ExecSchedule, PhasesFollowEachOtherAndTheLastEndHolds) {
  mlir::MLIRContext context;
  context.loadDialect<transformer::TransformerDialect>();
  mlir::Builder b(&context);
  auto phase = [&](training::ScheduleKind kind, double start, double end,
                   int64_t steps) -> mlir::Attribute {
    return training::LRPhaseAttr::get(&context, kind, llvm::APFloat(start),
                                      llvm::APFloat(end), steps);
  };
  mlir::ArrayAttr schedule =
      b.getArrayAttr({phase(training::ScheduleKind::linear, 0.0, 1.0, 10),
                      phase(training::ScheduleKind::cosine, 1.0, 0.1, 20)});
  EXPECT_DOUBLE_EQ(learningRate(schedule, 0), 0.0);
  EXPECT_DOUBLE_EQ(learningRate(schedule, 5), 0.5);
  EXPECT_DOUBLE_EQ(learningRate(schedule, 10), 1.0);
  EXPECT_NEAR(learningRate(schedule, 20), 0.55, 1e-12);
  EXPECT_DOUBLE_EQ(learningRate(schedule, 30), 0.1);
  EXPECT_DOUBLE_EQ(learningRate(schedule, 1000), 0.1);
}

TEST(ExecSafetensors, WritesAndReadsBack) {
  Tensor weight = randomTensor({3, 2}, 13);
  std::vector<int32_t> ids = {1, 2};
  int64_t idShape[] = {1, 2};
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  printSafetensors(os,
                   {{"w", weight.shape, weight.data.data()},
                    {"ids", idShape, nullptr, ids.data()}},
                   {{"note", "x"}});
  // Int32 tensors are refused by name; a file of F32 ones reads back.
  llvm::Expected<llvm::StringMap<Tensor>> mixed =
      parseSafetensors(os.str(), "mixed.safetensors");
  ASSERT_FALSE(mixed);
  EXPECT_NE(llvm::toString(mixed.takeError())
                .find("tensor 'ids' has dtype "
                      "'I32'"),
            std::string::npos);
  std::string f32Bytes;
  llvm::raw_string_ostream f32(f32Bytes);
  printSafetensors(f32, {{"w", weight.shape, weight.data.data()}}, {});
  llvm::Expected<llvm::StringMap<Tensor>> read =
      parseSafetensors(f32.str(), "w.safetensors");
  ASSERT_TRUE(static_cast<bool>(read)) << llvm::toString(read.takeError());
  EXPECT_EQ((*read)["w"].shape, weight.shape);
  EXPECT_EQ((*read)["w"].data, weight.data);
}

} // namespace
