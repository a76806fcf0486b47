//===- KernelPrograms.cpp - placed kernels as per-core programs -----------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/KernelPrograms.h"

#include <algorithm>
#include <cmath>

using cgpt::wafer::Edge;
using cgpt::wafer::KernelKind;
using cgpt::wafer::KernelShape;
using cgpt::wafer::Layout;

namespace cgpt::sim::mesh {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

uint8_t bit(Port port) { return static_cast<uint8_t>(1u << port); }

/// Builds programs on a rectangle, one core at a time.
class Builder {
public:
  Builder(const target::WaferTargetModel &target, int width, int height)
      : program(width, height), target(target) {}

  void route(int x, int y, int color, uint8_t rx, uint8_t tx) {
    program.routes[program.index(x, y)].push_back({color, rx, tx});
  }
  void emit(int x, int y, Instruction in) {
    program.programs[program.index(x, y)].push_back(in);
  }

  /// Streams from an edge: `count` wavelets of `color` enter every core of
  /// the first row (from the north, multicast down each column) or of the
  /// first column (from the west, along each row).
  void multicast(bool downColumns, int color, int64_t count) {
    for (int x = 0; x < program.width; ++x)
      for (int y = 0; y < program.height; ++y) {
        bool last = downColumns ? y + 1 == program.height
                                : x + 1 == program.width;
        Port in = downColumns ? north : west;
        Port on = downColumns ? south : east;
        route(x, y, color, bit(in), bit(ramp) | (last ? 0 : bit(on)));
      }
    if (downColumns)
      for (int x = 0; x < program.width; ++x)
        program.injectors.push_back({x, 0, north, color, count});
    else
      for (int y = 0; y < program.height; ++y)
        program.injectors.push_back({0, y, west, color, count});
  }

  /// A chain along each row (`alongRows`) or down each column: the first
  /// core sends `count` f32 values, each later one adds its own and passes
  /// them on, and the last passes the sums off the mesh. Colors
  /// `firstColor` and `firstColor + 1` alternate, so that a core receives
  /// on one while it sends on the other.
  void chain(bool alongRows, int firstColor, int64_t count) {
    int length = alongRows ? program.width : program.height;
    int across = alongRows ? program.height : program.width;
    Port onward = alongRows ? east : south, back = alongRows ? west : north;
    for (int line = 0; line < across; ++line)
      for (int step = 0; step < length; ++step) {
        int x = alongRows ? step : line, y = alongRows ? line : step;
        int out = firstColor + step % 2, in = firstColor + (step + 1) % 2;
        route(x, y, out, bit(ramp), bit(onward));
        if (step > 0)
          route(x, y, in, bit(back), bit(ramp));
        if (step == 0)
          emit(x, y, {Instruction::send, out, out, count, 1});
        else
          emit(x, y, {Instruction::forward, in, out, count, 1});
        if (step + 1 == length)
          program.drains.push_back({x, y, onward, out});
      }
  }

  /// The row chain of a reduction there and back: the statistics pass east
  /// to the last column, which stores the sums and then sends them west to
  /// the first, which passes them off. (Turning the stream around without
  /// storing it deadlocks: the last core would send west into a neighbour
  /// still busy forwarding east.)
  void chainThereAndBack(int firstColor, int64_t count) {
    int width = program.width;
    for (int y = 0; y < program.height; ++y)
      for (int x = 0; x < width; ++x) {
        int east = firstColor + x % 2, eastIn = firstColor + (x + 1) % 2;
        int west = firstColor + 2 + x % 2, westIn = firstColor + 2 + (x + 1) % 2;
        if (x + 1 < width)
          route(x, y, east, bit(ramp), bit(Port::east));
        if (x > 0)
          route(x, y, eastIn, bit(Port::west), bit(ramp));
        route(x, y, west, bit(ramp), bit(Port::west));
        if (x + 1 < width)
          route(x, y, westIn, bit(Port::east), bit(ramp));
        if (x == 0)
          emit(x, y, {Instruction::send, east, east, count, 1});
        else if (x + 1 < width)
          emit(x, y, {Instruction::forward, eastIn, east, count, 1});
        if (x + 1 == width) {
          emit(x, y, {Instruction::store, eastIn, eastIn, count, 1});
          emit(x, y, {Instruction::send, west, west, count, 1});
        } else {
          emit(x, y, {Instruction::forward, westIn, west, count, 1});
        }
        if (x == 0)
          program.drains.push_back({x, y, Port::west, west});
      }
  }

  /// A product against a stream: `count` wavelets multicast down the
  /// columns (`downColumns`) or along the rows, each starting a task of
  /// `cycles`; then `partials` f32 values chained across the other way:
  /// along the rows, or down the columns.
  void productThenChain(bool downColumns, int64_t count, int64_t cycles,
                        int64_t partials) {
    multicast(downColumns, 0, count);
    everywhere({Instruction::receive, 0, 0, count, cycles});
    if ((downColumns ? program.width : program.height) > 1)
      chain(/*alongRows=*/downColumns, 1,
            partials * wafer::kPartialSumBytes /
                target.getLinkBytesPerCycle());
  }

  /// The same program on every core.
  void everywhere(Instruction in) {
    for (int y = 0; y < program.height; ++y)
      for (int x = 0; x < program.width; ++x)
        emit(x, y, in);
  }

  MeshProgram program;
  const target::WaferTargetModel &target;
};

} // namespace

wafer::Layout rectangleLayout(int width, int height) {
  return {height, width};
}

std::pair<int, int> simulatedGrid(const KernelShape &, const Layout &layout,
                                  const wafer::Rect &rect) {
  return {static_cast<int>(std::min(layout.featureGroups, rect.w)),
          static_cast<int>(std::min(layout.tokenGroups, rect.h))};
}

void embedProgram(MeshProgram &mesh, const MeshProgram &part, int x, int y) {
  for (int py = 0; py < part.height; ++py)
    for (int px = 0; px < part.width; ++px) {
      int from = part.index(px, py), to = mesh.index(x + px, y + py);
      mesh.routes[to].append(part.routes[from].begin(),
                             part.routes[from].end());
      mesh.programs[to].insert(mesh.programs[to].end(),
                               part.programs[from].begin(),
                               part.programs[from].end());
    }
  for (Injector in : part.injectors) {
    in.x += x;
    in.y += y;
    mesh.injectors.push_back(in);
  }
  for (Drain drain : part.drains) {
    drain.x += x;
    drain.y += y;
    mesh.drains.push_back(drain);
  }
}

MeshConfig meshConfig(const target::WaferTargetModel &target) {
  MeshConfig config;
  config.colors = static_cast<int>(target.getNumColors());
  config.queueDepth = static_cast<int>(target.getRouterQueueWavelets());
  config.activationCycles = target.getTaskActivationCycles();
  return config;
}

MeshProgram buildKernelProgram(const KernelShape &k, const Layout &layout,
                               int64_t microBatch,
                               const target::WaferTargetModel &target,
                               int width, int height) {
  Builder b(target, width, height);
  int64_t lanes = wafer::fmacLanes(target, k.elementBytes);
  int64_t perWavelet = wafer::elementsPerWavelet(target, k.elementBytes);
  auto wavelets = [&](int64_t elements) {
    return ceilDiv(elements, perWavelet);
  };
  int64_t gt = layout.tokenGroups, gk = layout.featureGroups;
  bool resident = layout.weights == Edge::resident;
  switch (k.kind) {
  case KernelKind::weight_matmul: {
    if (resident) {
      // Each token's features stream down the columns, each element an
      // FMAC over the core's output columns; partial sums along the row.
      int64_t tokens = microBatch * k.rows;
      int64_t kb = ceilDiv(k.contracted, gk), nb = ceilDiv(k.columns, gt);
      b.productThenChain(/*downColumns=*/true, wavelets(tokens * kb),
                         perWavelet * ceilDiv(nb, lanes), tokens * nb);
      break;
    }
    int64_t tb = ceilDiv(microBatch * k.rows, gt);
    int64_t kb = ceilDiv(k.contracted, gk);
    b.productThenChain(/*downColumns=*/true, wavelets(kb * k.columns),
                       perWavelet * ceilDiv(tb, lanes), tb * k.columns);
    break;
  }
  case KernelKind::weight_grad: {
    if (resident) {
      // The token's inputs are stored as they stream in; each output
      // gradient element then starts an FMAC over the core's rows of dW.
      int64_t tokens = microBatch * k.contracted;
      int64_t kb = ceilDiv(k.rows, gk), nb = ceilDiv(k.columns, gt);
      b.multicast(/*downColumns=*/true, 1, wavelets(tokens * kb));
      b.everywhere({Instruction::store, 1, 1, wavelets(tokens * kb), 1});
      b.multicast(/*downColumns=*/true, 0, wavelets(tokens * nb));
      b.everywhere({Instruction::receive, 0, 0, wavelets(tokens * nb),
                    perWavelet * ceilDiv(kb, lanes)});
      break;
    }
    int64_t tb = ceilDiv(microBatch * k.contracted, gt);
    int64_t kb = ceilDiv(k.rows, gk);
    b.productThenChain(/*downColumns=*/false, wavelets(tb * k.columns),
                       perWavelet * ceilDiv(kb, lanes), kb * k.columns);
    break;
  }
  case KernelKind::attention: {
    int64_t seq = k.columns, headSize = k.contracted;
    int64_t q = ceilDiv(seq, gt), keys = ceilDiv(seq, gk);
    double pairFlops = static_cast<double>(k.flops);
    double products = std::max(
        1.0, pairFlops / (2.0 * static_cast<double>(seq) * seq * headSize));
    double perCore = pairFlops * (static_cast<double>(q) * keys) /
                     (static_cast<double>(seq) * seq);
    auto scaled = [&](int64_t elements) {
      return static_cast<int64_t>(std::llround(elements * products / 2));
    };
    // Queries along the rows, keys and values down the columns.
    b.multicast(/*downColumns=*/false, 0, wavelets(scaled(q * headSize)));
    b.multicast(/*downColumns=*/true, 1,
                wavelets(scaled(2 * keys * headSize)));
    b.everywhere({Instruction::store, 0, 0, wavelets(scaled(q * headSize)),
                  1});
    b.everywhere({Instruction::store, 1, 1,
                  wavelets(scaled(2 * keys * headSize)), 1});
    double vectorOps = perCore / 2 / static_cast<double>(keys);
    b.everywhere({Instruction::compute, 0, 0, 0,
                  static_cast<int64_t>(std::ceil(
                      vectorOps * (ceilDiv(keys, lanes) +
                                   target.getTaskActivationCycles())))});
    if (width > 1)
      b.chain(/*alongRows=*/true, 2, scaled(2 * q + q * headSize));
    break;
  }
  case KernelKind::reduction:
  case KernelKind::elementwise:
  case KernelKind::embedding: {
    int64_t tb = ceilDiv(microBatch * k.rows, gt);
    int64_t cb = ceilDiv(k.columns, gk);
    double perElement = static_cast<double>(k.flops) /
                        (static_cast<double>(k.rows) * k.columns);
    double ops = std::max(1.0, perElement / 2);
    if (k.kind == KernelKind::embedding && !resident) {
      // The table (or its gradient) down each column, one slice a column.
      int64_t table = ceilDiv(ceilDiv(std::max(k.weightBytes, k.accumulator),
                                      gk),
                              target.getLinkBytesPerCycle());
      b.multicast(/*downColumns=*/true, 0, table);
      b.everywhere({Instruction::store, 0, 0, table, 1});
    }
    b.everywhere({Instruction::compute, 0, 0, 0,
                  static_cast<int64_t>(std::ceil(
                      tb * ops *
                      (ceilDiv(cb, lanes) + target.getTaskActivationCycles())))});
    if (k.kind == KernelKind::reduction && width > 1)
      b.chainThereAndBack(1, 2 * tb);
    break;
  }
  }
  return std::move(b.program);
}

} // namespace cgpt::sim::mesh
