//===- MeshSimulator.cpp - a cycle-level model of the core mesh -----------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/MeshSimulator.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/bit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <limits>

namespace cgpt::sim::mesh {
namespace {

const char *portName(int port) {
  static const char *names[] = {"north", "south", "east", "west", "ramp"};
  return names[port];
}

/// The port a wavelet sent out through `port` arrives on at the neighbour.
int opposite(int port) {
  static const int opposites[] = {south, north, west, east, ramp};
  return opposites[port];
}

std::string core(int x, int y) {
  return "core (" + std::to_string(x) + ", " + std::to_string(y) + ")";
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// A fixed-depth queue of wavelets: a router input queue, or a compute
/// engine's queue of one color. Queues that carry no values count their
/// wavelets and store nothing: timing alone touches less of the host's
/// memory per wavelet.
class Queues {
public:
  Queues() = default;
  Queues(size_t count, int depth, bool carryValues)
      : depth(depth), carryValues(carryValues),
        data(carryValues ? count * depth : 0), head(count, 0), size(count, 0),
        staged(carryValues ? count : 0), arriving(count, 0),
        reserved(count, 0) {}

  int count(int q) const { return size[q]; }
  /// Whether queue `q` can take one more wavelet this cycle.
  bool hasRoom(int q) const {
    return size[q] + arriving[q] + reserved[q] < depth;
  }
  /// Holds a place in queue `q` for a wavelet still crossing a ramp, and
  /// stages it when it arrives.
  void reserve(int q) { ++reserved[q]; }
  void stageReserved(int q, const Wavelet &w) {
    --reserved[q];
    stage(q, w);
  }
  Wavelet pop(int q) {
    Wavelet w = carryValues ? data[q * depth + head[q]] : Wavelet{};
    // A compare, not a division: this runs for every wavelet that moves.
    head[q] = static_cast<uint16_t>(head[q] + 1 == depth ? 0 : head[q] + 1);
    --size[q];
    return w;
  }
  /// A wavelet that arrives this cycle; it is in the queue from the next.
  void stage(int q, const Wavelet &w) {
    if (arriving[q]++ == 0)
      touched.push_back(q);
    if (carryValues)
      staged[q] = w;
  }
  /// The cycle ends: what arrived joins its queue.
  void settle() {
    for (int q : touched) {
      int tail = head[q] + size[q];
      if (carryValues)
        data[q * depth + (tail >= depth ? tail - depth : tail)] = staged[q];
      size[q] = static_cast<uint16_t>(size[q] + arriving[q]);
      arriving[q] = 0;
    }
    touched.clear();
  }

private:
  int depth = 1;
  bool carryValues = false;
  std::vector<Wavelet> data;
  std::vector<uint16_t> head, size;
  // At most one wavelet reaches a queue per cycle: one link feeds it.
  std::vector<Wavelet> staged;
  std::vector<uint8_t> arriving, reserved;
  std::vector<int> touched;
};

/// An operation running: the task's current one, or a microthread.
struct Running {
  const Op *op = nullptr;
  /// Elements done.
  int64_t progress = 0;
};

/// One compute engine while it runs its program.
struct Engine {
  const CoreProgram *program = nullptr;
  int x = 0, y = 0;
  std::vector<std::vector<float>> memory;
  std::vector<int64_t> cursors;
  std::vector<uint8_t> active;
  Wavelet argument;
  int task = -1;
  size_t pc = 0;
  /// The loops the task is in: the first and one-past-the-last operation
  /// of each, and the runs left.
  struct Loop {
    size_t first, end;
    int64_t left;
  };
  llvm::SmallVector<Loop, 2> loops;
  int64_t busyUntil = 0;
  /// The task's fabric operation in progress, if its op is one.
  Running current;
  llvm::SmallVector<Running, 2> microthreads;
};

class Mesh {
public:
  Mesh(const MeshProgram &program, const MeshConfig &config,
       const CoreMemoryAccess &access)
      : program(program), config(config), access(access),
        cores(program.width * program.height), colors(config.colors),
        engines(cores), injected(program.injectors.size(), 0),
        rowActivity(program.height, {-1, 0}), drainedColors(cores * kPorts, 0),
        recordOf(cores * kPorts * 64, -1) {
    for (auto [index, d] : llvm::enumerate(program.drains))
      if (d.x >= 0 && d.y >= 0 && d.x < program.width &&
          d.y < program.height && d.port < ramp && d.color >= 0 &&
          d.color < 64) {
        int at = program.index(d.x, d.y) * kPorts + d.port;
        drainedColors[at] |= uint64_t(1) << d.color;
        if (d.record)
          recordOf[at * 64 + d.color] = static_cast<int>(index);
      }
    result.drained.resize(program.drains.size());
  }

  /// Checks routes, programs and injectors; empty when they are sound.
  std::string validate();
  std::optional<MeshResult> run(std::string &error);

private:
  int queueIndex(int c, int port, int color) const {
    return (c * kPorts + port) * lanes + laneOf[color];
  }
  /// The compute engine's queue of `color` at core `c`.
  int engineQueue(int c, int color) const { return c * lanes + laneOf[color]; }
  /// Whether any router carries `color`: only those have queues.
  bool routed(int color) const {
    return color >= 0 && color < 64 && laneOf[color] >= 0;
  }
  /// The neighbour of core `c` through `port`, or -1 off the mesh.
  int neighbour(int c, int port) const {
    int x = c % program.width, y = c / program.width;
    switch (port) {
    case north:
      return y > 0 ? c - program.width : -1;
    case south:
      return y + 1 < program.height ? c + program.width : -1;
    case east:
      return x + 1 < program.width ? c + 1 : -1;
    case west:
      return x > 0 ? c - 1 : -1;
    default:
      return c;
    }
  }
  bool drains(int c, int port, int color) const {
    return port < ramp && (drainedColors[c * kPorts + port] >> color & 1);
  }
  const Route *routeOf(int c, int color) const {
    for (const Route &route : program.routes[c])
      if (route.color == color)
        return &route;
    return nullptr;
  }
  std::string validateProgram(int c);
  void load();
  bool routeStep(int c, uint8_t *linkUsed);
  bool engineStep(int c, int64_t now);
  /// One wavelet's worth of a fabric operation, if its inputs are there
  /// and its output has room; whether it moved.
  bool fabricStep(int c, Engine &engine, Running &running);
  /// Starts task `task` (costing an activation); false when none is ready.
  bool pickTask(int c, Engine &engine, int64_t now);
  /// Runs the task's ops until one takes time; whether anything happened.
  bool runTask(int c, Engine &engine, int64_t now);
  int64_t vectorCycles(const Engine &engine, const Op &op) const;
  void compute(Engine &engine, const Op &op, int64_t first, int64_t count,
               const Wavelet *in, Wavelet *out);
  float *element(Engine &engine, const Dsd &dsd, int64_t i);
  void advance(Engine &engine, int cursor, int64_t by);
  /// Sends `w` across core `c`'s ramp into router queue `q` (or, not
  /// `toRouter`, its engine's queue `q`): it joins the queue after the
  /// target's ramp latency.
  void crossRamp(int c, int q, bool toRouter, const Wavelet &w, int64_t now);
  /// Stages the wavelets whose ramp crossing ends this cycle.
  bool arriveFromRamps(int64_t now);
  bool done() const;
  std::string describeDeadlock(int64_t now) const;
  void fail(const std::string &message) {
    if (failure.empty())
      failure = message;
  }

  const MeshProgram &program;
  const MeshConfig &config;
  const CoreMemoryAccess &access;
  int cores, colors;
  /// Queues exist only for the colors the program routes (a handful of
  /// the target's): lane of each color, or -1, and how many there are.
  /// Dense queues keep a core's queues together in the host's cache.
  std::array<int8_t, 64> laneOf;
  int lanes = 0;
  /// Router input queues (core, port, color), and each compute engine's
  /// queue of each color (core, color).
  Queues router, toEngine;
  std::vector<Engine> engines;
  std::vector<int64_t> injected;
  std::vector<std::pair<int64_t, int64_t>> rowActivity;
  /// Per core and port, the colors a drain takes off there (bit per color),
  /// and the drain that records each, if any.
  std::vector<uint64_t> drainedColors;
  std::vector<int> recordOf;
  /// Whether the engine sent into its router this cycle: the ramp carries
  /// one wavelet a cycle each way.
  std::vector<uint8_t> rampOutUsed;
  /// Per core, the wavelets in its router's queues (or arriving there): a
  /// router with none has nothing to move.
  std::vector<int32_t> routerLoad;
  /// Per core, the cycle before which its engine has nothing to do: busy
  /// with an operation and running no microthread (or no program at all).
  /// Kept apart from the engines so that the scan each cycle stays in the
  /// host's cache.
  std::vector<int64_t> engineWaitsUntil;
  /// Wavelets crossing a ramp, in the order they will arrive (the latency
  /// is the same for all): into router queue `queue` of `core`, or into
  /// its engine's queue.
  struct Crossing {
    int64_t arrives;
    int core, queue;
    bool toRouter;
  };
  std::deque<Crossing> crossing;
  /// Their payloads, when wavelets carry values.
  std::deque<Wavelet> crossingValues;
  int64_t waveletsInFlight = 0;
  /// The cycle being simulated.
  int64_t cycle = 0;
  MeshResult result;
  std::string failure;
};

/// Whether the loop at `at` in `body` ends inside every loop it starts in.
static bool loopNests(const std::vector<Op> &body, size_t at) {
  size_t end = at + 1 + static_cast<size_t>(body[at].target);
  for (size_t outer = 0; outer < at; ++outer) {
    if (body[outer].kind != Op::Kind::loop)
      continue;
    size_t outerEnd = outer + 1 + static_cast<size_t>(body[outer].target);
    if (at < outerEnd && end > outerEnd)
      return false;
  }
  return true;
}

std::string Mesh::validateProgram(int c) {
  int x = c % program.width, y = c / program.width;
  int index = program.programOf[c];
  if (index < 0)
    return "";
  if (index >= static_cast<int>(program.programs.size()))
    return core(x, y) + " runs program " + std::to_string(index) +
           ", which the mesh does not have";
  const CoreProgram &code = program.programs[index];
  // A program that does not fit fails to load.
  int64_t room = config.sramBytes - config.reservedBytes, used = 0;
  for (const BufferDecl &buffer : code.buffers) {
    used += buffer.bytes();
    if (buffer.elements < 0 || used > room)
      return core(x, y) + " cannot load its program: buffer '" + buffer.name +
             "' (" + std::to_string(buffer.bytes()) +
             " B) brings its buffers to " + std::to_string(used) +
             " B, over the " + std::to_string(room) + " B a core has beside its " +
             std::to_string(config.reservedBytes) + " B reserve";
  }
  auto routed = [&](int color, bool toEngine) {
    const Route *route = color >= 0 && color < colors ? routeOf(c, color)
                                                      : nullptr;
    return route && ((toEngine ? route->tx : route->rx) >> ramp & 1);
  };
  auto checkDsd = [&](const Dsd &dsd) -> std::string {
    if (dsd.kind == Dsd::Kind::fabricIn && !routed(dsd.color, true))
      return core(x, y) + " reads color " + std::to_string(dsd.color) +
             ", which its router never sends to the ramp";
    if (dsd.kind == Dsd::Kind::fabricOut && !routed(dsd.color, false))
      return core(x, y) + " writes color " + std::to_string(dsd.color) +
             ", which its router never takes from the ramp";
    if (dsd.kind == Dsd::Kind::memory &&
        (dsd.buffer < 0 ||
         dsd.buffer >= static_cast<int>(code.buffers.size())))
      return core(x, y) + " names buffer " + std::to_string(dsd.buffer) +
             ", which its program does not allocate";
    if (dsd.cursor >= static_cast<int>(code.cursors.size()))
      return core(x, y) + " names cursor " + std::to_string(dsd.cursor) +
             ", which its program does not have";
    return "";
  };
  for (const Task &task : code.tasks) {
    if (task.data && !routed(task.color, true))
      return core(x, y) + " has a data task on color " +
             std::to_string(task.color) +
             ", which its router never sends to the ramp";
    for (const Op &op : task.body) {
      for (const Dsd *dsd : {&op.dst, &op.src0, &op.src1, &op.scalar})
        if (std::string error = checkDsd(*dsd); !error.empty())
          return error;
      if (op.length < 0)
        return core(x, y) + " has an operation of negative length";
      bool local = op.kind == Op::Kind::activate;
      if ((local || op.onDone >= 0) &&
          (local ? op.target : op.onDone) >=
              static_cast<int>(code.tasks.size()))
        return core(x, y) + " activates a task its program does not have";
      if (op.kind == Op::Kind::loop &&
          (op.target < 0 || op.by < 0 ||
           &op + op.target >= task.body.data() + task.body.size() ||
           !loopNests(task.body, &op - task.body.data())))
        return core(x, y) + " has a loop that does not nest inside its task";
      if (op.kind == Op::Kind::advance &&
          (op.target < 0 ||
           op.target >= static_cast<int>(code.cursors.size())))
        return core(x, y) + " advances a cursor its program does not have";
    }
  }
  return "";
}

std::string Mesh::validate() {
  if (program.width < 1 || program.height < 1)
    return "the mesh must have at least one core, got " +
           std::to_string(program.width) + " x " +
           std::to_string(program.height);
  if (colors < 1 || colors > 64 || config.queueDepth < 1 ||
      config.queueDepth > 255)
    return "the mesh needs 1 to 64 colors and queues of depth 1 to 255";
  for (int c = 0; c < cores; ++c) {
    int x = c % program.width, y = c / program.width;
    uint64_t seen = 0;
    for (const Route &route : program.routes[c]) {
      if (route.color < 0 || route.color >= colors)
        return core(x, y) + " routes color " + std::to_string(route.color) +
               "; the target has colors 0 to " + std::to_string(colors - 1);
      if (seen & (uint64_t(1) << route.color))
        return core(x, y) + " routes color " + std::to_string(route.color) +
               " twice; a color takes one route through a router";
      seen |= uint64_t(1) << route.color;
      for (int port = 0; port < ramp; ++port)
        if ((route.tx >> port & 1) && neighbour(c, port) < 0 &&
            !drains(c, port, route.color))
          return core(x, y) + " routes color " + std::to_string(route.color) +
                 " " + portName(port) + ", off the mesh";
    }
    if (std::string error = validateProgram(c); !error.empty())
      return error;
  }
  for (const Injector &in : program.injectors) {
    if (in.x < 0 || in.y < 0 || in.x >= program.width ||
        in.y >= program.height)
      return "an injector at " + core(in.x, in.y) + " is off the " +
             std::to_string(program.width) + " x " +
             std::to_string(program.height) + " mesh";
    int c = program.index(in.x, in.y);
    if (in.port == ramp)
      return "an injector at " + core(in.x, in.y) +
             " enters through the ramp, which is not an edge";
    // Inside the mesh, the edge of a rectangle a region runs on: the
    // neighbour across it must not send that color this way.
    if (int next = neighbour(c, in.port); next >= 0) {
      const Route *theirs = in.color >= 0 && in.color < colors
                                ? routeOf(next, in.color)
                                : nullptr;
      if (theirs && (theirs->tx >> opposite(in.port) & 1))
        return "an injector at " + core(in.x, in.y) + " enters through " +
               portName(in.port) + " on color " + std::to_string(in.color) +
               ", which the neighbour there also sends this way";
    }
    const Route *route = in.color >= 0 && in.color < colors
                             ? routeOf(c, in.color)
                             : nullptr;
    if (!route || !(route->rx >> in.port & 1))
      return "an injector at " + core(in.x, in.y) + " sends color " +
             std::to_string(in.color) + " from " + portName(in.port) +
             ", which the router does not receive there";
    if (!in.payload.empty() &&
        static_cast<int64_t>(in.payload.size()) != in.count)
      return "an injector at " + core(in.x, in.y) + " carries " +
             std::to_string(in.payload.size()) + " payloads for " +
             std::to_string(in.count) + " wavelets";
  }
  return "";
}

void Mesh::load() {
  laneOf.fill(-1);
  for (const auto &routes : program.routes)
    for (const Route &route : routes)
      if (laneOf[route.color] < 0)
        laneOf[route.color] = static_cast<int8_t>(lanes++);
  router = Queues(static_cast<size_t>(cores) * kPorts * lanes,
                  config.queueDepth, config.values);
  toEngine = Queues(static_cast<size_t>(cores) * lanes, config.queueDepth,
                    config.values);
  rampOutUsed.assign(cores, 0);
  routerLoad.assign(cores, 0);
  engineWaitsUntil.assign(cores, std::numeric_limits<int64_t>::max());
  for (int c = 0; c < cores; ++c) {
    int index = program.programOf[c];
    if (index < 0)
      continue;
    Engine &engine = engines[c];
    engine.program = &program.programs[index];
    engineWaitsUntil[c] = 0;
    engine.x = c % program.width;
    engine.y = c / program.width;
    engine.cursors.assign(engine.program->cursors.size(), 0);
    engine.active.assign(engine.program->tasks.size(), 0);
    for (int task : engine.program->startActive)
      engine.active[task] = 1;
    if (!config.values)
      continue;
    for (const BufferDecl &buffer : engine.program->buffers)
      engine.memory.emplace_back(buffer.elements, 0.0f);
    if (access.load)
      access.load(c, engine.memory);
  }
}

/// Moves at most one wavelet per color through core `c`'s router, and at
/// most one per output link: each to every port of its route at once, when
/// every one of them has room.
bool Mesh::routeStep(int c, uint8_t *linkUsed) {
  bool moved = false;
  for (const Route &route : program.routes[c]) {
    for (unsigned ports = route.rx; ports; ports &= ports - 1) {
      int port = llvm::countr_zero(ports);
      int from = queueIndex(c, port, route.color);
      if (router.count(from) == 0)
        continue;
      bool clear = true;
      for (int out = 0; out < kPorts && clear; ++out) {
        if (!(route.tx >> out & 1))
          continue;
        if (linkUsed[out]) {
          clear = false;
        } else if (out == ramp) {
          clear = toEngine.hasRoom(engineQueue(c, route.color));
        } else if (int next = neighbour(c, out);
                   next >= 0 && !drains(c, out, route.color)) {
          clear = router.hasRoom(queueIndex(next, opposite(out), route.color));
        }
      }
      if (!clear)
        continue;
      Wavelet w = router.pop(from);
      --waveletsInFlight;
      --routerLoad[c];
      for (int out = 0; out < kPorts; ++out) {
        if (!(route.tx >> out & 1))
          continue;
        linkUsed[out] = 1;
        if (out == ramp) {
          crossRamp(c, engineQueue(c, route.color), false, w, cycle);
          ++waveletsInFlight;
        } else if (int next = neighbour(c, out);
                   next >= 0 && !drains(c, out, route.color)) {
          router.stage(queueIndex(next, opposite(out), route.color), w);
          ++waveletsInFlight;
          ++routerLoad[next];
        } else if (int record = recordOf[(c * kPorts + out) * 64 + route.color];
                   record >= 0) {
          result.drained[record].push_back(w);
        }
      }
      moved = true;
      break; // one wavelet per color per cycle
    }
  }
  return moved;
}

float *Mesh::element(Engine &engine, const Dsd &dsd, int64_t i) {
  static float zero = 0;
  if (dsd.kind == Dsd::Kind::zero) {
    zero = 0;
    return &zero;
  }
  if (dsd.kind == Dsd::Kind::reg)
    return dsd.high ? &engine.argument.hi : &engine.argument.lo;
  std::vector<float> &buffer = engine.memory[dsd.buffer];
  int64_t at = dsd.offset + (dsd.cursor >= 0 ? engine.cursors[dsd.cursor] : 0) +
               i * dsd.stride;
  if (dsd.circular && !buffer.empty())
    at %= static_cast<int64_t>(buffer.size());
  if (at < 0 || at >= static_cast<int64_t>(buffer.size())) {
    fail(core(engine.x, engine.y) + " reads or writes element " +
         std::to_string(at) +
         " of buffer '" + engine.program->buffers[dsd.buffer].name +
         "', which has " + std::to_string(buffer.size()));
    zero = 0;
    return &zero;
  }
  return &buffer[at];
}

void Mesh::compute(Engine &engine, const Op &op, int64_t first, int64_t count,
                   const Wavelet *in, Wavelet *out) {
  if (!config.values)
    return;
  // A fabric operand gives or takes the elements of one wavelet: lo, then
  // hi for 16-bit data.
  auto fabricValue = [&](const Wavelet *w, int64_t k) {
    return k == 0 ? w->lo : w->hi;
  };
  for (int64_t k = 0; k < count; ++k) {
    int64_t i = first + k;
    auto read = [&](const Dsd &dsd) -> float {
      if (dsd.kind == Dsd::Kind::fabricIn)
        return fabricValue(in, k);
      if (dsd.kind == Dsd::Kind::none)
        return 0;
      return *element(engine, dsd, dsd.kind == Dsd::Kind::reg ? 0 : i);
    };
    float a = read(op.src0), b = read(op.src1), value = 0;
    switch (op.kind) {
    case Op::Kind::fmac:
      value = a + b * read(op.scalar);
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
    default:
      break;
    }
    if (op.dst.kind == Dsd::Kind::fabricOut)
      (k == 0 ? out->lo : out->hi) = value;
    else
      *element(engine, op.dst, i) = value;
  }
}

int64_t Mesh::vectorCycles(const Engine &engine, const Op &op) const {
  bool half = op.type == ElementType::bf16;
  int64_t width = op.kind == Op::Kind::fmac
                      ? (half ? config.mixedFmacs : config.f32Fmacs)
                      : (half ? config.halfOps : config.f32Ops);
  // Bytes each element moves through the SRAM's ports.
  auto bytes = [&](const Dsd &dsd) -> int64_t {
    if (dsd.kind != Dsd::Kind::memory)
      return 0;
    return bytesOf(engine.program->buffers[dsd.buffer].type);
  };
  int64_t reads = bytes(op.src0) + bytes(op.src1);
  int64_t writes = bytes(op.dst);
  int64_t n = op.length;
  return std::max({ceilDiv(n, std::max<int64_t>(1, width)),
                   ceilDiv(n * reads, config.readBytesPerCycle),
                   ceilDiv(n * writes, config.writeBytesPerCycle)});
}

void Mesh::advance(Engine &engine, int cursor, int64_t by) {
  const Cursor &spec = engine.program->cursors[cursor];
  for (int64_t i = 0; i < by; ++i) {
    engine.cursors[cursor] += spec.step;
    if (spec.wrap && engine.cursors[cursor] >= spec.wrap) {
      engine.cursors[cursor] = 0;
      if (spec.carry >= 0)
        advance(engine, spec.carry, 1);
      if (spec.onWrap >= 0)
        engine.active[spec.onWrap] = 1;
    }
  }
}

bool Mesh::fabricStep(int c, Engine &engine, Running &running) {
  const Op &op = *running.op;
  // Elements this wavelet carries: one f32 or two 16-bit values, fewer at
  // the end of an odd count.
  int64_t count = std::min(perWavelet(op.type), op.length - running.progress);
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
  compute(engine, op, running.progress, count, &in, &out);
  if (output) {
    rampOutUsed[c] = 1;
    crossRamp(c, to, true, out, cycle);
    ++waveletsInFlight;
  }
  running.progress += count;
  return true;
}

bool Mesh::pickTask(int c, Engine &engine, int64_t now) {
  const std::vector<Task> &tasks = engine.program->tasks;
  // Local tasks first, then a data task whose color has a wavelet waiting.
  int chosen = -1;
  for (size_t t = 0; t < tasks.size() && chosen < 0; ++t)
    if (!tasks[t].data && engine.active[t])
      chosen = static_cast<int>(t);
  for (size_t t = 0; t < tasks.size() && chosen < 0; ++t)
    if (tasks[t].data && routed(tasks[t].color) &&
        toEngine.count(engineQueue(c, tasks[t].color)))
      chosen = static_cast<int>(t);
  if (chosen < 0)
    return false;
  if (tasks[chosen].data) {
    engine.argument = toEngine.pop(engineQueue(c, tasks[chosen].color));
    --waveletsInFlight;
  } else {
    engine.active[chosen] = 0;
  }
  engine.task = chosen;
  engine.pc = 0;
  engine.loops.clear();
  engine.current = {};
  engine.busyUntil = now + config.activationCycles;
  return true;
}

bool Mesh::runTask(int c, Engine &engine, int64_t now) {
  const std::vector<Op> &body = engine.program->tasks[engine.task].body;
  bool acted = false;
  while (true) {
    // The end of a loop's operations runs them again or leaves the loop.
    while (!engine.loops.empty() && engine.pc == engine.loops.back().end) {
      if (--engine.loops.back().left > 0) {
        engine.pc = engine.loops.back().first;
        break;
      }
      engine.loops.pop_back();
    }
    if (engine.pc == body.size())
      break;
    const Op &op = body[engine.pc];
    switch (op.kind) {
    case Op::Kind::loop:
      ++engine.pc;
      if (op.by > 0 && op.target > 0)
        engine.loops.push_back(
            {engine.pc, engine.pc + static_cast<size_t>(op.target), op.by});
      else
        engine.pc += static_cast<size_t>(std::max(op.target, 0));
      acted = true;
      continue;
    case Op::Kind::activate:
      engine.active[op.target] = 1;
      ++engine.pc;
      acted = true;
      continue;
    case Op::Kind::advance:
      advance(engine, op.target, op.by);
      ++engine.pc;
      acted = true;
      continue;
    default:
      break;
    }
    bool fabric = op.dst.isFabric() || op.src0.isFabric() ||
                  op.src1.isFabric();
    if (op.async) {
      engine.microthreads.push_back({&op, 0});
      ++engine.pc;
      acted = true;
      continue;
    }
    if (!fabric) {
      compute(engine, op, 0, op.length, nullptr, nullptr);
      engine.busyUntil = now + vectorCycles(engine, op);
      ++engine.pc;
      return true;
    }
    if (!engine.current.op)
      engine.current = {&op, 0};
    if (engine.current.progress < op.length &&
        !fabricStep(c, engine, engine.current))
      return acted;
    if (engine.current.progress >= op.length) {
      engine.current = {};
      ++engine.pc;
    }
    engine.busyUntil = now + 1;
    return true;
  }
  engine.task = -1;
  return acted;
}

bool Mesh::engineStep(int c, int64_t now) {
  Engine &engine = engines[c];
  if (!engine.program)
    return false;
  bool acted = false;
  // Microthreads run beside the tasks, a wavelet a cycle each.
  for (size_t i = 0; i < engine.microthreads.size();) {
    Running &running = engine.microthreads[i];
    if (running.progress < running.op->length &&
        fabricStep(c, engine, running))
      acted = true;
    if (running.progress >= running.op->length) {
      if (running.op->onDone >= 0)
        engine.active[running.op->onDone] = 1;
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
    // A task that ended this cycle hands the engine to the next one now:
    // the activation is the switch.
    if (engine.task >= 0)
      return acted;
  }
  return pickTask(c, engine, now) || acted;
}

void Mesh::crossRamp(int c, int q, bool toRouter, const Wavelet &w,
                     int64_t now) {
  Queues &queues = toRouter ? router : toEngine;
  if (config.rampLatencyCycles <= 1) {
    queues.stage(q, w);
    routerLoad[c] += toRouter;
    return;
  }
  queues.reserve(q);
  crossing.push_back({now + config.rampLatencyCycles - 1, c, q, toRouter});
  if (config.values)
    crossingValues.push_back(w);
}

bool Mesh::arriveFromRamps(int64_t now) {
  bool arrived = false;
  while (!crossing.empty() && crossing.front().arrives <= now) {
    const Crossing &next = crossing.front();
    Wavelet w;
    if (config.values) {
      w = crossingValues.front();
      crossingValues.pop_front();
    }
    (next.toRouter ? router : toEngine).stageReserved(next.queue, w);
    routerLoad[next.core] += next.toRouter;
    crossing.pop_front();
    arrived = true;
  }
  return arrived;
}

bool Mesh::done() const {
  if (waveletsInFlight != 0)
    return false;
  for (auto [index, in] : llvm::enumerate(program.injectors))
    if (injected[index] < in.count)
      return false;
  for (const Engine &engine : engines) {
    if (!engine.program)
      continue;
    if (engine.task >= 0 || !engine.microthreads.empty() ||
        llvm::is_contained(engine.active, 1))
      return false;
  }
  return true;
}

std::string Mesh::describeDeadlock(int64_t now) const {
  std::string text =
      "deadlock at cycle " + std::to_string(now) + ": no wavelet can move";
  int listed = 0;
  for (int c = 0; c < cores && listed < 4; ++c) {
    int x = c % program.width, y = c / program.width;
    const Engine &engine = engines[c];
    auto describe = [&](const Running &running, const char *what) {
      const Op &op = *running.op;
      int color = op.dst.kind == Dsd::Kind::fabricOut ? op.dst.color
                  : op.src0.isFabric()                ? op.src0.color
                                                      : op.src1.color;
      text += "; " + core(x, y) + " is stuck " + what + " color " +
              std::to_string(color) + " with " +
              std::to_string(op.length - running.progress) +
              " elements to go";
      ++listed;
    };
    if (engine.current.op) {
      describe(engine.current, "in a task on");
      continue;
    }
    if (!engine.microthreads.empty()) {
      describe(engine.microthreads.front(), "in a microthread on");
      continue;
    }
    for (int port = 0; port < kPorts && listed < 4; ++port)
      for (int color = 0; color < colors; ++color)
        if (routed(color) && router.count(queueIndex(c, port, color))) {
          text += "; " + core(x, y) + " holds color " + std::to_string(color) +
                  " from " + portName(port) + " that cannot leave";
          ++listed;
          break;
        }
  }
  return text;
}

std::optional<MeshResult> Mesh::run(std::string &error) {
  error = validate();
  if (!error.empty())
    return std::nullopt;
  load();
  int64_t now = 0, lastActive = 0;
  std::vector<uint8_t> linkUsed(kPorts);
  while (true) {
    cycle = now;
    bool moved = arriveFromRamps(now);
    for (int c = 0; c < cores; ++c) {
      if (routerLoad[c] == 0)
        continue;
      std::fill(linkUsed.begin(), linkUsed.end(), 0);
      moved |= routeStep(c, linkUsed.data());
    }
    for (auto [index, in] : llvm::enumerate(program.injectors)) {
      if (injected[index] >= in.count)
        continue;
      int to = queueIndex(program.index(in.x, in.y), in.port, in.color);
      if (!router.hasRoom(to))
        continue;
      router.stage(to, in.payload.empty() ? Wavelet{}
                                          : in.payload[injected[index]]);
      ++waveletsInFlight;
      ++routerLoad[program.index(in.x, in.y)];
      ++injected[index];
      moved = true;
    }
    std::fill(rampOutUsed.begin(), rampOutUsed.end(), 0);
    for (int c = 0; c < cores; ++c) {
      if (engineWaitsUntil[c] > now)
        continue;
      bool acted = engineStep(c, now);
      const Engine &engine = engines[c];
      engineWaitsUntil[c] = engine.microthreads.empty() ? engine.busyUntil : 0;
      if (!acted)
        continue;
      moved = true;
      auto &[first, last] = rowActivity[c / program.width];
      if (first < 0)
        first = now;
      last = std::max(last, std::max(engines[c].busyUntil, now + 1));
    }
    router.settle();
    toEngine.settle();
    if (!failure.empty()) {
      error = failure;
      return std::nullopt;
    }

    if (moved) {
      lastActive = now + 1;
      ++now;
    } else {
      // Nothing moved: the state changes next when an engine finishes its
      // operation, so the cycles until then can be skipped.
      int64_t next = std::numeric_limits<int64_t>::max();
      for (const Engine &engine : engines)
        if (engine.busyUntil > now)
          next = std::min(next, engine.busyUntil);
      if (!crossing.empty())
        next = std::min(next, crossing.front().arrives);
      if (next == std::numeric_limits<int64_t>::max()) {
        if (done())
          break;
        error = describeDeadlock(now);
        return std::nullopt;
      }
      now = config.skipIdleCycles ? next : now + 1;
    }
    if (now > config.cycleLimit) {
      error = "the program runs past the limit of " +
              std::to_string(config.cycleLimit) + " cycles";
      return std::nullopt;
    }
  }
  result.cycles = lastActive;
  for (const Engine &engine : engines)
    result.cycles = std::max(result.cycles, engine.busyUntil);
  result.coreCycles = result.cycles * cores;
  for (auto [first, last] : rowActivity)
    result.rowActivity.push_back({std::max<int64_t>(first, 0), last});
  if (config.values && access.store)
    for (int c = 0; c < cores; ++c)
      if (engines[c].program)
        access.store(c, engines[c].memory);
  return std::move(result);
}

} // namespace

std::optional<MeshResult> simulate(const MeshProgram &program,
                                   const MeshConfig &config, std::string &error,
                                   const CoreMemoryAccess &memory) {
  return Mesh(program, config, memory).run(error);
}

} // namespace cgpt::sim::mesh
