//===- MeshSimulator.cpp - a cycle-level model of the core mesh -----------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The checks of a program, the bands a run is cut into, and the threads
// that simulate them (MeshBand.cpp simulates one band).
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/MeshSimulator.h"

#include "MeshBand.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace cgpt::sim::mesh {
namespace {

using detail::Band;
using detail::coreName;
using detail::opposite;
using detail::portName;
using detail::RunPlan;

/// Whether a program can run: its routes on the mesh and its programs
/// sound and within a core's SRAM.
class Validator {
public:
  Validator(const RunPlan &plan)
      : program(plan.program), config(plan.config), plan(plan),
        colors(plan.config.colors) {}
  /// Empty when the program is sound.
  std::string validate();

private:
  std::string validateProgram(int c);
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
    return plan.drainOf.count((int64_t(c) * kPorts + port) * 64 + color);
  }
  const Route *routeOf(int c, int color) const {
    for (const Route &route : program.routes[c])
      if (route.color == color)
        return &route;
    return nullptr;
  }

  const MeshProgram &program;
  const MeshConfig &config;
  const RunPlan &plan;
  int colors;
};

/// Whether the loop at `at` in `body` ends inside every loop it starts in.
bool loopNests(const std::vector<Op> &body, size_t at) {
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

std::string Validator::validateProgram(int c) {
  int x = c % program.width, y = c / program.width;
  int index = program.programOf[c];
  if (index < 0)
    return "";
  if (index >= static_cast<int>(program.programs.size()))
    return coreName(x, y) + " runs program " + std::to_string(index) +
           ", which the mesh does not have";
  const CoreProgram &code = program.programs[index];
  // A program that does not fit fails to load.
  int64_t room = config.sramBytes - config.reservedBytes, used = 0;
  for (const BufferDecl &buffer : code.buffers) {
    used += buffer.bytes();
    if (buffer.elements < 0 || used > room)
      return coreName(x, y) + " cannot load its program: buffer '" +
             buffer.name + "' (" + std::to_string(buffer.bytes()) +
             " B) brings its buffers to " + std::to_string(used) +
             " B, over the " + std::to_string(room) +
             " B a core has beside its " +
             std::to_string(config.reservedBytes) + " B reserve";
  }
  auto routed = [&](int color, bool toEngine) {
    const Route *route =
        color >= 0 && color < colors ? routeOf(c, color) : nullptr;
    return route && ((toEngine ? route->tx : route->rx) >> ramp & 1);
  };
  auto checkDsd = [&](const Dsd &dsd) -> std::string {
    if (dsd.kind == Dsd::Kind::fabricIn && !routed(dsd.color, true))
      return coreName(x, y) + " reads color " + std::to_string(dsd.color) +
             ", which its router never sends to the ramp";
    if (dsd.kind == Dsd::Kind::fabricOut && !routed(dsd.color, false))
      return coreName(x, y) + " writes color " + std::to_string(dsd.color) +
             ", which its router never takes from the ramp";
    if (dsd.kind == Dsd::Kind::memory &&
        (dsd.buffer < 0 || dsd.buffer >= static_cast<int>(code.buffers.size())))
      return coreName(x, y) + " names buffer " + std::to_string(dsd.buffer) +
             ", which its program does not allocate";
    if (dsd.index >= static_cast<int>(code.buffers.size()) ||
        (dsd.index >= 0 && dsd.cursor < 0))
      return coreName(x, y) + " indexes through buffer " +
             std::to_string(dsd.index) +
             ", which its program does not allocate, or without a cursor";
    if (dsd.cursor >= static_cast<int>(code.cursors.size()))
      return coreName(x, y) + " names cursor " + std::to_string(dsd.cursor) +
             ", which its program does not have";
    return "";
  };
  for (const std::vector<int> *tasks : {&code.startActive, &code.startBlocked})
    for (int task : *tasks)
      if (task < 0 || task >= static_cast<int>(code.tasks.size()))
        return coreName(x, y) + " starts task " + std::to_string(task) +
               " active or blocked, which its program does not have";
  for (const Task &task : code.tasks) {
    if (task.data && !routed(task.color, true))
      return coreName(x, y) + " has a data task on color " +
             std::to_string(task.color) +
             ", which its router never sends to the ramp";
    for (const Op &op : task.body) {
      for (const Dsd *dsd : {&op.dst, &op.src0, &op.src1, &op.scalar})
        if (std::string error = checkDsd(*dsd); !error.empty())
          return error;
      if (op.length < 0)
        return coreName(x, y) + " has an operation of negative length";
      if (op.lengthFrom >= 0 &&
          (op.lengthFrom >= static_cast<int>(code.buffers.size()) ||
           op.lengthCursor < 0 ||
           op.lengthCursor >= static_cast<int>(code.cursors.size()) ||
           op.async ||
           !(op.dst.isFabric() || op.src0.isFabric() || op.src1.isFabric())))
        return coreName(x, y) +
               " sets a length from data on an operation that is not a "
               "task's fabric operation, or from a buffer or cursor its "
               "program does not have";
      bool local = op.kind == Op::Kind::activate ||
                   op.kind == Op::Kind::block || op.kind == Op::Kind::unblock;
      if ((local || op.onDone >= 0) && (local ? op.target : op.onDone) >=
                                           static_cast<int>(code.tasks.size()))
        return coreName(x, y) + " activates a task its program does not have";
      if (op.kind == Op::Kind::loop &&
          (op.target < 0 || op.by < 0 ||
           &op + op.target >= task.body.data() + task.body.size() ||
           !loopNests(task.body, &op - task.body.data())))
        return coreName(x, y) +
               " has a loop that does not nest inside its task";
      if (op.kind == Op::Kind::advance &&
          (op.target < 0 || op.target >= static_cast<int>(code.cursors.size())))
        return coreName(x, y) + " advances a cursor its program does not have";
    }
  }
  return "";
}

std::string Validator::validate() {
  if (program.width < 1 || program.height < 1)
    return "the mesh must have at least one core, got " +
           std::to_string(program.width) + " x " +
           std::to_string(program.height);
  if (colors < 1 || colors > 64 || config.queueDepth < 1 ||
      config.queueDepth > 255)
    return "the mesh needs 1 to 64 colors and queues of depth 1 to 255";
  int cores = program.width * program.height;
  for (int c = 0; c < cores; ++c) {
    int x = c % program.width, y = c / program.width;
    uint64_t seen = 0;
    for (const Route &route : program.routes[c]) {
      if (route.color < 0 || route.color >= colors)
        return coreName(x, y) + " routes color " + std::to_string(route.color) +
               "; the target has colors 0 to " + std::to_string(colors - 1);
      if (seen & (uint64_t(1) << route.color))
        return coreName(x, y) + " routes color " + std::to_string(route.color) +
               " twice; a color takes one route through a router";
      seen |= uint64_t(1) << route.color;
      for (int port = 0; port < ramp; ++port)
        if ((route.tx >> port & 1) && neighbour(c, port) < 0 &&
            !drains(c, port, route.color))
          return coreName(x, y) + " routes color " +
                 std::to_string(route.color) + " " + portName(port) +
                 ", off the mesh";
    }
    if (std::string error = validateProgram(c); !error.empty())
      return error;
  }
  for (const Injector &in : program.injectors) {
    if (in.x < 0 || in.y < 0 || in.x >= program.width || in.y >= program.height)
      return "an injector at " + coreName(in.x, in.y) + " is off the " +
             std::to_string(program.width) + " x " +
             std::to_string(program.height) + " mesh";
    int c = program.index(in.x, in.y);
    if (in.port == ramp)
      return "an injector at " + coreName(in.x, in.y) +
             " enters through the ramp, which is not an edge";
    // Inside the mesh, the edge of a rectangle a region runs on: the
    // neighbour across it must not send that color this way.
    if (int next = neighbour(c, in.port); next >= 0) {
      const Route *theirs = in.color >= 0 && in.color < colors
                                ? routeOf(next, in.color)
                                : nullptr;
      if (theirs && (theirs->tx >> opposite(in.port) & 1))
        return "an injector at " + coreName(in.x, in.y) + " enters through " +
               portName(in.port) + " on color " + std::to_string(in.color) +
               ", which the neighbour there also sends this way";
    }
    const Route *route =
        in.color >= 0 && in.color < colors ? routeOf(c, in.color) : nullptr;
    if (!route || !(route->rx >> in.port & 1))
      return "an injector at " + coreName(in.x, in.y) + " sends color " +
             std::to_string(in.color) + " from " + portName(in.port) +
             ", which the router does not receive there";
    if (!in.payload.empty() &&
        static_cast<int64_t>(in.payload.size()) != in.count)
      return "an injector at " + coreName(in.x, in.y) + " carries " +
             std::to_string(in.payload.size()) + " payloads for " +
             std::to_string(in.count) + " wavelets";
  }
  return "";
}

/// The barrier the workers of a band run meet at, once or twice a cycle.
/// A worker spins first: with a core each, the others arrive within
/// microseconds, too soon to sleep. One that waits longer sleeps until the
/// last arrives: with more workers than free host cores (4 threads on 2,
/// or beside other work) a spinning worker would hold the core that the
/// one it waits for needs, for a whole time slice a cycle.
class WorkerBarrier {
public:
  explicit WorkerBarrier(int count) : count(count) {}
  void wait() {
    int64_t generation = passed.load(std::memory_order_acquire);
    if (waiting.fetch_add(1, std::memory_order_acq_rel) + 1 == count) {
      waiting.store(0, std::memory_order_relaxed);
      {
        std::lock_guard<std::mutex> lock(mutex);
        passed.fetch_add(1, std::memory_order_release);
      }
      wake.notify_all();
      return;
    }
    for (int spins = 0; spins < kSpins; ++spins) {
      if (passed.load(std::memory_order_acquire) != generation)
        return;
      if (spins >= kSpins / 4)
        std::this_thread::yield();
    }
    std::unique_lock<std::mutex> lock(mutex);
    wake.wait(lock, [&] {
      return passed.load(std::memory_order_acquire) != generation;
    });
  }

private:
  /// Checks before a worker sleeps: the first quarter spinning, the rest
  /// yielding its core between checks.
  static constexpr int kSpins = 1024;
  const int count;
  std::atomic<int> waiting{0};
  std::atomic<int64_t> passed{0};
  std::mutex mutex;
  std::condition_variable wake;
};

/// The threads of one run. Each collective writes the slot of its parity
/// and reads the others' after the barrier: a worker writes the same slot
/// again only two collectives later, when every worker has passed the
/// barrier between, and so has read it.
class ThreadGroup {
public:
  explicit ThreadGroup(int count) : barrier(count), slots(count) {}

  struct Exchange {
    std::vector<BorderEntry> toNorth, toSouth;
    CycleFigures figures;
  };
  struct Slot {
    Exchange parity[2];
    std::string gathered;
  };
  WorkerBarrier barrier;
  std::vector<Slot> slots;
};

class ThreadLinks : public BandLinks {
public:
  ThreadLinks(ThreadGroup &group, int index) : group(group), index(index) {}
  int worker() const override { return index; }
  int workers() const override { return static_cast<int>(group.slots.size()); }
  void endCycle(bool north, bool south, const std::vector<BorderEntry> &toNorth,
                const std::vector<BorderEntry> &toSouth,
                std::vector<BorderEntry> &fromNorth,
                std::vector<BorderEntry> &fromSouth,
                CycleFigures &figures) override {
    ThreadGroup::Exchange &mine = group.slots[index].parity[parity];
    mine.toNorth = toNorth;
    mine.toSouth = toSouth;
    mine.figures = figures;
    group.barrier.wait();
    fromNorth.clear();
    fromSouth.clear();
    if (north)
      fromNorth = group.slots[index - 1].parity[parity].toSouth;
    if (south)
      fromSouth = group.slots[index + 1].parity[parity].toNorth;
    combine(figures);
  }
  void minimum(CycleFigures &figures) override {
    group.slots[index].parity[parity].figures = figures;
    group.barrier.wait();
    combine(figures);
  }
  std::vector<std::string> gather(const std::string &mine) override {
    group.slots[index].gathered = mine;
    group.barrier.wait();
    std::vector<std::string> all;
    for (const ThreadGroup::Slot &slot : group.slots)
      all.push_back(slot.gathered);
    group.barrier.wait();
    return all;
  }

private:
  void combine(CycleFigures &figures) {
    for (const ThreadGroup::Slot &slot : group.slots)
      for (int i = 0; i < kCycleFigures; ++i)
        figures[i] = std::min(figures[i], slot.parity[parity].figures[i]);
    parity ^= 1;
  }

  ThreadGroup &group;
  int index, parity = 0;
};

/// A run on one worker: nothing crosses a border.
class SoloLinks : public BandLinks {
public:
  int worker() const override { return 0; }
  int workers() const override { return 1; }
  void endCycle(bool, bool, const std::vector<BorderEntry> &,
                const std::vector<BorderEntry> &, std::vector<BorderEntry> &,
                std::vector<BorderEntry> &, CycleFigures &) override {}
  void minimum(CycleFigures &) override {}
  std::vector<std::string> gather(const std::string &mine) override {
    return {mine};
  }
};

} // namespace

int meshWorkers(int width, int height, const MeshWorkers &workers) {
  if (workers.processes)
    return std::max(1, std::min(workers.processes->workers(), height));
  int64_t threads = std::clamp(workers.threads, 1, 4096);
  int64_t perThread = std::max<int64_t>(1, workers.minCoresPerThread);
  threads = std::min(threads,
                     std::max<int64_t>(1, int64_t(width) * height / perThread));
  return static_cast<int>(std::min<int64_t>(threads, std::max(1, height)));
}

int64_t estimateHostBytes(const MeshProgram &program, const MeshConfig &config,
                          const MeshWorkers &workers) {
  int lanes = 0;
  detail::colorLanes(program, lanes);
  // A queue: its counts; with values, its wavelets and one staged.
  int64_t stored =
      config.values ? (config.queueDepth + 1) * int64_t(sizeof(Wavelet)) : 0;
  int64_t queue = int64_t(detail::Queues::countBytes()) + stored;
  int64_t buffers = 0;
  if (config.values)
    for (const CoreProgram &code : program.programs) {
      int64_t floats = 0;
      for (const BufferDecl &buffer : code.buffers)
        floats += buffer.elements * int64_t(sizeof(float));
      buffers = std::max(buffers, floats);
    }
  // Beside the queues and the engine: the ramp's use this cycle, the
  // router's load, when the engine next has work, the drained colors.
  int64_t perCore = lanes * (kPorts + 1) * queue +
                    int64_t(sizeof(detail::Engine)) + buffers + 1 + 4 + 8 +
                    kPorts * 8;
  int bands = meshWorkers(program.width, program.height, workers);
  int64_t rowsPerBand = (program.height + bands - 1) / bands + 2;
  int64_t bandsHere = workers.processes ? 1 : bands;
  // The program's description (routes, which program each core runs) is
  // the whole mesh's, on every process.
  int64_t description =
      int64_t(program.width) * program.height *
          (sizeof(llvm::SmallVector<Route, 4>) + sizeof(int32_t)) +
      int64_t(program.injectors.size()) * sizeof(Injector);
  return description + bandsHere * rowsPerBand * program.width * perCore;
}

std::optional<MeshResult> simulate(const MeshProgram &program,
                                   const MeshConfig &config, std::string &error,
                                   const CoreMemoryAccess &memory,
                                   const MeshWorkers &workers) {
  RunPlan plan(program, config, memory, workers);
  error = Validator(plan).validate();
  if (!error.empty())
    return std::nullopt;
  plan.timeOperations();
  plan.bands = meshWorkers(program.width, program.height, workers);

  // One band here: this process's of an MPI job (the others run theirs in
  // their processes), or the whole mesh.
  auto runOne = [&](BandLinks &links) -> std::optional<MeshResult> {
    Band band(plan, links);
    if (!band.run(error))
      return std::nullopt;
    MeshResult result = band.result();
    band.storeMemory();
    return result;
  };
  if (workers.processes)
    return runOne(*workers.processes);
  int threads = plan.bands;
  if (threads == 1) {
    SoloLinks solo;
    return runOne(solo);
  }
  ThreadGroup group(threads);
  // Each band keeps a reference to its links: neither vector may move.
  std::vector<ThreadLinks> links;
  links.reserve(threads);
  for (int t = 0; t < threads; ++t)
    links.emplace_back(group, t);
  std::vector<Band> bands;
  bands.reserve(threads);
  for (int t = 0; t < threads; ++t)
    bands.emplace_back(plan, links[t]);
  // Every band fails or succeeds alike (the failure is agreed on).
  std::vector<std::string> errors(threads);
  std::vector<std::optional<MeshResult>> results(threads);
  std::vector<std::thread> running;
  for (int t = 0; t < threads; ++t)
    running.emplace_back([&, t] {
      if (bands[t].run(errors[t]))
        results[t] = bands[t].result();
    });
  for (std::thread &thread : running)
    thread.join();
  if (!results[0]) {
    error = errors[0];
    return std::nullopt;
  }
  for (Band &band : bands)
    band.storeMemory();
  return std::move(results[0]);
}

} // namespace cgpt::sim::mesh
