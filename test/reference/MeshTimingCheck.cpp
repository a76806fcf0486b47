//===- MeshTimingCheck.cpp - analytic kernel times against the mesh -------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The timing counterpart of the PyTorch check: for a table of kernel shapes
// and rectangles of cores, and for the kernels of placed wafer IR as the
// planner laid them out, the analytic kernel time (`wafer::kernelTime`)
// against the cycle-level engine executing the same kernel's program
// (lib/Sim/Mesh). Prints the table and the worst error; exits 1 when a case
// is more than 10% off, or, for every kernel but attention, more than
// kCloseCycles + kCloseShare off (the clean tree: at most 3 cycles); 2 when
// one of the table's cannot run. A placed
// kernel whose program does not fit a core is a finding, not a failure: it
// is listed, and counted in the last line (docs/runtime.md). So is a placed
// kernel that the analytic model puts over --max-core-cycles (cycles times
// the window's cores), which is not simulated.
//
//   cgpt-mesh-timing-check [--target wse2] [--placed FILE.mlir ...]
//                          [--max-core-cycles N] [--engine-only] [--bench]
//
// A placed kernel runs on a window of its rectangle: at most 2 token groups
// by 8 feature groups, each core holding exactly the tokens, features and
// block of sums the placed layout gives it, and two of its blocks of output
// columns (or 64 columns unblocked); the analytic time is taken for the
// same window. A kernel run in chunks over the vocabulary runs one chunk,
// and attention one (sequence, head) block with two of its pairs.
//
// `--engine-only` prints the engine's cycles alone (no analytic term can
// move them: scripts/mutation-check.py). `--bench` runs only a large case
// and prints simulated core-cycles per second (bench/run-all.py).
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/Analysis/StepProgram.h"
#include "cgpt/InitAllDialects.h"
#include "cgpt/Sim/Mesh/KernelPrograms.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#ifdef CGPT_ENABLE_MPI
#include "cgpt/Sim/Mesh/MpiLinks.h"
#endif

#include <chrono>
#include <cmath>
#include <set>
#include <sys/resource.h>

using namespace cgpt;
using cgpt::wafer::Edge;
using cgpt::wafer::KernelKind;
using cgpt::wafer::KernelShape;
using cgpt::wafer::Layout;

/// How close the analytic model and the engine stay on every kernel but
/// attention, whose statistics chains the analytic model charges a whole
/// round trip each where the engine overlaps a little of it (up to 1.7%,
/// docs/runtime.md): the others agree to 3 cycles on the clean tree, whatever
/// the size, so a term off by a few cycles a core or a stage, which 10%
/// would hide, shows.
constexpr int kCloseCycles = 4;
constexpr double kCloseShare = 0.005;

namespace {

llvm::cl::opt<std::string> targetName("target", llvm::cl::init("wse2"),
                                      llvm::cl::desc("Target whose cores run "
                                                     "the table's kernels"));
llvm::cl::list<std::string>
    placedFiles("placed", llvm::cl::desc("Placed wafer IR whose kernels to "
                                         "check, as laid out"));
llvm::cl::opt<bool> engineOnly("engine-only",
                               llvm::cl::desc("Print the engine's cycles "
                                              "alone"));
llvm::cl::opt<std::string>
    caseFilter("cases",
               llvm::cl::desc("Run only the table's cases whose names this "
                              "regular expression matches"),
               llvm::cl::value_desc("regex"));
llvm::cl::opt<bool> bench("bench", llvm::cl::desc("Time one large case only"));
llvm::cl::opt<bool> benchWholeMesh(
    "bench-whole-mesh",
    llvm::cl::desc("Time one kernel on the target's whole mesh, with the "
                   "host memory it took"));
llvm::cl::opt<int> threads("mesh-threads", llvm::cl::init(1),
                           llvm::cl::desc("Threads that simulate each case, "
                                          "in bands of rows"));
llvm::cl::opt<double> maxCoreCycles(
    "max-core-cycles", llvm::cl::init(0),
    llvm::cl::desc("Leave out a placed kernel whose window the analytic "
                   "model puts over this many core-cycles (0: no limit)"));
llvm::cl::opt<int64_t> minCoresPerThread(
    "min-cores-per-thread", llvm::cl::init(16384),
    llvm::cl::desc("Fewer threads for a case of fewer cores than this a "
                   "thread (1: every case on --threads bands)"));

struct Case {
  std::string what;
  KernelShape kernel;
  Layout layout;
  int64_t microBatch;
  int width, height;
  const target::WaferTargetModel *target;
  /// From placed IR: a program that does not load is listed, not failed.
  bool placed = false;
};

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

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

/// `k` with an epilogue on its reduce-scattered outputs: a bias, a scale
/// (0: none) and `maps`, with the FLOPs dataflow.matmul's bias and
/// dataflow.map count.
KernelShape withEpilogue(KernelShape k, bool bias, double scale,
                         std::vector<cgpt::wafer::EpilogueMap> maps) {
  int64_t elements = k.rows * k.columns;
  k.bias = bias;
  if (scale != 0)
    k.scale = scale;
  k.flops += bias ? elements : 0;
  for (const cgpt::wafer::EpilogueMap &map : maps) {
    k.flops += cgpt::dataflow::mapFlopsPerElement(map.kind) * elements;
    k.epilogue.push_back(map);
  }
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

/// One (sequence, head) of attention, its forward or backward pass: its
/// S x S x head_size products (2 forward; 5 backward, the flash backward
/// recomputing the scores) plus the softmax's 5 FLOP per score.
KernelShape attention(int64_t seq, int64_t headSize, bool gradient) {
  int64_t products = gradient ? 5 : 2;
  KernelShape k;
  k.kind = KernelKind::attention;
  k.function = gradient ? wafer::RowFunction::attentionGrad
                        : wafer::RowFunction::attention;
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

/// A layer norm (or, with `rms`, an RMS norm) of `tokens` rows of
/// `features`: its own program, with the executed FLOPs of
/// dataflow.layer_norm (12 an element and 40 a row) or dataflow.rms_norm
/// (8 and 30).
KernelShape norm(int64_t tokens, int64_t features, bool rms = false) {
  KernelShape k = rows(KernelKind::reduction, tokens, features, rms ? 8 : 12);
  k.flops += (rms ? 30 : 40) * tokens;
  k.function = rms ? cgpt::wafer::RowFunction::rmsNorm
                   : cgpt::wafer::RowFunction::layerNorm;
  return k;
}

/// A layer norm's gradient (or, with `rms`, an RMS norm's) of `tokens`
/// rows of `features`: its own program, with the executed FLOPs of
/// dataflow.layer_norm_grad (20 an element and 10 a row) or
/// dataflow.rms_norm_grad (16 and 2), and `fused` more an element for a
/// residual's add fused with it.
KernelShape normGrad(int64_t tokens, int64_t features, bool rms = false,
                     int64_t fused = 0) {
  KernelShape k =
      rows(KernelKind::reduction, tokens, features, (rms ? 16 : 20) + fused);
  k.flops += (rms ? 2 : 10) * tokens;
  k.function = rms ? cgpt::wafer::RowFunction::rmsNormGrad
                   : cgpt::wafer::RowFunction::layerNormGrad;
  return k;
}

/// The loss over `tokens` rows of a vocabulary of `vocabulary` logits: its
/// own program, with the executed FLOPs of dataflow.cross_entropy (42 a
/// logit and 226 a row).
KernelShape loss(int64_t tokens, int64_t vocabulary) {
  KernelShape k = rows(KernelKind::reduction, tokens, vocabulary, 42);
  k.flops += 226 * tokens;
  k.function = cgpt::wafer::RowFunction::crossEntropy;
  return k;
}

/// The loss's gradient over `tokens` rows of a vocabulary of `vocabulary`
/// logits: its own program, with the executed FLOPs of
/// dataflow.cross_entropy_grad (40 a logit and 2 a row).
KernelShape lossGrad(int64_t tokens, int64_t vocabulary) {
  KernelShape k = rows(KernelKind::reduction, tokens, vocabulary, 40);
  k.flops += 2 * tokens;
  k.function = cgpt::wafer::RowFunction::crossEntropyGrad;
  return k;
}

/// A standalone map of `kind` (a region whose kernel is a dataflow.map)
/// over `tokens` rows of `features` of `bytes`: its own program
/// (wafer::mapAlgorithm), with the FLOPs dataflow.map counts.
KernelShape map(cgpt::dataflow::MapKind kind, int64_t tokens, int64_t features,
                int64_t bytes = 2) {
  KernelShape k = rows(KernelKind::elementwise, tokens, features,
                       cgpt::dataflow::mapFlopsPerElement(kind));
  k.function = cgpt::wafer::RowFunction::map;
  k.map = kind;
  k.elementBytes = bytes;
  return k;
}

/// A lookup in a table of `tableBytes` (or, for the gradient, a sum into
/// one of `gradientBytes`) for `tokens` tokens of `features` of `bytes`:
/// its own program, with the FLOPs dataflow.gather (or scatter_add)
/// executes, one an element, and with `positions` one more, the learned
/// positions' add fused with the lookup (a sequence of `tokens`).
KernelShape embedding(int64_t tokens, int64_t features, int64_t tableBytes,
                      int64_t gradientBytes, int64_t bytes = 2,
                      bool positions = false) {
  KernelShape k =
      rows(KernelKind::embedding, tokens, features, positions ? 2 : 1);
  k.positionRows = positions ? tokens : 0;
  k.weightBytes = tableBytes;
  k.accumulator = gradientBytes;
  k.elementBytes = bytes;
  k.function = tableBytes > 0 ? cgpt::wafer::RowFunction::gather
                              : cgpt::wafer::RowFunction::scatterAdd;
  return k;
}

/// A router's product of `tokens` by `features` over `experts`, and its
/// choice of `choices` on the chain's last core (with a null expert's
/// logit, and logits rounded to 16 bits, when asked).
KernelShape router(int64_t tokens, int64_t experts, int64_t features,
                   int64_t choices, bool null = false, bool round = false) {
  KernelShape k = matmul(tokens, experts, features);
  k.flops += 5 * tokens * experts;
  k.choices = choices;
  if (null)
    k.nullLogit = 0.0;
  k.roundLogits = round;
  return k;
}

/// The hand-made table: every kind on square, narrow and tall rectangles.
std::vector<Case> handCases(const target::WaferTargetModel &t) {
  using K = KernelKind;
  using M = cgpt::dataflow::MapKind;
  struct Row {
    const char *what;
    KernelShape kernel;
    int64_t microBatch;
    int width, height;
    int64_t sumBlock = 0;
    /// Fewer token groups than the rectangle has rows (0: one a row), as
    /// on a strip the mesh's height: the rows below them stay idle.
    int64_t tokenGroups = 0;
    /// The keys attention's backward pass takes at once (0: all).
    int64_t keyBlock = 0;
    /// Feature groups on segments narrower than the rectangle (0: its
    /// width): the token groups fill columns of segments side by side.
    int64_t segment = 0;
  };
  std::vector<Row> table = {
      {"matmul, square tile", matmul(16, 64, 64), 1, 4, 4},
      {"matmul, 32 tokens per core", matmul(64, 256, 256), 4, 8, 8},
      {"matmul, one token per core", matmul(16, 128, 512), 1, 16, 16},
      {"matmul, 256 tokens per core", matmul(256, 64, 128), 4, 4, 4, 8},
      {"matmul, odd tokens per core", matmul(37, 96, 160), 3, 8, 8},
      {"matmul, wide row", matmul(32, 64, 1024), 1, 32, 2},
      {"matmul, tall column", matmul(512, 64, 64), 1, 2, 32},
      {"matmul, long row chain", matmul(8, 32, 2048), 1, 128, 4},
      {"matmul, long columns", matmul(1024, 32, 32), 1, 4, 128},
      {"matmul, f32", matmul(64, 64, 128, 4), 2, 8, 8},
      {"matmul, 64 x 64 mesh", matmul(256, 256, 2048), 2, 64, 64},
      {"matmul, one core", matmul(8, 16, 16), 1, 1, 1},
      {"matmul, 7 blocks of 9", matmul(64, 63, 96), 1, 8, 4, 9},
      {"matmul, blocks of one column", matmul(32, 12, 64), 2, 8, 4, 1},
      {"matmul, reduce-scatter over 2 cores", matmul(32, 128, 2), 1, 2, 1},
      {"matmul, reduce-scatter over 3 cores", matmul(32, 128, 3), 1, 3, 1},
      {"matmul, reduce-scatter over 16 cores", matmul(32, 128, 16), 1, 16, 1},
      {"matmul, a column a core on 128", matmul(1, 128, 128), 1, 128, 1},
      {"matmul, 4 columns a core on 128", matmul(4, 512, 128), 1, 128, 1},
      {"matmul, 64 columns on 41 cores", matmul(24, 64, 779), 1, 41, 2},
      {"matmul, bias, GELU, blocks of 64",
       withEpilogue(matmul(64, 256, 256), true, 0, {{M::gelu, 0, false}}), 4, 8,
       8, 64},
      {"matmul, bias, residual add, blocks of 9",
       withEpilogue(matmul(64, 63, 96), true, 0, {{M::add, 1, false}}), 1, 8, 4,
       9},
      {"matmul, scale, SiLU kept, product, 1 core",
       withEpilogue(matmul(8, 16, 16), false, 0.5,
                    {{M::silu, 0, true}, {M::mul, 0, false}}),
       1, 1, 1},
      {"matmul, GELU gradient, f32, 16 cores",
       withEpilogue(matmul(32, 128, 16, 4), false, 0,
                    {{M::gelu_grad, 1, false}}),
       1, 16, 1},
      {"weight gradient, square", weightGrad(64, 64, 64), 1, 8, 8},
      {"weight gradient, few tokens", weightGrad(256, 128, 16), 1, 16, 16},
      {"weight gradient, many tokens", weightGrad(32, 64, 512), 2, 4, 4},
      {"weight gradient, tall", weightGrad(64, 32, 1024), 1, 2, 64},
      {"weight gradient, wide", weightGrad(1024, 32, 16), 1, 64, 2},
      {"weight gradient, blocked", weightGrad(128, 96, 256), 1, 8, 4, 16},
      {"weight gradient, idle rows", weightGrad(64, 64, 64), 1, 8, 32, 0, 8},
      {"weight gradient, 3 columns of segments", weightGrad(64, 64, 192), 1, 12,
       8, 0, 0, 0, 4},
      {"weight gradient, 2 columns of segments of 8 on 2 rows",
       weightGrad(128, 32, 64), 1, 16, 2, 0, 0, 0, 8},
      {"attention forward, 4 x 4", attention(64, 16, false), 1, 4, 4},
      {"attention forward, 8 x 8", attention(128, 64, false), 1, 8, 8},
      {"attention forward, 16 x 16", attention(256, 32, false), 1, 16, 16},
      {"attention forward, chunks of 3", attention(128, 32, false), 2, 8, 8, 3},
      {"attention backward, 8 x 8", attention(128, 64, true), 1, 8, 8},
      {"attention backward, 16 x 16", attention(256, 64, true), 1, 16, 16},
      {"attention backward, chunks of 4", attention(128, 32, true), 2, 8, 8, 4},
      {"attention forward, one core", attention(32, 16, false), 1, 1, 1},
      {"attention forward, keys in blocks of 8", attention(256, 32, false), 1,
       8, 8, 0, 0, 8},
      {"attention forward, keys in blocks of 5, chunks of 3",
       attention(128, 64, false), 2, 8, 8, 3, 0, 5},
      {"attention backward, keys in blocks of 8", attention(256, 32, true), 1,
       8, 8, 0, 0, 8},
      {"attention backward, keys in blocks of 5, chunks of 4",
       attention(128, 64, true), 2, 8, 8, 4, 0, 5},
      {"attention backward, keys in blocks, one core", attention(32, 16, true),
       1, 1, 1, 0, 0, 6},
      {"layer norm, square", norm(64, 256), 1, 8, 8},
      {"layer norm, long rows", norm(16, 2048), 1, 128, 2},
      {"layer norm, many tokens", norm(512, 64), 2, 4, 8},
      {"RMS norm, square", norm(64, 256, true), 1, 8, 8},
      {"RMS norm, long rows", norm(16, 2048, true), 1, 128, 2},
      {"layer norm gradient, square", normGrad(64, 256), 1, 8, 8},
      {"layer norm gradient, long rows, residual", normGrad(16, 2048, false, 1),
       1, 128, 2},
      {"RMS norm gradient, square", normGrad(64, 256, true), 1, 8, 8},
      {"RMS norm gradient, many tokens, residual", normGrad(512, 64, true, 1),
       2, 4, 8},
      {"loss, square", loss(64, 512), 1, 8, 8},
      {"loss, long rows", loss(16, 8192), 2, 64, 2},
      {"loss gradient, square", lossGrad(64, 512), 1, 8, 8},
      {"loss gradient, long rows", lossGrad(16, 8192), 2, 64, 2},
      {"softmax statistics, wide", rows(K::reduction, 32, 4096, 5), 1, 64, 4},
      {"GELU, square", rows(K::elementwise, 64, 256, 20), 1, 8, 8},
      {"GELU, one feature per core", rows(K::elementwise, 128, 64, 20), 1, 64,
       16},
      {"residual add, 128 x 128", rows(K::elementwise, 1024, 1024, 1), 1, 128,
       128},
      {"map: gated product, square", map(M::mul, 64, 256), 1, 8, 8},
      {"map: residual sum, f32, long rows", map(M::add, 16, 2048, 4), 1, 128,
       2},
      {"map: SiLU, square", map(M::silu, 64, 256), 1, 8, 8},
      {"map: GELU, one feature per core", map(M::gelu, 128, 64), 1, 64, 16},
      {"map: GELU (tanh) gradient, square", map(M::gelu_tanh_grad, 64, 256), 1,
       8, 8},
      {"map: ReLU gradient, f32, many tokens", map(M::relu_grad, 512, 64, 4), 2,
       4, 8},
      {"bias gradient, tall", rows(K::token_sum, 1024, 32, 1), 1, 4, 64},
      {"bias gradient, wide", rows(K::token_sum, 256, 2048, 1), 2, 64, 8},
      {"bias gradient, one row", rows(K::token_sum, 64, 512, 1), 1, 16, 1},
      {"bias gradient, blocked", rows(K::token_sum, 256, 1024, 1), 1, 16, 4,
       16},
      {"bias gradient, blocked, one row", rows(K::token_sum, 64, 512, 1), 1, 8,
       1, 16},
      {"bias gradient, idle rows", rows(K::token_sum, 256, 512, 1), 1, 16, 64,
       0, 4},
      {"embedding lookup", embedding(64, 256, 512 * 256 * 2, 0), 2, 8, 8},
      {"embedding gradient", embedding(64, 256, 0, 512 * 256 * 4), 2, 16, 4},
      {"embedding lookup, odd rows, positions",
       embedding(64, 100, 300 * 100 * 2, 0, 2, true), 2, 8, 16},
      {"embedding lookup, f32", embedding(128, 64, 1000 * 64 * 4, 0, 4), 1, 4,
       16},
      {"embedding gradient, one row", embedding(64, 128, 0, 700 * 128 * 4), 1,
       16, 1},
      {"router, 8 experts, top 2", router(64, 8, 256, 2), 2, 8, 8},
      {"router, 64 experts, top 8, null, rounded",
       router(128, 64, 512, 8, true, true), 1, 16, 8},
      {"router, one core, experts in blocks of 2", router(16, 7, 64, 3), 1, 1,
       1, 2},
      {"router, experts in blocks of 3, one row", router(32, 10, 128, 2), 1, 16,
       1, 3},
  };
  std::vector<Case> cases;
  for (const Row &row : table) {
    // The rectangle's rows and columns are the split (its rows the token
    // groups, unless the row gives fewer), and attention's block too.
    Layout layout = sim::mesh::rectangleLayout(row.width, row.height);
    if (row.segment) {
      layout.featureGroups = row.segment;
      layout.tokenGroups = row.width / row.segment * row.height;
    }
    layout.sumBlock = row.sumBlock;
    layout.keyBlock = row.keyBlock;
    if (row.tokenGroups)
      layout.tokenGroups = row.tokenGroups;
    cases.push_back({row.what, row.kernel, layout, row.microBatch, row.width,
                     row.height, &t});
  }
  return cases;
}

/// Token groups and feature groups of a placed kernel's window.
constexpr int64_t kWindowRows = 2, kWindowColumns = 8;
/// Output columns of an unblocked window (tokens, for resident weights).
constexpr int64_t kWindowOutputs = 64;
/// (Sequence, head) pairs of an attention window: a block takes its pairs
/// one after another, so two show the turn from one to the next.
constexpr int64_t kWindowPairs = 2;

/// `kernel` placed with `layout` at `microBatch` as it runs on a window
/// of its rectangle: each core of the window holds what a core of the
/// rectangle holds. Attention: one (sequence, head) block as on the wafer,
/// with two of its pairs; a routed kernel, one expert's pass.
Case windowOf(std::string what, KernelShape k, Layout layout, wafer::Rect rect,
              int64_t micro, const target::WaferTargetModel &t) {
  k = wafer::vocabularyChunk(k);
  k.repeats = 1;
  // A routed kernel runs expert after expert, each the same program on the
  // rows of the most loaded expert: one expert's pass.
  if (k.experts > 1) {
    k = wafer::expertPass(k, micro);
    micro = 1;
  }
  if (k.kind == KernelKind::attention) {
    wafer::AttentionPass pass = wafer::attentionPass(k, layout, rect, micro);
    return Case{std::move(what),
                pass.pair,
                pass.block,
                std::min(pass.pairsPerBlock, kWindowPairs),
                static_cast<int>(pass.block.featureGroups),
                static_cast<int>(pass.block.tokenGroups),
                &t,
                true};
  }
  int64_t gt = std::min(layout.tokenGroups, kWindowRows);
  // A reduce-scatter's parts are the block over the whole segment: its
  // window keeps the segment.
  int64_t gk = wafer::reducesScattered(k, layout)
                   ? layout.featureGroups
                   : std::min(layout.featureGroups, kWindowColumns);
  KernelShape w = k;
  bool resident = layout.weights == Edge::resident;
  wafer::SumBlockShape sums = wafer::sumBlockShape(k, layout, micro);
  int64_t outputs = layout.sumBlock > 0
                        ? std::min(sums.columns, 2 * layout.sumBlock)
                        : std::min(sums.columns, kWindowOutputs);
  switch (k.kind) {
  case KernelKind::weight_matmul:
    if (resident) {
      w.rows = outputs;
      w.columns = sums.perColumn * gt;
    } else {
      w.rows = sums.perColumn * gt;
      w.columns = outputs;
    }
    w.contracted = sums.streamed * gk;
    break;
  case KernelKind::weight_grad:
    if (resident) {
      w.rows = ceilDiv(k.rows, layout.featureGroups) * gk;
      w.columns = ceilDiv(k.columns, layout.tokenGroups) * gt;
      w.contracted = std::min(micro * k.contracted, kWindowOutputs);
    } else {
      w.rows = sums.perColumn * gk;
      w.columns = outputs;
      w.contracted = sums.streamed * gt;
    }
    break;
  case KernelKind::reduction:
  case KernelKind::elementwise:
  case KernelKind::embedding:
  case KernelKind::token_sum: {
    w.rows = ceilDiv(micro * k.rows, layout.tokenGroups) * gt;
    w.columns = ceilDiv(k.columns, layout.featureGroups) * gk;
    w.flops = 2 * wafer::vectorOperations(k) * w.rows * w.columns;
    // A map's FLOPs are whole per element, its function's and any fused
    // kernel's.
    if (k.function == wafer::RowFunction::map)
      w.flops = k.flops / (k.rows * k.columns) * w.rows * w.columns;
    // A core's slice of the table (or its gradient) as placed.
    auto slice = [&](int64_t bytes) {
      return bytes ? ceilDiv(bytes, layout.featureGroups) * gk : 0;
    };
    w.weightBytes = slice(k.weightBytes);
    w.accumulator = slice(k.accumulator);
    break;
  }
  case KernelKind::attention:
    break;
  }
  if (k.kind == KernelKind::weight_matmul || k.kind == KernelKind::weight_grad)
    w.flops = 2 * w.rows * w.columns * w.contracted;
  layout.tokenGroups = gt;
  layout.featureGroups = gk;
  return Case{std::move(what),      w,  layout, 1, static_cast<int>(gk),
              static_cast<int>(gt), &t, true};
}

/// The distinct kernels of every device in `path`, each on its window.
bool placedCases(const std::string &path, mlir::MLIRContext &context,
                 std::vector<Case> &cases) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(path, &context);
  if (!module)
    return false;
  std::set<std::string> seen;
  for (wafer::DeviceOp device : module->getOps<wafer::DeviceOp>()) {
    mlir::FailureOr<wafer::PlacedStep> placed = wafer::PlacedStep::read(device);
    if (mlir::failed(placed))
      return false;
    const target::WaferTargetModel &t = placed->program.getTarget();
    std::string model = device.getSymName().str() + " on " + t.getName().str();
    for (auto [s, stage] : llvm::enumerate(placed->program.getStages()))
      for (auto [r, region] : llvm::enumerate(stage.regions)) {
        const wafer::RegionPlacement &at = placed->placement.regions[s][r];
        Case c = windowOf(
            model + " " + stage.name + " @" + region.op.getSymName().str(),
            region.shape, at.layout, at.rect, device.getMicroBatch(), t);
        const KernelShape &k = c.kernel;
        const Layout &l = c.layout;
        std::string key = llvm::formatv(
            "{0} {1} {2} {3} {4} {5} {6} {7} {8} {9} {10} {11} {12} {13}",
            static_cast<int>(k.kind), k.rows, k.columns, k.contracted, k.flops,
            k.elementBytes, k.weightBytes, k.accumulator, l.tokenGroups,
            l.featureGroups, static_cast<int>(l.weights), l.sumBlock,
            c.microBatch, static_cast<int>(k.function));
        // And its epilogue: the same product with other maps is another
        // program.
        key += llvm::formatv(" {0} {1}", k.bias, k.scale.value_or(0)).str();
        for (const wafer::EpilogueMap &map : k.epilogue)
          key += llvm::formatv(" {0}:{1}:{2}", static_cast<int>(map.kind),
                               map.running, map.kept)
                     .str();
        if (seen.insert(key).second)
          cases.push_back(std::move(c));
      }
  }
  return true;
}

} // namespace

/// This process's peak resident memory, in bytes.
int64_t peakResidentBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return int64_t(usage.ru_maxrss) * 1024;
}

int main(int argc, char **argv) {
#ifdef CGPT_ENABLE_MPI
  // Under mpirun: each process simulates a band; the first prints.
  std::unique_ptr<sim::mesh::MpiLinks> processes =
      sim::mesh::MpiLinks::join(argc, argv);
  sim::mesh::BandLinks *links = processes.get();
#else
  sim::mesh::BandLinks *links = nullptr;
#endif
  bool quiet = links && links->worker() != 0;
  llvm::raw_ostream &out = quiet ? llvm::nulls() : llvm::outs();
  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    "cgpt analytic kernel times against the "
                                    "cycle-level mesh engine\n");
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  mlir::FailureOr<target::WaferTargetModel> target =
      target::WaferTargetModel::load(targetName, &context);
  if (mlir::failed(target))
    return 2;

  std::vector<Case> table;
  if (benchWholeMesh) {
    // 24 tokens a row of cores and eight features a core along each
    // row: chains the width of the mesh, over 10^4 cycles on WSE-2.
    int width = static_cast<int>(target->getMeshWidth()),
        height = static_cast<int>(target->getMeshHeight());
    table = {{"matmul, whole mesh",
              matmul(24 * int64_t(height), 48, 8 * int64_t(width)),
              sim::mesh::rectangleLayout(width, height), 1, width, height,
              &*target}};
  } else if (bench) {
    // A 64 x 64 kernel of about 10^5 cycles, and a 128 x 128 one.
    table = {{"matmul, 64 x 64 mesh, long", matmul(256, 640, 2048),
              sim::mesh::rectangleLayout(64, 64), 2, 64, 64, &*target},
             {"matmul, 128 x 128 mesh", matmul(512, 640, 1024),
              sim::mesh::rectangleLayout(128, 128), 2, 128, 128, &*target}};
  } else if (placedFiles.empty()) {
    table = handCases(*target);
  }
  if (!caseFilter.empty()) {
    llvm::Regex pattern(caseFilter);
    std::string why;
    if (!pattern.isValid(why)) {
      llvm::errs() << "cgpt-mesh-timing-check: --cases '" << caseFilter
                   << "': " << why << "\n";
      return 2;
    }
    llvm::erase_if(table,
                   [&](const Case &c) { return !pattern.match(c.what); });
  }
  for (const std::string &path : placedFiles)
    if (!placedCases(path, context, table)) {
      llvm::errs() << "cgpt-mesh-timing-check: cannot read placed IR from '"
                   << path << "'\n";
      return 2;
    }

  if (engineOnly)
    out << llvm::formatv("{0,-40} {1,9} {2,13}\n", "case", "mesh", "simulated");
  else if (!bench && !benchWholeMesh)
    out << llvm::formatv("{0,-40} {1,9} {2,13} {3,13} {4,8}\n", "case", "mesh",
                         "analytic", "simulated", "error");
  double worst = 0, closest = -INFINITY;
  std::string worstCase, closestCase;
  int over = 0, unloadable = 0, closeCases = 0, outsideClose = 0;
  bool failed = false;
  int tooLong = 0;
  for (const Case &c : table) {
    wafer::Rect rect{0, 0, c.width, c.height};
    std::string mesh =
        std::to_string(c.width) + " x " + std::to_string(c.height);
    double analytic =
        wafer::kernelTime({c.kernel, c.layout, rect, c.microBatch, *c.target})
            .cycles();
    // What the run would cost, judged before it starts.
    double estimate = analytic * static_cast<double>(rect.cores());
    if (c.placed && maxCoreCycles > 0 && estimate > maxCoreCycles) {
      out << llvm::formatv("{0,-40} {1,9} not simulated: about {2:e1} "
                           "core-cycles, over --max-core-cycles\n",
                           c.what, mesh, estimate);
      ++tooLong;
      continue;
    }
    sim::mesh::MeshProgram program =
        sim::mesh::buildKernelProgram(c.kernel, c.layout, c.microBatch,
                                      *c.target, rect)
            .mesh;
    std::string error;
    auto start = std::chrono::steady_clock::now();
    sim::mesh::MeshWorkers workers;
    workers.threads = threads;
    workers.minCoresPerThread = minCoresPerThread;
    workers.processes = links;
    std::optional<sim::mesh::MeshResult> result = sim::mesh::simulate(
        program, sim::mesh::meshConfig(*c.target), error, {}, workers);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (!result && c.placed && error.find("cannot load") != std::string::npos) {
      out << llvm::formatv("{0,-40} {1,9} does not load: {2}\n", c.what, mesh,
                           error);
      ++unloadable;
      continue;
    }
    if (!result) {
      llvm::errs() << "cgpt-mesh-timing-check: " << c.what << ": " << error
                   << "\n";
      failed = true;
      continue;
    }
    if (benchWholeMesh) {
      // Every process's peak memory, gathered to the first.
      std::string mine = std::to_string(peakResidentBytes());
      std::vector<std::string> peaks =
          links ? links->gather(mine) : std::vector<std::string>{mine};
      int64_t peak = 0;
      for (const std::string &bytes : peaks)
        peak = std::max<int64_t>(peak, std::stoll(bytes));
      int workerCount = sim::mesh::meshWorkers(c.width, c.height, workers);
      out << llvm::formatv(
          "{0} on {1}: {2} cycles, {3:e2} core-cycles in {4:f1} s: {5:e2} "
          "core-cycles/s on {6} {7}; peak memory {8} MiB a process\n",
          c.what, mesh, result->cycles, static_cast<double>(result->coreCycles),
          seconds, static_cast<double>(result->coreCycles) / seconds,
          workerCount, links ? "MPI process(es)" : "thread(s)", peak >> 20);
      continue;
    }
    if (bench) {
      out << llvm::formatv(
          "{0}: {1} cycles, {2} core-cycles in {3:f2} s: {4:e} "
          "core-cycles/s\n",
          c.what, result->cycles, result->coreCycles, seconds,
          static_cast<double>(result->coreCycles) / seconds);
      continue;
    }
    if (engineOnly) {
      out << llvm::formatv("{0,-40} {1,9} {2,13}\n", c.what, mesh,
                           result->cycles);
      continue;
    }
    double simulated = static_cast<double>(result->cycles);
    double relative = (analytic - simulated) / simulated;
    if (std::abs(relative) > worst) {
      worst = std::abs(relative);
      worstCase = c.what;
    }
    over += std::abs(relative) > 0.10;
    // Attention's statistics chains are charged a whole round trip each;
    // a reduce-scatter of several blocks overlaps part of each block's
    // chains' latency with the next block, which the analytic model
    // charges whole (docs/runtime.md, "The weight matmul's
    // reduce-scatter").
    wafer::SumBlockShape sums =
        wafer::sumBlockShape(c.kernel, c.layout, c.microBatch);
    bool blockedScatter = wafer::reducesScattered(c.kernel, c.layout) &&
                          sums.blockColumns(c.layout.sumBlock) < sums.columns;
    if (c.kernel.kind != KernelKind::attention && !blockedScatter) {
      double excess = std::abs(analytic - simulated) -
                      (kCloseCycles + kCloseShare * simulated);
      ++closeCases;
      outsideClose += excess > 0;
      if (excess > closest) {
        closest = excess;
        closestCase = c.what;
      }
    }
    out << llvm::formatv("{0,-40} {1,9} {2,13} {3,13} {4,7:f1}%\n", c.what,
                         mesh, static_cast<int64_t>(std::llround(analytic)),
                         result->cycles, 100 * relative);
  }
  if (bench || benchWholeMesh)
    return failed ? 2 : 0;
  if (!engineOnly && closeCases)
    out << llvm::formatv(
        "{0} cases but attention and blocked reduce-scatters within {1} "
        "cycles + {2:f1}%: {3} outside "
        "(least margin {4:f1} cycles, {5})\n",
        closeCases, kCloseCycles, 100 * kCloseShare, outsideClose, -closest,
        closestCase);
  if (!engineOnly)
    out << llvm::formatv(
        "{0} cases, worst error {1:f1}% ({2}), {3} over 10%; {4} placed "
        "programs do not fit a core{5}\n",
        table.size() - unloadable - tooLong, 100 * worst, worstCase, over,
        unloadable,
        tooLong ? llvm::formatv(", {0} not simulated", tooLong).str() : "");
  if (failed)
    return 2;
  return over || outsideClose ? 1 : 0;
}
