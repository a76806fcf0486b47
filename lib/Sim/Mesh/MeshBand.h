//===- MeshBand.h - one worker's rows of a cycle-level run ------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// A band is the rows [first, end) of the mesh that one worker simulates,
// with a copy of the row on each side it sends into (the halo): the room in
// those queues, kept current by what the neighbour bands report at the end
// of each cycle (BandLinks.h). A run alone is one band with no neighbours.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_LIB_SIM_MESH_MESHBAND_H
#define CGPT_LIB_SIM_MESH_MESHBAND_H

#include "cgpt/Sim/Mesh/MeshSimulator.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallBitVector.h"

#include <array>

namespace cgpt::sim::mesh::detail {

inline const char *portName(int port) {
  static const char *names[] = {"north", "south", "east", "west", "ramp"};
  return names[port];
}

/// The port a wavelet sent out through `port` arrives on at the neighbour.
inline int opposite(int port) {
  static const int opposites[] = {south, north, west, east, ramp};
  return opposites[port];
}

/// "core (x, y)", as messages name a core.
inline std::string coreName(int x, int y) {
  return "core (" + std::to_string(x) + ", " + std::to_string(y) + ")";
}

/// Queues exist only for the colors a program routes (a handful of the
/// target's): the lane of each color, or -1, and in `lanes` how many there
/// are.
std::array<int8_t, 64> colorLanes(const MeshProgram &program, int &lanes);

/// What every band of a run reads: the checked program and the lanes of
/// its colors.
struct RunPlan {
  const MeshProgram &program;
  const MeshConfig &config;
  const CoreMemoryAccess &access;
  const MeshWorkers &workers;
  int lanes = 0;
  std::array<int8_t, 64> laneOf;
  /// Per program, task and operation: the cycles it takes, when it is a
  /// vector operation over memory (timeOperations).
  std::vector<std::vector<std::vector<int64_t>>> cyclesOf;
  /// Per program, its data tasks in order, each with its color's lane:
  /// what an idle engine looks through every cycle (one of a program's
  /// few tasks, on most kernels).
  struct DataTask {
    int task, lane;
  };
  std::vector<std::vector<DataTask>> dataTasksOf;
  /// Each drain, by (core * kPorts + port) * 64 + color.
  llvm::DenseMap<int64_t, int> drainOf;
  /// Bands with rows; the workers after them have none.
  int bands = 1;

  RunPlan(const MeshProgram &program, const MeshConfig &config,
          const CoreMemoryAccess &access, const MeshWorkers &workers);
  /// Sets cyclesOf, once the program is checked.
  void timeOperations();
  /// The rows of band `band`.
  std::pair<int, int> rowsOf(int band) const;
};

/// A fixed-depth queue of wavelets: a router input queue, or a compute
/// engine's queue of one color. A router queue's wavelet taken out frees
/// its place for the sender from the next cycle (`deferFrees`); an
/// engine's queue, fed and emptied on one core, at once. Queues that carry
/// no values count their wavelets and store nothing: timing alone touches
/// less of the host's memory per wavelet.
class Queues {
public:
  Queues() = default;
  Queues(size_t count, int depth, bool carryValues, bool deferFrees);

  int count(int q) const { return state[q].size; }
  /// The bytes of one queue's counts (estimateHostBytes).
  static size_t countBytes() { return sizeof(State); }
  /// Whether queue `q` can take one more wavelet this cycle.
  bool hasRoom(int q) const {
    const State &s = state[q];
    return s.size + s.arriving + s.reserved + s.freedNow < depth;
  }
  /// Holds a place in queue `q` for a wavelet still crossing a ramp, and
  /// stages it when it arrives.
  void reserve(int q) { ++state[q].reserved; }
  void stageReserved(int q, const Wavelet &w) {
    --state[q].reserved;
    stage(q, w);
  }
  Wavelet pop(int q) {
    Wavelet w = carryValues ? data[q * depth + state[q].head] : Wavelet{};
    release(q);
    return w;
  }
  /// The oldest wavelet of queue `q` left it (popped, or, for a copy of a
  /// queue in another band, reported by that band).
  void release(int q) {
    State &s = state[q];
    // A compare, not a division: this runs for every wavelet that moves.
    s.head = static_cast<uint8_t>(s.head + 1 == depth ? 0 : s.head + 1);
    --s.size;
    if (deferFrees && !s.freedNow) {
      s.freedNow = 1;
      touched.push_back(q);
    }
  }
  /// A wavelet that arrives this cycle; it is in the queue from the next.
  void stage(int q, const Wavelet &w) {
    State &s = state[q];
    if (s.arriving++ == 0 && !s.freedNow)
      touched.push_back(q);
    if (carryValues)
      staged[q] = w;
  }
  /// The cycle ends: what arrived joins its queue, and the places freed
  /// are free.
  void settle();

private:
  /// A queue's counts, together: a wavelet that moves reads and writes
  /// them all, from one cache line. A byte each: simulate() takes queues
  /// of at most 255 wavelets, and the smaller the counts, the more of a
  /// large mesh's queues stay in the host's cache.
  struct State {
    uint8_t head = 0, size = 0;
    uint8_t reserved = 0;
    // At most one wavelet reaches a router queue per cycle (one link feeds
    // it) and at most one leaves it (one route serves it).
    uint8_t arriving : 7;
    /// A wavelet left this cycle; its place is free from the next.
    uint8_t freedNow : 1;
    State() : arriving(0), freedNow(0) {}
  };
  int depth = 1;
  bool carryValues = false, deferFrees = false;
  std::vector<State> state;
  std::vector<Wavelet> data, staged;
  /// The queues that a wavelet reached or left this cycle.
  std::vector<int> touched;
};

/// A first-in first-out queue on one growing array, for what crosses the
/// ramps: a std::deque allocates and frees a block every few hundred
/// wavelets, and the engine sends one across a ramp for nearly every
/// wavelet it moves.
template <typename T> class Fifo {
public:
  bool empty() const { return head == items.size(); }
  const T &front() const { return items[head]; }
  /// A new item at the back, for the caller to fill in place.
  T &push() {
    // Emptied, the array starts again at its beginning; half consumed, its
    // consumed half goes, so that it holds at most twice what is waiting.
    if (empty()) {
      items.clear();
      head = 0;
    } else if (head >= 1024 && 2 * head >= items.size()) {
      items.erase(items.begin(), items.begin() + head);
      head = 0;
    }
    return items.emplace_back();
  }
  void pop() { ++head; }

private:
  std::vector<T> items;
  size_t head = 0;
};

/// An operation running: the task's current one, or a microthread.
struct Running {
  const Op *op = nullptr;
  /// Elements done.
  int64_t progress = 0;
  /// Elements it covers: its length, or the one its data set at issue.
  int64_t length = 0;
};

/// An asynchronous operation running beside the tasks, with its cursors
/// (dst, src0, src1, scalar) as they stood when it was issued: the SDK
/// copies a DSD into its register then, so the task may advance them for
/// its next operation meanwhile.
struct Microthread {
  Running running;
  std::array<int64_t, 4> cursorsAtIssue = {};
};

/// One compute engine while it runs its program.
struct Engine {
  const CoreProgram *program = nullptr;
  /// RunPlan::cyclesOf and RunPlan::dataTasksOf of its program.
  const std::vector<std::vector<int64_t>> *cycles = nullptr;
  const std::vector<RunPlan::DataTask> *dataTasks = nullptr;
  int x = 0, y = 0;
  std::vector<std::vector<float>> memory;
  std::vector<int64_t> cursors;
  /// Its tasks' flags: a program's few tasks fit in the engine itself.
  llvm::SmallBitVector active, blocked;
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
  /// None held inline, so that a whole wafer of engines stays small: a
  /// weight matmul's cores run their chains as microthreads, and two held
  /// inline took no less time on its 128 x 128 bench (docs/runtime.md).
  llvm::SmallVector<Microthread, 0> microthreads;
};

class Band {
public:
  Band(const RunPlan &plan, BandLinks &links);
  /// Runs the program to its end with the other bands; false, with the
  /// same `error` on every band, when it fails.
  bool run(std::string &error);
  /// The result, once run: every band's part.
  MeshResult result();
  /// Hands its cores' buffers to the run's CoreMemoryAccess::store.
  void storeMemory();

private:
  int laneQueue(int c, int port, int lane) const {
    return (c * kPorts + port) * lanes + lane;
  }
  int queueIndex(int c, int port, int color) const {
    return laneQueue(c, port, laneOf[color]);
  }
  int engineQueue(int c, int color) const { return c * lanes + laneOf[color]; }
  bool routed(int color) const {
    return color >= 0 && color < 64 && laneOf[color] >= 0;
  }
  /// Core `c` of the band (halo rows included) and its row on the mesh.
  int rowOf(int c) const { return first - 1 + c / width; }
  int globalCore(int c) const { return c + (first - 1) * width; }
  bool own(int c) const { return c >= width && c < (rows + 1) * width; }
  /// The cores north, south, east and west of core `c` at (x, y) (-1 off
  /// the mesh), and `c` itself for the ramp: by Port.
  std::array<int, kPorts> neighbours(int c, int x, int y) const;
  bool drains(int c, int port, int color) const {
    return port < ramp &&
           (drainedColors[(c - width) * kPorts + port] >> color & 1);
  }
  void load();
  bool routeStep(int c, int x, int y, uint8_t *linkUsed);
  bool engineStep(int c, int64_t now);
  /// One wavelet of `running`; a microthread's memory operands at
  /// `cursorsAtIssue`, a task's at its cursors now.
  bool fabricStep(int c, Engine &engine, Running &running,
                  const std::array<int64_t, 4> *cursorsAtIssue = nullptr);
  /// `op` as it issues on `engine`: its length set from data (an
  /// Op::lengthFrom that is not a whole number of elements fails the run).
  Running issue(Engine &engine, const Op &op);
  bool pickTask(int c, Engine &engine, int64_t now);
  bool runTask(int c, Engine &engine, int64_t now);
  /// Runs the task's control (loops, activations, blocks, cursor steps)
  /// up to its next operation, or to its end, which ends the task; whether
  /// any ran. Control takes no cycle.
  bool runControl(Engine &engine);
  void compute(Engine &engine, const Running &running,
               const std::array<int64_t, 4> *cursorsAtIssue, int64_t count,
               const Wavelet *in, Wavelet *out);
  /// Element `i` of memory operand `dsd`, its cursor standing at
  /// `cursorValue`.
  float *element(Engine &engine, const Dsd &dsd, int64_t i,
                 int64_t cursorValue);
  /// Elements [first, first + count) of `dsd` as a first element and a
  /// step (0 for a register, or for no operand or zeros, which read 0),
  /// when a memory operand's lie in its buffer without wrapping; false
  /// for a fabric operand or any other, which `element` takes one by one.
  struct Span {
    float *at;
    int64_t step;
  };
  bool span(Engine &engine, const Dsd &dsd, int64_t first, int64_t count,
            int64_t cursorValue, Span &span);
  /// An operation over memory and registers, every operand a span: the
  /// same elements in the same order as `element` would give them; false
  /// for what is not a vector operation.
  static bool computeSpans(Op::Kind kind, int64_t count,
                           const std::array<Span, 4> &spans);
  /// Whether a microthread of `engine` uses one of the fabric queues of
  /// `op`: an asynchronous operation waits for it (the SDK: concurrent
  /// asynchronous operations must not share a queue or a microthread).
  bool sharesMicrothread(const Engine &engine, const Op &op) const;
  void advance(Engine &engine, int cursor, int64_t by);
  /// Sends `w` across core `c`'s ramp into router queue `q` (or, not
  /// `toRouter`, its engine's queue `q`): it joins the queue after the
  /// target's ramp latency.
  void crossRamp(int c, int q, bool toRouter, const Wavelet &w, int64_t now);
  /// Stages the wavelets whose ramp crossing ends this cycle.
  bool arriveFromRamps(int64_t now);
  /// Takes what the neighbours reported at the end of the cycle.
  void applyBorders();
  /// The next cycle something happens here, when nothing moved.
  int64_t nextEvent(int64_t now) const;
  bool done() const;
  /// Up to four of this band's stuck cores, each on a line.
  std::string stuckCores() const;
  void fail(const std::string &message) {
    if (failure.empty())
      failure = message;
  }

  const RunPlan &plan;
  BandLinks &links;
  const MeshConfig &config;
  /// The band's rows [first, first + rows).
  int first = 0, rows = 0, width = 0;
  /// The plan's lanes, kept here: the hot loops read them for every
  /// wavelet.
  std::array<int8_t, 64> laneOf;
  int lanes = 0;
  /// The routes of the band's cores, from its first row.
  const llvm::SmallVector<Route, 4> *routes = nullptr;
  /// Whether a band lies north or south of this one.
  bool hasNorth = false, hasSouth = false;
  /// Router input queues (core, port, lane), halo rows included, and each
  /// compute engine's queue of each lane (core, lane).
  Queues router, toEngine;
  std::vector<Engine> engines;
  /// The injectors at the band's cores, and how many wavelets each sent.
  std::vector<int> injectors;
  std::vector<int64_t> injected;
  std::vector<std::pair<int64_t, int64_t>> rowActivity;
  /// Per own core and port, the colors a drain takes off there.
  std::vector<uint64_t> drainedColors;
  std::vector<std::vector<Wavelet>> drained;
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
  Fifo<Crossing> crossing;
  /// Their payloads, when wavelets carry values.
  Fifo<Wavelet> crossingValues;
  /// What crosses the borders this cycle, each way.
  std::vector<BorderEntry> toNorth, toSouth, fromNorth, fromSouth;
  /// Wavelets in this band's queues, crossing its ramps, or sent across a
  /// border this cycle.
  int64_t waveletsInFlight = 0;
  /// The cycle being simulated, and one past the last in which anything
  /// moved anywhere.
  int64_t cycle = 0, lastActive = 0;
  bool stopped = false;
  /// Host time of the cycle loop, setup excluded.
  int64_t loopNanoseconds = 0;
  std::string failure;
  /// What an operand outside any buffer reads and writes.
  float scratch = 0;
  /// What an absent or zero operand's span reads; never written.
  float zero = 0;
};

} // namespace cgpt::sim::mesh::detail

#endif // CGPT_LIB_SIM_MESH_MESHBAND_H
