//===- KernelPrograms.cpp - placed kernels as per-core programs -----------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/KernelPrograms.h"

#include "cgpt/Dialect/Dataflow/IR/RowOperations.h"
#include "cgpt/Dialect/Wafer/Analysis/MapAlgorithm.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <functional>
#include <limits>
#include <tuple>

using cgpt::wafer::Edge;
using cgpt::wafer::KernelKind;
using cgpt::wafer::KernelShape;
using cgpt::wafer::Layout;
using cgpt::wafer::streamPacking;
using cgpt::wafer::SumBlockShape;

namespace cgpt::sim::mesh {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

uint8_t bit(Port port) { return static_cast<uint8_t>(1u << port); }

/// Builds a kernel's program: routes core by core, and core programs shared
/// by the cores that play the same part.
class Builder {
public:
  Builder(KernelProgram &out) : out(out), mesh(out.mesh) {}

  void route(int x, int y, int color, uint8_t rx, uint8_t tx) {
    mesh.routes[mesh.index(x, y)].push_back({color, rx, tx});
  }
  /// Gives core (x, y) the program that `part` names, built by `build` the
  /// first time a core plays that part.
  void assign(int x, int y, int part,
              const std::function<CoreProgram()> &build) {
    auto [it, inserted] = parts.try_emplace(part, -1);
    if (inserted)
      it->second = mesh.addProgram(build());
    mesh.programOf[mesh.index(x, y)] = it->second;
  }

  /// The cores of the segments: (x, y, position in the segment).
  template <typename Fn> void forEachCore(Fn fn) {
    for (int y = 0; y < out.rows; ++y)
      for (int column = 0; column < out.segmentColumns; ++column)
        for (int s = 0; s < out.segment; ++s)
          fn(column * out.segment + s, y, s);
  }

  /// `count` wavelets of `color` enter the top of every column and are
  /// multicast down it into every core.
  void downColumns(int color, int64_t count) {
    for (int x = 0; x < mesh.width; ++x) {
      for (int y = 0; y < mesh.height; ++y)
        route(x, y, color, bit(north),
              bit(ramp) | (y + 1 < mesh.height ? bit(south) : 0));
      mesh.injectors.push_back({x, 0, north, color, count, {}});
    }
  }
  /// `count` wavelets of `color` enter the west end of every segment and
  /// are multicast along it into every core.
  void alongSegments(int color, int64_t count) {
    forEachCore([&](int x, int y, int s) {
      route(x, y, color, bit(west),
            bit(ramp) | (s + 1 < out.segment ? bit(east) : 0));
      if (s == 0)
        mesh.injectors.push_back({x, y, west, color, count, {}});
    });
  }
  /// The routes of a chain of `length` steps, `step` of it at (x, y), along
  /// `onward` (east or south): the colors `first` and `first + 1`
  /// alternate, so that a core receives on one while it sends on the
  /// other; the last step's output leaves at the chain's end, unless the
  /// last core keeps it (`leaves` false). Returns the (in, out) colors of
  /// the step.
  std::pair<int, int> chainStep(int x, int y, int step, int length, Port onward,
                                int first, bool leaves = true) {
    Port back = onward == east ? west : north;
    int outColor = first + step % 2, inColor = first + (step + 1) % 2;
    bool last = step + 1 == length;
    if (!last || leaves)
      route(x, y, outColor, bit(ramp), bit(onward));
    if (step > 0)
      route(x, y, inColor, bit(back), bit(ramp));
    if (last && leaves)
      mesh.drains.push_back({x, y, onward, outColor, true});
    return {inColor, outColor};
  }

  KernelProgram &out;
  MeshProgram &mesh;
  llvm::DenseMap<int, int> parts;
};

/// The part a core at step `step` of a chain of `stages` plays: the first,
/// a middle one or the last, each receiving on one of the two alternating
/// colors (Builder::chainStep).
int chainPart(int step, int stages) {
  return step == 0 ? 0 : (step + 1 == stages ? 2 : 1) + 2 * (step % 2);
}
/// How many parts chainPart names, 0 to 4.
constexpr int kChainParts = 5;

/// Step `step` of a chain passing `count` f32 sums at `sums`: the first
/// sends its own, the others add them to what comes and pass it on.
Op chainOp(int step, Dsd sums, int64_t count, std::pair<int, int> colors) {
  auto [in, out] = colors;
  if (step == 0)
    return Op::vector(Op::Kind::fmov, Dsd::out(out), sums, Dsd(), count,
                      ElementType::f32);
  return Op::vector(Op::Kind::fadd, Dsd::out(out), Dsd::in(in), sums, count,
                    ElementType::f32);
}

/// The chain's part of a core program, `step` of it (chainOp); then, when
/// another block follows, clear the sums for it.
void chainOps(std::vector<Op> &body, int step, int buffer, int64_t count,
              std::pair<int, int> colors, bool another) {
  body.push_back(chainOp(step, Dsd::memory(buffer), count, colors));
  if (another)
    body.push_back(Op::vector(Op::Kind::fmov, Dsd::memory(buffer), Dsd::zero(),
                              Dsd(), count, ElementType::f32));
}

int routerChoice(CoreProgram &p, const KernelShape &k, int64_t tokens,
                 int64_t logitsElements);

/// A product against a stream, block by block (the weight matmul, resident
/// or streamed, and the weight gradient): a core holds `sums.streamed` rows
/// of `sums.perColumn` inputs and sums `block` output columns at a time.
/// Each wavelet of the stream starts a data task that, for each element it
/// carries, adds one row of inputs times the element to one column's sums;
/// when a block's columns are done, its sums pass along the chain (or
/// leave the core, alone with more blocks to come). A block's elements fill
/// whole wavelets (wafer::streamPacking). With a `router`, the chain's
/// last core keeps each block's sums as logits and, after the last block,
/// runs the router's choice over its tokens (routerChoice).
void streamedProduct(Builder &b, const SumBlockShape &sums, ElementType type,
                     bool chainAlongRows, const KernelShape *router) {
  KernelProgram &out = b.out;
  int64_t perColumn = sums.perColumn, rowsIn = sums.streamed;
  int64_t nb = out.blockColumns;
  int64_t packed = streamPacking(rowsIn * nb, perWavelet(type));
  int64_t stream = out.blocks * (rowsIn * nb / packed);
  // The stream runs down the columns (weights) and the chain along the
  // rows, or the stream along the rows (output gradients) and the chain
  // down the columns.
  if (chainAlongRows)
    b.downColumns(kStreamColor, stream);
  else
    b.alongSegments(kStreamColor, stream);
  int stages = chainAlongRows ? out.segment : out.rows;
  bool chained = stages > 1 || out.blocks > 1;
  b.forEachCore([&](int x, int y, int s) {
    int step = chainAlongRows ? s : y;
    bool chooses = router && step + 1 == stages;
    std::pair<int, int> colors =
        b.chainStep(x, y, step, stages, chainAlongRows ? east : south,
                    kChainColor, /*leaves=*/!chooses);
    int part = chainPart(step, stages) + (chooses ? kChainParts : 0);
    b.assign(x, y, part, [&] {
      CoreProgram p;
      int inputs = p.addBuffer("inputs", rowsIn * perColumn, type);
      int sumsBuffer = p.addBuffer("sums", nb * perColumn, ElementType::f32);
      int chain = p.addTask({});
      int column = p.addCursor({perColumn, nb * perColumn, -1, chain});
      int row = p.addCursor({perColumn, rowsIn * perColumn, column, -1});
      Task data{true, kStreamColor, {}};
      for (int64_t e = 0; e < packed; ++e) {
        data.body.push_back(Op::fmacOp(Dsd::memory(sumsBuffer, 0, column),
                                       Dsd::memory(sumsBuffer, 0, column),
                                       Dsd::memory(inputs, 0, row),
                                       Dsd::argument(e == 1), perColumn, type));
        data.body.push_back(Op::advanceOp(row));
      }
      p.addTask(std::move(data));
      if (chooses) {
        // Each block's sums land in the logits, at the block's place; the
        // last block's start the choice.
        int64_t perBlock = nb * perColumn;
        int choose = routerChoice(p, *router, perColumn,
                                  chained ? out.blocks * perBlock : 0);
        int block = p.addCursor({perBlock, out.blocks * perBlock, -1, choose});
        std::vector<Op> &body = p.tasks[chain].body;
        if (chained) {
          Dsd logits = Dsd::memory(kRouterLogits, 0, block);
          body.push_back(
              step == 0
                  ? Op::vector(Op::Kind::fmov, logits, Dsd::memory(sumsBuffer),
                               Dsd(), perBlock, ElementType::f32)
                  : Op::vector(Op::Kind::fadd, logits, Dsd::in(colors.first),
                               Dsd::memory(sumsBuffer), perBlock,
                               ElementType::f32));
          if (out.blocks > 1)
            body.push_back(Op::vector(Op::Kind::fmov, Dsd::memory(sumsBuffer),
                                      Dsd::zero(), Dsd(), perBlock,
                                      ElementType::f32));
        }
        body.push_back(Op::advanceOp(block));
        return p;
      }
      // Alone in its chain with one block, the core's sums are the outputs
      // and stay where they are.
      if (chained)
        chainOps(p.tasks[chain].body, step, sumsBuffer, nb * perColumn, colors,
                 out.blocks > 1);
      return p;
    });
  });
}

/// A weight gradient whose weight is resident: the gradient stays where
/// its weight is, a core holding a block of dW's rows by columns. Every
/// token's inputs stream down the columns and are stored first; then each
/// wavelet of the output gradient, streaming along the rows, starts a data
/// task that, for each element it carries, adds the token's inputs times
/// the element to one column of the block.
void residentWeightGrad(Builder &b, const KernelShape &k, const Layout &layout,
                        int64_t microBatch, ElementType type) {
  KernelProgram &out = b.out;
  int64_t epw = perWavelet(type);
  int64_t tokens = microBatch * k.contracted;
  int64_t kb = ceilDiv(k.rows, layout.featureGroups);
  int64_t nb = ceilDiv(k.columns, layout.tokenGroups);
  out.tokens = tokens;
  out.features = kb;
  int64_t packed = streamPacking(tokens * nb, epw);
  int inputColor = kStreamColor + 3;
  b.downColumns(inputColor, ceilDiv(tokens * kb, epw));
  b.alongSegments(kStreamColor, tokens * nb / packed);
  b.forEachCore([&](int x, int y, int) {
    b.assign(x, y, 0, [&] {
      CoreProgram p;
      int inputs = p.addBuffer("inputs", tokens * kb, type);
      int gradient = p.addBuffer("gradient", nb * kb, ElementType::f32);
      int token = p.addCursor({kb, tokens * kb, -1, -1});
      int column = p.addCursor({kb, nb * kb, token, -1});
      Task store{false, -1, {}};
      store.body.push_back(Op::vector(Op::Kind::fmov, Dsd::memory(inputs),
                                      Dsd::in(inputColor), Dsd(), tokens * kb,
                                      type));
      p.startActive.push_back(p.addTask(std::move(store)));
      Task data{true, kStreamColor, {}};
      for (int64_t e = 0; e < packed; ++e) {
        data.body.push_back(Op::fmacOp(
            Dsd::memory(gradient, 0, column), Dsd::memory(gradient, 0, column),
            Dsd::memory(inputs, 0, token), Dsd::argument(e == 1), kb, type));
        data.body.push_back(Op::advanceOp(column));
      }
      p.addTask(std::move(data));
      return p;
    });
  });
}

/// A sum over the tokens, per feature, block by block of the core's
/// features (`out.sums`, blocked as the layout's `sum_block` says): each core
/// adds its tokens' rows of a block, one row an operation, into f32 sums;
/// the block's sums then pass down each column of token groups
/// (chainOps), the last core's leaving the rectangle, or leave the core,
/// alone in its column with more blocks to come; alone with one block, a
/// core keeps its sums. The program keeps a core's elements block by
/// block, each block's tokens one after another (the last block padded),
/// so that one cursor walks them.
void tokenSum(Builder &b, const KernelShape &k, const Layout &layout,
              int64_t microBatch) {
  KernelProgram &out = b.out;
  int64_t tb = ceilDiv(microBatch * k.rows, layout.tokenGroups);
  int64_t nb = out.blockColumns;
  out.tokens = tb;
  out.features = out.sums.columns;
  int stages = out.rows;
  bool chained = stages > 1 || out.blocks > 1;
  b.forEachCore([&](int x, int y, int) {
    std::pair<int, int> colors =
        chained ? b.chainStep(x, y, y, stages, south, kChainColor)
                : std::pair<int, int>{};
    int part = chainPart(y, stages);
    b.assign(x, y, part, [&] {
      CoreProgram p;
      int data = p.addBuffer("data", out.blocks * tb * nb,
                             elementTypeOf(k.elementBytes));
      int sumsBuffer = p.addBuffer("sums", nb, ElementType::f32);
      int row = p.addCursor({nb});
      Task work{false, -1, {}};
      std::vector<Op> block;
      block.push_back(Op::loopOp(2, tb));
      // 16-bit data adds into f32 sums (@faddhs), at @fadds' width.
      block.push_back(Op::vector(
          Op::Kind::fadd, Dsd::memory(sumsBuffer), Dsd::memory(sumsBuffer),
          Dsd::memory(data, 0, row), nb, ElementType::f32));
      block.push_back(Op::advanceOp(row));
      if (chained)
        chainOps(block, y, sumsBuffer, nb, colors, out.blocks > 1);
      work.body.push_back(
          Op::loopOp(static_cast<int>(block.size()), out.blocks));
      work.body.insert(work.body.end(), block.begin(), block.end());
      p.startActive.push_back(p.addTask(std::move(work)));
      return p;
    });
  });
}

/// A row kernel's block on a core, its tokens and its features, recorded
/// in `out`.
std::pair<int64_t, int64_t> rowBlock(KernelProgram &out, const KernelShape &k,
                                     const Layout &layout, int64_t microBatch) {
  out.tokens = ceilDiv(microBatch * k.rows, layout.tokenGroups);
  out.features = ceilDiv(k.columns, layout.featureGroups);
  return {out.tokens, out.features};
}

/// The colors a segment's statistics pass east on (alternating, as a
/// chain's do) and come back west on.
std::pair<int, int> statisticsColors(int s) {
  return {kChainColor + (s + 1) % 2, kChainColor + s % 2};
}
constexpr int kStatisticsBackColor = kChainColor + 2;

/// The routes of a segment's statistics at its core `s`, (x, y): they pass
/// east along the segment, each core adding its own; the last stores the
/// sums and sends them back west, multicast into every core on the way.
void routeStatistics(Builder &b, int x, int y, int s) {
  auto [in, out] = statisticsColors(s);
  bool last = s + 1 == b.out.segment;
  if (!last)
    b.route(x, y, out, bit(ramp), bit(east));
  if (s > 0)
    b.route(x, y, in, bit(west), bit(ramp));
  b.route(x, y, kStatisticsBackColor, last ? bit(ramp) : bit(east),
          last ? bit(west)
               : static_cast<uint8_t>(bit(ramp) | (s > 0 ? bit(west) : 0)));
}

/// The part core `s` of a segment of `segment` plays in summing
/// statistics: the first, a middle or the last, on either pair of colors.
int statisticsPart(int s, int segment) {
  return (s == 0 ? 0 : (s + 1 == segment ? 2 : 1)) + 3 * (s % 2);
}

/// Core `s`'s operations summing `count` f32 statistics at element `at` of
/// buffer `stats` over a segment of `segment` cores (routeStatistics), or
/// taking their maximum (`combine` fmax): afterwards every core holds the
/// result.
void sumStatistics(std::vector<Op> &body, int s, int segment, int stats,
                   int64_t count, Op::Kind combine = Op::Kind::fadd,
                   int64_t at = 0) {
  auto [in, out] = statisticsColors(s);
  Dsd own = Dsd::memory(stats, at);
  if (s == 0)
    body.push_back(Op::vector(Op::Kind::fmov, Dsd::out(out), own, Dsd(), count,
                              ElementType::f32));
  else if (s + 1 < segment)
    body.push_back(Op::vector(combine, Dsd::out(out), Dsd::in(in), own, count,
                              ElementType::f32));
  if (s + 1 == segment) {
    // The last stores the result, then sends it back.
    body.push_back(
        Op::vector(combine, own, Dsd::in(in), own, count, ElementType::f32));
    body.push_back(Op::vector(Op::Kind::fmov, Dsd::out(kStatisticsBackColor),
                              own, Dsd(), count, ElementType::f32));
  } else {
    body.push_back(Op::vector(Op::Kind::fmov, own,
                              Dsd::in(kStatisticsBackColor), Dsd(), count,
                              ElementType::f32));
  }
}

/// The operations of the kernels fused with a norm (fusedOperations), over
/// the `n` elements of `block` once the norm is done: as the other row
/// kernels' programs run their FLOPs, and as their maximum with themselves,
/// which leaves the values to the executor (it computes the fused kernels).
void fusedOps(std::vector<Op> &ops, const KernelShape &k, Dsd block, int64_t n,
              ElementType type) {
  for (int64_t i = 0, count = wafer::fusedOperations(k); i < count; ++i)
    ops.push_back(Op::vector(Op::Kind::fmax, block, block, block, n, type));
}

/// One element of `buffer`, at `at` (plus `cursor`'s value), the same for
/// every element of an operation: a stride-0 DSD.
Dsd scalar(int buffer, int64_t at, int cursor = -1) {
  return Dsd::memory(buffer, at, cursor, /*stride=*/0);
}

/// The body of a norm's task: its operations, and loops over the core's
/// `tokens` rows of `features` with a cursor on the row and one on the
/// token, each advancing a row at a time.
class RowTask {
public:
  RowTask(CoreProgram &program, int64_t tokens, int64_t features)
      : rowCursor(program.addCursor({features, tokens * features})),
        tokenCursor(program.addCursor({1, tokens})), tokens(tokens) {}

  void vector(Op::Kind kind, Dsd dst, Dsd a, Dsd c, int64_t n, ElementType t) {
    ops.push_back(Op::vector(kind, dst, a, c, n, t));
  }
  void fmac(Dsd dst, Dsd a, Dsd c, Dsd m, int64_t n, ElementType t) {
    ops.push_back(Op::fmacOp(dst, a, c, m, n, t));
  }
  /// Runs the operations `rowOps` adds once a token, the cursors on its row
  /// and its statistics.
  void eachToken(const std::function<void()> &rowOps) {
    size_t loop = ops.size();
    ops.push_back(Op::loopOp(0, tokens));
    rowOps();
    ops.push_back(Op::advanceOp(rowCursor));
    ops.push_back(Op::advanceOp(tokenCursor));
    ops[loop].target = static_cast<int>(ops.size() - loop - 1);
  }

  const int rowCursor, tokenCursor;
  std::vector<Op> ops;

private:
  int64_t tokens;
};

/// A norm (RowFunction::layerNorm or rmsNorm), each core on its tokens'
/// rows of its features: one row at a time, the row's sum (a layer norm's)
/// and the sum of its squares; the segment sums them (sumStatistics);
/// then, over its tokens, the mean and variance or the mean square, and
/// the reciprocal square root (Newton's method from the estimate of the
/// bits); one multiply-add a row normalizes it; the gain (and a layer
/// norm's shift) of the core's features, repeated along the rows, scale
/// and shift the whole block. The buffers are declared in NormBuffer's
/// order.
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

/// The colors a norm gradient's gain gradients pass down a column of token
/// groups on (alternating, as a chain's do).
constexpr int kGainChainColor = kChainColor + 3;

/// A norm's gradient (RowFunction::layerNormGrad or rmsNormGrad), each core
/// on its tokens' rows of its features, with g = dy gain and xhat the
/// normalized input: per token, xhat in place of x (one multiply-add by
/// the saved rstd, onto a layer norm's shift -mean rstd); dy xhat into the
/// gain's gradient and (a layer norm's) dy into the shift's; g in place of
/// dy; the row sums of g (a layer norm's) and of g xhat. The segment sums
/// them (sumStatistics); per token they become the coefficients
/// -mean(g xhat) and (a layer norm's) -mean(g) rstd, and two multiply-adds
/// a row make dx = (g - xhat mean(g xhat)) rstd - mean(g) rstd in place of
/// g. Last, the gain (and shift) gradients pass down the column of token
/// groups, each core adding its own, and leave at its foot; alone in its
/// column, a core keeps them. The buffers are declared in NormGradBuffer's
/// order.
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

/// Where a software exponential's constants sit among a program's
/// (appendExponentialConstants): the clamp, the rounding pair, -1 and 2^f's
/// Taylor coefficients, highest degree first.
struct ExponentialConstants {
  int buffer = -1;
  int64_t floor = 0, round = 0, minusRound = 0, minusOne = 0, taylor = 0;
};

/// Appends an exponential's constants to `values`, -1 at `minusOne`; the
/// caller sets the buffer once it declares them.
ExponentialConstants appendExponentialConstants(std::vector<float> &values,
                                                int64_t minusOne) {
  ExponentialConstants c;
  c.minusOne = minusOne;
  c.floor = static_cast<int64_t>(values.size());
  // Adding, then subtracting 1.5 2^23 rounds an f32 under 2^22 to an
  // integer.
  values.insert(values.end(), {-125.0f, 0x1.8p23f, -0x1.8p23f});
  c.round = c.floor + 1;
  c.minusRound = c.floor + 2;
  c.taylor = c.floor + 3;
  for (double coefficient : dataflow::exponentialTaylor())
    values.push_back(static_cast<float>(coefficient));
  return c;
}

/// The f32 work rows of an exponential: the fraction (and the argument's
/// product), the power of two, and the polynomial, which ends as the result.
struct ExponentialRows {
  Dsd fraction, power, polynomial;
};

/// exp(argument), or exp(-argument) when the scalar `multiplier` holds
/// -log2 e rather than log2 e, into `rows.polynomial`, over `n` elements,
/// in software (RowOperations.h, kExponentialOperations): t = y log2 e
/// clamped at -125 (so that 2^n stays a normal f32), n = round(t) by adding
/// and subtracting 1.5 2^23, f = t - n, 2^f by its Taylor polynomial of
/// degree 6 (Horner), and n added to the polynomial's exponent bits.
void exponential(RowTask &task, Dsd argument, Dsd multiplier, int64_t n,
                 const ExponentialRows &rows, const ExponentialConstants &c) {
  constexpr ElementType f32 = ElementType::f32;
  auto constant = [&](int64_t which) { return scalar(c.buffer, which); };
  Dsd f = rows.fraction, power = rows.power, poly = rows.polynomial;
  task.fmac(f, Dsd::zero(), argument, multiplier, n, f32);
  task.vector(Op::Kind::fmax, f, f, constant(c.floor), n, f32);
  task.vector(Op::Kind::fadd, power, f, constant(c.round), n, f32);
  task.vector(Op::Kind::fadd, power, power, constant(c.minusRound), n, f32);
  task.fmac(f, f, power, constant(c.minusOne), n, f32);
  task.fmac(poly, constant(c.taylor + 1), f, constant(c.taylor), n, f32);
  for (int64_t i = 2; i <= dataflow::kExponentialDegree; ++i) {
    task.vector(Op::Kind::fmul, poly, poly, f, n, f32);
    task.vector(Op::Kind::fadd, poly, poly, constant(c.taylor + i), n, f32);
  }
  task.vector(Op::Kind::scaleByPowerOfTwo, poly, poly, power, n, f32);
}

/// 1 / `v` into `reciprocal` over `n` elements, `v` positive: the square
/// of the reciprocal square root, from the estimate of the bits by three
/// Newton steps r (3/2 - v r^2 / 2) (RowOperations.h,
/// kReciprocalSquareRootOperations, and a product); `work` a row of as
/// many, `threeHalves` and `minusHalf` constants.
void reciprocalOf(RowTask &task, Dsd reciprocal, Dsd v, Dsd work, int64_t n,
                  Dsd threeHalves, Dsd minusHalf) {
  constexpr ElementType f32 = ElementType::f32;
  task.vector(Op::Kind::rsqrtEstimate, reciprocal, v, Dsd(), n, f32);
  for (int step = 0; step < 3; ++step) {
    task.vector(Op::Kind::fmul, work, reciprocal, reciprocal, n, f32);
    task.vector(Op::Kind::fmul, work, work, v, n, f32);
    task.fmac(work, threeHalves, work, minusHalf, n, f32);
    task.vector(Op::Kind::fmul, reciprocal, reciprocal, work, n, f32);
  }
  task.vector(Op::Kind::fmul, reciprocal, reciprocal, reciprocal, n, f32);
}

/// The operations `body` adds, run `times` times (a loop in the task's
/// code).
void repeated(RowTask &task, int64_t times, const std::function<void()> &body) {
  size_t loop = task.ops.size();
  task.ops.push_back(Op::loopOp(0, times));
  body();
  task.ops[loop].target = static_cast<int>(task.ops.size() - loop - 1);
}

/// The router's f32 work rows on the chain's last core, a token each
/// element: the largest logit, then the largest mark; the exponential's
/// fraction (first the logit less the largest) and power of two; the
/// exponentials' sum; a reciprocal and its work; the experts already
/// chosen; the one an expert takes; a product; the chosen probabilities'
/// sum; the null expert's exponential (with one).
enum RouterRow : int {
  kRouterLargest,
  kRouterFraction,
  kRouterPower,
  kRouterSum,
  kRouterReciprocal,
  kRouterReciprocalWork,
  kRouterFound,
  kRouterTake,
  kRouterProduct,
  kRouterChosen,
  kRouterNull,
};

/// The router's constants, each at its place here; then the
/// exponential's.
enum RouterConstant : int {
  kRouterLog2E,
  kRouterMinusOne,
  kRouterThreeHalves,
  kRouterMinusHalf,
  kRouterSaturate,
  kRouterMinusSaturate,
  kRouterOne,
  kRouterMinusTwo,
  kRouterExpertCount,
  kRouterNullLogit,
  kRouterExponentialAt,
};

/// The router's choice (docs/runtime.md, "The router on the mesh") on the
/// chain's last core of a segment, once the last block of its logits is
/// in (`logits`, [expert][token] over its `tokens`): optionally rounded
/// to 16 bits; the softmax, the largest logit and the exponentials of the
/// logits less it (and the null expert's fixed logit less it) over their
/// sum's reciprocal; then, `k.choices` times, the largest of the marks (a
/// copy of the probabilities), and for each expert in order whether it
/// is that largest and none before it was (x 2^254 saturates any
/// difference), which adds its probability to the choice's weight,
/// counts toward its index (the experts up to the chosen one) and marks it
/// taken (less 2, below every probability); last, the weights over their
/// sum (with the null expert's share). Everything runs over the tokens,
/// one operation an expert: no branch, whatever the logits. Declares the
/// buffers past the sums (RouterBuffer) and returns the task.
int routerChoice(CoreProgram &p, const KernelShape &k, int64_t tokens,
                 int64_t logitsElements) {
  constexpr ElementType f32 = ElementType::f32;
  int64_t experts = k.columns, n = tokens;
  bool null = k.nullLogit.has_value();
  int logits = p.addBuffer("logits", logitsElements, f32);
  int rounded = p.addBuffer("rounded logits", k.roundLogits ? experts * n : 0,
                            ElementType::bf16);
  int probabilities = p.addBuffer("probabilities", experts * n, f32);
  int marks = p.addBuffer("choice marks", experts * n, f32);
  int weights = p.addBuffer("chosen weights", k.choices * n, f32);
  int indices = p.addBuffer("chosen experts", k.choices * n, f32);
  int work =
      p.addBuffer("router work rows", (kRouterNull + (null ? 1 : 0)) * n, f32);
  std::vector<float> values = {static_cast<float>(M_LOG2E),
                               -1.0f,
                               1.5f,
                               -0.5f,
                               0x1p127f,
                               -0x1p127f,
                               1.0f,
                               -2.0f,
                               static_cast<float>(experts),
                               static_cast<float>(k.nullLogit.value_or(0))};
  ExponentialConstants exp =
      appendExponentialConstants(values, kRouterMinusOne);
  int constants = p.addConstants("router constants", std::move(values));
  exp.buffer = constants;
  // Without a chain the sums are the logits.
  Dsd logitsAt = Dsd::memory(logitsElements > 0 ? logits : kRouterSums);
  auto row = [&](RouterRow r) { return Dsd::memory(work, r * n); };
  auto constant = [&](RouterConstant c) { return scalar(constants, c); };
  int expert = p.addCursor({n, experts * n});
  int choice = p.addCursor({n, k.choices * n});
  auto perExpert = [&](int buffer) { return Dsd::memory(buffer, 0, expert); };
  auto perChoice = [&](int buffer) { return Dsd::memory(buffer, 0, choice); };
  auto eachExpert = [&](RowTask &task, const std::function<void()> &body) {
    repeated(task, experts, [&] {
      body();
      task.ops.push_back(Op::advanceOp(expert));
    });
  };
  auto eachChoice = [&](RowTask &task, const std::function<void()> &body) {
    repeated(task, k.choices, [&] {
      body();
      task.ops.push_back(Op::advanceOp(choice));
    });
  };
  Dsd largest = row(kRouterLargest), fraction = row(kRouterFraction),
      sum = row(kRouterSum), found = row(kRouterFound), take = row(kRouterTake),
      product = row(kRouterProduct), chosen = row(kRouterChosen);
  ExponentialRows rows{fraction, row(kRouterPower), Dsd()};

  RowTask task(p, 1, n);
  if (k.roundLogits) {
    task.vector(Op::Kind::fmov, Dsd::memory(rounded), logitsAt, Dsd(),
                experts * n, f32);
    task.vector(Op::Kind::fmov, logitsAt, Dsd::memory(rounded), Dsd(),
                experts * n, f32);
  }
  Dsd logit = logitsAt;
  logit.cursor = expert;
  // The softmax.
  task.vector(Op::Kind::fmov, largest, logitsAt, Dsd(), n, f32);
  eachExpert(task, [&] {
    task.vector(Op::Kind::fmax, largest, largest, logit, n, f32);
  });
  task.vector(Op::Kind::fmov, sum, Dsd::zero(), Dsd(), n, f32);
  eachExpert(task, [&] {
    rows.polynomial = perExpert(probabilities);
    task.fmac(fraction, logit, largest, constant(kRouterMinusOne), n, f32);
    exponential(task, fraction, constant(kRouterLog2E), n, rows, exp);
    task.vector(Op::Kind::fadd, sum, sum, rows.polynomial, n, f32);
  });
  if (null) {
    rows.polynomial = row(kRouterNull);
    task.fmac(fraction, constant(kRouterNullLogit), largest,
              constant(kRouterMinusOne), n, f32);
    exponential(task, fraction, constant(kRouterLog2E), n, rows, exp);
  }
  Dsd reciprocal = row(kRouterReciprocal);
  reciprocalOf(task, reciprocal, sum, row(kRouterReciprocalWork), n,
               constant(kRouterThreeHalves), constant(kRouterMinusHalf));
  eachExpert(task, [&] {
    task.vector(Op::Kind::fmul, perExpert(probabilities),
                perExpert(probabilities), reciprocal, n, f32);
    task.vector(Op::Kind::fmov, perExpert(marks), perExpert(probabilities),
                Dsd(), n, f32);
  });
  if (null)
    task.vector(Op::Kind::fmul, row(kRouterNull), row(kRouterNull), reciprocal,
                n, f32);
  // The choices, the largest first; equal ones, the lower index first.
  eachChoice(task, [&] {
    task.vector(Op::Kind::fmov, largest, Dsd::memory(marks), Dsd(), n, f32);
    eachExpert(task, [&] {
      task.vector(Op::Kind::fmax, largest, largest, perExpert(marks), n, f32);
    });
    for (Dsd cleared : {found, perChoice(weights), perChoice(indices)})
      task.vector(Op::Kind::fmov, cleared, Dsd::zero(), Dsd(), n, f32);
    eachExpert(task, [&] {
      // 1 where the mark is the largest, else 0; then 0 once one was.
      task.fmac(take, largest, perExpert(marks), constant(kRouterMinusOne), n,
                f32);
      task.vector(Op::Kind::fmul, take, take, constant(kRouterSaturate), n,
                  f32);
      task.vector(Op::Kind::fmul, take, take, constant(kRouterMinusSaturate), n,
                  f32);
      task.vector(Op::Kind::fmax, take, take, constant(kRouterMinusOne), n,
                  f32);
      task.vector(Op::Kind::fadd, take, take, constant(kRouterOne), n, f32);
      task.vector(Op::Kind::fmul, product, take, found, n, f32);
      task.fmac(take, take, product, constant(kRouterMinusOne), n, f32);
      task.vector(Op::Kind::fadd, found, found, take, n, f32);
      // The experts from the chosen one on count E - index in all.
      task.vector(Op::Kind::fadd, perChoice(indices), perChoice(indices), found,
                  n, f32);
      task.vector(Op::Kind::fmul, product, take, perExpert(probabilities), n,
                  f32);
      task.vector(Op::Kind::fadd, perChoice(weights), perChoice(weights),
                  product, n, f32);
      task.fmac(perExpert(marks), perExpert(marks), take,
                constant(kRouterMinusTwo), n, f32);
    });
    task.fmac(perChoice(indices), constant(kRouterExpertCount),
              perChoice(indices), constant(kRouterMinusOne), n, f32);
  });
  // The weights over the chosen probabilities' sum.
  task.vector(Op::Kind::fmov, chosen, null ? row(kRouterNull) : Dsd::zero(),
              Dsd(), n, f32);
  eachChoice(task, [&] {
    task.vector(Op::Kind::fadd, chosen, chosen, perChoice(weights), n, f32);
  });
  reciprocalOf(task, reciprocal, chosen, row(kRouterReciprocalWork), n,
               constant(kRouterThreeHalves), constant(kRouterMinusHalf));
  eachChoice(task, [&] {
    task.vector(Op::Kind::fmul, perChoice(weights), perChoice(weights),
                reciprocal, n, f32);
  });
  return p.addTask(Task{false, -1, std::move(task.ops)});
}

/// The loss's gradient, scale (exp(logit - lse) - onehot(label)), each
/// core on its tokens' rows of its logits, one row at a time into f32 work
/// rows: the logit less the token's saved log-sum-exp; the exponential in
/// software (exponential()); the product by the scale, back into the row.
/// Then the scale is taken from the label's element, whose place the task
/// reads from the labels buffer (the spare element's when another core
/// holds the label). Nothing passes between cores. The buffers are
/// declared in LossGradBuffer's order.
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

/// The loss, scale sum over tokens (lse - logit at the label), each core on
/// its tokens' rows of its slice of the vocabulary, one chunk of the
/// vocabulary a run. Per row, the maximum of its logits; the segment takes
/// the maximum of them (sumStatistics, as a maximum); per row, the
/// exponentials of the logits less it (exponential()) and their sum, which
/// the segment sums; the label's logit, taken from the core's loss (its
/// place read from the labels buffer, the spare element's 0 when another
/// core holds it). Over the tokens, the chunk's statistics merge into the
/// running ones: m = max(M, Mc), S = S exp(M - m) + Sc exp(Mc - m), M = m.
/// The last chunk then takes ln S by Newton's method for e^y = S from the
/// estimate the bits give (ln 2 (bits 2^-23 - 127)), y += S exp(-y) - 1
/// three times; lse = M + ln S; the core's loss adds its tokens' lse by
/// their weights and is scaled. The buffers are declared in LossBuffer's
/// order; the runner carries the running statistics and the core's loss
/// from one chunk's run to the next.
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

/// An elementwise map (RowFunction::map), each core on its tokens' rows of
/// its features, one row at a time: the operations of the map's algorithm
/// (wafer::mapAlgorithm) over the row, its work rows and its constants,
/// the result in place of the first input; then the kernels fused with it,
/// over the block. Nothing passes between cores. The buffers are declared
/// in MapBuffer's order.
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
      auto dsd = [&](const wafer::MapOperand &operand) {
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
      task.eachToken([&] {
        for (const wafer::MapStep &step : algorithm.steps) {
          ElementType arithmetic =
              step.onInputsOnly() ? type : ElementType::f32;
          Dsd dst = dsd(step.dst), a = dsd(step.a), c = dsd(step.b);
          switch (step.kind) {
          case wafer::MapStep::Kind::multiplyAdd:
            task.fmac(dst, a, c, dsd(step.scalar), cb, arithmetic);
            break;
          case wafer::MapStep::Kind::add:
            task.vector(Op::Kind::fadd, dst, a, c, cb, arithmetic);
            break;
          case wafer::MapStep::Kind::multiply:
            task.vector(Op::Kind::fmul, dst, a, c, cb, arithmetic);
            break;
          case wafer::MapStep::Kind::maximum:
            task.vector(Op::Kind::fmax, dst, a, c, cb, arithmetic);
            break;
          case wafer::MapStep::Kind::rsqrtEstimate:
            task.vector(Op::Kind::rsqrtEstimate, dst, a, Dsd(), cb, arithmetic);
            break;
          case wafer::MapStep::Kind::scaleByPowerOfTwo:
            task.vector(Op::Kind::scaleByPowerOfTwo, dst, a, c, cb, arithmetic);
            break;
          }
        }
      });
      fusedOps(task.ops, k, Dsd::memory(first), tb * cb, type);
      p.startActive.push_back(p.addTask(Task{false, -1, std::move(task.ops)}));
      return p;
    });
  });
}

/// The embedding lookup (docs/runtime.md, "Embeddings on the mesh"): the
/// table streams down each feature group's columns, each row of the
/// group's features in whole wavelets. A core takes its tokens' distinct
/// ids in increasing order: it passes over the rows before an id's and
/// takes the id's row into its first token's row, each length set from its
/// lists (Op::lengthFrom), then passes over the rest. It then copies each
/// token's row from its id's first token's, multiplies the block by the
/// scale, and, with fused learned positions, takes their rows alike from a
/// second stream (each token's place in its sequence its id) and adds
/// them; then the other kernels fused with it. Without values the lists
/// say nothing is taken and the whole stream is passed over: as many
/// wavelets in all. The buffers are declared in GatherBuffer's order.
void gatherKernel(Builder &b, const KernelShape &k, const Layout &layout,
                  int64_t microBatch, double scale) {
  ElementType type = elementTypeOf(k.elementBytes);
  KernelProgram &out = b.out;
  // Named, not bound: lambdas capture them (C++17).
  int64_t tb, cb;
  std::tie(tb, cb) = rowBlock(out, k, layout, microBatch);
  int64_t epw = perWavelet(type);
  int64_t rowElements = ceilDiv(cb, epw) * epw;
  int64_t stream = wafer::embeddingTableRows(k) * rowElements;
  int64_t positionStream = k.positionRows * rowElements;
  bool positions = k.positionRows > 0;
  // The positions on a color of their own: a lookup has no chain.
  constexpr int kPositionsColor = kChainColor;
  b.downColumns(kStreamColor, stream / epw);
  if (positions)
    b.downColumns(kPositionsColor, positionStream / epw);
  b.forEachCore([&](int x, int y, int) {
    b.assign(x, y, 0, [&] {
      CoreProgram p;
      // A table's rows and the lists that say which of its stream's rows
      // land where; `used` false declares them empty.
      auto declare = [&](const char *what, bool used, int64_t length) {
        int64_t n = used ? tb : 0;
        std::string name(what);
        GatherTableBuffers table;
        table.rows = p.addBuffer(name + " rows", n * cb, type);
        table.skips = p.addBuffer(name + " rows passed over", used ? n + 1 : 0,
                                  ElementType::f32);
        table.takes = p.addBuffer(name + " rows taken", n, ElementType::f32);
        table.targets = p.addBuffer(name + " row targets", n, ElementType::f32);
        table.sources = p.addBuffer(name + " row sources", n, ElementType::f32);
        if (used) {
          p.buffers[table.skips].initial.assign(n + 1, 0.0f);
          p.buffers[table.skips].initial.back() = static_cast<float>(length);
        }
        return table;
      };
      GatherTableBuffers tokenTable = declare("token", true, stream);
      int passed = p.addBuffer("passed row", rowElements, type);
      int constants = p.addConstants("constants", {static_cast<float>(scale)});
      GatherTableBuffers positionTable =
          declare("position", positions, positionStream);
      assert(tokenTable == kGatherTokenTable && passed == kGatherPassed &&
             constants == kGatherConstants &&
             positionTable == kGatherPositionTable &&
             "the buffers in GatherBuffer's order");
      int rows = tokenTable.rows;
      Task work{false, -1, {}};
      // Takes the rows `table`'s lists name from the stream of `color`,
      // `length` elements without values; then copies each token's row
      // from its id's first token's.
      auto take = [&](const GatherTableBuffers &table, int color,
                      int64_t length) {
        int into = table.rows;
        int distinct = p.addCursor({1, 0}), token = p.addCursor({1, 0}),
            row = p.addCursor({cb, 0});
        auto fromStream = [&](Dsd dst, int64_t n, int lengths) {
          return Op::lengthFromData(
              Op::vector(Op::Kind::fmov, dst, Dsd::in(color), Dsd(), n, type),
              lengths, distinct);
        };
        work.body.push_back(Op::loopOp(3, tb));
        work.body.push_back(fromStream(Dsd::ring(passed), 0, table.skips));
        work.body.push_back(fromStream(
            Dsd::indexed(into, table.targets, distinct), 0, table.takes));
        work.body.push_back(Op::advanceOp(distinct));
        work.body.push_back(fromStream(Dsd::ring(passed), length, table.skips));
        work.body.push_back(Op::loopOp(3, tb));
        work.body.push_back(Op::vector(
            Op::Kind::fmov, Dsd::memory(into, 0, row),
            Dsd::indexed(into, table.sources, token), Dsd(), cb, type));
        work.body.push_back(Op::advanceOp(row));
        work.body.push_back(Op::advanceOp(token));
      };
      take(tokenTable, kStreamColor, stream);
      work.body.push_back(Op::fmacOp(Dsd::memory(rows), Dsd::zero(),
                                     Dsd::memory(rows), scalar(constants, 0),
                                     tb * cb, type));
      if (positions) {
        take(positionTable, kPositionsColor, positionStream);
        work.body.push_back(
            Op::vector(Op::Kind::fadd, Dsd::memory(rows), Dsd::memory(rows),
                       Dsd::memory(positionTable.rows), tb * cb, type));
      }
      fusedOps(work.body, k, Dsd::memory(rows), tb * cb, type);
      p.startActive.push_back(p.addTask(std::move(work)));
      return p;
    });
  });
}

/// The embedding gradient (docs/runtime.md, "Embeddings on the mesh"):
/// each core adds its tokens' rows of the output gradient, times the
/// scale, into f32 sums, one for each of their distinct ids; then the
/// gradient of the table's rows passes down each column of token groups,
/// f32 a wavelet, started by the first core as zeros, each core adding its
/// sums to its ids' rows as they pass (lengths set from its lists, as the
/// lookup's), the last core's leaving the rectangle. The buffers are
/// declared in ScatterAddBuffer's order.
void scatterAddKernel(Builder &b, const KernelShape &k, const Layout &layout,
                      int64_t microBatch, double scale) {
  ElementType type = elementTypeOf(k.elementBytes);
  KernelProgram &out = b.out;
  // Named, not bound: lambdas capture them (C++17).
  int64_t tb, cb;
  std::tie(tb, cb) = rowBlock(out, k, layout, microBatch);
  int64_t stream = wafer::embeddingTableRows(k) * cb;
  b.forEachCore([&](int x, int y, int) {
    std::pair<int, int> colors =
        b.chainStep(x, y, y, out.rows, south, kChainColor);
    b.assign(x, y, chainPart(y, out.rows), [&] {
      CoreProgram p;
      int gradient = p.addBuffer("output gradient", tb * cb, type);
      int sums = p.addBuffer("sums", tb * cb, ElementType::f32);
      int slots = p.addBuffer("sum slots", tb, ElementType::f32);
      int skips = p.addBuffer("rows passed on", tb + 1, ElementType::f32);
      int takes = p.addBuffer("rows added to", tb, ElementType::f32);
      int constants = p.addConstants("constants", {static_cast<float>(scale)});
      assert(gradient == kScatterGradient && sums == kScatterSums &&
             slots == kScatterSlots && skips == kScatterSkips &&
             takes == kScatterTakes && constants == kScatterConstants &&
             "the buffers in ScatterAddBuffer's order");
      p.buffers[skips].initial.assign(tb + 1, 0.0f);
      p.buffers[skips].initial.back() = static_cast<float>(stream);
      int token = p.addCursor({1, 0}), row = p.addCursor({cb, 0}),
          distinct = p.addCursor({1, 0}), sumRow = p.addCursor({cb, 0});
      Task work{false, -1, {}};
      work.body.push_back(Op::vector(Op::Kind::fmov, Dsd::memory(sums),
                                     Dsd::zero(), Dsd(), tb * cb,
                                     ElementType::f32));
      work.body.push_back(Op::loopOp(3, tb));
      work.body.push_back(Op::fmacOp(
          Dsd::indexed(sums, slots, token), Dsd::indexed(sums, slots, token),
          Dsd::memory(gradient, 0, row), scalar(constants, 0), cb, type));
      work.body.push_back(Op::advanceOp(row));
      work.body.push_back(Op::advanceOp(token));
      // The first core starts the stream from zeros.
      Dsd from = y == 0 ? Dsd::zero() : Dsd::in(colors.first);
      Dsd to = Dsd::out(colors.second);
      auto passOn = [&](Op::Kind kind, Dsd added, int64_t length, int lengths) {
        return Op::lengthFromData(
            Op::vector(kind, to, from, added, length, ElementType::f32),
            lengths, distinct);
      };
      work.body.push_back(Op::loopOp(4, tb));
      work.body.push_back(passOn(Op::Kind::fmov, Dsd(), 0, skips));
      work.body.push_back(
          passOn(Op::Kind::fadd, Dsd::memory(sums, 0, sumRow), 0, takes));
      work.body.push_back(Op::advanceOp(distinct));
      work.body.push_back(Op::advanceOp(sumRow));
      work.body.push_back(passOn(Op::Kind::fmov, Dsd(), stream, skips));
      fusedOps(work.body, k, Dsd::memory(gradient), tb * cb, type);
      p.startActive.push_back(p.addTask(std::move(work)));
      return p;
    });
  });
}

/// Vector operations over a core's tokens and features, as many as the
/// kernel's FLOPs per element ask for (two to an operation); a reduction
/// then sums each token's statistics along the segment and sends the sums
/// back.
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

/// The colors of attention's programs, beside the queries' stream and the
/// statistics' chains: the keys and values stream down the columns, the
/// query rows' results leave east, and the backward pass's key and value
/// gradients pass down the columns (a chain's two colors).
constexpr int kKeysValuesColor = kChainColor + 3,
              kAttentionOutputColor = kChainColor + 4,
              kKeyValueGradColor = kChainColor + 5;

/// The constants attention's programs read, each at its place here; then
/// the mask (kAttentionMaskAt) and the exponential's.
enum AttentionConstant : int {
  kAttentionMinusOne,
  kAttentionLowest,
  kAttentionLog2E,
  kAttentionScale,
  kAttentionThreeHalves,
  kAttentionMinusHalf,
};

/// The program's part of attention's programs: its constants, the keys
/// and the queries it takes, and its operations.
struct AttentionTask {
  AttentionTask(CoreProgram &p, int64_t queries, int64_t keys)
      : task(p, queries, keys), queries(queries), keys(keys) {}

  /// Declares the buffers the programs end with, in their order: the
  /// `offsetRows` elements of the mask offsets, the `positionRows` of the
  /// key positions, each of `pairs` slopes, the exponential's work rows
  /// (`workRow` each, or a key's), and the constants; with `keyBlocks`,
  /// the keys are a block of the core's, and the constants end with the
  /// block's size and its negative, which step the mask and the positions
  /// from block to block.
  void addLastBuffers(CoreProgram &p, int64_t offsetRows, int64_t pairs,
                      const AttentionSoftmax &softmax, int64_t positionRows = 0,
                      int64_t workRow = 0, bool keyBlocks = false) {
    constexpr ElementType f32 = ElementType::f32;
    offsets = p.addBuffer("mask offsets", offsetRows, f32);
    positions = p.addBuffer("key positions",
                            positionRows > 0 ? positionRows : keys, f32);
    slopes = p.addBuffer("slopes", pairs, f32);
    int64_t work = workRow > 0 ? workRow : keys;
    rows = {Dsd::memory(p.addBuffer("exponent fraction", work, f32)),
            Dsd::memory(p.addBuffer("power of two", work, f32)),
            Dsd::memory(p.addBuffer("polynomial", work, f32))};
    addConstants(p, softmax, keyBlocks);
  }

  /// Declares the constants (the softmax's scale, the mask for `keys`
  /// keys, the exponential's, and with `keyBlocks` the block's steps).
  void addConstants(CoreProgram &p, const AttentionSoftmax &softmax,
                    bool keyBlocks) {
    std::vector<float> values = {-1.0f,
                                 std::numeric_limits<float>::lowest(),
                                 static_cast<float>(M_LOG2E),
                                 static_cast<float>(softmax.scale),
                                 1.5f,
                                 -0.5f};
    assert(values.size() == kAttentionMaskAt && "the mask follows these");
    values.resize(kAttentionMaskAt + keys, 0.0f);
    values.resize(kAttentionMaskAt + 2 * keys, kMaskedScore);
    exp = appendExponentialConstants(values, kAttentionMinusOne);
    if (keyBlocks) {
      keyStep = static_cast<int>(values.size());
      values.insert(values.end(),
                    {static_cast<float>(keys), -static_cast<float>(keys)});
    }
    constants = p.addConstants("constants", std::move(values));
    exp.buffer = constants;
  }
  Dsd constant(int which) const { return scalar(constants, which); }
  /// Whether the buffers addLastBuffers declared follow one another from
  /// buffer `first` on, in its order.
  bool lastBuffersFrom(int first) const {
    return offsets == first && positions == first + 1 && slopes == first + 2 &&
           rows.fraction.buffer == first + 3 &&
           rows.power.buffer == first + 4 &&
           rows.polynomial.buffer == first + 5 && constants == first + 6;
  }

  /// The products of a row of the head's size (`vector` its first
  /// element, of `type`) with the core's keys or values, transposed at
  /// `transposed`, into `row` (f32): a multiply-add a head dimension.
  void products(Dsd row, int transposed, Dsd vector, int64_t headSize,
                ElementType type) {
    for (int64_t d = 0; d < headSize; ++d) {
      Dsd element = vector;
      element.offset += d;
      element.stride = 0;
      task.fmac(row, d == 0 ? Dsd::zero() : row,
                Dsd::memory(transposed, d * keys), element, keys, type);
    }
  }

  /// One query's scores against the core's keys into `row` (f32): the
  /// products of the query (`query`) with the keys transposed at `keysT`;
  /// the scale; ALiBi's key-position bias times the pair's slope; the
  /// mask, a window of the constants at the query's offset (element
  /// `offsetCursor` of `offsets`); and, unless `rowMax` is none, their
  /// maximum into it.
  void scores(Dsd row, Dsd rowMax, int keysT, Dsd query, int64_t headSize,
              ElementType type, const AttentionSoftmax &softmax, int offsets,
              int offsetCursor, Dsd positions, Dsd slope) {
    constexpr ElementType f32 = ElementType::f32;
    products(row, keysT, query, headSize, type);
    task.vector(Op::Kind::fmul, row, row, constant(kAttentionScale), keys, f32);
    if (softmax.alibi)
      task.fmac(row, row, positions, slope, keys, f32);
    Dsd window = Dsd::indexed(constants, offsets, offsetCursor);
    window.offset = kAttentionMaskAt;
    task.vector(Op::Kind::fadd, row, row, window, keys, f32);
    if (rowMax.kind != Dsd::Kind::none)
      task.vector(Op::Kind::fmax, rowMax, rowMax, row, keys, f32);
  }

  /// The exponential of `row` less the query's maximum `rowMax` over `n`
  /// elements (or a row of keys), into `rows.polynomial`, and, unless
  /// `rowSum` is none, its sum into it.
  void exponentials(Dsd row, Dsd rowMax, Dsd rowSum,
                    const ExponentialRows &rows, int64_t n = 0) {
    constexpr ElementType f32 = ElementType::f32;
    n = n > 0 ? n : keys;
    task.fmac(rows.fraction, row, rowMax, constant(kAttentionMinusOne), n, f32);
    exponential(task, rows.fraction, constant(kAttentionLog2E), n, rows, exp);
    if (rowSum.kind != Dsd::Kind::none)
      task.vector(Op::Kind::fadd, rowSum, rowSum, rows.polynomial, n, f32);
  }

  /// 1 / `sums` into `reciprocal` over `n` queries (or a chunk of them),
  /// `work` a row of as many (mesh::reciprocalOf).
  void reciprocalOf(Dsd reciprocal, Dsd sums, Dsd work, int64_t n = 0) {
    mesh::reciprocalOf(task, reciprocal, sums, work, n > 0 ? n : queries,
                       constant(kAttentionThreeHalves),
                       constant(kAttentionMinusHalf));
  }

  /// A chunk's mask offsets, clamped to [0, keys] into the offsets'
  /// first `queries` elements, from the current key block's (`current`):
  /// max(x, 0), then -max(-x, -keys) (key blocks' constants).
  void clampOffsets(Dsd current) {
    constexpr ElementType f32 = ElementType::f32;
    Dsd clamped = Dsd::memory(offsets), minusOne = constant(kAttentionMinusOne);
    task.vector(Op::Kind::fmax, clamped, current, Dsd::zero(), queries, f32);
    task.vector(Op::Kind::fmul, clamped, clamped, minusOne, queries, f32);
    task.vector(Op::Kind::fmax, clamped, clamped, constant(keyStep + 1),
                queries, f32);
    task.vector(Op::Kind::fmul, clamped, clamped, minusOne, queries, f32);
  }
  /// The next key block: `n` current mask offsets and the key positions
  /// stepped by a block.
  void stepKeys(Dsd currentOffsets, int64_t n) {
    constexpr ElementType f32 = ElementType::f32;
    task.vector(Op::Kind::fadd, currentOffsets, currentOffsets,
                constant(keyStep), n, f32);
    task.vector(Op::Kind::fadd, Dsd::memory(positions), Dsd::memory(positions),
                constant(keyStep), keys, f32);
  }

  /// A loop of `times` over the operations `body` adds.
  void loop(int64_t times, const std::function<void()> &body) {
    size_t at = task.ops.size();
    task.ops.push_back(Op::loopOp(0, times));
    body();
    task.ops[at].target = static_cast<int>(task.ops.size() - at - 1);
  }
  void advance(int cursor) { task.ops.push_back(Op::advanceOp(cursor)); }

  RowTask task;
  int64_t queries, keys;
  int offsets = -1, positions = -1, slopes = -1, constants = -1;
  /// With key blocks: the constants' block size, then its negative.
  int keyStep = -1;
  ExponentialRows rows;
  ExponentialConstants exp;
};

/// Whether a program declared `leading`, then `at`'s last buffers, in the
/// order of AttentionBuffer or AttentionGradBuffer, whose last buffers
/// start at `lastAt` (an assertion's: unused where assertions are off).
[[maybe_unused]] bool inBufferOrder(std::initializer_list<int> leading,
                                    int lastAt, const AttentionTask &at) {
  int next = 0;
  for (int buffer : leading)
    if (buffer != next++)
      return false;
  return next == lastAt && at.lastBuffersFrom(lastAt);
}

/// A block's share of an attention pass: its queries and keys, recorded
/// in `out`, and a row of the head's size in whole wavelets; the queries a
/// core takes at once (`chunk`, the layout's `sum_block`, or all), also
/// recorded, and the chunks, the last padded.
struct AttentionSizes {
  ElementType type;
  int64_t perWavelet, headSize, queries, keys, rowElements;
  int64_t chunk = 1, chunks = 1;
  /// The keys a core takes at once (the layout's `key_block`,
  /// or all) and their blocks, the last padded.
  int64_t keyChunk = 1, keyChunks = 1;
};
AttentionSizes attentionSizes(KernelProgram &out, const KernelShape &k,
                              const Layout &layout) {
  AttentionSizes sizes;
  sizes.type = elementTypeOf(k.elementBytes);
  sizes.perWavelet = perWavelet(sizes.type);
  sizes.headSize = k.contracted;
  sizes.queries = out.tokens = ceilDiv(k.columns, layout.tokenGroups);
  sizes.keys = out.features = ceilDiv(k.columns, layout.featureGroups);
  sizes.rowElements =
      ceilDiv(sizes.headSize, sizes.perWavelet) * sizes.perWavelet;
  sizes.chunk = out.tokensAtOnce =
      layout.sumBlock > 0 ? std::min(layout.sumBlock, sizes.queries)
                          : sizes.queries;
  sizes.chunks = ceilDiv(sizes.queries, sizes.chunk);
  sizes.keyChunk = out.keysAtOnce =
      layout.keyBlock > 0 ? std::min(layout.keyBlock, sizes.keys) : sizes.keys;
  sizes.keyChunks = ceilDiv(sizes.keys, sizes.keyChunk);
  return sizes;
}

/// The routes of core `s` of a segment, at (x, y), in attention's
/// programs: the statistics' chains, and from the last core the query
/// rows' results, out east.
void routeAttention(Builder &b, int x, int y, int s) {
  if (b.out.segment > 1)
    routeStatistics(b, x, y, s);
  if (s + 1 == b.out.segment) {
    b.route(x, y, kAttentionOutputColor, bit(ramp), bit(east));
    b.mesh.drains.push_back({x, y, east, kAttentionOutputColor, true});
  }
}

/// Attention's forward pass with values, on one block of query groups by
/// key groups, for `pairs` (sequence, head) pairs one after another. Each
/// pair's keys (transposed) and values stream down the block's columns
/// into memory, its queries along the rows, which a core takes a chunk at
/// a time (the layout's `sum_block`: AttentionSizes). Per
/// chunk, query by query, the scores against its keys
/// (AttentionTask::scores: ALiBi's bias as the key's position times the
/// slope, since the query's own term is the same along its row and the
/// softmax takes no notice of it; the mask places kMaskedScore on the
/// future keys and the padding ones), and their maxima, which the segment
/// takes the maximum of (sumStatistics, as a maximum). Then the
/// exponentials of the scores less it, their sum, and the values weighted
/// by them, key by key; the segment sums those (sumStatistics), every core
/// divides by the sum, and the segment's last core sends the chunk's
/// outputs out east. The buffers are declared in AttentionBuffer's order.
void attentionForward(Builder &b, const KernelShape &k, const Layout &layout,
                      int64_t pairs, const AttentionSoftmax &softmax) {
  constexpr ElementType f32 = ElementType::f32;
  KernelProgram &out = b.out;
  // Named, not bound: lambdas capture them (C++17).
  AttentionSizes sizes = attentionSizes(out, k, layout);
  ElementType type = sizes.type;
  int64_t epw = sizes.perWavelet, headSize = sizes.headSize;
  int64_t keys = sizes.keys, chunk = sizes.chunk, chunks = sizes.chunks;
  int64_t queryElements = sizes.rowElements;
  int64_t keyValueElements = ceilDiv(2 * keys * headSize, epw) * epw;
  int64_t valuesAt = keys * headSize, sumsAt = chunk * headSize;
  bool reduce = out.segment > 1;
  // Core `s` of its segment's program.
  auto program = [&](int s) {
    bool last = s + 1 == out.segment;
    CoreProgram p;
    int kv = p.addBuffer("keys and values", keyValueElements, type);
    int query = p.addBuffer("query row", queryElements, type);
    int scores = p.addBuffer("scores", chunk * keys, f32);
    int maxima = p.addBuffer("row maxima", chunk, f32);
    int partials =
        p.addBuffer("partial outputs and sums", chunk * (headSize + 1), f32);
    AttentionTask at(p, chunk, keys);
    at.addLastBuffers(p, chunks * chunk, pairs, softmax);
    int offsets = at.offsets, positions = at.positions, slopes = at.slopes;
    int polynomial = at.rows.polynomial.buffer;
    assert(inBufferOrder({kv, query, scores, maxima, partials},
                         kAttentionMaskOffsets, at) &&
           "the buffers in AttentionBuffer's order");
    RowTask &task = at.task;
    int outputCursor = p.addCursor({headSize, sumsAt});
    int keyCursor = p.addCursor({1, keys});
    int valueCursor = p.addCursor({headSize, valuesAt});
    int offsetCursor = p.addCursor({1, chunks * chunk});
    int pairCursor = p.addCursor({1, pairs});
    Dsd row = Dsd::memory(scores, 0, task.rowCursor);
    Dsd rowMax = scalar(maxima, 0, task.tokenCursor);
    Dsd rowOutput = Dsd::memory(partials, 0, outputCursor);
    Dsd rowSum = scalar(partials, sumsAt, task.tokenCursor);
    const ExponentialRows &rows = at.rows;
    at.loop(pairs, [&] {
      task.vector(Op::Kind::fmov, Dsd::memory(kv), Dsd::in(kKeysValuesColor),
                  Dsd(), keyValueElements, type);
      at.loop(chunks, [&] {
        task.vector(Op::Kind::fmov, Dsd::memory(maxima),
                    at.constant(kAttentionLowest), Dsd(), chunk, f32);
        task.vector(Op::Kind::fmov, Dsd::memory(partials), Dsd::zero(), Dsd(),
                    chunk * (headSize + 1), f32);
        task.eachToken([&] {
          task.vector(Op::Kind::fmov, Dsd::memory(query), Dsd::in(kStreamColor),
                      Dsd(), queryElements, type);
          at.scores(row, rowMax, kv, Dsd::memory(query), headSize, type,
                    softmax, offsets, offsetCursor, Dsd::memory(positions),
                    scalar(slopes, 0, pairCursor));
          at.advance(offsetCursor);
        });
        if (reduce)
          sumStatistics(task.ops, s, out.segment, maxima, chunk,
                        Op::Kind::fmax);
        // The exponentials, their sums and the values they weigh.
        task.eachToken([&] {
          at.exponentials(row, rowMax, rowSum, rows);
          at.loop(keys, [&] {
            task.fmac(rowOutput, rowOutput,
                      Dsd::memory(kv, valuesAt, valueCursor),
                      scalar(polynomial, 0, keyCursor), headSize, type);
            at.advance(valueCursor);
            at.advance(keyCursor);
          });
          at.advance(outputCursor);
        });
        if (reduce)
          sumStatistics(task.ops, s, out.segment, partials,
                        chunk * (headSize + 1));
        // The reciprocals of the sums in place of the maxima, the scores
        // the work row: neither is read again in this chunk.
        at.reciprocalOf(Dsd::memory(maxima), Dsd::memory(partials, sumsAt),
                        Dsd::memory(scores));
        task.eachToken([&] {
          task.fmac(rowOutput, Dsd::zero(), rowOutput,
                    scalar(maxima, 0, task.tokenCursor), headSize, f32);
          if (last)
            task.vector(Op::Kind::fmov, Dsd::out(kAttentionOutputColor),
                        rowOutput, Dsd(), headSize, f32);
          at.advance(outputCursor);
        });
      });
      at.advance(pairCursor);
    });
    p.startActive.push_back(p.addTask(Task{false, -1, std::move(task.ops)}));
    return p;
  };
  b.alongSegments(kStreamColor, pairs * chunks * chunk * (queryElements / epw));
  b.downColumns(kKeysValuesColor, pairs * (keyValueElements / epw));
  b.forEachCore([&](int x, int y, int s) {
    routeAttention(b, x, y, s);
    b.assign(x, y, statisticsPart(s, out.segment), [&] { return program(s); });
  });
}

/// Attention's forward pass key block by key block (the layout's
/// `key_block`), for a core that cannot hold its keys and values: its
/// queries a chunk at a time (`sum_block`) held while every block of keys
/// (transposed) and values streams down the column, the flash way. Per
/// block, query by query, the scores and their running maximum, the
/// partial output and sum rescaled to it when it moves (a one-element
/// exponential), the exponentials, their sum and the values they weigh.
/// After the last block, the segment takes the maximum of the maxima,
/// each core rescales its partials to it, the segment sums them, every
/// core divides by the sum and the segment's last core sends the chunk's
/// outputs out east. The buffers are declared in AttentionBuffer's order,
/// sized for the blocks.
void attentionForwardByKeys(Builder &b, const KernelShape &k,
                            const Layout &layout, int64_t pairs,
                            const AttentionSoftmax &softmax) {
  constexpr ElementType f32 = ElementType::f32;
  KernelProgram &out = b.out;
  // Named, not bound: lambdas capture them (C++17).
  AttentionSizes sizes = attentionSizes(out, k, layout);
  ElementType type = sizes.type;
  int64_t epw = sizes.perWavelet, headSize = sizes.headSize;
  int64_t chunk = sizes.chunk, chunks = sizes.chunks;
  int64_t keyChunk = sizes.keyChunk, keyChunks = sizes.keyChunks;
  int64_t queries = chunks * chunk, rowElements = sizes.rowElements;
  int64_t keyValueElements = ceilDiv(2 * keyChunk * headSize, epw) * epw;
  int64_t valuesAt = keyChunk * headSize, sumsAt = chunk * headSize;
  int64_t workRow = std::max(keyChunk, chunk);
  bool reduce = out.segment > 1;
  // The mask offsets as the backward pass by keys keeps them.
  int64_t firstOffsetsAt = chunk, offsetsAt = chunk + queries;
  auto program = [&](int s) {
    bool last = s + 1 == out.segment;
    CoreProgram p;
    int kv = p.addBuffer("keys and values", keyValueElements, type);
    int query = p.addBuffer("queries", chunk * rowElements, type);
    int scores = p.addBuffer("scores", workRow, f32);
    // Each query's maximum, then a work element.
    int maxima = p.addBuffer("row maxima", 2 * chunk, f32);
    int partials =
        p.addBuffer("partial outputs and sums", chunk * (headSize + 1), f32);
    AttentionTask at(p, chunk, keyChunk);
    at.addLastBuffers(p, chunk + 2 * queries, pairs, softmax, 2 * keyChunk,
                      workRow, /*keyBlocks=*/true);
    int offsets = at.offsets, positions = at.positions, slopes = at.slopes;
    int polynomial = at.rows.polynomial.buffer;
    assert(inBufferOrder({kv, query, scores, maxima, partials},
                         kAttentionMaskOffsets, at) &&
           "the buffers in AttentionBuffer's order");
    RowTask &task = at.task;
    int rowCursor = p.addCursor({rowElements, chunk * rowElements});
    int outputCursor = p.addCursor({headSize, sumsAt});
    int keyCursor = p.addCursor({1, keyChunk});
    int valueCursor = p.addCursor({headSize, valuesAt});
    int chunkCursor = p.addCursor({chunk, queries});
    int pairCursor = p.addCursor({1, pairs});
    Dsd row = Dsd::memory(scores);
    Dsd rowMax = scalar(maxima, 0, task.tokenCursor),
        previous = scalar(maxima, chunk, task.tokenCursor);
    Dsd rowOutput = Dsd::memory(partials, 0, outputCursor);
    Dsd rowSum = scalar(partials, sumsAt, task.tokenCursor);
    Dsd currentOffsets = Dsd::memory(offsets, offsetsAt, chunkCursor);
    const ExponentialRows &rows = at.rows;
    at.loop(pairs, [&] {
      at.loop(chunks, [&] {
        task.vector(Op::Kind::fmov, Dsd::memory(query), Dsd::in(kStreamColor),
                    Dsd(), chunk * rowElements, type);
        task.vector(Op::Kind::fmov, Dsd::memory(maxima),
                    at.constant(kAttentionLowest), Dsd(), chunk, f32);
        task.vector(Op::Kind::fmov, Dsd::memory(partials), Dsd::zero(), Dsd(),
                    chunk * (headSize + 1), f32);
        task.vector(Op::Kind::fmov, currentOffsets,
                    Dsd::memory(offsets, firstOffsetsAt, chunkCursor), Dsd(),
                    chunk, f32);
        task.vector(Op::Kind::fmov, Dsd::memory(positions),
                    Dsd::memory(positions, keyChunk), Dsd(), keyChunk, f32);
        at.loop(keyChunks, [&] {
          task.vector(Op::Kind::fmov, Dsd::memory(kv),
                      Dsd::in(kKeysValuesColor), Dsd(), keyValueElements, type);
          at.clampOffsets(currentOffsets);
          task.eachToken([&] {
            task.vector(Op::Kind::fmov, previous, rowMax, Dsd(), 1, f32);
            at.scores(row, rowMax, kv, Dsd::memory(query, 0, rowCursor),
                      headSize, type, softmax, offsets, task.tokenCursor,
                      Dsd::memory(positions), scalar(slopes, 0, pairCursor));
            // The partial output and sum so far rescaled to the new
            // maximum.
            at.exponentials(previous, rowMax, Dsd(), rows, 1);
            Dsd factor = scalar(polynomial, 0);
            task.vector(Op::Kind::fmul, rowOutput, rowOutput, factor, headSize,
                        f32);
            task.vector(Op::Kind::fmul, rowSum, rowSum, factor, 1, f32);
            at.exponentials(row, rowMax, rowSum, rows);
            at.loop(keyChunk, [&] {
              task.fmac(rowOutput, rowOutput,
                        Dsd::memory(kv, valuesAt, valueCursor),
                        scalar(polynomial, 0, keyCursor), headSize, type);
              at.advance(valueCursor);
              at.advance(keyCursor);
            });
            at.advance(rowCursor);
            at.advance(outputCursor);
          });
          at.stepKeys(currentOffsets, chunk);
        });
        // The segment's maximum, each core's partials rescaled to it and
        // summed, and the division.
        if (reduce) {
          task.vector(Op::Kind::fmov, Dsd::memory(maxima, chunk),
                      Dsd::memory(maxima), Dsd(), chunk, f32);
          sumStatistics(task.ops, s, out.segment, maxima, chunk,
                        Op::Kind::fmax);
          at.exponentials(Dsd::memory(maxima, chunk), Dsd::memory(maxima),
                          Dsd(), rows, chunk);
          task.eachToken([&] {
            task.vector(Op::Kind::fmul, rowOutput, rowOutput,
                        scalar(polynomial, 0, task.tokenCursor), headSize, f32);
            at.advance(outputCursor);
          });
          task.vector(Op::Kind::fmul, Dsd::memory(partials, sumsAt),
                      Dsd::memory(partials, sumsAt), rows.polynomial, chunk,
                      f32);
          sumStatistics(task.ops, s, out.segment, partials,
                        chunk * (headSize + 1));
        }
        at.reciprocalOf(Dsd::memory(maxima), Dsd::memory(partials, sumsAt),
                        Dsd::memory(scores));
        task.eachToken([&] {
          task.fmac(rowOutput, Dsd::zero(), rowOutput,
                    scalar(maxima, 0, task.tokenCursor), headSize, f32);
          if (last)
            task.vector(Op::Kind::fmov, Dsd::out(kAttentionOutputColor),
                        rowOutput, Dsd(), headSize, f32);
          at.advance(outputCursor);
        });
        at.advance(chunkCursor);
      });
      at.advance(pairCursor);
    });
    p.startActive.push_back(p.addTask(Task{false, -1, std::move(task.ops)}));
    return p;
  };
  b.alongSegments(kStreamColor, pairs * chunks * chunk * (rowElements / epw));
  b.downColumns(kKeysValuesColor,
                pairs * chunks * keyChunks * (keyValueElements / epw));
  b.forEachCore([&](int x, int y, int s) {
    routeAttention(b, x, y, s);
    b.assign(x, y, statisticsPart(s, out.segment), [&] { return program(s); });
  });
}

/// Attention's backward pass with values, on one block of query groups by
/// key groups, for `pairs` (sequence, head) pairs one after another, the
/// flash way: the probabilities are recomputed, never stored beyond the
/// core's chunk of queries. Each pair's keys (transposed, then as rows) and
/// values (transposed) stream down the block's columns into memory; its
/// queries, then their output gradients, a chunk at a time, along the
/// rows. Per chunk, a core takes its scores and maxima as the forward pass
/// does (the segment's maximum, the exponentials and their sums, the
/// segment's sums, the reciprocal), the probabilities P; then, query by
/// query, dP = dO V^T over its keys, the sum of P dP (the segment sums it),
/// and dV += P^T dO key by key; then dS = scale P (dP - sum), dK += dS^T Q
/// and the partial dQ = dS K key by key. The segment sums dQ and its last
/// core sends it out east. After the pair's chunks, each column of query
/// groups sums dK and dV down a chain (chainOps), the last sending them out
/// south. The buffers are declared in AttentionGradBuffer's order.
void attentionBackward(Builder &b, const KernelShape &k, const Layout &layout,
                       int64_t pairs, const AttentionSoftmax &softmax) {
  constexpr ElementType f32 = ElementType::f32;
  KernelProgram &out = b.out;
  // Named, not bound: lambdas capture them (C++17).
  AttentionSizes sizes = attentionSizes(out, k, layout);
  ElementType type = sizes.type;
  int64_t epw = sizes.perWavelet, headSize = sizes.headSize;
  int64_t keys = sizes.keys, chunk = sizes.chunk, chunks = sizes.chunks;
  int64_t rowElements = sizes.rowElements;
  int64_t keyElements = ceilDiv(keys * headSize, epw) * epw;
  int64_t gradients = 2 * keys * headSize;
  bool reduce = out.segment > 1;
  // Core `s` of its segment's program, step `y` of its column's chain
  // (`colors`).
  auto program = [&](int s, int y, std::pair<int, int> colors) {
    bool last = s + 1 == out.segment;
    CoreProgram p;
    int keysT = p.addBuffer("keys transposed", keyElements, type);
    int keyRows = p.addBuffer("keys", keyElements, type);
    int valuesT = p.addBuffer("values transposed", keyElements, type);
    int queryRows = p.addBuffer("queries", chunk * rowElements, type);
    int outputGrads =
        p.addBuffer("output gradients", chunk * rowElements, type);
    int probabilities = p.addBuffer("probabilities", chunk * keys, f32);
    int probabilityGrads =
        p.addBuffer("probability gradients", chunk * keys, f32);
    int stats = p.addBuffer("statistics", 4 * chunk, f32);
    int queryGrads = p.addBuffer("query gradients", chunk * headSize, f32);
    int keyValueGrads = p.addBuffer("key and value gradients", gradients, f32);
    AttentionTask at(p, chunk, keys);
    at.addLastBuffers(p, chunks * chunk, pairs, softmax);
    int offsets = at.offsets, positions = at.positions, slopes = at.slopes;
    assert(inBufferOrder({keysT, keyRows, valuesT, queryRows, outputGrads,
                          probabilities, probabilityGrads, stats, queryGrads,
                          keyValueGrads},
                         kAttentionGradMaskOffsets, at) &&
           "the buffers in AttentionGradBuffer's order");
    RowTask &task = at.task;
    int rowCursor = p.addCursor({rowElements, chunk * rowElements});
    int gradCursor = p.addCursor({headSize, chunk * headSize});
    int elementCursor = p.addCursor({1, chunk * keys});
    int keyCursor = p.addCursor({headSize, keys * headSize});
    int offsetCursor = p.addCursor({1, chunks * chunk});
    int pairCursor = p.addCursor({1, pairs});
    Dsd row = Dsd::memory(probabilities, 0, task.rowCursor);
    Dsd gradRow = Dsd::memory(probabilityGrads, 0, task.rowCursor);
    Dsd query = Dsd::memory(queryRows, 0, rowCursor);
    Dsd outputGrad = Dsd::memory(outputGrads, 0, rowCursor);
    Dsd rowMax = scalar(stats, 0, task.tokenCursor),
        rowSum = scalar(stats, chunk, task.tokenCursor),
        rowDot = scalar(stats, 2 * chunk, task.tokenCursor),
        rowReciprocal = scalar(stats, 3 * chunk, task.tokenCursor);
    const ExponentialRows &rows = at.rows;
    Dsd valueGrad = Dsd::memory(keyValueGrads, keys * headSize, keyCursor);
    Dsd keyGrad = Dsd::memory(keyValueGrads, 0, keyCursor);
    Dsd key = Dsd::memory(keyRows, 0, keyCursor);
    Dsd queryGrad = Dsd::memory(queryGrads, 0, gradCursor);
    Dsd gradScore = scalar(probabilityGrads, 0, elementCursor);
    at.loop(pairs, [&] {
      for (int buffer : {keysT, keyRows, valuesT})
        task.vector(Op::Kind::fmov, Dsd::memory(buffer),
                    Dsd::in(kKeysValuesColor), Dsd(), keyElements, type);
      task.vector(Op::Kind::fmov, Dsd::memory(keyValueGrads), Dsd::zero(),
                  Dsd(), gradients, f32);
      at.loop(chunks, [&] {
        for (int buffer : {queryRows, outputGrads})
          task.vector(Op::Kind::fmov, Dsd::memory(buffer),
                      Dsd::in(kStreamColor), Dsd(), chunk * rowElements, type);
        task.vector(Op::Kind::fmov, Dsd::memory(stats),
                    at.constant(kAttentionLowest), Dsd(), chunk, f32);
        task.vector(Op::Kind::fmov, Dsd::memory(stats, chunk), Dsd::zero(),
                    Dsd(), 3 * chunk, f32);
        task.vector(Op::Kind::fmov, Dsd::memory(queryGrads), Dsd::zero(), Dsd(),
                    chunk * headSize, f32);
        // The probabilities, recomputed.
        task.eachToken([&] {
          at.scores(row, rowMax, keysT, query, headSize, type, softmax, offsets,
                    offsetCursor, Dsd::memory(positions),
                    scalar(slopes, 0, pairCursor));
          at.advance(rowCursor);
          at.advance(offsetCursor);
        });
        if (reduce)
          sumStatistics(task.ops, s, out.segment, stats, chunk, Op::Kind::fmax);
        task.eachToken([&] {
          at.exponentials(row, rowMax, rowSum, rows);
          task.vector(Op::Kind::fmov, row, rows.polynomial, Dsd(), keys, f32);
        });
        if (reduce)
          sumStatistics(task.ops, s, out.segment, stats, chunk, Op::Kind::fadd,
                        chunk);
        // The probabilities' gradients are the work row: they are made
        // after.
        at.reciprocalOf(Dsd::memory(stats, 3 * chunk),
                        Dsd::memory(stats, chunk),
                        Dsd::memory(probabilityGrads));
        // P, dP = dO V^T, the sum of P dP, and dV += P^T dO.
        task.eachToken([&] {
          task.fmac(row, Dsd::zero(), row, rowReciprocal, keys, f32);
          at.products(gradRow, valuesT, outputGrad, headSize, type);
          task.vector(Op::Kind::fmul, rows.polynomial, row, gradRow, keys, f32);
          task.vector(Op::Kind::fadd, rowDot, rowDot, rows.polynomial, keys,
                      f32);
          at.loop(keys, [&] {
            task.fmac(valueGrad, valueGrad, outputGrad,
                      scalar(probabilities, 0, elementCursor), headSize, type);
            at.advance(keyCursor);
            at.advance(elementCursor);
          });
          at.advance(rowCursor);
        });
        if (reduce)
          sumStatistics(task.ops, s, out.segment, stats, chunk, Op::Kind::fadd,
                        2 * chunk);
        // dS = scale P (dP - sum), dK += dS^T Q, dQ = dS K.
        task.eachToken([&] {
          task.fmac(gradRow, gradRow, rowDot, at.constant(kAttentionMinusOne),
                    keys, f32);
          task.vector(Op::Kind::fmul, gradRow, gradRow, row, keys, f32);
          task.vector(Op::Kind::fmul, gradRow, gradRow,
                      at.constant(kAttentionScale), keys, f32);
          at.loop(keys, [&] {
            task.fmac(keyGrad, keyGrad, query, gradScore, headSize, type);
            task.fmac(queryGrad, queryGrad, key, gradScore, headSize, type);
            at.advance(keyCursor);
            at.advance(elementCursor);
          });
          at.advance(rowCursor);
          at.advance(gradCursor);
        });
        if (reduce)
          sumStatistics(task.ops, s, out.segment, queryGrads, chunk * headSize);
        if (last)
          task.vector(Op::Kind::fmov, Dsd::out(kAttentionOutputColor),
                      Dsd::memory(queryGrads), Dsd(), chunk * headSize, f32);
      });
      chainOps(task.ops, y, keyValueGrads, gradients, colors,
               /*another=*/false);
      at.advance(pairCursor);
    });
    p.startActive.push_back(p.addTask(Task{false, -1, std::move(task.ops)}));
    return p;
  };
  b.alongSegments(kStreamColor,
                  pairs * 2 * chunks * chunk * (rowElements / epw));
  b.downColumns(kKeysValuesColor, pairs * 3 * (keyElements / epw));
  b.forEachCore([&](int x, int y, int s) {
    routeAttention(b, x, y, s);
    std::pair<int, int> colors =
        b.chainStep(x, y, y, out.rows, south, kKeyValueGradColor);
    b.assign(x, y, statisticsPart(s, out.segment) * 8 + chainPart(y, out.rows),
             [&] { return program(s, y, colors); });
  });
}

/// Attention's backward pass key block by key block (the layout's
/// `key_block`), for a core that cannot hold its keys' f32 gradients: the
/// keys and values stream down the block's columns a block at a time, the
/// queries and their output gradients along the rows a chunk at a time
/// (`sum_block`), and nothing is kept for every key. Three sweeps per
/// pair, each recomputing the scores (the forward pass's statistics are
/// not kept): the statistics, key block by key block, query by query the
/// running maximum with the sum of exponentials and the sum of their
/// products with dP rescaled to it, then the segment's maximum, each core's
/// sums rescaled to it and summed along the segment, the reciprocal, and
/// D = sum(P dP); the key and value gradients, key block by key block: P,
/// dP, dV += P^T dO, dS = scale P (dP - D), dK += dS^T Q for every query,
/// then the block's dK and dV down the column's chain (chainOps) and out
/// south; the query gradients, chunk by chunk: dQ += dS K over every key
/// block, summed along the segment and sent out east by its last core.
/// A chunk's mask offsets are the queries' first block's, stepped a block
/// at a time and clamped to the window. The buffers are declared in
/// AttentionGradBuffer's order, sized for the blocks.
void attentionBackwardByKeys(Builder &b, const KernelShape &k,
                             const Layout &layout, int64_t pairs,
                             const AttentionSoftmax &softmax) {
  constexpr ElementType f32 = ElementType::f32;
  KernelProgram &out = b.out;
  // Named, not bound: lambdas capture them (C++17).
  AttentionSizes sizes = attentionSizes(out, k, layout);
  ElementType type = sizes.type;
  int64_t epw = sizes.perWavelet, headSize = sizes.headSize;
  int64_t chunk = sizes.chunk, chunks = sizes.chunks;
  int64_t keyChunk = sizes.keyChunk, keyChunks = sizes.keyChunks;
  int64_t queries = chunks * chunk, rowElements = sizes.rowElements;
  int64_t keyElements = ceilDiv(keyChunk * headSize, epw) * epw;
  int64_t gradients = 2 * keyChunk * headSize;
  bool reduce = out.segment > 1;
  // The statistics, a query's each: the maximum, the sum of exponentials
  // (then of probabilities: its reciprocal's place), the sum of their
  // products with dP (then D), and a work element; then a chunk's copy of
  // the maximum, the reciprocal and D.
  int64_t maxAt = 0, sumAt = queries, dotAt = 2 * queries, workAt = 3 * queries,
          chunkAt = 4 * queries;
  // The mask offsets: the chunk's, clamped; every query's for the first
  // key block; and every query's for the current one.
  int64_t firstOffsetsAt = chunk, offsetsAt = chunk + queries;
  auto program = [&](int s, int y, std::pair<int, int> colors) {
    bool last = s + 1 == out.segment;
    CoreProgram p;
    int keysT = p.addBuffer("keys transposed", keyElements, type);
    int keyRows = p.addBuffer("keys", keyElements, type);
    int valuesT = p.addBuffer("values transposed", keyElements, type);
    int queryRows = p.addBuffer("queries", chunk * rowElements, type);
    int outputGrads =
        p.addBuffer("output gradients", chunk * rowElements, type);
    int probabilities = p.addBuffer("probabilities", keyChunk, f32);
    int probabilityGrads = p.addBuffer("probability gradients", keyChunk, f32);
    int stats = p.addBuffer("statistics", 4 * queries + 3 * chunk, f32);
    int queryGrads = p.addBuffer("query gradients", chunk * headSize, f32);
    int keyValueGrads = p.addBuffer("key and value gradients", gradients, f32);
    AttentionTask at(p, chunk, keyChunk);
    at.addLastBuffers(p, chunk + 2 * queries, pairs, softmax, 2 * keyChunk,
                      std::max(keyChunk, queries), /*keyBlocks=*/true);
    int offsets = at.offsets, positions = at.positions, slopes = at.slopes;
    assert(inBufferOrder({keysT, keyRows, valuesT, queryRows, outputGrads,
                          probabilities, probabilityGrads, stats, queryGrads,
                          keyValueGrads},
                         kAttentionGradMaskOffsets, at) &&
           "the buffers in AttentionGradBuffer's order");
    RowTask &task = at.task;
    int rowCursor = p.addCursor({rowElements, chunk * rowElements});
    int gradCursor = p.addCursor({headSize, chunk * headSize});
    int elementCursor = p.addCursor({1, keyChunk});
    int keyCursor = p.addCursor({headSize, keyChunk * headSize});
    int queryCursor = p.addCursor({1, queries});
    int chunkCursor = p.addCursor({chunk, queries});
    int pairCursor = p.addCursor({1, pairs});
    Dsd row = Dsd::memory(probabilities),
        gradRow = Dsd::memory(probabilityGrads);
    Dsd query = Dsd::memory(queryRows, 0, rowCursor);
    Dsd outputGrad = Dsd::memory(outputGrads, 0, rowCursor);
    Dsd valueGrad = Dsd::memory(keyValueGrads, keyChunk * headSize, keyCursor);
    Dsd keyGrad = Dsd::memory(keyValueGrads, 0, keyCursor);
    Dsd key = Dsd::memory(keyRows, 0, keyCursor);
    Dsd queryGrad = Dsd::memory(queryGrads, 0, gradCursor);
    Dsd probability = scalar(probabilities, 0, elementCursor);
    Dsd gradScore = scalar(probabilityGrads, 0, elementCursor);
    Dsd slope = scalar(slopes, 0, pairCursor);
    Dsd minusOne = at.constant(kAttentionMinusOne);
    const ExponentialRows &rows = at.rows;
    auto in = [&](int buffer, int color, int64_t n) {
      task.vector(Op::Kind::fmov, Dsd::memory(buffer), Dsd::in(color), Dsd(), n,
                  type);
    };
    auto queriesIn = [&] {
      in(queryRows, kStreamColor, chunk * rowElements);
      in(outputGrads, kStreamColor, chunk * rowElements);
    };
    auto firstBlock = [&](Dsd currentOffsets, Dsd firstOffsets, int64_t n) {
      task.vector(Op::Kind::fmov, currentOffsets, firstOffsets, Dsd(), n, f32);
      task.vector(Op::Kind::fmov, Dsd::memory(positions),
                  Dsd::memory(positions, keyChunk), Dsd(), keyChunk, f32);
    };
    // P over the block for a query of maximum `rowMax` and reciprocal sum
    // `reciprocal`, and dP = dO V^T; then dS = scale P (dP - `dot`).
    auto recomputeProbabilities = [&](Dsd rowMax, Dsd reciprocal) {
      at.scores(row, Dsd(), keysT, query, headSize, type, softmax, offsets,
                task.tokenCursor, Dsd::memory(positions), slope);
      at.exponentials(row, rowMax, Dsd(), rows);
      task.fmac(row, Dsd::zero(), rows.polynomial, reciprocal, keyChunk, f32);
      at.products(gradRow, valuesT, outputGrad, headSize, type);
    };
    auto scoreGradients = [&](Dsd dot) {
      task.fmac(gradRow, gradRow, dot, minusOne, keyChunk, f32);
      task.vector(Op::Kind::fmul, gradRow, gradRow, row, keyChunk, f32);
      task.vector(Op::Kind::fmul, gradRow, gradRow,
                  at.constant(kAttentionScale), keyChunk, f32);
    };
    auto eachKey = [&](const std::function<void()> &body) {
      at.loop(keyChunk, [&] {
        body();
        at.advance(keyCursor);
        at.advance(elementCursor);
      });
    };
    Dsd currentOffsets = Dsd::memory(offsets, offsetsAt),
        firstOffsets = Dsd::memory(offsets, firstOffsetsAt);
    at.loop(pairs, [&] {
      // The statistics.
      task.vector(Op::Kind::fmov, Dsd::memory(stats, maxAt),
                  at.constant(kAttentionLowest), Dsd(), queries, f32);
      task.vector(Op::Kind::fmov, Dsd::memory(stats, sumAt), Dsd::zero(), Dsd(),
                  2 * queries, f32);
      firstBlock(currentOffsets, firstOffsets, queries);
      Dsd rowMax = scalar(stats, maxAt, queryCursor),
          rowSum = scalar(stats, sumAt, queryCursor),
          rowDot = scalar(stats, dotAt, queryCursor),
          previous = scalar(stats, workAt, queryCursor);
      at.loop(keyChunks, [&] {
        in(keysT, kKeysValuesColor, keyElements);
        in(valuesT, kKeysValuesColor, keyElements);
        at.loop(chunks, [&] {
          queriesIn();
          at.clampOffsets(Dsd::memory(offsets, offsetsAt, chunkCursor));
          task.eachToken([&] {
            task.vector(Op::Kind::fmov, previous, rowMax, Dsd(), 1, f32);
            at.scores(row, rowMax, keysT, query, headSize, type, softmax,
                      offsets, task.tokenCursor, Dsd::memory(positions), slope);
            // The sums so far rescaled to the new maximum.
            at.exponentials(previous, rowMax, Dsd(), rows, 1);
            task.vector(Op::Kind::fmul, rowSum, rowSum, rows.polynomial, 1,
                        f32);
            task.vector(Op::Kind::fmul, rowDot, rowDot, rows.polynomial, 1,
                        f32);
            at.exponentials(row, rowMax, rowSum, rows);
            at.products(gradRow, valuesT, outputGrad, headSize, type);
            task.vector(Op::Kind::fmul, gradRow, gradRow, rows.polynomial,
                        keyChunk, f32);
            task.vector(Op::Kind::fadd, rowDot, rowDot, gradRow, keyChunk, f32);
            at.advance(rowCursor);
            at.advance(queryCursor);
          });
          at.advance(chunkCursor);
        });
        at.stepKeys(currentOffsets, queries);
      });
      // The segment's maximum, each core's sums rescaled to it and summed,
      // the reciprocal and D.
      if (reduce) {
        task.vector(Op::Kind::fmov, Dsd::memory(stats, workAt),
                    Dsd::memory(stats, maxAt), Dsd(), queries, f32);
        sumStatistics(task.ops, s, out.segment, stats, queries, Op::Kind::fmax,
                      maxAt);
        at.exponentials(Dsd::memory(stats, workAt), Dsd::memory(stats, maxAt),
                        Dsd(), rows, queries);
        for (int64_t sums : {sumAt, dotAt})
          task.vector(Op::Kind::fmul, Dsd::memory(stats, sums),
                      Dsd::memory(stats, sums), rows.polynomial, queries, f32);
        sumStatistics(task.ops, s, out.segment, stats, 2 * queries,
                      Op::Kind::fadd, sumAt);
      }
      at.reciprocalOf(Dsd::memory(stats, workAt), Dsd::memory(stats, sumAt),
                      rows.fraction, queries);
      task.vector(Op::Kind::fmul, Dsd::memory(stats, dotAt),
                  Dsd::memory(stats, dotAt), Dsd::memory(stats, workAt),
                  queries, f32);
      Dsd reciprocal = scalar(stats, workAt, queryCursor);
      // The key and value gradients, block by block.
      firstBlock(currentOffsets, firstOffsets, queries);
      at.loop(keyChunks, [&] {
        in(keysT, kKeysValuesColor, keyElements);
        in(valuesT, kKeysValuesColor, keyElements);
        task.vector(Op::Kind::fmov, Dsd::memory(keyValueGrads), Dsd::zero(),
                    Dsd(), gradients, f32);
        at.loop(chunks, [&] {
          queriesIn();
          at.clampOffsets(Dsd::memory(offsets, offsetsAt, chunkCursor));
          task.eachToken([&] {
            recomputeProbabilities(rowMax, reciprocal);
            eachKey([&] {
              task.fmac(valueGrad, valueGrad, outputGrad, probability, headSize,
                        type);
            });
            scoreGradients(rowDot);
            eachKey([&] {
              task.fmac(keyGrad, keyGrad, query, gradScore, headSize, type);
            });
            at.advance(rowCursor);
            at.advance(queryCursor);
          });
          at.advance(chunkCursor);
        });
        chainOps(task.ops, y, keyValueGrads, gradients, colors,
                 /*another=*/false);
        at.stepKeys(currentOffsets, queries);
      });
      // The query gradients, chunk by chunk, over every key block; the
      // chunk's statistics copied where the token cursor reads them.
      Dsd chunkMax = scalar(stats, chunkAt, task.tokenCursor),
          chunkReciprocal = scalar(stats, chunkAt + chunk, task.tokenCursor),
          chunkDot = scalar(stats, chunkAt + 2 * chunk, task.tokenCursor);
      at.loop(chunks, [&] {
        queriesIn();
        for (auto [to, from] : {std::pair{chunkAt, maxAt},
                                {chunkAt + chunk, workAt},
                                {chunkAt + 2 * chunk, dotAt}})
          task.vector(Op::Kind::fmov, Dsd::memory(stats, to),
                      Dsd::memory(stats, from, chunkCursor), Dsd(), chunk, f32);
        task.vector(Op::Kind::fmov, Dsd::memory(queryGrads), Dsd::zero(), Dsd(),
                    chunk * headSize, f32);
        Dsd chunkOffsets = Dsd::memory(offsets, offsetsAt, chunkCursor);
        firstBlock(chunkOffsets,
                   Dsd::memory(offsets, firstOffsetsAt, chunkCursor), chunk);
        at.loop(keyChunks, [&] {
          in(keysT, kKeysValuesColor, keyElements);
          in(keyRows, kKeysValuesColor, keyElements);
          in(valuesT, kKeysValuesColor, keyElements);
          at.clampOffsets(chunkOffsets);
          task.eachToken([&] {
            recomputeProbabilities(chunkMax, chunkReciprocal);
            scoreGradients(chunkDot);
            eachKey([&] {
              task.fmac(queryGrad, queryGrad, key, gradScore, headSize, type);
            });
            at.advance(rowCursor);
            at.advance(gradCursor);
          });
          at.stepKeys(chunkOffsets, chunk);
        });
        if (reduce)
          sumStatistics(task.ops, s, out.segment, queryGrads, chunk * headSize);
        if (last)
          task.vector(Op::Kind::fmov, Dsd::out(kAttentionOutputColor),
                      Dsd::memory(queryGrads), Dsd(), chunk * headSize, f32);
        at.advance(chunkCursor);
      });
      at.advance(pairCursor);
    });
    p.startActive.push_back(p.addTask(Task{false, -1, std::move(task.ops)}));
    return p;
  };
  b.alongSegments(kStreamColor, pairs * (2 * keyChunks + 1) * chunks * 2 *
                                    chunk * (rowElements / epw));
  b.downColumns(kKeysValuesColor,
                pairs * keyChunks * (4 + 3 * chunks) * (keyElements / epw));
  b.forEachCore([&](int x, int y, int s) {
    routeAttention(b, x, y, s);
    std::pair<int, int> colors =
        b.chainStep(x, y, y, out.rows, south, kKeyValueGradColor);
    b.assign(x, y, statisticsPart(s, out.segment) * 8 + chainPart(y, out.rows),
             [&] { return program(s, y, colors); });
  });
}

} // namespace

std::string segmentsRefusal(const Layout &layout, const wafer::Rect &rect) {
  if (layout.tokenGroups <= wafer::tokenGroupsOn(rect, layout.featureGroups))
    return "";
  return "its layout of " + std::to_string(layout.tokenGroups) + " x " +
         std::to_string(layout.featureGroups) + " groups does not fit its " +
         std::to_string(rect.w) + " x " + std::to_string(rect.h) +
         " rectangle in segments along its rows";
}

wafer::Layout rectangleLayout(int width, int height) { return {height, width}; }

MeshConfig meshConfig(const target::WaferTargetModel &target) {
  MeshConfig config;
  config.colors = static_cast<int>(target.getNumColors());
  config.queueDepth = static_cast<int>(target.getRouterQueueWavelets());
  config.activationCycles = target.getTaskActivationCycles();
  config.rampLatencyCycles = target.getRampLatencyCycles();
  config.sramBytes = target.getCoreSramBytes();
  config.reservedBytes = target.getReservedBytes();
  config.readBytesPerCycle = target.getSramReadBytesPerCycle();
  config.writeBytesPerCycle = target.getSramWriteBytesPerCycle();
  config.mixedFmacs = target.getMixedFmacsPerCycle();
  config.f32Fmacs = target.getF32FmacsPerCycle();
  config.halfOps = target.getHalfOpsPerCycle();
  config.f32Ops = target.getF32OpsPerCycle();
  return config;
}

std::optional<MeshResult>
simulateWithValues(const MeshProgram &mesh,
                   const target::WaferTargetModel &target,
                   const CoreMemoryAccess &memory, std::string &error) {
  MeshConfig config = meshConfig(target);
  config.values = true;
  return simulate(mesh, config, error, memory);
}

SegmentGrid segmentGrid(const Layout &layout, const wafer::Rect &rect) {
  return {static_cast<int>(layout.featureGroups),
          static_cast<int>(wafer::tokenRowsOn(rect, layout.tokenGroups))};
}

KernelProgram buildKernelProgram(const KernelShape &k, const Layout &layout,
                                 int64_t microBatch,
                                 const target::WaferTargetModel &target,
                                 const wafer::Rect &rect,
                                 const KernelProgramOptions &options) {
  int64_t gt = layout.tokenGroups;
  auto [segment, rows] = segmentGrid(layout, rect);
  int columns = 1;
  if (options.allTokenGroups && k.kind != KernelKind::attention)
    columns = static_cast<int>(std::clamp<int64_t>(
        ceilDiv(gt, rows), 1, std::max<int64_t>(1, rect.w / segment)));
  KernelProgram out{MeshProgram(segment * columns, rows)};
  out.rows = rows;
  out.segment = segment;
  out.segmentColumns = columns;
  out.tokenGroup.assign(out.mesh.width * rows, -1);
  out.featureGroup.assign(out.mesh.width * rows, -1);
  Builder b(out);
  b.forEachCore([&](int x, int y, int s) {
    int64_t token = static_cast<int64_t>(x / segment) * rows + y;
    if (token < gt) {
      out.tokenGroup[out.mesh.index(x, y)] = static_cast<int>(token);
      out.featureGroup[out.mesh.index(x, y)] = s;
    }
  });
  ElementType type = elementTypeOf(k.elementBytes);
  // A weight kernel's or token sum's f32 sums, block by block.
  SumBlockShape sums = sumBlockShape(k, layout, microBatch);
  if (sums.blockable()) {
    out.sums = sums;
    out.blockColumns = sums.blockColumns(layout.sumBlock);
    out.blocks = ceilDiv(sums.columns, out.blockColumns);
  }
  switch (k.kind) {
  case KernelKind::weight_matmul:
  case KernelKind::weight_grad:
    if (sums.blockable())
      streamedProduct(b, sums, type, k.kind == KernelKind::weight_matmul,
                      wafer::choosesOnChain(k, layout) ? &k : nullptr);
    else
      residentWeightGrad(b, k, layout, microBatch, type);
    break;
  case KernelKind::attention: {
    // One head per sequence: the micro-batch is the pairs. The softmax's
    // constants do not change the time.
    AttentionSoftmax softmax =
        options.attentionSoftmax.value_or(AttentionSoftmax{
            1.0 / std::sqrt(static_cast<double>(k.contracted)), true, false});
    bool gradient = k.function == wafer::RowFunction::attentionGrad;
    if (gradient && layout.keyBlock > 0)
      attentionBackwardByKeys(b, k, layout, microBatch, softmax);
    else if (gradient)
      attentionBackward(b, k, layout, microBatch, softmax);
    else if (layout.keyBlock > 0)
      attentionForwardByKeys(b, k, layout, microBatch, softmax);
    else
      attentionForward(b, k, layout, microBatch, softmax);
    break;
  }
  case KernelKind::token_sum:
    tokenSum(b, k, layout, microBatch);
    break;
  case KernelKind::reduction:
  case KernelKind::elementwise:
  case KernelKind::embedding:
    if (wafer::isNormGradient(k.function))
      normGradKernel(b, k, layout, microBatch);
    else if (k.function == wafer::RowFunction::crossEntropyGrad)
      lossGradKernel(b, k, layout, microBatch, options.lossScale);
    else if (k.function == wafer::RowFunction::crossEntropy)
      crossEntropyKernel(b, k, layout, microBatch, options);
    else if (k.function == wafer::RowFunction::map)
      mapKernel(b, k, layout, microBatch);
    else if (k.function == wafer::RowFunction::gather)
      gatherKernel(b, k, layout, microBatch, options.tableScale);
    else if (k.function == wafer::RowFunction::scatterAdd)
      scatterAddKernel(b, k, layout, microBatch, options.tableScale);
    else if (k.function != wafer::RowFunction::other)
      normKernel(b, k, layout, microBatch, options.epsilon);
    else
      rowKernel(b, k, layout, microBatch);
    break;
  }
  return out;
}

std::vector<Wavelet> wavelets(const std::vector<float> &elements,
                              int64_t perWavelet) {
  std::vector<Wavelet> out;
  for (size_t e = 0; e < elements.size(); e += perWavelet)
    out.push_back({elements[e], perWavelet > 1 && e + 1 < elements.size()
                                    ? elements[e + 1]
                                    : 0.0f});
  return out;
}

void forEachDrained(const MeshProgram &mesh, const MeshResult &run,
                    llvm::function_ref<void(int, int64_t, float)> fn,
                    std::optional<Port> port) {
  int record = 0;
  for (const Drain &drain : mesh.drains) {
    if (!drain.record)
      continue;
    const std::vector<Wavelet> &out = run.drained[record++];
    if (port && drain.port != *port)
      continue;
    int core = mesh.index(drain.x, drain.y);
    for (size_t w = 0; w < out.size(); ++w)
      fn(core, static_cast<int64_t>(w), out[w].lo);
  }
}

void embedProgram(MeshProgram &mesh, const MeshProgram &part, int x, int y) {
  int first = static_cast<int>(mesh.programs.size());
  for (const CoreProgram &program : part.programs)
    mesh.programs.push_back(program);
  for (int py = 0; py < part.height; ++py)
    for (int px = 0; px < part.width; ++px) {
      int from = part.index(px, py), to = mesh.index(x + px, y + py);
      mesh.routes[to].append(part.routes[from].begin(),
                             part.routes[from].end());
      if (part.programOf[from] >= 0)
        mesh.programOf[to] = first + part.programOf[from];
    }
  for (Injector in : part.injectors) {
    in.x += x;
    in.y += y;
    mesh.injectors.push_back(std::move(in));
  }
  for (Drain drain : part.drains) {
    drain.x += x;
    drain.y += y;
    mesh.drains.push_back(drain);
  }
}

} // namespace cgpt::sim::mesh
