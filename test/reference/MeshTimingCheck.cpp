//===- MeshTimingCheck.cpp - analytic kernel times against the mesh -------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The timing counterpart of the PyTorch check: for a table of kernel shapes
// and rectangles of cores, the analytic kernel time (`wafer::kernelTime`)
// against the cycle-level mesh model running the same kernel wavelet by
// wavelet. Prints the table and the worst error; exits 1 when a case is
// more than 10% off, 2 when one cannot run.
//
//   cgpt-mesh-timing-check [--target wse2] [--bench]
//
// `--bench` runs only the largest case and prints simulated core-cycles per
// second (bench/mesh-sim.py).
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/KernelPrograms.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>

using namespace cgpt;
using cgpt::wafer::KernelKind;
using cgpt::wafer::KernelShape;

namespace {

llvm::cl::opt<std::string> targetName("target", llvm::cl::init("wse2"),
                                      llvm::cl::desc("Target whose cores"));
llvm::cl::opt<bool> bench("bench",
                          llvm::cl::desc("Time the largest case only"));

struct Case {
  const char *what;
  KernelShape kernel;
  int64_t microBatch;
  int width, height;
};

KernelShape matmul(int64_t tokens, int64_t outputs, int64_t contracted,
                   int64_t bytes = 2) {
  KernelShape k;
  k.kind = KernelKind::weight_matmul;
  k.rows = tokens;
  k.columns = outputs;
  k.contracted = contracted;
  k.flops = 2 * tokens * outputs * contracted;
  k.elementBytes = bytes;
  k.weightBytes = outputs * contracted * bytes;
  return k;
}

KernelShape weightGrad(int64_t inputs, int64_t outputs, int64_t tokens) {
  KernelShape k;
  k.kind = KernelKind::weight_grad;
  k.rows = inputs;
  k.columns = outputs;
  k.contracted = tokens;
  k.flops = 2 * inputs * outputs * tokens;
  k.accumulator = inputs * outputs * 4;
  return k;
}

/// One (sequence, head) of attention: `products` S x S x head_size
/// products (2 forward, 4 backward) plus the softmax's 5 FLOP per score.
KernelShape attention(int64_t seq, int64_t headSize, int64_t products) {
  KernelShape k;
  k.kind = KernelKind::attention;
  k.rows = seq;
  k.columns = seq;
  k.contracted = headSize;
  k.flops = products * 2 * seq * seq * headSize + 5 * seq * seq;
  return k;
}

KernelShape rows(KernelKind kind, int64_t tokens, int64_t features,
                 int64_t flopsPerElement) {
  KernelShape k;
  k.kind = kind;
  k.rows = tokens;
  k.columns = features;
  k.flops = tokens * features * flopsPerElement;
  return k;
}

/// A lookup in a table of `tableBytes` (or, for the gradient, a sum into
/// one of `gradientBytes`) for `tokens` tokens of `features`.
KernelShape embedding(int64_t tokens, int64_t features, int64_t tableBytes,
                      int64_t gradientBytes) {
  KernelShape k = rows(KernelKind::embedding, tokens, features, 1);
  k.weightBytes = tableBytes;
  k.accumulator = gradientBytes;
  return k;
}

std::vector<Case> cases() {
  using K = KernelKind;
  return {
      {"matmul, square tile", matmul(16, 64, 64), 1, 4, 4},
      {"matmul, 32 tokens per core", matmul(64, 256, 256), 4, 8, 8},
      {"matmul, one token per core", matmul(16, 128, 512), 1, 16, 16},
      {"matmul, 256 tokens per core", matmul(256, 64, 128), 4, 4, 4},
      {"matmul, odd tokens per core", matmul(37, 96, 160), 3, 8, 8},
      {"matmul, wide row", matmul(32, 64, 1024), 1, 32, 2},
      {"matmul, tall column", matmul(512, 64, 64), 1, 2, 32},
      {"matmul, long row chain", matmul(8, 32, 2048), 1, 128, 4},
      {"matmul, long columns", matmul(1024, 32, 32), 1, 4, 128},
      {"matmul, f32", matmul(64, 64, 128, 4), 2, 8, 8},
      {"matmul, 64 x 64 mesh", matmul(256, 256, 2048), 2, 64, 64},
      {"matmul, one core", matmul(8, 16, 16), 1, 1, 1},
      {"weight gradient, square", weightGrad(64, 64, 64), 1, 8, 8},
      {"weight gradient, few tokens", weightGrad(256, 128, 16), 1, 16, 16},
      {"weight gradient, many tokens", weightGrad(32, 64, 512), 2, 4, 4},
      {"weight gradient, tall", weightGrad(64, 32, 1024), 1, 2, 64},
      {"weight gradient, wide", weightGrad(1024, 32, 16), 1, 64, 2},
      {"attention forward, 4 x 4", attention(64, 16, 2), 1, 4, 4},
      {"attention forward, 8 x 8", attention(128, 64, 2), 1, 8, 8},
      {"attention forward, 16 x 16", attention(256, 32, 2), 1, 16, 16},
      {"attention backward, 8 x 8", attention(128, 64, 4), 1, 8, 8},
      {"attention backward, 16 x 16", attention(512, 64, 4), 1, 16, 16},
      {"attention forward, one core", attention(32, 16, 2), 1, 1, 1},
      {"layer norm, square", rows(K::reduction, 64, 256, 7), 1, 8, 8},
      {"layer norm, long rows", rows(K::reduction, 16, 2048, 7), 1, 128, 2},
      {"layer norm, many tokens", rows(K::reduction, 512, 64, 7), 2, 4, 8},
      {"softmax statistics, wide", rows(K::reduction, 32, 4096, 5), 1, 64, 4},
      {"GELU, square", rows(K::elementwise, 64, 256, 20), 1, 8, 8},
      {"GELU, one feature per core", rows(K::elementwise, 128, 64, 20), 1,
       64, 16},
      {"residual add, 128 x 128", rows(K::elementwise, 1024, 1024, 1), 1,
       128, 128},
      {"bias gradient, tall", rows(K::reduction, 1024, 32, 1), 1, 4, 64},
      {"embedding lookup", embedding(64, 256, 512 * 256 * 2, 0), 2, 8, 8},
      {"embedding gradient", embedding(64, 256, 0, 512 * 256 * 4), 2, 16, 4},
  };
}

} // namespace

int main(int argc, char **argv) {
  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    "cgpt analytic kernel times against the "
                                    "cycle-level mesh model\n");
  mlir::MLIRContext context;
  mlir::FailureOr<target::WaferTargetModel> target =
      target::WaferTargetModel::load(targetName, &context);
  if (mlir::failed(target))
    return 2;
  sim::mesh::MeshConfig config = sim::mesh::meshConfig(*target);

  std::vector<Case> table = cases();
  if (bench)
    // A 64 x 64 kernel of about 10^5 cycles.
    table = {{"matmul, 64 x 64 mesh, long", matmul(256, 640, 2048), 2, 64, 64}};
  llvm::outs() << llvm::formatv("{0,-32} {1,9} {2,13} {3,13} {4,8}\n", "case",
                                "mesh", "analytic", "simulated", "error");
  double worst = 0;
  std::string worstCase;
  int over = 0;
  int64_t coreCycles = 0;
  double seconds = 0;
  for (const Case &c : table) {
    // The rectangle's rows and columns are the split, and attention's
    // block too.
    wafer::Layout layout = sim::mesh::rectangleLayout(c.width, c.height);
    wafer::KernelTime analytic = wafer::kernelTime(
        {c.kernel, layout, {0, 0, c.width, c.height}, c.microBatch, *target});
    sim::mesh::MeshProgram program = sim::mesh::buildKernelProgram(
        c.kernel, layout, c.microBatch, *target, c.width, c.height);
    std::string error;
    auto start = std::chrono::steady_clock::now();
    std::optional<sim::mesh::MeshResult> result =
        sim::mesh::simulate(program, config, error);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                             start)
                   .count();
    if (!result) {
      llvm::errs() << "cgpt-mesh-timing-check: " << c.what << ": " << error
                   << "\n";
      return 2;
    }
    coreCycles += result->coreCycles;
    double simulated = static_cast<double>(result->cycles);
    double relative = (analytic.cycles() - simulated) / simulated;
    if (std::abs(relative) > worst) {
      worst = std::abs(relative);
      worstCase = c.what;
    }
    over += std::abs(relative) > 0.10;
    llvm::outs() << llvm::formatv(
        "{0,-32} {1,9} {2,13} {3,13} {4,7:f1}%\n", c.what,
        std::to_string(c.width) + " x " + std::to_string(c.height),
        static_cast<int64_t>(std::llround(analytic.cycles())),
        result->cycles, 100 * relative);
  }
  if (bench) {
    llvm::outs() << llvm::formatv(
        "{0} core-cycles in {1:f2} s: {2:e} core-cycles/s\n", coreCycles,
        seconds, static_cast<double>(coreCycles) / seconds);
    return 0;
  }
  llvm::outs() << llvm::formatv(
      "{0} cases, worst error {1:f1}% ({2}), {3} over 10%\n", table.size(),
      100 * worst, worstCase, over);
  return over ? 1 : 0;
}
