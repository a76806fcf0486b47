//===- MeshSimulator.cpp - a cycle-level model of the core mesh -----------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/MeshSimulator.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
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

/// One core's compute engine while it runs its program.
struct Engine {
  size_t pc = 0;
  int64_t remaining = 0;
  int64_t busyUntil = 0;
  /// The current streaming instruction has paid its activation.
  bool started = false;
};

class Mesh {
public:
  Mesh(const MeshProgram &program, const MeshConfig &config)
      : program(program), config(config), cores(program.width * program.height),
        colors(config.colors), queues(cores * kPorts * colors, 0),
        engineQueues(cores * colors, 0), arrivals(cores * kPorts * colors, 0),
        engineArrivals(cores * colors, 0), engines(cores),
        injected(program.injectors.size(), 0),
        rowActivity(program.height, {-1, 0}), drained(cores * kPorts, 0) {
    for (const Drain &d : program.drains)
      if (d.x >= 0 && d.y >= 0 && d.x < program.width &&
          d.y < program.height && d.port < ramp && d.color >= 0 &&
          d.color < 64)
        drained[program.index(d.x, d.y) * kPorts + d.port] |=
            uint64_t(1) << d.color;
  }

  /// Checks routes, instructions and injectors; empty when they are sound.
  std::string validate();
  std::optional<MeshResult> run(std::string &error);

private:
  int queueIndex(int c, int port, int color) const {
    return (c * kPorts + port) * colors + color;
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
  bool drains(int c, int port, int color) const;
  const Route *routeOf(int c, int color) const {
    for (const Route &route : program.routes[c])
      if (route.color == color)
        return &route;
    return nullptr;
  }
  /// Whether queue `index` can take one more wavelet this cycle.
  bool hasRoom(int index) const {
    return queues[index] + arrivals[index] < config.queueDepth;
  }
  bool engineHasRoom(int index) const {
    return engineQueues[index] + engineArrivals[index] < config.queueDepth;
  }
  bool routeStep(int c, uint8_t *linkUsed);
  bool engineStep(int c, int64_t now);
  bool done() const;
  std::string describeDeadlock(int64_t now) const;

  const MeshProgram &program;
  const MeshConfig &config;
  int cores, colors;
  /// Wavelets waiting in each router input queue (core, port, color), and
  /// at each compute engine (core, color).
  std::vector<uint16_t> queues, engineQueues;
  /// What arrives this cycle, added at its end: a wavelet moves one hop a
  /// cycle.
  std::vector<uint16_t> arrivals, engineArrivals;
  std::vector<int> touched, engineTouched;
  std::vector<Engine> engines;
  std::vector<int64_t> injected;
  std::vector<std::pair<int64_t, int64_t>> rowActivity;
  /// Per core and port, the colors a drain takes off there (bit per color).
  std::vector<uint64_t> drained;
  int64_t waveletsInFlight = 0;
};

bool Mesh::drains(int c, int port, int color) const {
  return port < ramp && (drained[c * kPorts + port] >> color & 1);
}

std::string Mesh::validate() {
  if (program.width < 1 || program.height < 1)
    return "the mesh must have at least one core, got " +
           std::to_string(program.width) + " x " +
           std::to_string(program.height);
  if (colors < 1 || colors > 64 || config.queueDepth < 1)
    return "the mesh needs 1 to 64 colors and queues of depth 1 or more";
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
    for (const Instruction &in : program.programs[c]) {
      auto routed = [&](int color, bool toEngine) {
        const Route *route = routeOf(c, color);
        return route && ((toEngine ? route->tx : route->rx) >> ramp & 1);
      };
      bool reads = in.kind == Instruction::receive ||
                   in.kind == Instruction::forward ||
                   in.kind == Instruction::store;
      bool writes = in.kind == Instruction::send;
      if (reads && !routed(in.color, true))
        return core(x, y) + " receives color " + std::to_string(in.color) +
               ", which its router never sends to the ramp";
      if (writes && !routed(in.color, false))
        return core(x, y) + " sends color " + std::to_string(in.color) +
               ", which its router never takes from the ramp";
      if (in.kind == Instruction::forward && !routed(in.outColor, false))
        return core(x, y) + " forwards to color " +
               std::to_string(in.outColor) +
               ", which its router never takes from the ramp";
      if (in.count < 0 || in.cycles < 0)
        return core(x, y) + " has an instruction with a negative count or "
                            "cycle count";
    }
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
  }
  return "";
}

/// Moves at most one wavelet per color through core `c`'s router, and at
/// most one per output link: each to every port of its route at once, when
/// every one of them has room.
bool Mesh::routeStep(int c, uint8_t *linkUsed) {
  bool moved = false;
  for (const Route &route : program.routes[c]) {
    for (int port = 0; port < kPorts; ++port) {
      if (!(route.rx >> port & 1))
        continue;
      int from = queueIndex(c, port, route.color);
      if (queues[from] == 0)
        continue;
      bool clear = true;
      for (int out = 0; out < kPorts && clear; ++out) {
        if (!(route.tx >> out & 1))
          continue;
        if (linkUsed[out]) {
          clear = false;
        } else if (out == ramp) {
          clear = engineHasRoom(c * colors + route.color);
        } else if (int next = neighbour(c, out);
                   next >= 0 && !drains(c, out, route.color)) {
          clear = hasRoom(queueIndex(next, opposite(out), route.color));
        }
      }
      if (!clear)
        continue;
      --queues[from];
      --waveletsInFlight;
      for (int out = 0; out < kPorts; ++out) {
        if (!(route.tx >> out & 1))
          continue;
        linkUsed[out] = 1;
        if (out == ramp) {
          int to = c * colors + route.color;
          if (engineArrivals[to]++ == 0)
            engineTouched.push_back(to);
          ++waveletsInFlight;
        } else if (int next = neighbour(c, out);
                   next >= 0 && !drains(c, out, route.color)) {
          int to = queueIndex(next, opposite(out), route.color);
          if (arrivals[to]++ == 0)
            touched.push_back(to);
          ++waveletsInFlight;
        }
      }
      moved = true;
      break; // one wavelet per color per cycle
    }
  }
  return moved;
}

/// Runs core `c`'s compute engine for cycle `now` if it is idle.
bool Mesh::engineStep(int c, int64_t now) {
  Engine &engine = engines[c];
  const std::vector<Instruction> &code = program.programs[c];
  if (engine.busyUntil > now || engine.pc >= code.size())
    return false;
  const Instruction &in = code[engine.pc];
  if (in.kind == Instruction::compute || in.count == 0) {
    engine.busyUntil = now + (in.kind == Instruction::compute ? in.cycles : 0);
    ++engine.pc;
    return true;
  }
  if (engine.remaining == 0 && !engine.started)
    engine.remaining = in.count;
  // A stream (store, send, forward) pays one activation before its first
  // wavelet; a receive starts one task per wavelet.
  bool receive = in.kind == Instruction::receive;
  if (!receive && !engine.started) {
    engine.started = true;
    engine.busyUntil = now + config.activationCycles;
    return true;
  }
  bool reads = in.kind != Instruction::send;
  bool writes = in.kind == Instruction::send || in.kind == Instruction::forward;
  int from = c * colors + in.color;
  int to = queueIndex(c, ramp,
                      in.kind == Instruction::send ? in.color : in.outColor);
  if ((reads && engineQueues[from] == 0) || (writes && !hasRoom(to)))
    return false;
  if (reads) {
    --engineQueues[from];
    --waveletsInFlight;
  }
  if (writes) {
    if (arrivals[to]++ == 0)
      touched.push_back(to);
    ++waveletsInFlight;
  }
  engine.started = true;
  engine.busyUntil = now + (receive ? config.activationCycles + in.cycles
                                    : std::max<int64_t>(1, in.cycles));
  if (--engine.remaining <= 0) {
    ++engine.pc;
    engine.started = false;
    engine.remaining = 0;
  }
  return true;
}

bool Mesh::done() const {
  if (waveletsInFlight != 0)
    return false;
  for (auto [index, in] : llvm::enumerate(program.injectors))
    if (injected[index] < in.count)
      return false;
  for (int c = 0; c < cores; ++c)
    if (engines[c].pc < program.programs[c].size())
      return false;
  return true;
}

std::string Mesh::describeDeadlock(int64_t now) const {
  std::string text =
      "deadlock at cycle " + std::to_string(now) + ": no wavelet can move";
  int listed = 0;
  for (int c = 0; c < cores && listed < 4; ++c) {
    int x = c % program.width, y = c / program.width;
    const Engine &engine = engines[c];
    if (engine.pc < program.programs[c].size()) {
      const Instruction &in = program.programs[c][engine.pc];
      const char *what = in.kind == Instruction::send      ? "sending"
                         : in.kind == Instruction::forward ? "forwarding"
                         : in.kind == Instruction::compute ? "computing"
                                                           : "receiving";
      text += "; " + core(x, y) + " is stuck " + what + " color " +
              std::to_string(in.color) + " with " +
              std::to_string(engine.remaining) + " wavelets to go";
      ++listed;
      continue;
    }
    for (int port = 0; port < kPorts && listed < 4; ++port)
      for (int color = 0; color < colors; ++color)
        if (queues[queueIndex(c, port, color)]) {
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
  int64_t now = 0, lastActive = 0;
  std::vector<uint8_t> linkUsed(kPorts);
  while (true) {
    bool moved = false;
    for (int c = 0; c < cores; ++c) {
      std::fill(linkUsed.begin(), linkUsed.end(), 0);
      moved |= routeStep(c, linkUsed.data());
    }
    for (auto [index, in] : llvm::enumerate(program.injectors)) {
      if (injected[index] >= in.count)
        continue;
      int to = queueIndex(program.index(in.x, in.y), in.port, in.color);
      if (!hasRoom(to))
        continue;
      if (arrivals[to]++ == 0)
        touched.push_back(to);
      ++waveletsInFlight;
      ++injected[index];
      moved = true;
    }
    for (int c = 0; c < cores; ++c) {
      if (!engineStep(c, now))
        continue;
      moved = true;
      auto &[first, last] = rowActivity[c / program.width];
      if (first < 0)
        first = now;
      last = std::max(last, engines[c].busyUntil);
    }
    for (int index : touched) {
      queues[index] += arrivals[index];
      arrivals[index] = 0;
    }
    for (int index : engineTouched) {
      engineQueues[index] += engineArrivals[index];
      engineArrivals[index] = 0;
    }
    touched.clear();
    engineTouched.clear();

    if (moved) {
      lastActive = now + 1;
      ++now;
    } else {
      // Nothing moved: the state changes next when an engine finishes its
      // task, so the cycles until then can be skipped.
      int64_t next = std::numeric_limits<int64_t>::max();
      for (const Engine &engine : engines)
        if (engine.busyUntil > now)
          next = std::min(next, engine.busyUntil);
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
  MeshResult result;
  result.cycles = lastActive;
  for (const Engine &engine : engines)
    result.cycles = std::max(result.cycles, engine.busyUntil);
  result.coreCycles = result.cycles * cores;
  for (auto [first, last] : rowActivity)
    result.rowActivity.push_back({std::max<int64_t>(first, 0), last});
  return result;
}

} // namespace

std::optional<MeshResult> simulate(const MeshProgram &program,
                                   const MeshConfig &config,
                                   std::string &error) {
  return Mesh(program, config).run(error);
}

} // namespace cgpt::sim::mesh
