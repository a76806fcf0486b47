//===- KernelCost.cpp - a kernel's time on its rectangle ------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/Analysis/KernelCost.h"

#include <cmath>

using namespace mlir;

namespace cgpt::wafer {

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

const char *KernelTime::bound() const {
  if (compute >= fabric && compute >= sram)
    return "compute";
  return fabric >= sram ? "fabric" : "sram";
}

int64_t fmacLanes(const target::WaferTargetModel &target,
                  int64_t elementBytes) {
  return elementBytes <= 2 ? target.getMixedFmacsPerCycle()
                           : target.getF32FmacsPerCycle();
}

int64_t elementsPerWavelet(const target::WaferTargetModel &target,
                           int64_t elementBytes) {
  return std::max<int64_t>(1, target.getLinkBytesPerCycle() / elementBytes);
}

KernelShape shapeOf(RegionOp region) {
  KernelShape shape;
  shape.kind = region.getKind();
  shape.rows = region.getRows();
  shape.columns = region.getColumns();
  shape.contracted = region.getContracted();
  shape.flops = region.getFlops();
  shape.elementBytes = region.getElementBytes();
  shape.weightBytes = region.getWeightBytes().value_or(0);
  shape.accumulator = region.getAccumulator();
  shape.chunks = region.getChunks();
  shape.repeats = region.getRepeats();
  return shape;
}

/// (sequence, head) pairs of an attention kernel at `microBatch`.
static int64_t attentionPairs(const KernelShape &k, int64_t microBatch) {
  return microBatch *
         std::max<int64_t>(1, k.rows / std::max<int64_t>(1, k.columns));
}

Layout bestAttentionBlock(const KernelShape &k, int64_t microBatch,
                          int64_t cores) {
  int64_t pairs = attentionPairs(k, microBatch), seq = k.columns;
  Layout block;
  if (pairs > cores)
    return block;
  // About square blocks: of the splits near sqrt(cores per pair), the one
  // that leaves each core the fewest scores.
  int64_t perPair = cores / pairs;
  auto root = static_cast<int64_t>(std::sqrt(static_cast<double>(perPair)));
  int64_t fewest = -1;
  for (int64_t rows = std::max<int64_t>(1, std::min(root, seq) - 8);
       rows <= std::min({seq, perPair, root + 8}); ++rows) {
    int64_t columns = std::clamp<int64_t>(perPair / rows, 1, seq);
    int64_t scores = ceilDiv(seq, rows) * ceilDiv(seq, columns);
    if (fewest < 0 || scores < fewest) {
      fewest = scores;
      block.tokenGroups = rows;
      block.featureGroups = columns;
    }
  }
  return block;
}

KernelTime kernelTime(const KernelCostQuery &query) {
  const KernelShape &k = query.shape;
  const target::WaferTargetModel &t = query.target;
  const Layout &layout = query.layout;
  int64_t microBatch = query.microBatch;
  int64_t width = query.rect.w, height = query.rect.h;
  KernelTime time;
  double link = static_cast<double>(t.getLinkBytesPerCycle());
  double read = static_cast<double>(t.getSramReadBytesPerCycle());
  double write = static_cast<double>(t.getSramWriteBytesPerCycle());
  double a = static_cast<double>(t.getTaskActivationCycles());
  double lanes = static_cast<double>(fmacLanes(t, k.elementBytes));
  double eb = static_cast<double>(k.elementBytes);
  double perWavelet =
      static_cast<double>(elementsPerWavelet(t, k.elementBytes));
  auto wavelets = [&](double elements) {
    return std::ceil(elements / perWavelet);
  };
  // A vector operation over n elements after its task starts.
  auto vectorOp = [&](int64_t n) {
    return std::ceil(static_cast<double>(n) / lanes) + a;
  };
  // A stream of f32 values forwarded through each core of a chain, one
  // wavelet a cycle after one activation.
  auto chain = [&](double values) {
    return values > 0 ? a + values * kPartialSumBytes / link : 0.0;
  };
  int64_t gt = layout.tokenGroups, gk = layout.featureGroups;
  double hop = static_cast<double>(t.getHopLatencyCycles());
  // Filling and draining the kernel's streams: a multicast reaches its last
  // core after `cores` hops; a chain of `stages` groups spread over `span`
  // cores adds the hops and, at each stage, the wavelet's way in and out
  // of the core's ramp (one cycle each).
  auto multicastFill = [&](int64_t cores) {
    return static_cast<double>(cores) * hop;
  };
  auto chainFill = [&](int64_t stages, int64_t span) {
    return stages > 1 ? static_cast<double>(span) * hop + 2.0 * (stages - 1)
                      : 0.0;
  };
  // A product against a stream: each wavelet of `elements` starts one task,
  // an FMAC over `width` values for each element it carries; then `partials`
  // f32 sums pass along a chain. The core's ramp carries both streams.
  auto productThenChain = [&](double elements, int64_t width,
                              double partials) {
    time.compute = wavelets(elements) * a +
                   elements * std::ceil(static_cast<double>(width) / lanes) +
                   chain(partials);
    time.fabric = wavelets(elements) + partials * kPartialSumBytes / link;
  };
  bool resident = layout.weights == Edge::resident;
  // Weights streamed from the mesh's north edge first cross the cores
  // north of the rectangle.
  double entry =
      layout.weights == Edge::north ? multicastFill(query.rect.y) : 0.0;

  switch (k.kind) {
  case KernelKind::weight_matmul: {
    if (resident) {
      // The weight stays: a core holds a block of its contracted rows by
      // output columns. Each token's features stream down the columns of
      // their feature group, each element starting one FMAC over the
      // core's output columns; the partial sums then pass along the row.
      int64_t tokens = microBatch * k.rows;
      int64_t kb = ceilDiv(k.contracted, gk), nb = ceilDiv(k.columns, gt);
      double elements = static_cast<double>(tokens) * kb;
      productThenChain(elements, nb,
                       gk > 1 ? static_cast<double>(tokens) * nb : 0);
      time.sram = elements * std::max(nb * (eb + kPartialSumBytes) / read,
                                      nb * kPartialSumBytes / write);
      time.fixed = multicastFill(height + ceilDiv(width, gk)) +
                   chainFill(gk, width);
      break;
    }
    // Tokens over token groups, the contracted features over feature
    // groups. Each weight wavelet arrives (multicast down the column of its
    // feature group) and starts one task: an FMAC over the core's tokens
    // for each element it carries. The partial sums then pass along the
    // row, each core adding its own.
    int64_t tb = ceilDiv(microBatch * k.rows, gt);
    int64_t kb = ceilDiv(k.contracted, gk);
    double elements = static_cast<double>(kb) * k.columns;
    productThenChain(elements, tb,
                     gk > 1 ? static_cast<double>(tb) * k.columns : 0);
    time.sram = elements * std::max(tb * (eb + kPartialSumBytes) / read,
                                    tb * kPartialSumBytes / write);
    // Weights fill a feature group's columns; partial sums cross the row.
    time.fixed = entry + multicastFill(height + ceilDiv(width, gk)) +
                 chainFill(gk, width);
    break;
  }
  case KernelKind::weight_grad: {
    if (resident) {
      // The gradient stays where its weight is: a core holds a block of
      // dW's rows by columns and adds each token's outer product into it.
      // The token's inputs and output gradient stream in; each output
      // gradient element starts an FMAC over the core's rows.
      int64_t tokens = microBatch * k.contracted;
      int64_t kb = ceilDiv(k.rows, gk), nb = ceilDiv(k.columns, gt);
      double gradient = static_cast<double>(tokens) * nb;
      double inputs = static_cast<double>(tokens) * kb;
      time.compute = wavelets(gradient) * a + a + wavelets(inputs) +
                     gradient * std::ceil(static_cast<double>(kb) / lanes);
      time.fabric = wavelets(gradient) + wavelets(inputs);
      time.sram = gradient * std::max(kb * (eb + kPartialSumBytes) / read,
                                      kb * kPartialSumBytes / write);
      time.fixed = multicastFill(width + height);
      break;
    }
    // dW[K, N] summed over the tokens: the output gradient of the core's
    // tokens streams along its row, each element starting an FMAC over the
    // core's input features; the partial dW then passes down the columns.
    int64_t tb = ceilDiv(microBatch * k.contracted, gt);
    int64_t kb = ceilDiv(k.rows, gk);
    double gradient = static_cast<double>(tb) * k.columns;
    productThenChain(gradient, kb,
                     gt > 1 ? static_cast<double>(kb) * k.columns : 0);
    time.sram = gradient * kb * (eb + kPartialSumBytes) / read;
    time.fixed = multicastFill(width + ceilDiv(height, gt)) +
                 chainFill(gt, height);
    break;
  }
  case KernelKind::attention: {
    // One block of query blocks by key blocks per (sequence, head); the
    // scores stay in the block. Each core stores its queries, keys and
    // values as they stream in (and their gradients, backward), runs
    // vector operations along its keys, then passes its softmax statistics
    // and partial outputs along the row. Blocks that outnumber the
    // rectangle's room run one after another on the same cores.
    int64_t heads =
        std::max<int64_t>(1, k.rows / std::max<int64_t>(1, k.columns));
    int64_t seq = k.columns, headSize = k.contracted;
    double pairFlops = static_cast<double>(k.flops) / heads;
    // Products of S x S x head_size this region executes (2 forward).
    double products = std::max(
        1.0, pairFlops / (2.0 * static_cast<double>(seq) * seq * headSize));
    int64_t cq = std::min(gt, seq), ck = std::min(gk, seq);
    int64_t blocks = std::max<int64_t>(1, query.rect.cores() / (cq * ck));
    int64_t pairsPerBlock = ceilDiv(attentionPairs(k, microBatch), blocks);
    int64_t q = ceilDiv(seq, cq), keys = ceilDiv(seq, ck);
    double perCore = pairFlops * (static_cast<double>(q) * keys) /
                     (static_cast<double>(seq) * seq) * pairsPerBlock;
    double operands = static_cast<double>(q + 2 * keys) * headSize *
                      products / 2 * pairsPerBlock;
    double stored = wavelets(operands);
    double partials =
        ck > 1 ? static_cast<double>(2 * q + q * headSize) * products / 2 *
                     pairsPerBlock
               : 0;
    // Queries, then keys and values, each stored as one stream.
    time.compute = 2 * a + stored + perCore / 2 / keys * vectorOp(keys) +
                   chain(partials);
    time.fabric = stored + partials * kPartialSumBytes / link;
    time.sram = perCore / 2 * (eb + kPartialSumBytes) / read;
    time.fixed = multicastFill(std::max(cq, ck)) + chainFill(ck, ck);
    break;
  }
  case KernelKind::reduction:
  case KernelKind::elementwise:
  case KernelKind::embedding: {
    // Vector operations along each token's features; a reduction then
    // passes each row's statistics along the row and back.
    int64_t tb = ceilDiv(microBatch * k.rows, gt);
    int64_t cb = ceilDiv(k.columns, gk);
    double perElement = static_cast<double>(k.flops) /
                        (static_cast<double>(k.rows) * k.columns);
    double ops = std::max(1.0, perElement / 2);
    time.compute = static_cast<double>(tb) * ops * vectorOp(cb);
    if (k.kind == KernelKind::reduction && gk > 1) {
      time.compute += 2 * chain(2.0 * tb);
      time.fixed = 2 * chainFill(gk, width);
    }
    time.sram = static_cast<double>(tb) * cb * eb * 3 / read;
    if (k.kind == KernelKind::embedding && !resident) {
      // The table (or its gradient) streams down each feature group's
      // columns; each core takes in its slice, one wavelet a cycle.
      double table = std::ceil(static_cast<double>(
                                   std::max(k.weightBytes, k.accumulator)) /
                               gk / link);
      time.compute += a + table;
      time.fabric = table;
      time.fixed = entry + multicastFill(height);
    }
    break;
  }
  }
  // A kernel run again repeats all of its work; one run chunk by chunk pays
  // its fixed cost once per chunk.
  double repeats = static_cast<double>(k.repeats);
  time.compute *= repeats;
  time.fabric *= repeats;
  time.sram *= repeats;
  time.fixed *= repeats * static_cast<double>(k.chunks);
  return time;
}

KernelCostModel KernelCostModel::forKernel(StringAttr kernel) {
  KernelCostModel model;
  if (std::optional<RegisteredOperationName> op =
          RegisteredOperationName::lookup(kernel, kernel.getContext()))
    model.own = op->getInterface<KernelCostOpInterface>();
  return model;
}

KernelTime KernelCostModel::operator()(const KernelCostQuery &query) const {
  return own ? own->getMeshCost(query) : kernelTime(query);
}

} // namespace cgpt::wafer
