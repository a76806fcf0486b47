//===- PublishedPrograms.cpp - published wafer programs on the engine -----===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Replays wafer programs whose authors published their cost, written from
// the description in shared/reference/wse-mesh-programming.md (section 3),
// on the cycle-level engine with WSE-2 cores, and prints the engine's
// cycles beside the published formula's; nothing is fitted. The 1D reduces
// of Luczynski et al. ("Near-Optimal Wafer-Scale Reduce", HPDC'24) bring a
// vector of B f32 wavelets on each of P cores in a row to the west end:
//
//   chain      each core adds what comes from the east to its own vector
//              and passes it on (two colors alternating):
//              B + (2 T_R + 2)(P - 1)
//   star       every core streams its vector to the end (a color each, so
//              P <= 24): B (P - 1) + 2 T_R + 1
//   tree       in round l, the core at 2^l (mod 2^(l+1)) sends its sum
//              2^l cores west: max(B log2 P, B P log2 P / (2 (P - 1)) +
//              P - 1) + (2 T_R + 1) log2 P
//   two-phase  a chain within each group of floor(sqrt(P)) cores, then a
//              chain of the groups' ends: the authors' model, form A,
//              max(C, E/N + L) + (2 T_R + 1) D, with their depth
//              D = 2 sqrt(P) - 2 and contention C = 2B, the energy E of
//              the algorithm's hops (derived), N = L + 1 = P - 1
//   broadcast  the end core's vector multicast east into every core:
//              B + P + 2 T_R
//   2D broadcast  on P x P cores, the corner's vector multicast along the
//              first row and down every column: B + 2P - 2 + 2 T_R + 1
//
// with T_R = 2 cycles, the ramp latency of the authors' code. Each run
// carries values and checks the result (the sum of every core's vector, or
// the vector everywhere), so the program is known to be the algorithm.
//
//   cgpt-published-programs
//
// Prints one line per program and size; exits 1 if a program computes a
// wrong result or cannot run.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/KernelPrograms.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <functional>

using namespace cgpt;
using namespace cgpt::sim::mesh;

namespace {

/// The ramp latency in the authors' model (their code's `tr`).
constexpr double kRampLatency = 2;

uint8_t bit(Port port) { return static_cast<uint8_t>(1u << port); }

/// A program of one local task running `ops` over the core's vector.
CoreProgram vectorTask(int64_t length,
                       const std::function<void(std::vector<Op> &, int)> &ops) {
  CoreProgram p;
  int vector = p.addBuffer("vector", length, ElementType::f32);
  Task task{false, -1, {}};
  ops(task.body, vector);
  p.startActive.push_back(p.addTask(std::move(task)));
  return p;
}

Op fadd(Dsd dst, Dsd src0, Dsd src1, int64_t length) {
  return Op::vector(Op::Kind::fadd, dst, src0, src1, length, ElementType::f32);
}
Op fmov(Dsd dst, Dsd src, int64_t length) {
  return Op::vector(Op::Kind::fmov, dst, src, Dsd(), length, ElementType::f32);
}

/// 1D chain to the west end: core i sends on color 1 + i % 2 and receives
/// on the other.
MeshProgram chain(int p, int64_t b) {
  MeshProgram mesh(p, 1);
  for (int x = 0; x < p; ++x) {
    int out = 1 + x % 2, in = 1 + (x + 1) % 2;
    if (x > 0)
      mesh.routes[x].push_back({out, bit(ramp), bit(west)});
    if (x + 1 < p)
      mesh.routes[x].push_back({in, bit(east), bit(ramp)});
    mesh.programOf[x] = mesh.addProgram(vectorTask(b, [&](auto &body, int v) {
      if (x + 1 == p)
        body.push_back(fmov(Dsd::out(out), Dsd::memory(v), b));
      else if (x > 0)
        body.push_back(fadd(Dsd::out(out), Dsd::in(in), Dsd::memory(v), b));
      else
        body.push_back(fadd(Dsd::memory(v), Dsd::in(in), Dsd::memory(v), b));
    }));
  }
  return mesh;
}

/// 1D star: core i > 0 streams on color i through the cores west of it;
/// the end adds the streams in turn.
MeshProgram star(int p, int64_t b) {
  MeshProgram mesh(p, 1);
  for (int x = 0; x < p; ++x) {
    for (int sender = x; sender < p; ++sender) {
      if (sender == 0)
        continue;
      uint8_t rx = sender == x ? bit(ramp) : bit(east);
      uint8_t tx = x == 0 ? bit(ramp) : bit(west);
      mesh.routes[x].push_back({sender, rx, tx});
    }
    mesh.programOf[x] = mesh.addProgram(vectorTask(b, [&](auto &body, int v) {
      if (x > 0)
        body.push_back(fmov(Dsd::out(x), Dsd::memory(v), b));
      else
        for (int sender = 1; sender < p; ++sender)
          body.push_back(
              fadd(Dsd::memory(v), Dsd::in(sender), Dsd::memory(v), b));
    }));
  }
  return mesh;
}

/// 1D binary tree to the west end: in round l (color l + 1), the core at
/// 2^l modulo 2^(l+1) sends its sum to the core 2^l west of it.
MeshProgram tree(int p, int64_t b) {
  MeshProgram mesh(p, 1);
  int rounds = 0;
  while ((1 << rounds) < p)
    ++rounds;
  for (int x = 0; x < p; ++x) {
    for (int l = 0; l < rounds; ++l) {
      int span = 1 << l, base = x - x % (2 * span), sender = base + span;
      if (sender >= p)
        continue;
      if (x == sender)
        mesh.routes[x].push_back({l + 1, bit(ramp), bit(west)});
      else if (x == base)
        mesh.routes[x].push_back({l + 1, bit(east), bit(ramp)});
      else if (x < sender)
        mesh.routes[x].push_back({l + 1, bit(east), bit(west)});
    }
    mesh.programOf[x] = mesh.addProgram(vectorTask(b, [&](auto &body, int v) {
      for (int l = 0; l < rounds; ++l) {
        int span = 1 << l;
        if (x % (2 * span) == span) {
          body.push_back(fmov(Dsd::out(l + 1), Dsd::memory(v), b));
          return;
        }
        if (x % (2 * span) == 0 && x + span < p)
          body.push_back(
              fadd(Dsd::memory(v), Dsd::in(l + 1), Dsd::memory(v), b));
      }
    }));
  }
  return mesh;
}

/// The two-phase reduce's group size (the authors' code: floor(sqrt(P)),
/// 22 for P = 512).
int twoPhaseGroup(int p) {
  return std::max(1, static_cast<int>(std::floor(std::sqrt(p))));
}

/// 1D two-phase reduce to the west end: a chain within each group of
/// twoPhaseGroup(P) adjacent cores to its west end, the group's root
/// (colors 1 and 2 alternating), then a chain of the roots, each root's
/// sum passing through the cores of the group west of it (colors 3 and 4).
MeshProgram twoPhase(int p, int64_t b) {
  MeshProgram mesh(p, 1);
  int step = twoPhaseGroup(p);
  for (int x = 0; x < p; ++x) {
    int group = x / step, position = x % step;
    bool groupEnd = position + 1 == step || x + 1 == p;
    int out = 1 + position % 2, in = 1 + (position + 1) % 2;
    if (position > 0)
      mesh.routes[x].push_back({out, bit(ramp), bit(west)});
    if (!groupEnd)
      mesh.routes[x].push_back({in, bit(east), bit(ramp)});
    // The roots' chain: root g sends on 3 + g % 2 through group g - 1.
    int lastGroup = (p - 1) / step;
    int rootOut = 3 + group % 2, rootIn = 3 + (group + 1) % 2;
    if (position == 0 && group > 0)
      mesh.routes[x].push_back({rootOut, bit(ramp), bit(west)});
    if (group < lastGroup)
      mesh.routes[x].push_back(
          {rootIn, bit(east), position == 0 ? bit(ramp) : bit(west)});
    mesh.programOf[x] = mesh.addProgram(vectorTask(b, [&](auto &body, int v) {
      if (position > 0) {
        body.push_back(
            groupEnd ? fmov(Dsd::out(out), Dsd::memory(v), b)
                     : fadd(Dsd::out(out), Dsd::in(in), Dsd::memory(v), b));
        return;
      }
      if (!groupEnd)
        body.push_back(fadd(Dsd::memory(v), Dsd::in(in), Dsd::memory(v), b));
      if (group == 0 && group < lastGroup)
        body.push_back(
            fadd(Dsd::memory(v), Dsd::in(rootIn), Dsd::memory(v), b));
      else if (group == lastGroup && group > 0)
        body.push_back(fmov(Dsd::out(rootOut), Dsd::memory(v), b));
      else if (group > 0)
        body.push_back(
            fadd(Dsd::out(rootOut), Dsd::in(rootIn), Dsd::memory(v), b));
    }));
  }
  return mesh;
}

/// 1D broadcast from the west end, multicast east into every core.
MeshProgram broadcast(int p, int64_t b) {
  MeshProgram mesh(p, 1);
  for (int x = 0; x < p; ++x) {
    uint8_t onward = x + 1 < p ? bit(east) : 0;
    mesh.routes[x].push_back(
        {1, x == 0 ? bit(ramp) : bit(west),
         static_cast<uint8_t>(x == 0 ? onward : bit(ramp) | onward)});
    mesh.programOf[x] = mesh.addProgram(vectorTask(b, [&](auto &body, int v) {
      body.push_back(x == 0 ? fmov(Dsd::out(1), Dsd::memory(v), b)
                            : fmov(Dsd::memory(v), Dsd::in(1), b));
    }));
  }
  return mesh;
}

/// 2D broadcast from the north-west corner of P x P cores: along the
/// first row, and from each of its cores down its column.
MeshProgram broadcast2d(int p, int64_t b) {
  MeshProgram mesh(p, p);
  for (int y = 0; y < p; ++y)
    for (int x = 0; x < p; ++x) {
      uint8_t down = y + 1 < p ? bit(south) : 0;
      uint8_t east = y == 0 && x + 1 < p ? bit(Port::east) : 0;
      uint8_t rx = y > 0 ? bit(north) : x > 0 ? bit(west) : bit(ramp);
      uint8_t tx = static_cast<uint8_t>(down | east |
                                        (x == 0 && y == 0 ? 0 : bit(ramp)));
      mesh.routes[mesh.index(x, y)].push_back({1, rx, tx});
      mesh.programOf[mesh.index(x, y)] =
          mesh.addProgram(vectorTask(b, [&](auto &body, int v) {
            body.push_back(x == 0 && y == 0
                               ? fmov(Dsd::out(1), Dsd::memory(v), b)
                               : fmov(Dsd::memory(v), Dsd::in(1), b));
          }));
    }
  return mesh;
}

struct Program {
  const char *name;
  MeshProgram (*build)(int, int64_t);
  double (*published)(double p, double b);
  bool reduces;
  /// The largest P it runs (a 2D program has P x P cores).
  int maxSide;
};

const Program kPrograms[] = {
    {"chain reduce", chain,
     [](double p, double b) { return b + (2 * kRampLatency + 2) * (p - 1); },
     true, 1 << 20},
    {"star reduce", star,
     [](double p, double b) { return b * (p - 1) + 2 * kRampLatency + 1; },
     true, 24},
    {"tree reduce", tree,
     [](double p, double b) {
       double depth = std::ceil(std::log2(p));
       return std::max(b * depth, b * p * depth / (2 * (p - 1)) + p - 1) +
              (2 * kRampLatency + 1) * depth;
     },
     true, 1 << 20},
    // The model's form A, max(C, E/N + L) + (2 T_R + 1) D, with the
    // authors' depth 2 sqrt(P) - 2 and contention 2B; the energy derived
    // here from the algorithm: each group's chain, then G - 1 root sums of B
    // wavelets over a group's span each, on N = P - 1 links, the farthest
    // core L = P - 1 hops from the end.
    {"two-phase reduce", twoPhase,
     [](double p, double b) {
       double step = twoPhaseGroup(static_cast<int>(p));
       double groups = std::ceil(p / step);
       double energy = b * (p - groups + step * (groups - 1));
       return std::max(2 * b, energy / (p - 1) + p - 1) +
              (2 * kRampLatency + 1) * (2 * std::sqrt(p) - 2);
     },
     true, 1 << 20},
    {"broadcast", broadcast,
     [](double p, double b) { return b + p + 2 * kRampLatency; }, false,
     1 << 20},
    {"2D broadcast", broadcast2d,
     [](double p, double b) { return b + 2 * p - 2 + 2 * kRampLatency + 1; },
     false, 64},
};

} // namespace

int main(int argc, char **argv) {
  mlir::MLIRContext context;
  auto target = target::WaferTargetModel::load("wse2", &context);
  if (mlir::failed(target))
    return 1;
  MeshConfig config = meshConfig(*target);
  config.values = true;
  llvm::outs() << llvm::formatv("{0,-16} {1,5} {2,6} {3,10} {4,10} {5,8}\n",
                                "program", "P", "B", "published", "simulated",
                                "error");
  bool wrong = false;
  for (const Program &program : kPrograms)
    for (int p : {4, 16, 64, 512})
      for (int64_t b : {1, 16, 256, 4096}) {
        if (p > program.maxSide)
          continue;
        MeshProgram mesh = program.build(p, b);
        // Core i holds i + 1 everywhere: the reduce's end must hold the sum
        // P (P + 1) / 2, a broadcast's every core the end's 1.
        auto load = [&](int core, std::vector<std::vector<float>> &memory) {
          if (program.reduces || core == 0)
            std::fill(memory[0].begin(), memory[0].end(),
                      static_cast<float>(core + 1));
        };
        bool right = true;
        float expected = program.reduces ? 0.5f * p * (p + 1) : 1.0f;
        auto store = [&](int core,
                         const std::vector<std::vector<float>> &memory) {
          if (program.reduces && core != 0)
            return;
          for (float value : memory[0])
            right &= value == expected;
        };
        std::string error;
        std::optional<MeshResult> run =
            simulate(mesh, config, error, CoreMemoryAccess{load, store});
        if (!run || !right) {
          llvm::errs() << "cgpt-published-programs: " << program.name
                       << ", P = " << p << ", B = " << b << ": "
                       << (run ? "wrong result" : error) << "\n";
          wrong = true;
          continue;
        }
        double published = program.published(p, static_cast<double>(b));
        double simulated = static_cast<double>(run->cycles);
        llvm::outs() << llvm::formatv(
            "{0,-16} {1,5} {2,6} {3,10} {4,10} {5,7:f1}%\n", program.name, p, b,
            static_cast<int64_t>(std::llround(published)), run->cycles,
            100 * (simulated - published) / published);
      }
  return wrong ? 1 : 0;
}
