//===- EmbeddingPrograms.cpp - the embedding's programs -------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "ProgramBuilder.h"

#include <cassert>
#include <tuple>

namespace cgpt::sim::mesh::programs {

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

} // namespace cgpt::sim::mesh::programs
