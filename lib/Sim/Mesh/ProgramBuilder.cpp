//===- ProgramBuilder.cpp - what the kernels' programs share --------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "ProgramBuilder.h"

#include "cgpt/Dialect/Dataflow/IR/RowOperations.h"

namespace cgpt::sim::mesh::programs {

std::pair<int, int> Builder::columnsChainStep(int x, int y, int first) {
  int rows = out.rows, segment = out.segment;
  int column = x / segment, s = x % segment;
  int step = column * rows + y;
  bool lastOfColumn = y + 1 == rows;
  bool lastColumn = column + 1 == out.segmentColumns;
  int in = y == 0 && column > 0 ? crossingColor(first, column - 1, s)
                                : first + (step + 1) % 2;
  int outColor = lastOfColumn && !lastColumn ? crossingColor(first, column, s)
                                             : first + step % 2;
  // A column's first core takes the crossing in: cross() routes it there.
  if (y > 0)
    route(x, y, in, bit(north), bit(ramp));
  if (!lastOfColumn || lastColumn)
    route(x, y, outColor, bit(ramp), bit(south));
  if (lastOfColumn && lastColumn)
    mesh.drains.push_back({x, y, south, outColor, true});
  else if (lastOfColumn)
    cross(x, s, outColor);
  return {in, outColor};
}

int Builder::crossingColor(int first, int column, int s) const {
  int band = (out.segment - 1 - s) / out.rows;
  return first + 2 + 2 * band + column % 2;
}

int Builder::crossingRow(int s) const {
  return out.rows - 1 - (out.segment - 1 - s) % out.rows;
}

void Builder::cross(int x, int s, int color) {
  int bottom = out.rows - 1, row = crossingRow(s), to = x + out.segment;
  if (row == bottom) {
    route(x, bottom, color, bit(ramp), bit(east));
  } else {
    route(x, bottom, color, bit(ramp), bit(north));
    for (int y = bottom - 1; y > row; --y)
      route(x, y, color, bit(south), bit(north));
    route(x, row, color, bit(south), bit(east));
  }
  for (int at = x + 1; at < to; ++at)
    route(at, row, color, bit(west), bit(east));
  if (row == 0) {
    route(to, 0, color, bit(west), bit(ramp));
    return;
  }
  route(to, row, color, bit(west), bit(north));
  for (int y = row - 1; y > 0; --y)
    route(to, y, color, bit(south), bit(north));
  route(to, 0, color, bit(south), bit(ramp));
}

Op chainOp(int step, Dsd sums, int64_t count, std::pair<int, int> colors) {
  auto [in, out] = colors;
  if (step == 0)
    return Op::vector(Op::Kind::fmov, Dsd::out(out), sums, Dsd(), count,
                      ElementType::f32);
  return Op::vector(Op::Kind::fadd, Dsd::out(out), Dsd::in(in), sums, count,
                    ElementType::f32);
}

void chainOps(std::vector<Op> &body, int step, int buffer, int64_t count,
              std::pair<int, int> colors, bool another) {
  body.push_back(chainOp(step, Dsd::memory(buffer), count, colors));
  if (another)
    body.push_back(Op::vector(Op::Kind::fmov, Dsd::memory(buffer), Dsd::zero(),
                              Dsd(), count, ElementType::f32));
}

std::pair<int64_t, int64_t> rowBlock(KernelProgram &out, const KernelShape &k,
                                     const Layout &layout, int64_t microBatch) {
  out.tokens = ceilDiv(microBatch * k.rows, layout.tokenGroups);
  out.features = ceilDiv(k.columns, layout.featureGroups);
  return {out.tokens, out.features};
}

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

void sumStatistics(std::vector<Op> &body, int s, int segment, int stats,
                   int64_t count, Op::Kind combine, int64_t at) {
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

void fusedOps(std::vector<Op> &ops, const KernelShape &k, Dsd block, int64_t n,
              ElementType type) {
  for (int64_t i = 0, count = wafer::fusedOperations(k); i < count; ++i)
    ops.push_back(Op::vector(Op::Kind::fmax, block, block, block, n, type));
}

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

void repeated(RowTask &task, int64_t times, const std::function<void()> &body) {
  size_t loop = task.ops.size();
  task.ops.push_back(Op::loopOp(0, times));
  body();
  task.ops[loop].target = static_cast<int>(task.ops.size() - loop - 1);
}

void mapOps(std::vector<Op> &ops, const wafer::MapAlgorithm &algorithm,
            llvm::function_ref<Dsd(const wafer::MapOperand &, bool)> dsd,
            int64_t n, ElementType type) {
  for (const wafer::MapStep &step : algorithm.steps) {
    ElementType arithmetic = step.onInputsOnly() ? type : ElementType::f32;
    Dsd dst = dsd(step.dst, true), a = dsd(step.a, false),
        c = dsd(step.b, false);
    switch (step.kind) {
    case wafer::MapStep::Kind::multiplyAdd:
      ops.push_back(
          Op::fmacOp(dst, a, c, dsd(step.scalar, false), n, arithmetic));
      break;
    case wafer::MapStep::Kind::add:
      ops.push_back(Op::vector(Op::Kind::fadd, dst, a, c, n, arithmetic));
      break;
    case wafer::MapStep::Kind::multiply:
      ops.push_back(Op::vector(Op::Kind::fmul, dst, a, c, n, arithmetic));
      break;
    case wafer::MapStep::Kind::maximum:
      ops.push_back(Op::vector(Op::Kind::fmax, dst, a, c, n, arithmetic));
      break;
    case wafer::MapStep::Kind::rsqrtEstimate:
      ops.push_back(
          Op::vector(Op::Kind::rsqrtEstimate, dst, a, Dsd(), n, arithmetic));
      break;
    case wafer::MapStep::Kind::scaleByPowerOfTwo:
      ops.push_back(
          Op::vector(Op::Kind::scaleByPowerOfTwo, dst, a, c, n, arithmetic));
      break;
    }
  }
}

} // namespace cgpt::sim::mesh::programs
