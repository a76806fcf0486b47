//===- AttentionPrograms.cpp - attention's programs -----------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "ProgramBuilder.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace cgpt::sim::mesh::programs {

namespace {

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
  /// `work` a row of as many (programs::reciprocalOf).
  void reciprocalOf(Dsd reciprocal, Dsd sums, Dsd work, int64_t n = 0) {
    programs::reciprocalOf(task, reciprocal, sums, work, n > 0 ? n : queries,
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

} // namespace

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

} // namespace cgpt::sim::mesh::programs
