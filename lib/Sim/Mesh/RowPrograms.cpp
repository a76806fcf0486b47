//===- RowPrograms.cpp - the row kernels' programs ------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "ProgramBuilder.h"

#include "cgpt/Dialect/Dataflow/IR/RowOperations.h"
#include "cgpt/Dialect/Wafer/Analysis/MapAlgorithm.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <tuple>

namespace cgpt::sim::mesh::programs {

namespace {

/// The colors a norm gradient's gain gradients pass down a column of token
/// groups on (alternating, as a chain's do).
constexpr int kGainChainColor = kChainColor + 3;

} // namespace

void normKernel(Builder &b, const KernelShape &k, const Layout &layout,
                int64_t microBatch, double epsilon) {
  constexpr ElementType f32 = ElementType::f32;
  ElementType type = elementTypeOf(k.elementBytes);
  KernelProgram &out = b.out;
  // Named, not bound: lambdas capture them (C++17).
  int64_t tb, cb;
  std::tie(tb, cb) = rowBlock(out, k, layout, microBatch);
  bool reduce = out.segment > 1;
  bool centered = k.function == wafer::RowFunction::layerNorm;
  // Per token: a layer norm's sum, then the sum of squares.
  int64_t statistics = (centered ? 2 : 1) * tb;
  b.forEachCore([&](int x, int y, int s) {
    if (reduce)
      routeStatistics(b, x, y, s);
    b.assign(x, y, statisticsPart(s, out.segment), [&] {
      CoreProgram p;
      int data = p.addBuffer("data", tb * cb, type);
      int stats = p.addBuffer("statistics", statistics, f32);
      int perToken = p.addBuffer(centered ? "mean, rstd and shift" : "rstd",
                                 (centered ? 3 : 1) * tb, f32);
      int squares = p.addBuffer("squares", std::max(tb, cb), f32);
      int gain = p.addBuffer("gain", cb, f32);
      int shift = p.addBuffer("shift", centered ? cb : 0, f32);
      enum { kInverseWidth, kEpsilon, kMinusOne, kThreeHalves, kMinusHalf };
      int constants = p.addConstants(
          "constants",
          {static_cast<float>(1.0 / static_cast<double>(k.columns)),
           static_cast<float>(epsilon), -1.0f, 1.5f, -0.5f});
      assert(data == kNormData && stats == kNormStatistics &&
             perToken == kNormPerToken && squares == kNormSquares &&
             gain == kNormGain && shift == kNormShift &&
             constants == kNormConstants &&
             "the buffers in NormBuffer's order");
      auto constant = [&](int which) { return scalar(constants, which); };
      RowTask task(p, tb, cb);
      int rowCursor = task.rowCursor, tokenCursor = task.tokenCursor;
      Dsd row = Dsd::memory(data, 0, rowCursor);
      int64_t squaresAt = centered ? tb : 0;
      task.eachToken([&] {
        if (centered) {
          Dsd sum = scalar(stats, 0, tokenCursor);
          task.vector(Op::Kind::fadd, sum, sum, row, cb, type);
        }
        Dsd sumOfSquares = scalar(stats, squaresAt, tokenCursor);
        task.vector(Op::Kind::fmul, Dsd::memory(squares), row, row, cb, type);
        task.vector(Op::Kind::fadd, sumOfSquares, sumOfSquares,
                    Dsd::memory(squares), cb, f32);
      });
      if (reduce)
        sumStatistics(task.ops, s, out.segment, stats, statistics);
      // Over the tokens: the variance, as the mean square + eps (less a
      // layer norm's mean^2, mean = sum / d); rstd from its estimate by
      // three Newton steps, y (3/2 - variance y^2 / 2); a layer norm's
      // shift = -mean rstd.
      Dsd variance = Dsd::memory(stats, squaresAt), work = Dsd::memory(squares);
      int64_t rstdAt = centered ? tb : 0;
      Dsd rstd = Dsd::memory(perToken, rstdAt);
      task.fmac(variance, constant(kEpsilon), variance, constant(kInverseWidth),
                tb, f32);
      Dsd mean = Dsd::memory(perToken), shiftOf = Dsd::memory(perToken, 2 * tb);
      if (centered) {
        task.fmac(mean, Dsd::zero(), Dsd::memory(stats),
                  constant(kInverseWidth), tb, f32);
        task.vector(Op::Kind::fmul, work, mean, mean, tb, f32);
        task.fmac(variance, variance, work, constant(kMinusOne), tb, f32);
      }
      task.vector(Op::Kind::rsqrtEstimate, rstd, variance, Dsd(), tb, f32);
      for (int step = 0; step < 3; ++step) {
        task.vector(Op::Kind::fmul, work, rstd, rstd, tb, f32);
        task.vector(Op::Kind::fmul, work, work, variance, tb, f32);
        task.fmac(work, constant(kThreeHalves), work, constant(kMinusHalf), tb,
                  f32);
        task.vector(Op::Kind::fmul, rstd, rstd, work, tb, f32);
      }
      if (centered) {
        task.vector(Op::Kind::fmul, shiftOf, mean, rstd, tb, f32);
        task.fmac(shiftOf, Dsd::zero(), shiftOf, constant(kMinusOne), tb, f32);
      }
      // Each row: x rstd (+ a layer norm's shift).
      task.eachToken([&] {
        task.fmac(
            row, centered ? scalar(perToken, 2 * tb, tokenCursor) : Dsd::zero(),
            row, scalar(perToken, rstdAt, tokenCursor), cb, type);
      });
      // The gain (and shift) of the core's features, along every row.
      task.vector(Op::Kind::fmul, Dsd::memory(data), Dsd::memory(data),
                  Dsd::ring(gain), tb * cb, type);
      if (centered)
        task.vector(Op::Kind::fadd, Dsd::memory(data), Dsd::memory(data),
                    Dsd::ring(shift), tb * cb, type);
      fusedOps(task.ops, k, Dsd::memory(data), tb * cb, type);
      p.startActive.push_back(p.addTask(Task{false, -1, std::move(task.ops)}));
      return p;
    });
  });
}

void normGradKernel(Builder &b, const KernelShape &k, const Layout &layout,
                    int64_t microBatch) {
  constexpr ElementType f32 = ElementType::f32;
  ElementType type = elementTypeOf(k.elementBytes);
  KernelProgram &out = b.out;
  // Named, not bound: lambdas capture them (C++17).
  int64_t tb, cb;
  std::tie(tb, cb) = rowBlock(out, k, layout, microBatch);
  bool reduce = out.segment > 1, chained = out.rows > 1;
  bool centered = k.function == wafer::RowFunction::layerNormGrad;
  int64_t statistics = (centered ? 2 : 1) * tb;
  int64_t gradients = (centered ? 2 : 1) * cb;
  b.forEachCore([&](int x, int y, int s) {
    if (reduce)
      routeStatistics(b, x, y, s);
    std::pair<int, int> down;
    if (chained)
      down = b.chainStep(x, y, y, out.rows, south, kGainChainColor);
    int part = statisticsPart(s, out.segment) + 6 * chainPart(y, out.rows);
    b.assign(x, y, part, [&] {
      CoreProgram p;
      int input = p.addBuffer("input, then normalized", tb * cb, type);
      int gradient =
          p.addBuffer("output gradient, then the input's", tb * cb, type);
      int stats = p.addBuffer("statistics", statistics, f32);
      int perToken =
          p.addBuffer(centered ? "mean (then shift) and rstd" : "rstd",
                      (centered ? 2 : 1) * tb, f32);
      int products = p.addBuffer("products", cb, f32);
      int gain = p.addBuffer("gain", cb, f32);
      int sums =
          p.addBuffer(centered ? "gain and shift gradients" : "gain gradient",
                      gradients, f32);
      enum { kMinusInverseWidth, kMinusOne };
      int constants = p.addConstants(
          "constants",
          {static_cast<float>(-1.0 / static_cast<double>(k.columns)), -1.0f});
      assert(input == kGradInput && gradient == kGradOutputGradient &&
             stats == kGradStatistics && perToken == kGradPerToken &&
             products == kGradProducts && gain == kGradGain &&
             sums == kGradSums && constants == kGradConstants &&
             "the buffers in NormGradBuffer's order");
      auto constant = [&](int which) { return scalar(constants, which); };
      RowTask task(p, tb, cb);
      int rowCursor = task.rowCursor, tokenCursor = task.tokenCursor;
      Dsd xRow = Dsd::memory(input, 0, rowCursor);
      Dsd dyRow = Dsd::memory(gradient, 0, rowCursor);
      Dsd work = Dsd::memory(products);
      // Per token: a layer norm's sum of g first, then the sum of g xhat;
      // a layer norm's mean, then rstd.
      int64_t productsAt = centered ? tb : 0, rstdAt = centered ? tb : 0;
      Dsd rstd = scalar(perToken, rstdAt, tokenCursor);
      if (centered) {
        // The shift -mean rstd, in place of the mean.
        Dsd mean = Dsd::memory(perToken);
        task.vector(Op::Kind::fmul, mean, mean, Dsd::memory(perToken, tb), tb,
                    f32);
        task.fmac(mean, Dsd::zero(), mean, constant(kMinusOne), tb, f32);
      }
      Dsd sumOfProducts = scalar(stats, productsAt, tokenCursor);
      task.eachToken([&] {
        task.fmac(xRow,
                  centered ? scalar(perToken, 0, tokenCursor) : Dsd::zero(),
                  xRow, rstd, cb, type);
        // The gain's (and shift's) gradient, summed in f32 (@faddhs for
        // 16-bit rows, at @fadds' width).
        task.vector(Op::Kind::fmul, work, dyRow, xRow, cb, type);
        task.vector(Op::Kind::fadd, Dsd::memory(sums), Dsd::memory(sums), work,
                    cb, f32);
        if (centered)
          task.vector(Op::Kind::fadd, Dsd::memory(sums, cb),
                      Dsd::memory(sums, cb), dyRow, cb, f32);
        task.vector(Op::Kind::fmul, dyRow, dyRow, Dsd::memory(gain), cb, type);
        if (centered) {
          Dsd sum = scalar(stats, 0, tokenCursor);
          task.vector(Op::Kind::fadd, sum, sum, dyRow, cb, f32);
        }
        task.vector(Op::Kind::fmul, work, dyRow, xRow, cb, type);
        task.vector(Op::Kind::fadd, sumOfProducts, sumOfProducts, work, cb,
                    f32);
      });
      if (reduce)
        sumStatistics(task.ops, s, out.segment, stats, statistics);
      // Over the tokens: -mean(g xhat), and a layer norm's -mean(g) rstd.
      Dsd coefficient = Dsd::memory(stats, productsAt);
      task.fmac(coefficient, Dsd::zero(), coefficient,
                constant(kMinusInverseWidth), tb, f32);
      if (centered) {
        Dsd offset = Dsd::memory(stats);
        task.fmac(offset, Dsd::zero(), offset, constant(kMinusInverseWidth), tb,
                  f32);
        task.vector(Op::Kind::fmul, offset, offset, Dsd::memory(perToken, tb),
                    tb, f32);
      }
      // Each row: dx = (g + xhat c) rstd (+ a layer norm's -mean(g) rstd).
      task.eachToken([&] {
        task.fmac(dyRow, dyRow, xRow, sumOfProducts, cb, type);
        task.fmac(dyRow, centered ? scalar(stats, 0, tokenCursor) : Dsd::zero(),
                  dyRow, rstd, cb, type);
      });
      fusedOps(task.ops, k, Dsd::memory(gradient), tb * cb, type);
      if (chained)
        chainOps(task.ops, y, sums, gradients, down, /*another=*/false);
      p.startActive.push_back(p.addTask(Task{false, -1, std::move(task.ops)}));
      return p;
    });
  });
}

void lossGradKernel(Builder &b, const KernelShape &k, const Layout &layout,
                    int64_t microBatch, double lossScale) {
  constexpr ElementType f32 = ElementType::f32;
  ElementType type = elementTypeOf(k.elementBytes);
  KernelProgram &out = b.out;
  // Named, not bound: lambdas capture them (C++17).
  int64_t tb, cb;
  std::tie(tb, cb) = rowBlock(out, k, layout, microBatch);
  b.forEachCore([&](int x, int y, int) {
    b.assign(x, y, 0, [&] {
      CoreProgram p;
      int logits = p.addBuffer("logits", tb * cb + 1, type);
      int logSumExp = p.addBuffer("log-sum-exp", tb, f32);
      int labels = p.addBuffer("label places", tb, f32);
      int fraction = p.addBuffer("exponent fraction", cb, f32);
      int power = p.addBuffer("power of two", cb, f32);
      int polynomial = p.addBuffer("polynomial", cb, f32);
      enum { kMinusOne, kLog2E, kScale, kTaken };
      std::vector<float> values = {-1.0f, static_cast<float>(M_LOG2E),
                                   static_cast<float>(lossScale),
                                   static_cast<float>(-lossScale)};
      ExponentialConstants exp = appendExponentialConstants(values, kMinusOne);
      int constants = p.addConstants("constants", std::move(values));
      exp.buffer = constants;
      assert(logits == kLossLogits && logSumExp == kLossLogSumExp &&
             labels == kLossLabels && fraction == kLossFraction &&
             power == kLossPowerOfTwo && polynomial == kLossPolynomial &&
             constants == kLossConstants &&
             "the buffers in LossGradBuffer's order");
      auto constant = [&](int which) { return scalar(constants, which); };
      RowTask task(p, tb, cb);
      Dsd row = Dsd::memory(logits, 0, task.rowCursor);
      ExponentialRows rows{Dsd::memory(fraction), Dsd::memory(power),
                           Dsd::memory(polynomial)};
      task.eachToken([&] {
        task.fmac(rows.fraction, row, scalar(logSumExp, 0, task.tokenCursor),
                  constant(kMinusOne), cb, type);
        exponential(task, rows.fraction, constant(kLog2E), cb, rows, exp);
        task.fmac(row, Dsd::zero(), rows.polynomial, constant(kScale), cb,
                  type);
        Dsd label = Dsd::indexed(logits, labels, task.tokenCursor);
        task.vector(Op::Kind::fadd, label, label, constant(kTaken), 1, type);
      });
      p.startActive.push_back(p.addTask(Task{false, -1, std::move(task.ops)}));
      return p;
    });
  });
}

void crossEntropyKernel(Builder &b, const KernelShape &k, const Layout &layout,
                        int64_t microBatch,
                        const KernelProgramOptions &options) {
  constexpr ElementType f32 = ElementType::f32;
  ElementType type = elementTypeOf(k.elementBytes);
  KernelProgram &out = b.out;
  // Named, not bound: lambdas capture them (C++17).
  int64_t tb, cb;
  std::tie(tb, cb) = rowBlock(out, k, layout, microBatch);
  bool reduce = out.segment > 1;
  b.forEachCore([&](int x, int y, int s) {
    if (reduce)
      routeStatistics(b, x, y, s);
    b.assign(x, y, statisticsPart(s, out.segment), [&] {
      CoreProgram p;
      int64_t widest = std::max(tb, cb);
      int logits = p.addBuffer("logits", tb * cb + 1, type);
      int labels = p.addBuffer("label places", tb, f32);
      int weights = p.addBuffer("log-sum-exp weights", tb, f32);
      int stats = p.addBuffer("statistics", 2 * tb, f32);
      int running = p.addBuffer("running statistics", 2 * tb, f32);
      int logSumExp = p.addBuffer("log-sum-exp", tb, f32);
      int loss = p.addBuffer("loss", 1, f32);
      int fraction = p.addBuffer("exponent fraction", widest, f32);
      int power = p.addBuffer("power of two", widest, f32);
      int polynomial = p.addBuffer("polynomial", widest, f32);
      int products = p.addBuffer("products", tb, f32);
      enum {
        kMinusOne,
        kLowest,
        kLog2E,
        kMinusLog2E,
        kBitsScale,
        kBitsBias,
        kScale,
      };
      std::vector<float> values = {-1.0f,
                                   std::numeric_limits<float>::lowest(),
                                   static_cast<float>(M_LOG2E),
                                   static_cast<float>(-M_LOG2E),
                                   static_cast<float>(M_LN2 / 0x1p23),
                                   static_cast<float>(-127.0 * M_LN2),
                                   static_cast<float>(options.lossScale)};
      ExponentialConstants exp = appendExponentialConstants(values, kMinusOne);
      int constants = p.addConstants("constants", std::move(values));
      exp.buffer = constants;
      assert(logits == kCrossEntropyLogits && labels == kCrossEntropyLabels &&
             weights == kCrossEntropyWeights &&
             stats == kCrossEntropyStatistics &&
             running == kCrossEntropyRunning &&
             logSumExp == kCrossEntropyLogSumExp && loss == kCrossEntropyLoss &&
             fraction == kCrossEntropyFraction &&
             power == kCrossEntropyPowerOfTwo &&
             polynomial == kCrossEntropyPolynomial &&
             products == kCrossEntropyProducts &&
             constants == kCrossEntropyConstants &&
             "the buffers in LossBuffer's order");
      auto constant = [&](int which) { return scalar(constants, which); };
      RowTask task(p, tb, cb);
      Dsd row = Dsd::memory(logits, 0, task.rowCursor);
      Dsd rowMax = scalar(stats, 0, task.tokenCursor);
      Dsd rowSum = scalar(stats, tb, task.tokenCursor);
      Dsd coreLoss = scalar(loss, 0);
      ExponentialRows rows{Dsd::memory(fraction), Dsd::memory(power),
                           Dsd::memory(polynomial)};
      // The row's maximum, then the segment's.
      task.vector(Op::Kind::fmov, Dsd::memory(stats), constant(kLowest), Dsd(),
                  tb, f32);
      task.eachToken(
          [&] { task.vector(Op::Kind::fmax, rowMax, rowMax, row, cb, type); });
      if (reduce)
        sumStatistics(task.ops, s, out.segment, stats, tb, Op::Kind::fmax);
      // The exponentials' sum, then the segment's; the label's logit.
      task.eachToken([&] {
        task.fmac(rows.fraction, row, rowMax, constant(kMinusOne), cb, type);
        exponential(task, rows.fraction, constant(kLog2E), cb, rows, exp);
        task.vector(Op::Kind::fadd, rowSum, rowSum, rows.polynomial, cb, f32);
        task.fmac(coreLoss, coreLoss,
                  Dsd::indexed(logits, labels, task.tokenCursor),
                  constant(kMinusOne), 1, f32);
      });
      if (reduce)
        sumStatistics(task.ops, s, out.segment, stats, tb, Op::Kind::fadd, tb);
      // Over the tokens: the chunk's statistics into the running ones.
      Dsd runningMax = Dsd::memory(running),
          runningSum = Dsd::memory(running, tb);
      Dsd chunkMax = Dsd::memory(stats), chunkSum = Dsd::memory(stats, tb);
      Dsd work = Dsd::memory(products);
      task.vector(Op::Kind::fmax, work, runningMax, chunkMax, tb, f32);
      task.fmac(rows.fraction, runningMax, work, constant(kMinusOne), tb, f32);
      exponential(task, rows.fraction, constant(kLog2E), tb, rows, exp);
      task.vector(Op::Kind::fmul, runningSum, runningSum, rows.polynomial, tb,
                  f32);
      task.fmac(rows.fraction, chunkMax, work, constant(kMinusOne), tb, f32);
      exponential(task, rows.fraction, constant(kLog2E), tb, rows, exp);
      task.vector(Op::Kind::fmul, rows.polynomial, rows.polynomial, chunkSum,
                  tb, f32);
      task.vector(Op::Kind::fadd, runningSum, runningSum, rows.polynomial, tb,
                  f32);
      task.vector(Op::Kind::fmov, runningMax, work, Dsd(), tb, f32);
      if (options.finalChunk) {
        // ln S: the bits' estimate, then Newton's steps.
        Dsd lse = Dsd::memory(logSumExp);
        task.vector(Op::Kind::bitsToFloat, lse, runningSum, Dsd(), tb, f32);
        task.fmac(lse, constant(kBitsBias), lse, constant(kBitsScale), tb, f32);
        for (int64_t step = 0; step < dataflow::kLogarithmSteps; ++step) {
          exponential(task, lse, constant(kMinusLog2E), tb, rows, exp);
          task.vector(Op::Kind::fmul, rows.polynomial, rows.polynomial,
                      runningSum, tb, f32);
          task.vector(Op::Kind::fadd, lse, lse, rows.polynomial, tb, f32);
          task.vector(Op::Kind::fadd, lse, lse, constant(kMinusOne), tb, f32);
        }
        task.vector(Op::Kind::fadd, lse, lse, runningMax, tb, f32);
        task.vector(Op::Kind::fmul, work, lse, Dsd::memory(weights), tb, f32);
        task.vector(Op::Kind::fadd, coreLoss, coreLoss, work, tb, f32);
        task.vector(Op::Kind::fmul, coreLoss, coreLoss, constant(kScale), 1,
                    f32);
      }
      p.startActive.push_back(p.addTask(Task{false, -1, std::move(task.ops)}));
      return p;
    });
  });
}

void mapKernel(Builder &b, const KernelShape &k, const Layout &layout,
               int64_t microBatch) {
  const wafer::MapAlgorithm &algorithm = wafer::mapAlgorithm(k.map);
  ElementType type = elementTypeOf(k.elementBytes);
  KernelProgram &out = b.out;
  // Named, not bound: lambdas capture them (C++17).
  int64_t tb, cb;
  std::tie(tb, cb) = rowBlock(out, k, layout, microBatch);
  b.forEachCore([&](int x, int y, int) {
    b.assign(x, y, 0, [&] {
      CoreProgram p;
      int first = p.addBuffer("first input", tb * cb, type);
      // A one-input map declares its second input empty, so that the work
      // rows and constants sit at the same places for every map.
      int second =
          p.addBuffer("second input", algorithm.inputs > 1 ? tb * cb : 0, type);
      assert(first == kMapFirstInput && second == kMapSecondInput &&
             "the buffers in MapBuffer's order");
      std::vector<int> rows;
      for (int r = 0; r < algorithm.workRows; ++r)
        rows.push_back(p.addBuffer("map work row " + std::to_string(r), cb,
                                   ElementType::f32));
      int constants = p.addConstants("constants", algorithm.constants);
      RowTask task(p, tb, cb);
      auto dsd = [&](const wafer::MapOperand &operand, bool) {
        switch (operand.kind) {
        case wafer::MapOperand::Kind::input:
          return Dsd::memory(operand.index == 0 ? first : second, 0,
                             task.rowCursor);
        case wafer::MapOperand::Kind::work:
          return Dsd::memory(rows[operand.index]);
        case wafer::MapOperand::Kind::constant:
          return scalar(constants, operand.index);
        case wafer::MapOperand::Kind::zero:
          return Dsd::zero();
        case wafer::MapOperand::Kind::none:
          break;
        }
        return Dsd();
      };
      task.eachToken([&] { mapOps(task.ops, algorithm, dsd, cb, type); });
      fusedOps(task.ops, k, Dsd::memory(first), tb * cb, type);
      p.startActive.push_back(p.addTask(Task{false, -1, std::move(task.ops)}));
      return p;
    });
  });
}

void rowKernel(Builder &b, const KernelShape &k, const Layout &layout,
               int64_t microBatch) {
  ElementType type = elementTypeOf(k.elementBytes);
  KernelProgram &out = b.out;
  // Named, not bound: lambdas capture them (C++17).
  int64_t tb, cb;
  std::tie(tb, cb) = rowBlock(out, k, layout, microBatch);
  int64_t operations = vectorOperations(k);
  bool reduce = k.kind == KernelKind::reduction && out.segment > 1;
  b.forEachCore([&](int x, int y, int s) {
    if (reduce)
      routeStatistics(b, x, y, s);
    int part = statisticsPart(s, out.segment);
    b.assign(x, y, part, [&] {
      CoreProgram p;
      int data = p.addBuffer("data", tb * cb, type);
      int stats =
          reduce ? p.addBuffer("statistics", 2 * tb, ElementType::f32) : -1;
      Task work{false, -1, {}};
      for (int64_t i = 0; i < operations; ++i)
        work.body.push_back(Op::vector(Op::Kind::fmul, Dsd::memory(data),
                                       Dsd::memory(data), Dsd::memory(data),
                                       tb * cb, type));
      if (reduce)
        sumStatistics(work.body, s, out.segment, stats, 2 * tb);
      p.startActive.push_back(p.addTask(std::move(work)));
      return p;
    });
  });
}

} // namespace cgpt::sim::mesh::programs
