//===- MeshBand.cpp - one worker's rows of a cycle-level run --------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "MeshBand.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/bit.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

namespace cgpt::sim::mesh::detail {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The estimate of 1 / sqrt(x) from x's bits (Op::Kind::rsqrtEstimate):
/// within 3.5% for every positive normal x.
float rsqrtEstimateOf(float x) {
  return llvm::bit_cast<float>(0x5f3759dfu -
                               (llvm::bit_cast<uint32_t>(x) >> 1));
}

/// x's bits as a 32-bit integer, converted (Op::Kind::bitsToFloat).
float bitsToFloatOf(float x) {
  return static_cast<float>(llvm::bit_cast<int32_t>(x));
}

/// src0 2^n from the bits (Op::Kind::scaleByPowerOfTwo): n added to the
/// exponent, as the core's integer operations add it.
float scaleByPowerOfTwoOf(float x, float n) {
  // Past the exponent's range, or not a number, the bits mean nothing.
  if (!(std::abs(n) <= 255.0f))
    return std::numeric_limits<float>::quiet_NaN();
  return llvm::bit_cast<float>(
      llvm::bit_cast<uint32_t>(x) +
      (static_cast<uint32_t>(static_cast<int32_t>(n)) << 23));
}

/// The cycles a vector operation over memory takes: as many as the larger
/// of its SIMD width and its SRAM traffic allow.
int64_t vectorCycles(const CoreProgram &program, const Op &op,
                     const MeshConfig &config) {
  bool half = op.type == ElementType::bf16;
  int64_t width = op.kind == Op::Kind::fmac
                      ? (half ? config.mixedFmacs : config.f32Fmacs)
                      : (half ? config.halfOps : config.f32Ops);
  // Bytes each element moves through the SRAM's ports.
  auto bytes = [&](const Dsd &dsd) -> int64_t {
    if (dsd.kind != Dsd::Kind::memory)
      return 0;
    return bytesOf(program.buffers[dsd.buffer].type);
  };
  int64_t reads = bytes(op.src0) + bytes(op.src1);
  int64_t writes = bytes(op.dst);
  int64_t n = op.length;
  // The bit operations (an estimate's shift and subtraction, an
  // exponent's conversion and addition): two passes of 32-bit operations;
  // a conversion of the bits alone, one.
  int64_t passes = op.kind == Op::Kind::rsqrtEstimate ||
                           op.kind == Op::Kind::scaleByPowerOfTwo
                       ? 2
                       : 1;
  return std::max({passes * ceilDiv(n, std::max<int64_t>(1, width)),
                   ceilDiv(n * reads, config.readBytesPerCycle),
                   ceilDiv(n * writes, config.writeBytesPerCycle)});
}

/// A band's part of the result, as bytes every worker can read.
class PartWriter {
public:
  template <typename T> void put(const T &value) {
    bytes.append(reinterpret_cast<const char *>(&value), sizeof(T));
  }
  std::string bytes;
};

class PartReader {
public:
  explicit PartReader(const std::string &bytes) : bytes(bytes) {}
  template <typename T> T get() {
    T value{};
    std::memcpy(&value, bytes.data() + at, sizeof(T));
    at += sizeof(T);
    return value;
  }

private:
  const std::string &bytes;
  size_t at = 0;
};

} // namespace

std::array<int8_t, 64> colorLanes(const MeshProgram &program, int &lanes) {
  std::array<int8_t, 64> laneOf;
  laneOf.fill(-1);
  lanes = 0;
  for (const auto &routes : program.routes)
    for (const Route &route : routes)
      if (route.color >= 0 && route.color < 64 && laneOf[route.color] < 0)
        laneOf[route.color] = static_cast<int8_t>(lanes++);
  return laneOf;
}

RunPlan::RunPlan(const MeshProgram &program, const MeshConfig &config,
                 const CoreMemoryAccess &access, const MeshWorkers &workers)
    : program(program), config(config), access(access), workers(workers),
      laneOf(colorLanes(program, lanes)) {
  // Of several drains at one place, the last that records keeps what
  // leaves.
  for (auto [index, d] : llvm::enumerate(program.drains)) {
    if (d.x < 0 || d.y < 0 || d.x >= program.width || d.y >= program.height ||
        d.port >= ramp || d.color < 0 || d.color >= 64)
      continue;
    int64_t key =
        (int64_t(program.index(d.x, d.y)) * kPorts + d.port) * 64 + d.color;
    auto [at, inserted] = drainOf.try_emplace(key, static_cast<int>(index));
    if (!inserted && d.record)
      at->second = static_cast<int>(index);
  }
}

void RunPlan::timeOperations() {
  // A core issues an operation for nearly every wavelet it takes in.
  cyclesOf.reserve(program.programs.size());
  dataTasksOf.reserve(program.programs.size());
  for (const CoreProgram &core : program.programs) {
    // A data task on a color the router never carries never runs.
    auto &data = dataTasksOf.emplace_back();
    for (auto [index, task] : llvm::enumerate(core.tasks))
      if (task.data && task.color >= 0 && task.color < 64 &&
          laneOf[task.color] >= 0)
        data.push_back({static_cast<int>(index), laneOf[task.color]});
    auto &tasks = cyclesOf.emplace_back();
    for (const Task &task : core.tasks) {
      auto &ops = tasks.emplace_back();
      for (const Op &op : task.body)
        ops.push_back(vectorCycles(core, op, config));
    }
  }
}

std::pair<int, int> RunPlan::rowsOf(int band) const {
  if (band >= bands)
    return {program.height, program.height};
  auto edge = [&](int b) {
    return static_cast<int>(int64_t(program.height) * b / bands);
  };
  return {edge(band), edge(band + 1)};
}

Queues::Queues(size_t count, int depth, bool carryValues, bool deferFrees)
    : depth(depth), carryValues(carryValues), deferFrees(deferFrees),
      state(count), data(carryValues ? count * depth : 0),
      staged(carryValues ? count : 0) {}

void Queues::settle() {
  for (int q : touched) {
    State &s = state[q];
    if (carryValues && s.arriving) {
      int tail = s.head + s.size;
      data[q * depth + (tail >= depth ? tail - depth : tail)] = staged[q];
    }
    s.size = static_cast<uint8_t>(s.size + s.arriving);
    s.arriving = 0;
    s.freedNow = 0;
  }
  touched.clear();
}

Band::Band(const RunPlan &plan, BandLinks &links)
    : plan(plan), links(links), config(plan.config), width(plan.program.width),
      laneOf(plan.laneOf), lanes(plan.lanes) {
  auto [begin, end] = plan.rowsOf(links.worker());
  first = begin;
  rows = end - begin;
  hasNorth = rows > 0 && first > 0;
  hasSouth = rows > 0 && end < plan.program.height;
  routes = plan.program.routes.data() + int64_t(first) * width;
}

std::array<int, kPorts> Band::neighbours(int c, int x, int y) const {
  return {y > 0 ? c - width : -1, y + 1 < plan.program.height ? c + width : -1,
          x + 1 < width ? c + 1 : -1, x > 0 ? c - 1 : -1, c};
}

void Band::load() {
  const MeshProgram &program = plan.program;
  // The band's rows and a halo row on each side.
  size_t cores = static_cast<size_t>(rows + 2) * width;
  router = Queues(cores * kPorts * lanes, config.queueDepth, config.values,
                  /*deferFrees=*/true);
  toEngine = Queues(cores * lanes, config.queueDepth, config.values,
                    /*deferFrees=*/false);
  engines.assign(cores, Engine());
  rampOutUsed.assign(cores, 0);
  routerLoad.assign(cores, 0);
  engineWaitsUntil.assign(cores, kNever);
  rowActivity.assign(rows, {-1, 0});
  drainedColors.assign(static_cast<size_t>(rows) * width * kPorts, 0);
  drained.resize(program.drains.size());
  // The plan's drains at the band's cores, by core, port and color.
  for (const auto &entry : plan.drainOf) {
    int64_t key = entry.first, at = key / 64 - int64_t(first) * width * kPorts;
    if (at >= 0 && at < static_cast<int64_t>(drainedColors.size()))
      drainedColors[at] |= uint64_t(1) << (key % 64);
  }
  for (auto [index, in] : llvm::enumerate(program.injectors))
    if (in.y >= first && in.y < first + rows)
      injectors.push_back(static_cast<int>(index));
  injected.assign(injectors.size(), 0);
  for (int c = width; c < (rows + 1) * width; ++c) {
    int index = program.programOf[globalCore(c)];
    if (index < 0)
      continue;
    Engine &engine = engines[c];
    engine.program = &program.programs[index];
    engine.cycles = &plan.cyclesOf[index];
    engine.dataTasks = &plan.dataTasksOf[index];
    engineWaitsUntil[c] = 0;
    engine.x = c % width;
    engine.y = rowOf(c);
    engine.cursors.assign(engine.program->cursors.size(), 0);
    engine.active.resize(engine.program->tasks.size());
    for (int task : engine.program->startActive)
      engine.active.set(task);
    engine.blocked.resize(engine.program->tasks.size());
    for (int task : engine.program->startBlocked)
      engine.blocked.set(task);
    if (!config.values)
      continue;
    for (const BufferDecl &buffer : engine.program->buffers) {
      std::vector<float> &memory =
          engine.memory.emplace_back(buffer.elements, 0.0f);
      std::copy_n(buffer.initial.begin(),
                  std::min<size_t>(buffer.initial.size(), memory.size()),
                  memory.begin());
    }
    if (plan.access.load)
      plan.access.load(globalCore(c), engine.memory);
  }
}

/// Moves at most one wavelet per color through core `c`'s router, and at
/// most one per output link: each to every port of its route at once, when
/// every one of them has room.
bool Band::routeStep(int c, int x, int y, uint8_t *linkUsed) {
  bool moved = false;
  // Every wavelet the core moves goes to one of them.
  const std::array<int, kPorts> next = neighbours(c, x, y);
  for (const Route &route : routes[c - width]) {
    for (unsigned ports = route.rx; ports; ports &= ports - 1) {
      int port = llvm::countr_zero(ports);
      int from = queueIndex(c, port, route.color);
      if (router.count(from) == 0)
        continue;
      // Where each output sends: a neighbour's queue, the engine's, or
      // off the mesh (-1: an edge, or a drain).
      std::array<int, kPorts> to;
      bool clear = true;
      for (unsigned outs = route.tx; outs && clear; outs &= outs - 1) {
        int out = llvm::countr_zero(outs);
        if (linkUsed[out]) {
          clear = false;
        } else if (out == ramp) {
          to[out] = engineQueue(c, route.color);
          clear = toEngine.hasRoom(to[out]);
        } else if (next[out] >= 0 && !drains(c, out, route.color)) {
          to[out] = queueIndex(next[out], opposite(out), route.color);
          clear = router.hasRoom(to[out]);
        } else {
          to[out] = -1;
        }
      }
      if (!clear)
        continue;
      Wavelet w = router.pop(from);
      --waveletsInFlight;
      --routerLoad[c];
      // The band across a border learns that its wavelet left: the place
      // it took is free for it from the next cycle.
      int lane = laneOf[route.color];
      if (port == north && hasNorth && c < 2 * width)
        toNorth.push_back({x, static_cast<int16_t>(lane), 0, 0, 0});
      else if (port == south && hasSouth && c >= rows * width)
        toSouth.push_back({x, static_cast<int16_t>(lane), 0, 0, 0});
      for (unsigned outs = route.tx; outs; outs &= outs - 1) {
        int out = llvm::countr_zero(outs);
        linkUsed[out] = 1;
        if (out == ramp) {
          crossRamp(c, to[out], false, w, cycle);
          ++waveletsInFlight;
        } else if (to[out] >= 0) {
          router.stage(to[out], w);
          ++waveletsInFlight;
          ++routerLoad[next[out]];
          if (!own(next[out]))
            (out == north ? toNorth : toSouth)
                .push_back({x, static_cast<int16_t>(lane), 1, w.lo, w.hi});
        } else if (auto it = plan.drainOf.find(
                       (int64_t(globalCore(c)) * kPorts + out) * 64 +
                       route.color);
                   it != plan.drainOf.end() &&
                   plan.program.drains[it->second].record) {
          drained[it->second].push_back(w);
        }
      }
      moved = true;
      break; // one wavelet per color per cycle
    }
  }
  return moved;
}

/// An operation's operands in the order of Microthread::cursorsAtIssue.
static std::array<const Dsd *, 4> operandsOf(const Op &op) {
  return {&op.dst, &op.src0, &op.src1, &op.scalar};
}

/// Where the cursor of each of `op`'s operands stands now (0 for one
/// without a cursor).
static std::array<int64_t, 4> cursorValuesOf(const Engine &engine,
                                             const Op &op) {
  std::array<int64_t, 4> values = {};
  for (auto [slot, dsd] : llvm::enumerate(operandsOf(op))) {
    if (dsd->cursor >= 0)
      values[slot] = engine.cursors[dsd->cursor];
    if (dsd->index < 0 || engine.memory.empty())
      continue;
    // An offset from data: one outside the index buffer, or not a whole
    // number, leaves every element out of range (Band::element says so).
    const std::vector<float> &index = engine.memory[dsd->index];
    int64_t at = values[slot];
    float offset =
        at >= 0 && at < static_cast<int64_t>(index.size()) ? index[at] : -1.0f;
    values[slot] = offset == std::floor(offset) && std::abs(offset) < 1e9f
                       ? static_cast<int64_t>(offset)
                       : std::numeric_limits<int32_t>::min();
  }
  return values;
}

float *Band::element(Engine &engine, const Dsd &dsd, int64_t i,
                     int64_t cursorValue) {
  if (dsd.kind == Dsd::Kind::zero) {
    scratch = 0;
    return &scratch;
  }
  if (dsd.kind == Dsd::Kind::reg)
    return dsd.high ? &engine.argument.hi : &engine.argument.lo;
  std::vector<float> &buffer = engine.memory[dsd.buffer];
  int64_t at = dsd.offset + cursorValue + i * dsd.stride;
  if (dsd.circular && !buffer.empty())
    at %= static_cast<int64_t>(buffer.size());
  if (at < 0 || at >= static_cast<int64_t>(buffer.size())) {
    fail(coreName(engine.x, engine.y) + " reads or writes element " +
         std::to_string(at) + " of buffer '" +
         engine.program->buffers[dsd.buffer].name + "', which has " +
         std::to_string(buffer.size()));
    scratch = 0;
    return &scratch;
  }
  return &buffer[at];
}

bool Band::span(Engine &engine, const Dsd &dsd, int64_t first, int64_t count,
                int64_t cursorValue, Span &span) {
  switch (dsd.kind) {
  case Dsd::Kind::none:
  case Dsd::Kind::zero:
    span = {&zero, 0};
    return true;
  case Dsd::Kind::reg:
    span = {dsd.high ? &engine.argument.hi : &engine.argument.lo, 0};
    return true;
  case Dsd::Kind::memory: {
    std::vector<float> &buffer = engine.memory[dsd.buffer];
    auto size = static_cast<int64_t>(buffer.size());
    int64_t at = dsd.offset + cursorValue + first * dsd.stride;
    if (dsd.circular && size > 0) {
      if (at < 0)
        return false;
      at %= size;
    }
    int64_t last = at + (count - 1) * dsd.stride;
    if (std::min(at, last) < 0 || std::max(at, last) >= size)
      return false;
    span = {buffer.data() + at, dsd.stride};
    return true;
  }
  default:
    return false;
  }
}

bool Band::computeSpans(Op::Kind kind, int64_t count,
                        const std::array<Span, 4> &spans) {
  auto [dst, ds] = spans[0];
  auto [a, as] = spans[1];
  auto [b, bs] = spans[2];
  auto [m, ms] = spans[3];
  switch (kind) {
  case Op::Kind::fmac:
    for (int64_t k = 0; k < count; ++k)
      dst[k * ds] = a[k * as] + b[k * bs] * m[k * ms];
    break;
  case Op::Kind::fadd:
    for (int64_t k = 0; k < count; ++k)
      dst[k * ds] = a[k * as] + b[k * bs];
    break;
  case Op::Kind::fmul:
    for (int64_t k = 0; k < count; ++k)
      dst[k * ds] = a[k * as] * b[k * bs];
    break;
  case Op::Kind::fmax:
    for (int64_t k = 0; k < count; ++k)
      dst[k * ds] = std::max(a[k * as], b[k * bs]);
    break;
  case Op::Kind::fmov:
    for (int64_t k = 0; k < count; ++k)
      dst[k * ds] = a[k * as];
    break;
  case Op::Kind::rsqrtEstimate:
    for (int64_t k = 0; k < count; ++k)
      dst[k * ds] = rsqrtEstimateOf(a[k * as]);
    break;
  case Op::Kind::scaleByPowerOfTwo:
    for (int64_t k = 0; k < count; ++k)
      dst[k * ds] = scaleByPowerOfTwoOf(a[k * as], b[k * bs]);
    break;
  case Op::Kind::bitsToFloat:
    for (int64_t k = 0; k < count; ++k)
      dst[k * ds] = bitsToFloatOf(a[k * as]);
    break;
  default:
    return false;
  }
  return true;
}

void Band::compute(Engine &engine, const Running &running,
                   const std::array<int64_t, 4> *cursorsAtIssue, int64_t count,
                   const Wavelet *in, Wavelet *out) {
  if (!config.values)
    return;
  const Op &op = *running.op;
  int64_t first = running.progress;
  const std::array<const Dsd *, 4> operands = operandsOf(op);
  const std::array<int64_t, 4> cursorValues =
      cursorsAtIssue ? *cursorsAtIssue : cursorValuesOf(engine, op);
  // Memory and registers only (no wavelet in or out), and the written
  // operand one that can take the writes: element by element in one loop.
  if ((op.dst.kind == Dsd::Kind::memory || op.dst.kind == Dsd::Kind::reg) &&
      !op.src0.isFabric() && !op.src1.isFabric()) {
    std::array<Span, 4> spans;
    bool all = true;
    for (auto [slot, dsd] : llvm::enumerate(operands))
      all = all &&
            span(engine, *dsd, first, count, cursorValues[slot], spans[slot]);
    if (all && computeSpans(op.kind, count, spans))
      return;
  }
  // A fabric operand gives or takes the elements of one wavelet: lo, then
  // hi for 16-bit data.
  auto fabricValue = [&](const Wavelet *w, int64_t k) {
    return k == 0 ? w->lo : w->hi;
  };
  for (int64_t k = 0; k < count; ++k) {
    int64_t i = first + k;
    auto read = [&](int slot) -> float {
      const Dsd &dsd = *operands[slot];
      if (dsd.kind == Dsd::Kind::fabricIn)
        return fabricValue(in, k);
      if (dsd.kind == Dsd::Kind::none)
        return 0;
      return *element(engine, dsd, dsd.kind == Dsd::Kind::reg ? 0 : i,
                      cursorValues[slot]);
    };
    float a = read(1), b = read(2), value = 0;
    switch (op.kind) {
    case Op::Kind::fmac:
      value = a + b * read(3);
      break;
    case Op::Kind::fadd:
      value = a + b;
      break;
    case Op::Kind::fmul:
      value = a * b;
      break;
    case Op::Kind::fmax:
      value = std::max(a, b);
      break;
    case Op::Kind::fmov:
      value = a;
      break;
    case Op::Kind::rsqrtEstimate:
      value = rsqrtEstimateOf(a);
      break;
    case Op::Kind::scaleByPowerOfTwo:
      value = scaleByPowerOfTwoOf(a, b);
      break;
    case Op::Kind::bitsToFloat:
      value = bitsToFloatOf(a);
      break;
    default:
      break;
    }
    if (op.dst.kind == Dsd::Kind::fabricOut)
      (k == 0 ? out->lo : out->hi) = value;
    else
      *element(engine, op.dst, i, cursorValues[0]) = value;
  }
}

void Band::advance(Engine &engine, int cursor, int64_t by) {
  const Cursor &spec = engine.program->cursors[cursor];
  for (int64_t i = 0; i < by; ++i) {
    engine.cursors[cursor] += spec.step;
    if (spec.wrap && engine.cursors[cursor] >= spec.wrap) {
      engine.cursors[cursor] = 0;
      if (spec.carry >= 0)
        advance(engine, spec.carry, 1);
      if (spec.onWrap >= 0)
        engine.active.set(spec.onWrap);
    }
  }
}

bool Band::fabricStep(int c, Engine &engine, Running &running,
                      const std::array<int64_t, 4> *cursorsAtIssue) {
  const Op &op = *running.op;
  // Elements this wavelet carries: one f32 or two 16-bit values, fewer at
  // the end of an odd count.
  int64_t count =
      std::min(perWavelet(op.type), running.length - running.progress);
  const Dsd *input = nullptr;
  for (const Dsd *dsd : {&op.src0, &op.src1})
    if (dsd->kind == Dsd::Kind::fabricIn)
      input = dsd;
  int from = input ? engineQueue(c, input->color) : -1;
  if (input && toEngine.count(from) == 0)
    return false;
  bool output = op.dst.kind == Dsd::Kind::fabricOut;
  int to = output ? queueIndex(c, ramp, op.dst.color) : -1;
  if (output && (rampOutUsed[c] || !router.hasRoom(to)))
    return false;
  Wavelet in, out;
  if (input) {
    in = toEngine.pop(from);
    --waveletsInFlight;
  }
  compute(engine, running, cursorsAtIssue, count, &in, &out);
  if (output) {
    rampOutUsed[c] = 1;
    crossRamp(c, to, true, out, cycle);
    ++waveletsInFlight;
  }
  running.progress += count;
  return true;
}

bool Band::sharesMicrothread(const Engine &engine, const Op &op) const {
  auto colors = [](const Op &o) {
    llvm::SmallVector<int, 3> found;
    for (const Dsd *dsd : {&o.dst, &o.src0, &o.src1})
      if (dsd->isFabric())
        found.push_back(dsd->color);
    return found;
  };
  llvm::SmallVector<int, 3> mine = colors(op);
  for (const Microthread &thread : engine.microthreads)
    for (int color : colors(*thread.running.op))
      if (llvm::is_contained(mine, color))
        return true;
  return false;
}

Running Band::issue(Engine &engine, const Op &op) {
  if (op.lengthFrom < 0 || engine.memory.empty())
    return {&op, 0, op.length};
  const std::vector<float> &lengths = engine.memory[op.lengthFrom];
  int64_t at = engine.cursors[op.lengthCursor];
  float length =
      at >= 0 && at < static_cast<int64_t>(lengths.size()) ? lengths[at] : -1;
  if (!(length >= 0 && length == std::floor(length) && length < 1e9f)) {
    fail(coreName(engine.x, engine.y) + " sets an operation's length from " +
         "element " + std::to_string(at) + " of buffer '" +
         engine.program->buffers[op.lengthFrom].name +
         "', which holds no count of elements");
    return {&op, 0, 0};
  }
  return {&op, 0, static_cast<int64_t>(length)};
}

bool Band::pickTask(int c, Engine &engine, int64_t now) {
  const std::vector<Task> &tasks = engine.program->tasks;
  // Local tasks first, then a data task whose color has a wavelet waiting.
  int chosen = -1;
  for (int t = engine.active.find_first(); t >= 0;
       t = engine.active.find_next(t))
    if (!tasks[t].data && !engine.blocked.test(t)) {
      chosen = t;
      engine.active.reset(t);
      break;
    }
  if (chosen < 0)
    for (const RunPlan::DataTask &data : *engine.dataTasks) {
      int queue = c * lanes + data.lane;
      if (!engine.blocked.test(data.task) && toEngine.count(queue)) {
        chosen = data.task;
        engine.argument = toEngine.pop(queue);
        --waveletsInFlight;
        break;
      }
    }
  if (chosen < 0)
    return false;
  engine.task = chosen;
  engine.pc = 0;
  engine.loops.clear();
  engine.current = {};
  engine.busyUntil = now + config.activationCycles;
  return true;
}

bool Band::runControl(Engine &engine) {
  const std::vector<Op> &body = engine.program->tasks[engine.task].body;
  bool ran = false;
  while (true) {
    // The end of a loop's operations runs them again or leaves the loop.
    while (!engine.loops.empty() && engine.pc == engine.loops.back().end) {
      if (--engine.loops.back().left > 0) {
        engine.pc = engine.loops.back().first;
        break;
      }
      engine.loops.pop_back();
    }
    if (engine.pc == body.size()) {
      engine.task = -1;
      return ran;
    }
    const Op &op = body[engine.pc];
    switch (op.kind) {
    case Op::Kind::loop:
      ++engine.pc;
      if (op.by > 0 && op.target > 0)
        engine.loops.push_back(
            {engine.pc, engine.pc + static_cast<size_t>(op.target), op.by});
      else
        engine.pc += static_cast<size_t>(std::max(op.target, 0));
      break;
    case Op::Kind::activate:
      engine.active.set(op.target);
      ++engine.pc;
      break;
    case Op::Kind::block:
    case Op::Kind::unblock:
      engine.blocked[op.target] = op.kind == Op::Kind::block;
      ++engine.pc;
      break;
    case Op::Kind::advance:
      advance(engine, op.target, op.by);
      ++engine.pc;
      break;
    default:
      return ran;
    }
    ran = true;
  }
}

bool Band::runTask(int c, Engine &engine, int64_t now) {
  const std::vector<Op> &body = engine.program->tasks[engine.task].body;
  bool acted = false;
  while (true) {
    acted |= runControl(engine);
    if (engine.task < 0)
      return acted;
    const Op &op = body[engine.pc];
    bool fabric = op.dst.isFabric() || op.src0.isFabric() || op.src1.isFabric();
    if (op.async) {
      if (sharesMicrothread(engine, op))
        return acted;
      engine.microthreads.push_back(
          {issue(engine, op), cursorValuesOf(engine, op)});
      ++engine.pc;
      acted = true;
      continue;
    }
    if (!fabric) {
      compute(engine, Running{&op, 0, op.length}, nullptr, op.length, nullptr,
              nullptr);
      engine.busyUntil = now + (*engine.cycles)[engine.task][engine.pc];
      ++engine.pc;
      // The operation's values are written; the control that follows it
      // takes no cycle of its own, so a task that ends in it ends with
      // the operation.
      runControl(engine);
      return true;
    }
    if (!engine.current.op) {
      engine.current = issue(engine, op);
      // An operation of no elements (a length its data set to 0) moves
      // nothing and takes no cycle.
      if (engine.current.length == 0) {
        engine.current = {};
        ++engine.pc;
        acted = true;
        continue;
      }
    }
    if (engine.current.progress < engine.current.length &&
        !fabricStep(c, engine, engine.current))
      return acted;
    if (engine.current.progress >= engine.current.length) {
      engine.current = {};
      ++engine.pc;
      runControl(engine);
    }
    engine.busyUntil = now + 1;
    return true;
  }
}

bool Band::engineStep(int c, int64_t now) {
  Engine &engine = engines[c];
  if (!engine.program)
    return false;
  bool acted = false;
  // Microthreads run beside the tasks, a wavelet a cycle each.
  for (size_t i = 0; i < engine.microthreads.size();) {
    Microthread &thread = engine.microthreads[i];
    Running &running = thread.running;
    if (running.progress < running.length &&
        fabricStep(c, engine, running, &thread.cursorsAtIssue))
      acted = true;
    if (running.progress >= running.length) {
      if (running.op->onDone >= 0)
        engine.active.set(running.op->onDone);
      engine.microthreads.erase(engine.microthreads.begin() + i);
      acted = true;
      continue;
    }
    ++i;
  }
  if (engine.busyUntil > now)
    return acted;
  if (engine.task >= 0) {
    acted |= runTask(c, engine, now);
    // A task that ended this cycle hands the engine to the next one now
    // (the activation is the switch); one that ended with an operation
    // still running, once the operation is done.
    if (engine.task >= 0 || engine.busyUntil > now)
      return acted;
  }
  return pickTask(c, engine, now) || acted;
}

void Band::crossRamp(int c, int q, bool toRouter, const Wavelet &w,
                     int64_t now) {
  Queues &queues = toRouter ? router : toEngine;
  if (config.rampLatencyCycles <= 1) {
    queues.stage(q, w);
    routerLoad[c] += toRouter;
    return;
  }
  queues.reserve(q);
  // Filled in place: a copy of a struct built on the stack stalls the
  // host on its mixed-width stores.
  Crossing &next = crossing.push();
  next.arrives = now + config.rampLatencyCycles - 1;
  next.core = c;
  next.queue = q;
  next.toRouter = toRouter;
  if (config.values)
    crossingValues.push() = w;
}

bool Band::arriveFromRamps(int64_t now) {
  bool arrived = false;
  while (!crossing.empty() && crossing.front().arrives <= now) {
    const Crossing &next = crossing.front();
    Wavelet w;
    if (config.values) {
      w = crossingValues.front();
      crossingValues.pop();
    }
    (next.toRouter ? router : toEngine).stageReserved(next.queue, w);
    routerLoad[next.core] += next.toRouter;
    crossing.pop();
    arrived = true;
  }
  return arrived;
}

void Band::applyBorders() {
  // What this band sent is now the neighbour's to count.
  for (const std::vector<BorderEntry> *sent : {&toNorth, &toSouth})
    for (const BorderEntry &entry : *sent)
      waveletsInFlight -= entry.arrived;
  auto take = [&](const std::vector<BorderEntry> &entries, int ownRow,
                  int ownPort, int haloRow, int haloPort) {
    for (const BorderEntry &entry : entries) {
      if (entry.arrived) {
        int c = ownRow * width + entry.x;
        router.stage(laneQueue(c, ownPort, entry.lane),
                     Wavelet{entry.lo, entry.hi});
        ++waveletsInFlight;
        ++routerLoad[c];
      } else {
        router.release(
            laneQueue(haloRow * width + entry.x, haloPort, entry.lane));
      }
    }
  };
  // Local rows: 0 is the halo north, 1 the band's first, `rows` its last,
  // `rows` + 1 the halo south.
  take(fromNorth, 1, north, 0, south);
  take(fromSouth, rows, south, rows + 1, north);
}

int64_t Band::nextEvent(int64_t now) const {
  int64_t next = kNever;
  for (int c = width; c < (rows + 1) * width; ++c)
    if (engines[c].busyUntil > now)
      next = std::min(next, engines[c].busyUntil);
  if (!crossing.empty())
    next = std::min(next, crossing.front().arrives);
  return next;
}

bool Band::done() const {
  if (waveletsInFlight != 0)
    return false;
  for (auto [index, in] : llvm::enumerate(injectors))
    if (injected[index] < plan.program.injectors[in].count)
      return false;
  for (int c = width; c < (rows + 1) * width; ++c) {
    const Engine &engine = engines[c];
    if (!engine.program)
      continue;
    if (engine.task >= 0 || !engine.microthreads.empty() || engine.active.any())
      return false;
  }
  return true;
}

std::string Band::stuckCores() const {
  std::string text;
  int listed = 0;
  for (int c = width; c < (rows + 1) * width && listed < 4; ++c) {
    int x = c % width, y = rowOf(c);
    const Engine &engine = engines[c];
    auto describe = [&](const Running &running, const char *what) {
      const Op &op = *running.op;
      int color = op.dst.kind == Dsd::Kind::fabricOut ? op.dst.color
                  : op.src0.isFabric()                ? op.src0.color
                                                      : op.src1.color;
      text += coreName(x, y) + " is stuck " + what + " color " +
              std::to_string(color) + " with " +
              std::to_string(running.length - running.progress) +
              " elements to go\n";
      ++listed;
    };
    if (engine.current.op) {
      describe(engine.current, "in a task on");
      continue;
    }
    if (!engine.microthreads.empty()) {
      describe(engine.microthreads.front().running, "in a microthread on");
      continue;
    }
    for (int port = 0; port < kPorts && listed < 4; ++port)
      for (int color = 0; color < config.colors; ++color)
        if (routed(color) && router.count(queueIndex(c, port, color))) {
          text += coreName(x, y) + " holds color " + std::to_string(color) +
                  " from " + portName(port) + " that cannot leave\n";
          ++listed;
          break;
        }
  }
  return text;
}

bool Band::run(std::string &error) {
  load();
  int64_t now = 0;
  std::vector<uint8_t> linkUsed(kPorts);
  const MeshWorkers &workers = plan.workers;
  auto started = std::chrono::steady_clock::now();
  auto reported = started;
  const auto timeLimit =
      std::chrono::duration<double>(workers.stopAfterSeconds);
  auto stopAsked = [&] {
    if (workers.stop && workers.stop->load(std::memory_order_relaxed))
      return true;
    return workers.stopAfterSeconds > 0 &&
           std::chrono::steady_clock::now() - started >= timeLimit;
  };
  auto recordTime = llvm::make_scope_exit([&] {
    loopNanoseconds = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now() - started)
                          .count();
  });
  for (int64_t step = 1;; ++step) {
    cycle = now;
    toNorth.clear();
    toSouth.clear();
    bool moved = arriveFromRamps(now);
    // Row by row, so that a core's place costs no division.
    for (int row = 1, y = first; row <= rows; ++row, ++y)
      for (int x = 0, c = row * width; x < width; ++x, ++c) {
        if (routerLoad[c] == 0)
          continue;
        std::fill(linkUsed.begin(), linkUsed.end(), 0);
        moved |= routeStep(c, x, y, linkUsed.data());
      }
    for (auto [index, which] : llvm::enumerate(injectors)) {
      const Injector &in = plan.program.injectors[which];
      if (injected[index] >= in.count)
        continue;
      int c = (in.y - first + 1) * width + in.x;
      int to = queueIndex(c, in.port, in.color);
      if (!router.hasRoom(to))
        continue;
      router.stage(to, in.payload.empty() ? Wavelet{}
                                          : in.payload[injected[index]]);
      ++waveletsInFlight;
      ++routerLoad[c];
      ++injected[index];
      moved = true;
    }
    std::fill(rampOutUsed.begin(), rampOutUsed.end(), 0);
    for (int row = 1; row <= rows; ++row)
      for (int c = row * width, end = c + width; c < end; ++c) {
        if (engineWaitsUntil[c] > now)
          continue;
        bool acted = engineStep(c, now);
        const Engine &engine = engines[c];
        engineWaitsUntil[c] =
            engine.microthreads.empty() ? engine.busyUntil : 0;
        if (!acted)
          continue;
        moved = true;
        auto &[begin, last] = rowActivity[row - 1];
        if (begin < 0)
          begin = now;
        last = std::max(last, std::max(engine.busyUntil, now + 1));
      }

    // The cycle's end: borders, then the figures every band agrees on, by
    // their minimum: 0 when anything moved, the first band that failed,
    // 0 when a stop was asked for or the time allowed has passed.
    CycleFigures figures = {moved ? 0 : 1,
                            failure.empty() ? kNever : links.worker(),
                            stopAsked() ? 0 : 1};
    links.endCycle(hasNorth, hasSouth, toNorth, toSouth, fromNorth, fromSouth,
                   figures);
    applyBorders();
    router.settle();
    toEngine.settle();
    if (figures[1] != kNever) {
      std::vector<std::string> failures = links.gather(failure);
      error = failures[figures[1]];
      return false;
    }
    bool anyMoved = figures[0] == 0;
    if (anyMoved)
      lastActive = now + 1;
    if (figures[2] == 0) {
      // Stopped: the cycles up to this one were simulated.
      stopped = true;
      lastActive = now + 1;
      break;
    }
    if (anyMoved) {
      ++now;
    } else {
      // Nothing moved anywhere: the state changes next when an engine
      // finishes its operation or a wavelet leaves a ramp, so the cycles
      // until then can be skipped.
      // The next event anywhere, and 0 when any band is not done.
      CycleFigures idle = {nextEvent(now), done() ? 1 : 0, 0};
      links.minimum(idle);
      int64_t next = idle[0];
      if (next == kNever) {
        if (idle[1] == 1)
          break;
        std::string stuck;
        for (const std::string &part : links.gather(stuckCores()))
          stuck += part;
        error = "deadlock at cycle " + std::to_string(now) +
                ": no wavelet can move";
        // The first four stuck cores, in the order of the mesh.
        llvm::SmallVector<llvm::StringRef, 8> lines;
        llvm::StringRef(stuck).split(lines, '\n', -1, false);
        for (llvm::StringRef line :
             llvm::ArrayRef<llvm::StringRef>(lines).take_front(4))
          error += "; " + line.str();
        return false;
      }
      now = config.skipIdleCycles ? next : now + 1;
    }
    if (now > config.cycleLimit) {
      error = "the program runs past the limit of " +
              std::to_string(config.cycleLimit) + " cycles";
      return false;
    }
    if (workers.progress && links.worker() == 0 && step % 1024 == 0) {
      auto time = std::chrono::steady_clock::now();
      if (time - reported >= std::chrono::seconds(1)) {
        reported = time;
        workers.progress(
            {now, now * int64_t(width) * plan.program.height, links.workers()});
      }
    }
  }
  return true;
}

MeshResult Band::result() {
  // This band's part: the last cycle an engine was busy, when each row
  // worked, what its drains recorded.
  PartWriter part;
  int64_t busy = lastActive;
  for (int c = width; c < (rows + 1) * width; ++c)
    busy = std::max(busy, engines[c].busyUntil);
  part.put(stopped ? lastActive : busy);
  part.put(loopNanoseconds);
  part.put(static_cast<int64_t>(rows));
  for (auto [begin, last] : rowActivity) {
    part.put(std::max<int64_t>(begin, 0));
    part.put(last);
  }
  for (const std::vector<Wavelet> &wavelets : drained) {
    part.put(static_cast<int64_t>(wavelets.size()));
    for (const Wavelet &w : wavelets)
      part.put(w);
  }

  MeshResult result;
  result.stopped = stopped;
  result.drained.resize(plan.program.drains.size());
  for (const std::string &bytes : links.gather(part.bytes)) {
    PartReader reader(bytes);
    result.cycles = std::max(result.cycles, reader.get<int64_t>());
    result.seconds = std::max(
        result.seconds, static_cast<double>(reader.get<int64_t>()) * 1e-9);
    int64_t bandRows = reader.get<int64_t>();
    for (int64_t r = 0; r < bandRows; ++r) {
      int64_t begin = reader.get<int64_t>();
      result.rowActivity.push_back({begin, reader.get<int64_t>()});
    }
    for (std::vector<Wavelet> &wavelets : result.drained) {
      int64_t count = reader.get<int64_t>();
      for (int64_t i = 0; i < count; ++i)
        wavelets.push_back(reader.get<Wavelet>());
    }
  }
  result.coreCycles = result.cycles * width * plan.program.height;
  return result;
}

void Band::storeMemory() {
  if (!config.values || !plan.access.store)
    return;
  for (int c = width; c < (rows + 1) * width; ++c)
    if (engines[c].program)
      plan.access.store(globalCore(c), engines[c].memory);
}

} // namespace cgpt::sim::mesh::detail
