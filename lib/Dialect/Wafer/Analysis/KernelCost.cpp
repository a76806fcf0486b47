//===- KernelCost.cpp - a kernel's time on its rectangle ------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/Analysis/KernelCost.h"

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"
#include "cgpt/Dialect/Dataflow/IR/RowOperations.h"
#include "cgpt/Dialect/Wafer/Analysis/MapAlgorithm.h"

#include <array>
#include <cmath>
#include <map>
#include <mutex>

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

double cyclesPerWavelet(const target::WaferTargetModel &target) {
  // A queue's place is held from the cycle a wavelet is sent until its
  // freeing reaches the sender a cycle after the wavelet moved on: the
  // latency of the link plus one, a hop between routers or a ramp between
  // a router and its core (which every stream of a core crosses).
  double queue = static_cast<double>(target.getRouterQueueWavelets());
  double held = static_cast<double>(
      std::max(target.getHopLatencyCycles(), target.getRampLatencyCycles()) +
      1);
  return std::max(1.0, held / queue);
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
  shape.experts = region.getExperts();
  shape.expertRows = region.getExpertRows().value_or(0);
  if (std::optional<uint64_t> topK = region.getTopK()) {
    shape.choices = static_cast<int64_t>(*topK);
    if (std::optional<llvm::APFloat> logit = region.getNullExpert())
      shape.nullLogit = logit->convertToDouble();
    shape.roundLogits = !region.getRouterF32() && shape.elementBytes <= 2;
  }
  shape.bias = region.getBias();
  if (std::optional<llvm::APFloat> scale = region.getScale())
    shape.scale = scale->convertToDouble();
  for (auto map : region.getEpilogue().getAsRange<EpilogueMapAttr>())
    shape.epilogue.push_back(
        {map.getKind(), static_cast<int>(map.getRunning()), map.getKept()});
  // A region's fused kernels run beside its own algorithm
  // (fusedOperations).
  StringRef kernel = region.getKernel();
  if (kernel == dataflow::LayerNormOp::getOperationName())
    shape.function = RowFunction::layerNorm;
  else if (kernel == dataflow::RMSNormOp::getOperationName())
    shape.function = RowFunction::rmsNorm;
  else if (kernel == dataflow::LayerNormGradOp::getOperationName())
    shape.function = RowFunction::layerNormGrad;
  else if (kernel == dataflow::RMSNormGradOp::getOperationName())
    shape.function = RowFunction::rmsNormGrad;
  else if (kernel == dataflow::CrossEntropyOp::getOperationName())
    shape.function = RowFunction::crossEntropy;
  else if (kernel == dataflow::CrossEntropyGradOp::getOperationName())
    shape.function = RowFunction::crossEntropyGrad;
  else if (kernel == dataflow::GatherOp::getOperationName()) {
    shape.function = RowFunction::gather;
    if (llvm::is_contained(region.getFused().getAsValueRange<StringAttr>(),
                           dataflow::AddPositionsOp::getOperationName()))
      shape.positionRows = shape.rows;
  } else if (kernel == dataflow::ScatterAddOp::getOperationName() ||
             kernel == dataflow::PositionGradOp::getOperationName())
    shape.function = RowFunction::scatterAdd;
  else if (std::optional<dataflow::MapKind> map = region.getMap()) {
    shape.function = RowFunction::map;
    shape.map = *map;
  } else if (shape.kind == KernelKind::attention)
    shape.function =
        llvm::is_contained(region.getFused().getAsValueRange<StringAttr>(),
                           dataflow::SoftmaxGradOp::getOperationName())
            ? RowFunction::attentionGrad
            : RowFunction::attention;
  return shape;
}

AttentionPass attentionPass(const KernelShape &k, const Layout &layout,
                            const Rect &rect, int64_t microBatch) {
  int64_t seq = k.columns;
  int64_t heads = std::max<int64_t>(1, k.rows / std::max<int64_t>(1, seq));
  AttentionPass pass{k, layout, 1};
  pass.pair.flops = k.flops / heads;
  pass.pair.rows = seq;
  pass.block.tokenGroups = std::min(layout.tokenGroups, seq);
  pass.block.featureGroups = std::min(layout.featureGroups, seq);
  int64_t blocks = std::max<int64_t>(1, rect.w / pass.block.featureGroups *
                                            (rect.h / pass.block.tokenGroups));
  pass.pairsPerBlock = ceilDiv(microBatch * heads, blocks);
  return pass;
}

KernelShape vocabularyChunk(const KernelShape &shape) {
  KernelShape chunk = shape;
  chunk.chunks = 1;
  if (shape.chunks <= 1)
    return chunk;
  int64_t *widest = &chunk.rows;
  for (int64_t *dimension : {&chunk.columns, &chunk.contracted})
    if (*dimension > *widest)
      widest = dimension;
  *widest = ceilDiv(*widest, shape.chunks);
  chunk.flops = ceilDiv(shape.flops, shape.chunks);
  chunk.weightBytes = ceilDiv(shape.weightBytes, shape.chunks);
  chunk.accumulator = ceilDiv(shape.accumulator, shape.chunks);
  return chunk;
}

/// E[max] of `experts` independent standard normals: the integral of
/// x E phi(x) Phi(x)^(E-1) over [-12, 12] by the midpoint rule. Kernel
/// costs are asked for millions of times while a step is planned, so each
/// count of experts is integrated once.
static double expectedStandardMaximum(int64_t experts) {
  static std::mutex guard;
  static std::map<int64_t, double> known;
  std::lock_guard<std::mutex> lock(guard);
  auto [it, inserted] = known.try_emplace(experts, 0.0);
  if (!inserted)
    return it->second;
  constexpr int kSteps = 4800;
  double e = static_cast<double>(experts), step = 24.0 / kSteps;
  for (int i = 0; i < kSteps; ++i) {
    double x = -12.0 + (i + 0.5) * step;
    double density = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
    double below = 0.5 * std::erfc(-x / std::sqrt(2.0));
    it->second += x * e * density * std::pow(below, e - 1.0) * step;
  }
  return it->second;
}

double expectedLargestLoad(int64_t rows, int64_t experts) {
  double n = static_cast<double>(rows), e = static_cast<double>(experts);
  if (experts <= 1)
    return n;
  double mean = n / e, deviation = std::sqrt(n * (1.0 / e) * (1.0 - 1.0 / e));
  return std::min(
      n, std::ceil(mean + deviation * expectedStandardMaximum(experts)));
}

KernelShape expertPass(const KernelShape &shape, int64_t microBatch) {
  KernelShape pass = shape;
  pass.experts = 0;
  if (shape.experts <= 1)
    return pass;
  // A weight gradient's routed rows are the tokens it sums over.
  int64_t &routed =
      shape.kind == KernelKind::weight_grad ? pass.contracted : pass.rows;
  // As planned and written in the IR, else the expected largest load.
  auto load = shape.expertRows > 0 ? shape.expertRows
                                   : static_cast<int64_t>(expectedLargestLoad(
                                         microBatch * routed, shape.experts));
  // In double: the load spans the micro-batch, the FLOPs one sequence.
  pass.flops = static_cast<int64_t>(std::min(
      9.0e18,
      std::ceil(static_cast<double>(shape.flops) * static_cast<double>(load) /
                static_cast<double>(std::max<int64_t>(1, routed)))));
  routed = load;
  pass.weightBytes = ceilDiv(shape.weightBytes, shape.experts);
  pass.accumulator = ceilDiv(shape.accumulator, shape.experts);
  return pass;
}

SumBlockShape sumBlockShape(const KernelShape &shape, const Layout &layout,
                            int64_t microBatch) {
  if (shape.experts > 1)
    return sumBlockShape(expertPass(shape, microBatch), layout, 1);
  KernelShape k = vocabularyChunk(shape);
  int64_t gt = layout.tokenGroups, gk = layout.featureGroups;
  bool resident = layout.weights == Edge::resident;
  switch (k.kind) {
  case KernelKind::weight_matmul:
    if (resident)
      // The weight stays; each token's features stream in: a core sums its
      // share of the output columns for every token.
      return {microBatch * k.rows, ceilDiv(k.columns, gt),
              ceilDiv(k.contracted, gk)};
    return {k.columns, ceilDiv(microBatch * k.rows, gt),
            ceilDiv(k.contracted + biasRow(k, layout), gk),
            reducesScattered(k, layout) ? gk : 0,
            reducesScattered(k, layout) ? epilogueRows(k) : 0};
  case KernelKind::weight_grad:
    // Resident, the sums are the gradient the core keeps (its
    // accumulator); streamed, a core sums its input features' rows of
    // each column over its tokens.
    if (resident)
      return {};
    return {k.columns, ceilDiv(k.rows, gk),
            ceilDiv(microBatch * k.contracted, gt)};
  case KernelKind::token_sum:
    // One sum for each of the core's features, added from its tokens in
    // memory.
    return {ceilDiv(k.columns, gk), 1, 0};
  default:
    return {};
  }
}

AttentionBlock attentionBlock(const AttentionPass &pass, int64_t perWavelet) {
  AttentionBlock block;
  block.gradient = pass.pair.function == RowFunction::attentionGrad;
  block.pairs = pass.pairsPerBlock;
  block.queries = ceilDiv(pass.pair.columns, pass.block.tokenGroups);
  block.keys = ceilDiv(pass.pair.columns, pass.block.featureGroups);
  block.headSize = pass.pair.contracted;
  block.elementBytes = pass.pair.elementBytes;
  block.perWavelet = perWavelet;
  return block;
}

AttentionBlock attentionBlock(const KernelShape &shape, const Layout &layout,
                              const Rect &rect, int64_t microBatch,
                              const target::WaferTargetModel &target) {
  return attentionBlock(attentionPass(shape, layout, rect, microBatch),
                        elementsPerWavelet(target, shape.elementBytes));
}

template <typename Fn>
void AttentionBlock::forEachBuffer(int64_t sumBlock, int64_t keyBlock,
                                   Fn buffer) const {
  constexpr int64_t f32 = kPartialSumBytes;
  int64_t c = chunk(sumBlock), eb = elementBytes;
  if (!gradient && keyBlock > 0) {
    // Key block by key block: a block's keys and values, a chunk's
    // queries and their rows of scores (the reciprocal's work row too),
    // maxima and a work element each, partial outputs and sums; every
    // query's mask offsets as the backward pass by keys keeps them.
    int64_t kc = keyChunk(keyBlock), all = chunks(sumBlock) * c;
    int64_t workRow = std::max(kc, c);
    buffer("keys and values", whole(2 * kc * headSize) * eb);
    buffer("queries", c * rowElements() * eb);
    buffer("scores", workRow * f32);
    buffer("row maxima", 2 * c * f32);
    buffer("partial outputs and sums", c * (headSize + 1) * f32);
    buffer("mask offsets", (c + 2 * all) * f32);
    buffer("key positions", 2 * kc * f32);
    buffer("slopes", pairs * f32);
    for (const char *row : {"exponent fraction", "power of two", "polynomial"})
      buffer(row, workRow * f32);
    buffer("constants",
           (6 + 2 * kc + 3 + dataflow::kExponentialDegree + 1 + 2) * f32);
    return;
  }
  if (gradient && keyBlock > 0) {
    // Key block by key block: a block's keys and rows of scores, every
    // query's statistics (and a chunk's copy) and mask offsets (and a
    // chunk's clamped), the block's positions and first positions.
    int64_t kc = keyChunk(keyBlock), all = chunks(sumBlock) * c;
    int64_t blockElements = whole(kc * headSize);
    buffer("keys transposed", blockElements * eb);
    buffer("keys", blockElements * eb);
    buffer("values transposed", blockElements * eb);
    buffer("queries", c * rowElements() * eb);
    buffer("output gradients", c * rowElements() * eb);
    buffer("probabilities", kc * f32);
    buffer("probability gradients", kc * f32);
    buffer("statistics", (4 * all + 3 * c) * f32);
    buffer("query gradients", c * headSize * f32);
    buffer("key and value gradients", 2 * kc * headSize * f32);
    buffer("mask offsets", (c + 2 * all) * f32);
    buffer("key positions", 2 * kc * f32);
    buffer("slopes", pairs * f32);
    for (const char *row : {"exponent fraction", "power of two", "polynomial"})
      buffer(row, std::max(kc, all) * f32);
    // The block's size and its negative step the mask and the positions.
    buffer("constants",
           (6 + 2 * kc + 3 + dataflow::kExponentialDegree + 1 + 2) * f32);
    return;
  }
  if (gradient) {
    buffer("keys transposed", keyElements() * eb);
    buffer("keys", keyElements() * eb);
    buffer("values transposed", keyElements() * eb);
    buffer("queries", c * rowElements() * eb);
    buffer("output gradients", c * rowElements() * eb);
    buffer("probabilities", c * keys * f32);
    buffer("probability gradients", c * keys * f32);
    buffer("statistics", 4 * c * f32);
    buffer("query gradients", c * headSize * f32);
    buffer("key and value gradients", 2 * keys * headSize * f32);
  } else {
    buffer("keys and values", whole(2 * keys * headSize) * eb);
    buffer("query row", rowElements() * eb);
    buffer("scores", c * keys * f32);
    buffer("row maxima", c * f32);
    buffer("partial outputs and sums", c * (headSize + 1) * f32);
  }
  // The softmax's: each query's mask offset, the key positions and each
  // pair's slope (ALiBi's), the exponential's three work rows, and the
  // constants (six, the mask's window and the exponential's).
  buffer("mask offsets", chunks(sumBlock) * c * f32);
  buffer("key positions", keys * f32);
  buffer("slopes", pairs * f32);
  buffer("exponent fraction", keys * f32);
  buffer("power of two", keys * f32);
  buffer("polynomial", keys * f32);
  buffer("constants",
         (6 + 2 * keys + 3 + dataflow::kExponentialDegree + 1) * f32);
}

std::vector<CoreBuffer> AttentionBlock::buffers(int64_t sumBlock,
                                                int64_t keyBlock) const {
  std::vector<CoreBuffer> out;
  forEachBuffer(sumBlock, keyBlock, [&](const char *name, int64_t bytes) {
    out.push_back({name, bytes});
  });
  return out;
}

int64_t AttentionBlock::bytes(int64_t sumBlock, int64_t keyBlock) const {
  int64_t total = 0;
  forEachBuffer(sumBlock, keyBlock,
                [&](const char *, int64_t bytes) { total += bytes; });
  return total;
}

int64_t attentionChunkFor(const AttentionBlock &block, int64_t room) {
  int64_t queries = block.queries;
  if (block.bytes(0) <= room)
    return 0;
  // The bytes are those of no query plus, per query at once, those of one
  // beside the mask offsets, and the offsets of every query, the last
  // chunk's padding among them (less than a chunk): at most as many at
  // once as fit with a chunk's padding counted whole, then as few even
  // chunks as still fit.
  AttentionBlock two = block;
  two.queries = 2;
  int64_t perQuery = two.bytes(2) - two.bytes(1);
  int64_t none = two.bytes(1) - perQuery - 2 * kPartialSumBytes;
  int64_t fit = (room - none - (queries - 1) * kPartialSumBytes) /
                (perQuery + kPartialSumBytes);
  if (fit < 1)
    return 1;
  int64_t chunks = ceilDiv(queries, std::min(fit, queries));
  while (chunks > 1 && block.bytes(ceilDiv(queries, chunks - 1)) <= room)
    --chunks;
  int64_t chunk = ceilDiv(queries, chunks);
  return chunk == queries ? 0 : chunk;
}

/// The fewest even chunks of `total` (their size) for which `fits`
/// holds, `fits` all but monotone in the chunks' count (a padded last
/// chunk can add a little): found by halving, then a short scan; 0 when
/// none does.
static int64_t fewestEvenChunks(int64_t total,
                                llvm::function_ref<bool(int64_t)> fits) {
  auto size = [&](int64_t chunks) { return ceilDiv(total, chunks); };
  if (!fits(size(total)))
    return 0;
  int64_t low = 1, high = total;
  while (low < high) {
    int64_t middle = low + (high - low) / 2;
    if (fits(size(middle)))
      high = middle;
    else
      low = middle + 1;
  }
  // Past the padding's unevenness: the first count from there that fits.
  for (int64_t chunks = low; chunks < std::min(total, low + 64); ++chunks)
    if (fits(size(chunks)))
      return size(chunks);
  return size(total);
}

std::vector<int64_t> attentionKeyBlocksFor(const AttentionBlock &block,
                                           int64_t room) {
  std::vector<int64_t> out;
  int64_t largest = fewestEvenChunks(
      block.keys, [&](int64_t keys) { return block.bytes(1, keys) <= room; });
  if (largest == 0)
    return out;
  int64_t keyChunks = ceilDiv(block.keys, largest);
  for (int halving = 0; halving <= 5; ++halving) {
    int64_t keys = ceilDiv(block.keys, keyChunks << halving);
    if (halving > 0 && keys == out.back())
      break;
    out.push_back(keys);
    if (keys == 1)
      break;
  }
  return out;
}

int64_t attentionChunkFor(const AttentionBlock &block, int64_t room,
                          int64_t keyBlock) {
  int64_t queries = fewestEvenChunks(block.queries, [&](int64_t queries) {
    return block.bytes(queries, keyBlock) <= room;
  });
  return queries == 0 ? 1 : queries == block.queries ? 0 : queries;
}

int64_t streamPacking(int64_t elements, int64_t perWavelet) {
  for (int64_t packed = perWavelet; packed > 1; --packed)
    if (elements % packed == 0)
      return packed;
  return 1;
}

int64_t vectorOperations(const KernelShape &k) {
  double perElement =
      static_cast<double>(k.flops) / (static_cast<double>(k.rows) * k.columns);
  return std::max<int64_t>(1, std::llround(perElement / 2));
}

int64_t embeddingTableRows(const KernelShape &k) {
  int64_t rowBytes =
      k.columns * (k.function == RowFunction::scatterAdd ? kPartialSumBytes
                                                         : k.elementBytes);
  int64_t bytes =
      k.function == RowFunction::scatterAdd ? k.accumulator : k.weightBytes;
  return std::max<int64_t>(1, ceilDiv(bytes, std::max<int64_t>(1, rowBytes)));
}

int64_t embeddingWorkBytes(const KernelShape &k, int64_t tb, int64_t cb,
                           const target::WaferTargetModel &target) {
  constexpr int64_t f32 = kPartialSumBytes;
  if (k.function == RowFunction::gather) {
    int64_t perWavelet = elementsPerWavelet(target, k.elementBytes);
    int64_t passedRow = ceilDiv(cb, perWavelet) * perWavelet * k.elementBytes;
    int64_t lists = (4 * tb + 1) * f32;
    // Fused positions: their rows beside the tokens', and their lists.
    int64_t positions =
        k.positionRows > 0 ? tb * cb * k.elementBytes + lists : 0;
    return lists + passedRow + f32 + positions;
  }
  if (k.function == RowFunction::scatterAdd)
    return tb * cb * f32 + (3 * tb + 1) * f32 + f32;
  return 0;
}

bool choosesOnChain(const KernelShape &k, const Layout &layout) {
  return k.choices > 0 && k.kind == KernelKind::weight_matmul &&
         layout.weights != Edge::resident && k.chunks == 1;
}

bool reducesScattered(const KernelShape &k, const Layout &layout) {
  return k.kind == KernelKind::weight_matmul &&
         layout.weights != Edge::resident && !choosesOnChain(k, layout);
}

int64_t biasRow(const KernelShape &k, const Layout &layout) {
  return k.bias && reducesScattered(k, layout) ? 1 : 0;
}

ScatteredPart scatteredPart(int64_t place, int64_t segment,
                            int64_t blockColumns) {
  auto start = [&](int64_t p) { return p * blockColumns / segment; };
  return {start(place), start(place + 1) - start(place)};
}

int64_t routerChoiceBytes(const KernelShape &k, const Layout &layout,
                          int64_t microBatch) {
  if (!choosesOnChain(k, layout))
    return 0;
  SumBlockShape sums = sumBlockShape(k, layout, microBatch);
  int64_t nb = sums.blockColumns(layout.sumBlock);
  int64_t blocks = ceilDiv(sums.columns, nb);
  int64_t tb = sums.perColumn, experts = k.columns;
  bool chained = layout.featureGroups > 1 || blocks > 1;
  int64_t logits = chained ? blocks * nb * tb * kPartialSumBytes : 0;
  int64_t rounded = k.roundLogits ? experts * tb * 2 : 0;
  int64_t rows = (2 * experts + 2 * k.choices + 10 + (k.nullLogit ? 1 : 0)) *
                 tb * kPartialSumBytes;
  return logits + rounded + rows + 20 * kPartialSumBytes;
}

int64_t epilogueConstantBytes(const KernelShape &k) {
  int64_t constants = k.scale ? 1 : 0;
  for (const EpilogueMap &map : k.epilogue)
    constants += static_cast<int64_t>(mapAlgorithm(map.kind).constants.size());
  return constants * kPartialSumBytes;
}

int64_t epilogueRows(const KernelShape &k) {
  int64_t rows = 0;
  for (const EpilogueMap &map : k.epilogue)
    rows = std::max<int64_t>(rows, mapAlgorithm(map.kind).workRows);
  return rows;
}

int64_t epilogueChunk(const KernelShape &k, int64_t blockColumns,
                      int64_t perColumn) {
  int64_t rows = epilogueRows(k);
  if (rows == 0)
    return perColumn;
  return std::clamp<int64_t>(blockColumns * perColumn / rows, 1, perColumn);
}

int64_t fusedOperations(const KernelShape &k) {
  dataflow::RowOperations own;
  switch (k.function) {
  case RowFunction::layerNorm:
    own = dataflow::kLayerNormOperations;
    break;
  case RowFunction::rmsNorm:
    own = dataflow::kRMSNormOperations;
    break;
  case RowFunction::layerNormGrad:
    own = dataflow::kLayerNormGradOperations;
    break;
  case RowFunction::rmsNormGrad:
    own = dataflow::kRMSNormGradOperations;
    break;
  case RowFunction::crossEntropy:
    own = dataflow::kCrossEntropyOperations;
    break;
  case RowFunction::crossEntropyGrad:
    own = dataflow::kCrossEntropyGradOperations;
    break;
  case RowFunction::map:
  case RowFunction::gather:
  case RowFunction::scatterAdd:
    break;
  case RowFunction::other:
  case RowFunction::attention:
  case RowFunction::attentionGrad:
    return 0;
  }
  double rows = static_cast<double>(k.rows);
  double elements = rows * static_cast<double>(k.columns);
  // A map's own FLOPs are those dataflow.map counts; an embedding's
  // lookup and scatter execute one an element (the scale, the sum), and a
  // lookup one more for the positions it adds.
  double ownFlops =
      k.function == RowFunction::map
          ? static_cast<double>(dataflow::mapFlopsPerElement(k.map)) * elements
      : k.function == RowFunction::gather
          ? (k.positionRows > 0 ? 2 : 1) * elements
      : k.function == RowFunction::scatterAdd
          ? elements
          : 2.0 * (static_cast<double>(own.perElement) * elements +
                   static_cast<double>(own.perRow) * rows);
  double rest = static_cast<double>(k.flops) - ownFlops;
  return rest > 0 ? std::max<int64_t>(1, std::llround(rest / elements / 2)) : 0;
}

namespace {

/// What one core's compute engine does for a kernel, in the order it runs
/// it: tasks started, vector operations at their SIMD width (`compute`)
/// and held to the SRAM ports' rate (`sram`), fabric operations a wavelet
/// a cycle.
class CoreWork {
public:
  explicit CoreWork(const target::WaferTargetModel &target)
      : activation(static_cast<double>(target.getTaskActivationCycles())),
        perWavelet(cyclesPerWavelet(target)),
        read(static_cast<double>(target.getSramReadBytesPerCycle())),
        write(static_cast<double>(target.getSramWriteBytesPerCycle())) {}

  /// `count` tasks started.
  void tasks(double count) { add(count * activation); }
  /// `count` operations over `n` elements each, `width` a cycle in each of
  /// `passes` over them, reading `readBytes` and writing `writeBytes` per
  /// element.
  void operations(double count, int64_t n, int64_t width, double readBytes,
                  double writeBytes, double passes = 1) {
    double elements = static_cast<double>(n);
    double simd = passes * std::ceil(elements / static_cast<double>(width));
    double ports = std::max(std::ceil(elements * readBytes / read),
                            std::ceil(elements * writeBytes / write));
    compute += count * simd;
    sram += count * std::max(simd, ports);
  }
  /// Fabric operations over `wavelets` in all, as fast as the queues let
  /// them come.
  void stream(double wavelets) { add(wavelets * perWavelet); }
  /// `cycles` in which the core waits (a chain's round trip).
  void wait(double cycles) { add(cycles); }
  /// `times` the work of `other`.
  void repeat(const CoreWork &other, double times) {
    compute += times * other.compute;
    sram += times * other.sram;
  }
  /// Work at this one's rates, none yet.
  CoreWork empty() const {
    CoreWork none = *this;
    none.compute = none.sram = 0;
    return none;
  }

  double compute = 0, sram = 0;

private:
  void add(double cycles) {
    compute += cycles;
    sram += cycles;
  }
  double activation, perWavelet, read, write;
};

/// A norm's operations on a core of `tb` tokens by `cb` features of
/// `elementBytes` (docs/runtime.md, "Norms on the mesh"), its f32
/// statistics read and written as one element each. A layer norm, per
/// token: the row's sum, its squares and their sum; over the tokens, the
/// mean, the variance (three operations), the reciprocal square root's
/// estimate (two 32-bit passes), three Newton steps of three products and
/// a multiply-add, and the shift (a product and a multiply-add); per
/// token, the row's multiply-add onto its shift; over the block, the
/// gain's product and the shift's sum. An RMS norm: the squares and their
/// sum; the mean square (a multiply-add) and the same reciprocal square
/// root; the row's product by it; the gain's product.
void normOperations(CoreWork &work, const target::WaferTargetModel &t,
                    RowFunction function, int64_t tb, int64_t cb,
                    int64_t elementBytes) {
  constexpr double f32 = 4;
  bool centered = function == RowFunction::layerNorm;
  double eb = static_cast<double>(elementBytes), rows = static_cast<double>(tb);
  int64_t ops =
      elementBytes <= 2 ? t.getHalfOpsPerCycle() : t.getF32OpsPerCycle();
  int64_t f32Ops = t.getF32OpsPerCycle(), f32Fmacs = t.getF32FmacsPerCycle();
  if (centered)
    work.operations(rows, cb, ops, f32 + eb, f32);
  work.operations(rows, cb, ops, 2 * eb, f32);
  work.operations(rows, cb, f32Ops, 2 * f32, f32);
  if (centered) {
    work.operations(1, tb, f32Fmacs, f32, f32);
    work.operations(2, tb, f32Fmacs, 2 * f32, f32);
    work.operations(1, tb, f32Ops, 2 * f32, f32);
  } else {
    work.operations(1, tb, f32Fmacs, 2 * f32, f32);
  }
  work.operations(1, tb, f32Ops, f32, f32, /*passes=*/2);
  work.operations(3 * 3, tb, f32Ops, 2 * f32, f32);
  work.operations(3, tb, f32Fmacs, 2 * f32, f32);
  if (centered) {
    work.operations(1, tb, f32Ops, 2 * f32, f32);
    work.operations(1, tb, f32Fmacs, f32, f32);
  }
  work.operations(rows, cb, fmacLanes(t, elementBytes),
                  (centered ? f32 : 0) + eb, eb);
  work.operations(centered ? 2 : 1, tb * cb, ops, eb + f32, eb);
}

/// A norm gradient's operations on a core of `tb` tokens by `cb` features
/// of `elementBytes` (docs/runtime.md, "Norm gradients on the mesh"), its
/// f32 sums and statistics read and written as one element each. A layer
/// norm's, over the tokens: the shift -mean rstd (a product and a
/// multiply-add).
/// Per token: the normalized row (a multiply-add); its product with the
/// output gradient and that product's sum into the gain's gradient; the
/// output gradient's sum into the shift's; the gain's product; the row's
/// sum; the product with the normalized row and its sum. Over the tokens:
/// the coefficients (a multiply-add, and a multiply-add and a product).
/// Per token: two multiply-adds. An RMS norm's leaves out the shift, its
/// gradient, the row's sum and the second coefficient.
void normGradOperations(CoreWork &work, const target::WaferTargetModel &t,
                        RowFunction function, int64_t tb, int64_t cb,
                        int64_t elementBytes) {
  constexpr double f32 = 4;
  bool centered = function == RowFunction::layerNormGrad;
  double eb = static_cast<double>(elementBytes), rows = static_cast<double>(tb);
  int64_t ops =
      elementBytes <= 2 ? t.getHalfOpsPerCycle() : t.getF32OpsPerCycle();
  int64_t f32Ops = t.getF32OpsPerCycle(), f32Fmacs = t.getF32FmacsPerCycle();
  int64_t lanes = fmacLanes(t, elementBytes);
  double shift = centered ? f32 : 0;
  if (centered) {
    work.operations(1, tb, f32Ops, 2 * f32, f32);
    work.operations(1, tb, f32Fmacs, f32, f32);
  }
  work.operations(rows, cb, lanes, shift + eb, eb);
  work.operations(rows, cb, ops, 2 * eb, f32);
  work.operations(rows, cb, f32Ops, 2 * f32, f32);
  if (centered)
    work.operations(rows, cb, f32Ops, f32 + eb, f32);
  work.operations(rows, cb, ops, eb + f32, eb);
  if (centered)
    work.operations(rows, cb, f32Ops, f32 + eb, f32);
  work.operations(rows, cb, ops, 2 * eb, f32);
  work.operations(rows, cb, f32Ops, 2 * f32, f32);
  work.operations(1, tb, f32Fmacs, f32, f32);
  if (centered) {
    work.operations(1, tb, f32Fmacs, f32, f32);
    work.operations(1, tb, f32Ops, 2 * f32, f32);
  }
  work.operations(rows, cb, lanes, 2 * eb, eb);
  work.operations(rows, cb, lanes, shift + eb, eb);
}

/// A software exponential's operations over `n` f32 elements, `count`
/// times (RowOperations.h): the product by log2 e (a multiply-add), the
/// clamp (a maximum), the rounding (two sums), the fraction (a
/// multiply-add), the polynomial (a multiply-add, then a product and a sum
/// a degree) and the power of two (two integer passes).
void exponentialOperations(CoreWork &work, const target::WaferTargetModel &t,
                           double count, int64_t n) {
  constexpr double f32 = 4;
  int64_t f32Ops = t.getF32OpsPerCycle(), f32Fmacs = t.getF32FmacsPerCycle();
  work.operations(count, n, f32Fmacs, f32, f32);
  work.operations(3 * count, n, f32Ops, 2 * f32, f32);
  work.operations(2 * count, n, f32Fmacs, 2 * f32, f32);
  work.operations(2 * static_cast<double>(dataflow::kExponentialDegree - 1) *
                      count,
                  n, f32Ops, 2 * f32, f32);
  work.operations(count, n, f32Ops, 2 * f32, f32, /*passes=*/2);
}

/// A map's operations (MapAlgorithm.h) on a core of `tb` tokens by `cb`
/// features of `elementBytes`, one row at a time: each at the SIMD width of
/// its arithmetic (16-bit where it reads and writes only the map's inputs),
/// reading its two operands and writing its result in memory, constants as
/// one f32 element each.
void mapOperations(CoreWork &work, const target::WaferTargetModel &t,
                   dataflow::MapKind kind, int64_t tb, int64_t cb,
                   int64_t elementBytes) {
  auto bytes = [&](const MapOperand &operand) -> double {
    if (!operand.isMemory())
      return 0;
    return operand.kind == MapOperand::Kind::input
               ? static_cast<double>(elementBytes)
               : static_cast<double>(kPartialSumBytes);
  };
  for (const MapStep &step : mapAlgorithm(kind).steps) {
    int64_t operandBytes =
        step.onInputsOnly() ? elementBytes : kPartialSumBytes;
    int64_t width = step.kind == MapStep::Kind::multiplyAdd
                        ? fmacLanes(t, operandBytes)
                        : (operandBytes <= 2 ? t.getHalfOpsPerCycle()
                                             : t.getF32OpsPerCycle());
    bool bitPasses = step.kind == MapStep::Kind::rsqrtEstimate ||
                     step.kind == MapStep::Kind::scaleByPowerOfTwo;
    work.operations(static_cast<double>(tb), cb, width,
                    bytes(step.a) + bytes(step.b), bytes(step.dst),
                    bitPasses ? 2 : 1);
  }
}

/// The router's choice on the chain's last core, over its `tb` tokens
/// (docs/runtime.md, "The router on the mesh"), each operation over the
/// tokens' f32 row of one expert or choice, reading its memory operands
/// (constants too) and writing one: the softmax, the choices one after
/// another, each comparing every expert, and the weights' normalization.
void routerChoiceOperations(CoreWork &work, const target::WaferTargetModel &t,
                            const KernelShape &k, int64_t tb) {
  double experts = static_cast<double>(k.columns);
  double choices = static_cast<double>(k.choices);
  double null = k.nullLogit ? 1 : 0;
  int64_t ops = t.getF32OpsPerCycle(), fmacs = fmacLanes(t, kPartialSumBytes);
  // `count` operations of `width` over the row, reading `reads` operands.
  auto row = [&](double count, int64_t width, double reads, double passes = 1) {
    work.operations(count, tb, width, reads * kPartialSumBytes,
                    kPartialSumBytes, passes);
  };
  // exp(fraction) for `count` rows: the product by log2 e, the clamp, the
  // rounding pair, the fraction, Horner's multiply-add and five products
  // and sums, the exponent's bits.
  auto exponentials = [&](double count) {
    row(count, fmacs, 1);
    row(count, ops, 2);
    row(2 * count, ops, 2);
    row(2 * count, fmacs, 2);
    row(2 * (dataflow::kExponentialDegree - 1) * count, ops, 2);
    row(count, ops, 2, 2);
  };
  // The estimate, three Newton steps and the square.
  auto reciprocal = [&] {
    row(1, ops, 1, 2);
    row(3 * 3 + 1, ops, 2);
    row(3, fmacs, 2);
  };
  work.tasks(1);
  if (k.roundLogits) {
    work.operations(1, k.columns * tb, ops, kPartialSumBytes, 2);
    work.operations(1, k.columns * tb, ops, 2, kPartialSumBytes);
  }
  // The largest logit; the sum cleared; each logit less it, its
  // exponential and its sum (and the null expert's); the reciprocal; each
  // probability scaled by it and copied to the marks (and the null one's).
  row(1, ops, 1);
  row(experts, ops, 2);
  row(1, ops, 0);
  row(experts + null, fmacs, 2);
  exponentials(experts + null);
  row(experts, ops, 2);
  reciprocal();
  row(experts + null, ops, 2);
  row(experts, ops, 1);
  // Each choice: the largest mark; three rows cleared; per expert, the
  // take (a difference, two saturating products, a clamp and one more),
  // none taken before (a product and a difference), the running count,
  // the index, the weight (a product and a sum) and the mark: three
  // multiply-adds and nine other operations; the index from the count.
  row(choices, ops, 1);
  row(choices * experts, ops, 2);
  row(3 * choices, ops, 0);
  row(3 * choices * experts, fmacs, 2);
  row(9 * choices * experts, ops, 2);
  row(choices, fmacs, 2);
  // The chosen weights' sum (from the null one's share), its reciprocal
  // and the weights scaled.
  row(1, ops, null);
  row(choices, ops, 2);
  reciprocal();
  row(choices, ops, 2);
}

/// The embedding lookup's operations on a core of `tb` tokens by `cb`
/// features of `elementBytes` (docs/runtime.md, "Embeddings on the mesh"),
/// once its ids' rows have arrived: each token's row copied from the row
/// its id's first token took from the stream, then the scale's multiply-add
/// over the block; with fused positions, the same copies of their rows and
/// their sum into the block.
void gatherOperations(CoreWork &work, const target::WaferTargetModel &t,
                      int64_t tb, int64_t cb, int64_t elementBytes,
                      bool positions) {
  double eb = static_cast<double>(elementBytes);
  int64_t ops =
      elementBytes <= 2 ? t.getHalfOpsPerCycle() : t.getF32OpsPerCycle();
  work.operations(static_cast<double>(tb), cb, ops, eb, eb);
  work.operations(1, tb * cb, fmacLanes(t, elementBytes), eb, eb);
  if (positions) {
    work.operations(static_cast<double>(tb), cb, ops, eb, eb);
    work.operations(1, tb * cb, ops, 2 * eb, eb);
  }
}

/// The embedding gradient's operations on a core of `tb` tokens by `cb`
/// features of `elementBytes`, before its sums join the column's stream:
/// the f32 sums cleared, then each token's row times the scale added into
/// its id's sums.
void scatterAddOperations(CoreWork &work, const target::WaferTargetModel &t,
                          int64_t tb, int64_t cb, int64_t elementBytes) {
  constexpr double f32 = kPartialSumBytes;
  work.operations(1, tb * cb, t.getF32OpsPerCycle(), 0, f32);
  work.operations(static_cast<double>(tb), cb, fmacLanes(t, elementBytes),
                  static_cast<double>(elementBytes) + f32, f32);
}

/// The loss gradient's operations on a core of `tb` tokens by `cb` logits
/// of `elementBytes` (docs/runtime.md, "The loss gradient on the mesh"),
/// one row at a time into f32 work rows, constants read as one f32 element
/// each. Per row: the logit less the saved f32 log-sum-exp (a multiply-
/// add); the exponential; the scale's product back into the row; the scale
/// taken from the label's one element.
void lossGradOperations(CoreWork &work, const target::WaferTargetModel &t,
                        int64_t tb, int64_t cb, int64_t elementBytes) {
  constexpr double f32 = 4;
  double eb = static_cast<double>(elementBytes), rows = static_cast<double>(tb);
  int64_t ops =
      elementBytes <= 2 ? t.getHalfOpsPerCycle() : t.getF32OpsPerCycle();
  int64_t lanes = fmacLanes(t, elementBytes);
  work.operations(rows, cb, lanes, eb + f32, f32);
  exponentialOperations(work, t, rows, cb);
  work.operations(rows, cb, lanes, f32, eb);
  work.operations(rows, 1, ops, eb + f32, eb);
}

/// The loss's operations on a core of `tb` tokens by `cb` logits of
/// `elementBytes` for one chunk of the vocabulary (docs/runtime.md, "The
/// loss on the mesh"), its f32 statistics read and written as one element
/// each. Over the tokens, the maxima's start (a move). Per row: its maximum;
/// then the logit less the segment's (a multiply-add), the exponential, its
/// sum, and the label's logit taken from the core's loss (a multiply-add of
/// one element). Over the tokens, the merge into the running statistics:
/// the larger maximum, a difference and its exponential, a product, again
/// a difference and its exponential, a product, a sum and a move. The last
/// chunk (`finalChunk`) adds, over the tokens, the logarithm (the bits'
/// conversion, a multiply-add and three Newton steps of an exponential, a
/// product and two sums), the log-sum-exp (a sum), its weighted sum into
/// the loss (a product and a sum), and the loss's scale (one element).
void crossEntropyOperations(CoreWork &work, const target::WaferTargetModel &t,
                            int64_t tb, int64_t cb, int64_t elementBytes,
                            bool finalChunk) {
  constexpr double f32 = 4;
  double eb = static_cast<double>(elementBytes), rows = static_cast<double>(tb);
  int64_t ops =
      elementBytes <= 2 ? t.getHalfOpsPerCycle() : t.getF32OpsPerCycle();
  int64_t f32Ops = t.getF32OpsPerCycle(), f32Fmacs = t.getF32FmacsPerCycle();
  int64_t lanes = fmacLanes(t, elementBytes);
  work.operations(1, tb, f32Ops, f32, f32);
  work.operations(rows, cb, ops, f32 + eb, f32);
  work.operations(rows, cb, lanes, eb + f32, f32);
  exponentialOperations(work, t, rows, cb);
  work.operations(rows, cb, f32Ops, 2 * f32, f32);
  work.operations(rows, 1, f32Fmacs, f32 + eb, f32);
  work.operations(1, tb, f32Ops, 2 * f32, f32);
  for (int i = 0; i < 2; ++i) {
    work.operations(1, tb, f32Fmacs, 2 * f32, f32);
    exponentialOperations(work, t, 1, tb);
    work.operations(1, tb, f32Ops, 2 * f32, f32);
  }
  work.operations(1, tb, f32Ops, 2 * f32, f32);
  work.operations(1, tb, f32Ops, f32, f32);
  if (!finalChunk)
    return;
  work.operations(1, tb, f32Ops, f32, f32);
  work.operations(1, tb, f32Fmacs, 2 * f32, f32);
  for (int64_t step = 0; step < dataflow::kLogarithmSteps; ++step) {
    exponentialOperations(work, t, 1, tb);
    work.operations(3, tb, f32Ops, 2 * f32, f32);
  }
  work.operations(3, tb, f32Ops, 2 * f32, f32);
  work.operations(1, 1, f32Ops, 2 * f32, f32);
}

/// The scores of one query against a core's `keys` keys, in f32 (the
/// query's `headSize` elements of `elementBytes` each multiplying the keys
/// transposed, a multiply-add a head dimension), the scale (a product),
/// the mask (a sum) and, with `maximum`, the row's maximum (a maximum),
/// `count` times.
void scoreOperations(CoreWork &work, const target::WaferTargetModel &t,
                     double count, int64_t keys, int64_t headSize,
                     int64_t elementBytes, bool maximum = true) {
  constexpr double f32 = kPartialSumBytes;
  double eb = static_cast<double>(elementBytes);
  int64_t lanes = fmacLanes(t, elementBytes);
  work.operations(count, keys, lanes, eb, f32);
  work.operations(count * static_cast<double>(headSize - 1), keys, lanes,
                  f32 + eb, f32);
  work.operations((maximum ? 3 : 2) * count, keys, t.getF32OpsPerCycle(),
                  2 * f32, f32);
}

/// A reciprocal over `n` f32 elements: the square of the reciprocal square
/// root, from the estimate of the bits (two 32-bit passes) by three Newton
/// steps of three products and a multiply-add.
void reciprocalOperations(CoreWork &work, const target::WaferTargetModel &t,
                          int64_t n) {
  constexpr double f32 = kPartialSumBytes;
  int64_t f32Ops = t.getF32OpsPerCycle();
  work.operations(1, n, f32Ops, f32, f32, /*passes=*/2);
  work.operations(3 * 3 + 1, n, f32Ops, 2 * f32, f32);
  work.operations(3, n, t.getF32FmacsPerCycle(), 2 * f32, f32);
}

/// Attention's operations on one core of a block (docs/runtime.md,
/// "Attention on the mesh"), pair after pair, its queries a chunk at a
/// time (`sumBlock`); returns the wavelets its ramp takes in. Each
/// statistics chain along the segment moves its f32 values east and back
/// and waits `chain` cycles for the round trip (none when `chain` < 0: a
/// segment of one core). Forward, per pair: the keys and values in; per
/// chunk, the maxima's and the partials' starts, then per query its row
/// in and its scores (scoreOperations); the maxima's chain; per query the
/// difference from the maximum (a multiply-add), the exponential, its sum,
/// and a multiply-add of a head's size a key into the partial output; the
/// partials' chain; the reciprocal of the sums; per query the division (a
/// multiply-add of a head's size) and the row out east. Backward, per
/// pair: the keys (twice) and values in and the gradients' start; per
/// chunk, its queries and output gradients in and the statistics' and dQ's
/// starts; the scores, the maxima's chain, the exponentials and their sums
/// with a move, the sums' chain and the reciprocal; per query P (a
/// multiply-add), dP (a multiply-add a head dimension), P dP and its sum,
/// dV (a multiply-add of a head's size a key); the sums' chain; per query
/// dS (a multiply-add and two products), dK and dQ (two multiply-adds of a
/// head's size a key); dQ's chain and out east; then per pair the keys'
/// and values' gradients down the column's chain (`columnChain` cycles to
/// fill).
double attentionOperations(CoreWork &work, const target::WaferTargetModel &t,
                           const AttentionBlock &block, int64_t sumBlock,
                           double chain, double columnChain) {
  constexpr double f32 = kPartialSumBytes;
  double eb = static_cast<double>(block.elementBytes);
  double epw = static_cast<double>(block.perWavelet);
  int64_t f32Ops = t.getF32OpsPerCycle(), f32Fmacs = t.getF32FmacsPerCycle();
  int64_t lanes = fmacLanes(t, block.elementBytes);
  int64_t keys = block.keys, headSize = block.headSize;
  int64_t c = block.chunk(sumBlock);
  double queries = static_cast<double>(c);
  double keyCount = static_cast<double>(keys);
  // Everything per chunk, then times the chunks and the pairs.
  CoreWork perChunk = work.empty();
  double inPerChunk = 0;
  auto statistics = [&](int64_t n) {
    if (chain < 0)
      return;
    double values = static_cast<double>(n);
    perChunk.stream(2 * values);
    perChunk.wait(chain);
    inPerChunk += values;
  };
  auto exponentials = [&] {
    perChunk.operations(queries, keys, f32Fmacs, 2 * f32, f32);
    exponentialOperations(perChunk, t, queries, keys);
    perChunk.operations(queries, keys, f32Ops, 2 * f32, f32);
  };
  double rows = static_cast<double>(block.rowElements()) / epw;
  double perPairIn = 0, gradientsOut = 0;
  if (!block.gradient) {
    perPairIn = std::ceil(2.0 * keyCount * headSize / epw);
    perChunk.operations(1, c, f32Ops, f32, f32);
    perChunk.operations(1, c * (headSize + 1), f32Ops, 0, f32);
    perChunk.stream(queries * rows);
    inPerChunk += queries * rows;
    scoreOperations(perChunk, t, queries, keys, headSize, block.elementBytes);
    statistics(c);
    exponentials();
    perChunk.operations(queries * keyCount, headSize, lanes, f32 + eb, f32);
    statistics(c * (headSize + 1));
    reciprocalOperations(perChunk, t, c);
    perChunk.operations(queries, headSize, f32Fmacs, f32, f32);
    perChunk.stream(queries * static_cast<double>(headSize));
  } else {
    perPairIn = 3 * static_cast<double>(block.keyElements()) / epw;
    gradientsOut = static_cast<double>(2 * keys * headSize);
    perChunk.stream(2 * queries * rows);
    inPerChunk += 2 * queries * rows;
    perChunk.operations(1, c, f32Ops, f32, f32);
    perChunk.operations(1, 3 * c, f32Ops, 0, f32);
    perChunk.operations(1, c * headSize, f32Ops, 0, f32);
    scoreOperations(perChunk, t, queries, keys, headSize, block.elementBytes);
    statistics(c);
    exponentials();
    perChunk.operations(queries, keys, f32Ops, f32, f32);
    statistics(c);
    reciprocalOperations(perChunk, t, c);
    // P, dP, P dP and its sum, dV.
    perChunk.operations(queries, keys, f32Fmacs, f32, f32);
    perChunk.operations(queries, keys, lanes, eb, f32);
    perChunk.operations(queries * static_cast<double>(headSize - 1), keys,
                        lanes, f32 + eb, f32);
    perChunk.operations(2 * queries, keys, f32Ops, 2 * f32, f32);
    perChunk.operations(queries * keyCount, headSize, lanes, f32 + eb, f32);
    statistics(c);
    // dS, dK and dQ.
    perChunk.operations(queries, keys, f32Fmacs, 2 * f32, f32);
    perChunk.operations(2 * queries, keys, f32Ops, 2 * f32, f32);
    perChunk.operations(2 * queries * keyCount, headSize, lanes, f32 + eb, f32);
    statistics(c * headSize);
    perChunk.stream(static_cast<double>(c * headSize));
  }
  double chunks = static_cast<double>(block.chunks(sumBlock));
  double pairs = static_cast<double>(block.pairs);
  work.tasks(1);
  work.stream(pairs * perPairIn);
  if (block.gradient) {
    work.operations(pairs, 2 * keys * headSize, f32Ops, 0, f32);
    // The gradients' chain down the column: out, the last core's way.
    work.stream(pairs * gradientsOut);
    work.wait(pairs * columnChain);
  }
  work.repeat(perChunk, pairs * chunks);
  return pairs * (perPairIn + chunks * inPerChunk);
}

/// Attention's forward pass on one core of a block whose keys it takes
/// `keyBlock` at a time (attentionForwardByKeys in
/// lib/Sim/Mesh/AttentionPrograms.cpp), its queries a chunk (`sumBlock`) at
/// a time; returns the wavelets its ramp takes in. Per chunk, its queries
/// in and the maxima's, partials' and first block's starts; per key block
/// its keys and values in and the mask offsets clamped; per query the
/// maximum kept, the scores with their maximum, the partial output's and
/// sum's rescaling (a one-element exponential and two products), the
/// exponentials and their sum, and a multiply-add of a head's size a key;
/// the offsets and positions stepped. Then the segment's maximum, the
/// partials rescaled to it and their chain (`chain` as
/// attentionOperations), the reciprocal, the division and the rows out.
double attentionForwardOperationsByKeys(CoreWork &work,
                                        const target::WaferTargetModel &t,
                                        const AttentionBlock &block,
                                        int64_t sumBlock, int64_t keyBlock,
                                        double chain) {
  constexpr double f32 = kPartialSumBytes;
  double eb = static_cast<double>(block.elementBytes);
  double epw = static_cast<double>(block.perWavelet);
  int64_t f32Ops = t.getF32OpsPerCycle(), f32Fmacs = t.getF32FmacsPerCycle();
  int64_t lanes = fmacLanes(t, block.elementBytes);
  int64_t headSize = block.headSize;
  int64_t c = block.chunk(sumBlock), kc = block.keyChunk(keyBlock);
  double queries = static_cast<double>(c), keys = static_cast<double>(kc);
  double chunks = static_cast<double>(block.chunks(sumBlock));
  double keyChunks = static_cast<double>(block.keyChunks(keyBlock));
  double rows = static_cast<double>(block.rowElements()) / epw;
  double keyValueWavelets =
      std::ceil(2 * keys * static_cast<double>(headSize) / epw);
  double in = 0;
  CoreWork perBlock = work.empty();
  perBlock.stream(keyValueWavelets);
  perBlock.operations(1, c, f32Ops, f32, f32);
  perBlock.operations(3, c, f32Ops, 2 * f32, f32);
  perBlock.operations(queries, 1, f32Ops, f32, f32);
  scoreOperations(perBlock, t, queries, kc, headSize, block.elementBytes);
  perBlock.operations(queries, 1, f32Fmacs, 2 * f32, f32);
  exponentialOperations(perBlock, t, queries, 1);
  perBlock.operations(queries, headSize, f32Ops, 2 * f32, f32);
  perBlock.operations(queries, 1, f32Ops, 2 * f32, f32);
  perBlock.operations(queries, kc, f32Fmacs, 2 * f32, f32);
  exponentialOperations(perBlock, t, queries, kc);
  perBlock.operations(queries, kc, f32Ops, 2 * f32, f32);
  perBlock.operations(queries * keys, headSize, lanes, f32 + eb, f32);
  perBlock.operations(1, c, f32Ops, 2 * f32, f32);
  perBlock.operations(1, kc, f32Ops, 2 * f32, f32);
  CoreWork perChunk = work.empty();
  perChunk.stream(queries * rows);
  perChunk.operations(1, c, f32Ops, f32, f32);
  perChunk.operations(1, c * (headSize + 1), f32Ops, 0, f32);
  perChunk.operations(1, c, f32Ops, f32, f32);
  perChunk.operations(1, kc, f32Ops, f32, f32);
  perChunk.repeat(perBlock, keyChunks);
  in += queries * rows + keyChunks * keyValueWavelets;
  if (chain >= 0) {
    perChunk.operations(1, c, f32Ops, f32, f32);
    perChunk.stream(2 * queries);
    perChunk.wait(chain);
    perChunk.operations(1, c, f32Fmacs, 2 * f32, f32);
    exponentialOperations(perChunk, t, 1, c);
    perChunk.operations(queries, headSize, f32Ops, 2 * f32, f32);
    perChunk.operations(1, c, f32Ops, 2 * f32, f32);
    double partials = static_cast<double>(c * (headSize + 1));
    perChunk.stream(2 * partials);
    perChunk.wait(chain);
    in += queries + partials;
  }
  reciprocalOperations(perChunk, t, c);
  perChunk.operations(queries, headSize, f32Fmacs, f32, f32);
  perChunk.stream(queries * static_cast<double>(headSize));
  double pairs = static_cast<double>(block.pairs);
  work.tasks(1);
  work.repeat(perChunk, pairs * chunks);
  return pairs * chunks * in;
}

/// Attention's backward pass on one core of a block whose keys it takes
/// `keyBlock` at a time (attentionBackwardByKeys in
/// lib/Sim/Mesh/AttentionPrograms.cpp; docs/runtime.md, "Attention's keys in
/// blocks"), its queries a chunk (`sumBlock`) at a time; returns the
/// wavelets its ramp takes in. Per pair, the statistics' and the first
/// block's starts; the statistics sweep: per key block its keys
/// transposed and values transposed in; per chunk its queries and output
/// gradients in and the mask offsets clamped (four operations); per query
/// the maximum kept (a move), the scores with their maximum, the running
/// sums' rescaling (a one-element exponential and two products), the
/// exponentials and their sum, dP and its products' sum; the offsets and
/// positions stepped. Then the segment's maximum, the rescaling and the
/// sums' chain (`chain` as attentionOperations), the reciprocal and D.
/// The gradients' sweep: per key block its keys and values in, the
/// gradients' start, per chunk as before, per query the scores without
/// their maximum, the exponentials without their sum, P, dP, dV, dS and
/// dK; the block's gradients down the column's chain. The query gradients'
/// sweep: per chunk its queries in, the chunk's statistics copied, dQ's
/// and the first block's starts, per key block its three copies in and
/// the offsets clamped, per query as before with dQ in place of dV and
/// dK; dQ's chain and out east.
double attentionOperationsByKeys(CoreWork &work,
                                 const target::WaferTargetModel &t,
                                 const AttentionBlock &block, int64_t sumBlock,
                                 int64_t keyBlock, double chain,
                                 double columnChain) {
  constexpr double f32 = kPartialSumBytes;
  double eb = static_cast<double>(block.elementBytes);
  double epw = static_cast<double>(block.perWavelet);
  int64_t f32Ops = t.getF32OpsPerCycle(), f32Fmacs = t.getF32FmacsPerCycle();
  int64_t lanes = fmacLanes(t, block.elementBytes);
  int64_t headSize = block.headSize;
  int64_t c = block.chunk(sumBlock), kc = block.keyChunk(keyBlock);
  int64_t all = block.chunks(sumBlock) * c;
  double queries = static_cast<double>(c), keys = static_cast<double>(kc);
  double chunks = static_cast<double>(block.chunks(sumBlock));
  double keyChunks = static_cast<double>(block.keyChunks(keyBlock));
  double rows = static_cast<double>(block.rowElements()) / epw;
  double keyWavelets = std::ceil(keys * static_cast<double>(headSize) / epw);
  double hd = static_cast<double>(headSize);
  // Everything of one pair, and the wavelets it takes in.
  CoreWork pair = work.empty();
  double in = 0;
  auto receive = [&](CoreWork &w, double wavelets, double times) {
    w.stream(wavelets);
    in += times * wavelets;
  };
  auto statistics = [&](CoreWork &w, int64_t n, double times) {
    if (chain < 0)
      return;
    w.stream(2 * static_cast<double>(n));
    w.wait(chain);
    in += times * static_cast<double>(n);
  };
  auto firstBlock = [&](CoreWork &w, int64_t n) {
    w.operations(1, n, f32Ops, f32, f32);
    w.operations(1, kc, f32Ops, f32, f32);
  };
  auto stepKeys = [&](CoreWork &w, int64_t n) {
    w.operations(1, n, f32Ops, 2 * f32, f32);
    w.operations(1, kc, f32Ops, 2 * f32, f32);
  };
  auto clampOffsets = [&](CoreWork &w) {
    w.operations(1, c, f32Ops, f32, f32);
    w.operations(3, c, f32Ops, 2 * f32, f32);
  };
  auto gradientProducts = [&](CoreWork &w) {
    w.operations(queries, kc, lanes, eb, f32);
    w.operations(queries * (hd - 1), kc, lanes, f32 + eb, f32);
  };
  // A query's P recomputed and dP, then dS.
  auto recompute = [&](CoreWork &w) {
    scoreOperations(w, t, queries, kc, headSize, block.elementBytes,
                    /*maximum=*/false);
    w.operations(queries, kc, f32Fmacs, 2 * f32, f32);
    exponentialOperations(w, t, queries, kc);
    w.operations(queries, kc, f32Fmacs, f32, f32);
    gradientProducts(w);
  };
  auto scoreGradients = [&](CoreWork &w) {
    w.operations(queries, kc, f32Fmacs, 2 * f32, f32);
    w.operations(2 * queries, kc, f32Ops, 2 * f32, f32);
  };
  double perPairChunks = keyChunks * chunks;
  // The statistics sweep.
  pair.operations(1, all, f32Ops, f32, f32);
  pair.operations(1, 2 * all, f32Ops, 0, f32);
  firstBlock(pair, all);
  CoreWork statsChunk = work.empty();
  receive(statsChunk, 2 * queries * rows, perPairChunks);
  clampOffsets(statsChunk);
  statsChunk.operations(queries, 1, f32Ops, f32, f32);
  scoreOperations(statsChunk, t, queries, kc, headSize, block.elementBytes);
  statsChunk.operations(queries, 1, f32Fmacs, 2 * f32, f32);
  exponentialOperations(statsChunk, t, queries, 1);
  statsChunk.operations(2 * queries, 1, f32Ops, 2 * f32, f32);
  statsChunk.operations(queries, kc, f32Fmacs, 2 * f32, f32);
  exponentialOperations(statsChunk, t, queries, kc);
  statsChunk.operations(queries, kc, f32Ops, 2 * f32, f32);
  gradientProducts(statsChunk);
  statsChunk.operations(2 * queries, kc, f32Ops, 2 * f32, f32);
  pair.repeat(statsChunk, perPairChunks);
  CoreWork statsBlock = work.empty();
  receive(statsBlock, 2 * keyWavelets, keyChunks);
  stepKeys(statsBlock, all);
  pair.repeat(statsBlock, keyChunks);
  if (chain >= 0) {
    pair.operations(1, all, f32Ops, f32, f32);
    statistics(pair, all, 1);
    pair.operations(1, all, f32Fmacs, 2 * f32, f32);
    exponentialOperations(pair, t, 1, all);
    pair.operations(2, all, f32Ops, 2 * f32, f32);
    statistics(pair, 2 * all, 1);
  }
  reciprocalOperations(pair, t, all);
  pair.operations(1, all, f32Ops, 2 * f32, f32);
  // The key and value gradients' sweep.
  firstBlock(pair, all);
  CoreWork gradChunk = work.empty();
  receive(gradChunk, 2 * queries * rows, perPairChunks);
  clampOffsets(gradChunk);
  recompute(gradChunk);
  gradChunk.operations(queries * keys, headSize, lanes, f32 + eb, f32);
  scoreGradients(gradChunk);
  gradChunk.operations(queries * keys, headSize, lanes, f32 + eb, f32);
  pair.repeat(gradChunk, perPairChunks);
  CoreWork gradBlock = work.empty();
  receive(gradBlock, 2 * keyWavelets, keyChunks);
  gradBlock.operations(1, 2 * kc * headSize, f32Ops, 0, f32);
  // The block's gradients down the column's chain: out, the last core's
  // way.
  gradBlock.stream(2 * keys * hd);
  gradBlock.wait(columnChain);
  stepKeys(gradBlock, all);
  pair.repeat(gradBlock, keyChunks);
  // The query gradients' sweep.
  CoreWork queryBlock = work.empty();
  receive(queryBlock, 3 * keyWavelets, perPairChunks);
  clampOffsets(queryBlock);
  recompute(queryBlock);
  scoreGradients(queryBlock);
  queryBlock.operations(queries * keys, headSize, lanes, f32 + eb, f32);
  stepKeys(queryBlock, c);
  pair.repeat(queryBlock, perPairChunks);
  CoreWork queryChunk = work.empty();
  receive(queryChunk, 2 * queries * rows, chunks);
  queryChunk.operations(3, c, f32Ops, f32, f32);
  queryChunk.operations(1, c * headSize, f32Ops, 0, f32);
  firstBlock(queryChunk, c);
  statistics(queryChunk, c * headSize, chunks);
  queryChunk.stream(queries * hd);
  pair.repeat(queryChunk, chunks);
  double pairs = static_cast<double>(block.pairs);
  work.tasks(1);
  work.repeat(pair, pairs);
  return pairs * in;
}

/// The cycles from the start of a reduce-scattered block's chains to the
/// last core's own part in from the west (docs/runtime.md, "The weight
/// matmul's reduce-scatter"), for a segment of `k` cores and a block of
/// `nb` columns of `tb` sums each, `perSum` cycles a sum through a ramp,
/// `step` cycles from one core's engine to the next's and `activation`
/// cycles to start a task. The west-going chain starts at the last core at
/// once and reaches core s after (k - 1 - s) steps, then streams the parts
/// up to and including core s's; the router gives it the ramp first. The
/// east-going chain starts at the first core after a task; each core that
/// owns a part takes it in first (the ramp taking what comes before the
/// west-going stream, then waiting that out), then starts a task that
/// passes the rest on.
double scatterFront(int64_t k, int64_t nb, double tb, double perSum,
                    double step, double activation) {
  // The layout search asks for the same fronts many times, each a walk of
  // the segment: each is walked once.
  static std::mutex guard;
  static std::map<std::array<double, 6>, double> known;
  std::array<double, 6> key = {static_cast<double>(k),
                               static_cast<double>(nb),
                               tb,
                               perSum,
                               step,
                               activation};
  std::lock_guard<std::mutex> lock(guard);
  auto [it, inserted] = known.try_emplace(key, 0.0);
  if (!inserted)
    return it->second;
  // When the parts for core s reach it: one step after the core before
  // passes them on.
  double passing = activation, own = 0;
  for (int64_t s = 1; s < k; ++s) {
    ScatteredPart part = scatteredPart(s, k, nb);
    double arrives = passing + step;
    double westFrom = static_cast<double>(k - 1 - s) * step;
    double westUntil =
        westFrom + static_cast<double>(part.first + part.count) * tb * perSum;
    double taking = static_cast<double>(part.count) * tb * perSum;
    // What arrives while the west-going parts stream in waits for their
    // end (the last core takes none in); so does a core that passes the
    // parts on without taking its own. What arrives before them streams
    // in until they come, and the rest after them.
    bool clear = s + 1 == k || arrives + taking <= westFrom;
    double start = clear ? arrives : std::max(arrives, westUntil);
    double before = clear ? 0.0 : std::max(0.0, westFrom - arrives);
    own = start + taking - before;
    passing = part.count > 0 ? own + activation : start;
  }
  it->second = own;
  return own;
}

/// One run of the standard algorithm of the query's kind; `finalChunk`:
/// whether a loss's run ends its tokens' vocabulary (with the logarithm
/// and its sum) or leaves running statistics for the next chunk.
KernelTime standardTime(const KernelCostQuery &query, bool finalChunk) {
  const KernelShape &k = query.shape;
  const target::WaferTargetModel &t = query.target;
  const Layout &layout = query.layout;
  int64_t microBatch = query.microBatch;
  int64_t width = query.rect.w;
  KernelTime time;
  double link = static_cast<double>(t.getLinkBytesPerCycle());
  int64_t lanes = fmacLanes(t, k.elementBytes);
  bool half = k.elementBytes <= 2;
  int64_t vectorWidth = half ? t.getHalfOpsPerCycle() : t.getF32OpsPerCycle();
  double eb = static_cast<double>(k.elementBytes);
  double perWavelet =
      static_cast<double>(elementsPerWavelet(t, k.elementBytes));
  auto wavelets = [&](double elements) {
    return std::ceil(elements / perWavelet);
  };
  CoreWork work(t);
  int64_t gt = layout.tokenGroups, gk = layout.featureGroups;
  // The rows the token groups occupy: a column's multicast and chain stop
  // at the last of them.
  int64_t rows = tokenRowsOn(query.rect, gt);
  double hop = static_cast<double>(t.getHopLatencyCycles());
  double ramp = static_cast<double>(t.getRampLatencyCycles());
  // Filling and draining the kernel's streams: a multicast reaches its last
  // core after `cores` hops; a chain of `stages` adjacent cores adds the
  // hops and, at each stage, the wavelet's way in and out of the core's
  // ramp.
  auto multicastFill = [&](int64_t cores) {
    return static_cast<double>(cores) * hop;
  };
  auto chainFill = [&](int64_t stages) {
    return stages > 1 ? static_cast<double>(stages) * hop +
                            2.0 * ramp * static_cast<double>(stages - 1)
                      : 0.0;
  };
  // A chain through every column of segments in turn (a weight
  // gradient's sums): down each column, and from its last core to
  // the next one's first the rectangle's height and a segment's width of
  // hops in place of a step's one (on rows of their own, the crossings
  // share no link but with the streams).
  int64_t columns = segmentColumnsOn(query.rect, gt);
  double columnsChainFill =
      chainFill(rows * columns) + static_cast<double>(columns - 1) *
                                      static_cast<double>(rows + gk - 2) * hop;
  // With fewer rows than a segment has cores, the crossings run in bands
  // that share rows: a link carries as many crossings as there are bands,
  // each at that share of its rate while they meet, the whole chain held
  // to it. They meet at the first block, and fall out of step after it
  // where the core's period between blocks leaves the links room; else
  // every block shares them.
  double crossingBands =
      columns > 1 ? static_cast<double>(ceilDiv(gk, rows)) : 1.0;
  // The cycles a chain of `perBlock` wavelets a block over `blocks` waits
  // for its crossings, after the core's work so far.
  auto crossingWait = [&](double perBlock, double blocks) {
    double slower = std::max(0.0, crossingBands - cyclesPerWavelet(t));
    if (slower == 0)
      return 0.0;
    double period = std::max(work.compute, work.sram) / blocks;
    return perBlock * slower +
           (blocks - 1) * std::max(0.0, crossingBands * perBlock - period);
  };
  // A product against a stream, block by block (`layout.sumBlock` output
  // columns at a time): each wavelet of a block's streamed elements (packed
  // as streamPacking says) starts a task, one FMAC over the column's sums
  // for each element it carries;
  // then the block's sums pass along a chain of `stages` cores (or leave
  // the core, alone with more blocks to come) and are cleared for the
  // next. The core's ramp carries the stream and the incoming sums. The
  // chain fills once: each core of it receives its own stream, so a core
  // later in the chain starts each block as much later as its sums arrive.
  // A reduce-scatter's fill, paid once where its blocks pipeline.
  double scatterFill = 0;
  auto blockedProduct = [&](const SumBlockShape &sums, int64_t stages,
                            bool keeps = false, bool scatters = false,
                            bool crossesColumns = false) {
    int64_t nb = sums.blockColumns(layout.sumBlock);
    double blocks = static_cast<double>(ceilDiv(sums.columns, nb));
    int64_t elements = sums.streamed * nb;
    double perBlock = static_cast<double>(
        elements /
        streamPacking(elements, elementsPerWavelet(t, k.elementBytes)));
    double values = static_cast<double>(nb * sums.perColumn);
    work.tasks(blocks * perBlock);
    work.operations(blocks * static_cast<double>(elements), sums.perColumn,
                    lanes, eb + kPartialSumBytes, kPartialSumBytes);
    time.fabric = blocks * perBlock;
    if (scatters) {
      // Reduce-scattered (docs/runtime.md, "The weight matmul's
      // reduce-scatter"): both chains run at once as microthreads, and
      // what comes in shares the core's one ramp, the west-going chain
      // first. A core in the segment's middle passes the parts on either
      // side on and takes in its own part from both: the block and its
      // part, the largest a middle core has (of nb = q stages + r columns,
      // q + 1 where r > 1, one of them then short of the ends); two cores
      // send each other's part and take in their own at once, the larger
      // half. The east-going chain passes a core's parts on once its own
      // part is in and a task has started the rest: its front steps from
      // core to core a chain step's latency and an activation more than
      // the part, after the west-going chain where that is in the way (the
      // first middle core's own part comes last of its three), else from
      // the first core on. A task starts each block's chains and one
      // stores the part (in the stored element).
      int64_t q = nb / std::max<int64_t>(1, stages), r = nb % stages;
      int64_t part = ceilDiv(nb, stages) * sums.perColumn;
      double tb = static_cast<double>(sums.perColumn);
      double activation = static_cast<double>(t.getTaskActivationCycles());
      double stepLatency = hop + 2.0 * ramp;
      work.tasks((stages > 1 ? 2 : 1) * blocks);
      if (stages > 1) {
        double moved = stages > 2
                           ? static_cast<double>(nb + q + (r > 1 ? 1 : 0)) * tb
                           : static_cast<double>(part);
        // The cores after the first that own a part (all, or where the
        // block is narrower than the segment one a column).
        double owners = static_cast<double>(std::min(stages - 1, nb));
        double steps = static_cast<double>(stages - 1);
        // A sum through a ramp: a wavelet's cycles (cyclesPerWavelet).
        double perSum = kPartialSumBytes / link * cyclesPerWavelet(t);
        double throughput = moved * perSum +
                            std::max(0.0, steps - 1) * stepLatency +
                            std::max(0.0, owners - 1) * activation;
        double front =
            scatterFront(stages, nb, tb, perSum, stepLatency, activation) +
            activation;
        // One column a block has one owner, the last core: nothing goes
        // west, and the blocks pass along the segment as a chain's do, the
        // front once.
        if (nb == 1) {
          work.stream(blocks * moved * kPartialSumBytes / link);
          scatterFill = front - moved * perSum;
        } else {
          work.wait(blocks * throughput);
          scatterFill = std::max(0.0, front - throughput);
        }
        time.fabric += blocks * moved * kPartialSumBytes / link;
      }
      // The store: the part's two halves summed into the stored element;
      // with a scale, summed in place first, then multiplied by it into
      // the outputs. Then the epilogue's maps.
      int64_t ownColumns = ceilDiv(nb, stages);
      if (k.scale) {
        if (stages > 1)
          work.operations(blocks, part, t.getF32OpsPerCycle(),
                          2 * kPartialSumBytes, kPartialSumBytes);
        work.operations(blocks, part, fmacLanes(t, kPartialSumBytes),
                        kPartialSumBytes, eb);
      } else {
        work.operations(blocks, part, vectorWidth,
                        (stages > 1 ? 2 : 1) * kPartialSumBytes, eb);
      }
      // A column's tokens a chunk at a time (epilogueChunk), then the rest.
      int64_t chunk = epilogueChunk(k, nb, sums.perColumn);
      int64_t columns = static_cast<int64_t>(blocks) * ownColumns;
      for (const EpilogueMap &map : k.epilogue) {
        mapOperations(work, t, map.kind, columns * (sums.perColumn / chunk),
                      chunk, k.elementBytes);
        if (int64_t rest = sums.perColumn % chunk)
          mapOperations(work, t, map.kind, columns, rest, k.elementBytes);
      }
      if (blocks > 1)
        work.operations(blocks, nb * sums.perColumn, t.getF32OpsPerCycle(), 0,
                        kPartialSumBytes);
      return;
    }
    if (stages > 1 || blocks > 1) {
      work.tasks(blocks);
      // Alone in its chain, a core that keeps its sums (a router's, as
      // logits) moves each block within its memory rather than out.
      if (stages == 1 && keeps)
        work.operations(blocks, nb * sums.perColumn, t.getF32OpsPerCycle(),
                        kPartialSumBytes, kPartialSumBytes);
      else
        work.stream(blocks * values * kPartialSumBytes / link);
    }
    if (stages > 1) {
      time.fabric += blocks * values * kPartialSumBytes / link;
      if (crossesColumns)
        work.wait(crossingWait(values * kPartialSumBytes / link, blocks));
    }
    if (blocks > 1)
      work.operations(blocks, nb * sums.perColumn, t.getF32OpsPerCycle(), 0,
                      kPartialSumBytes);
  };
  bool resident = layout.weights == Edge::resident;
  // Weights streamed from the mesh's north edge first cross the cores
  // north of the rectangle.
  double entry =
      layout.weights == Edge::north ? multicastFill(query.rect.y) : 0.0;

  switch (k.kind) {
  case KernelKind::weight_matmul: {
    // Streamed: tokens over token groups, the contracted features over
    // feature groups; each weight wavelet arrives (multicast down the
    // column of its feature group) and starts one task. Resident: the
    // weight stays, a core holding a block of its contracted rows by
    // output columns, and each token's features stream down the columns.
    // Either way the sums pass along the row, each core adding its own.
    SumBlockShape sums = sumBlockShape(k, layout, microBatch);
    bool chooses = choosesOnChain(k, layout);
    bool scatters = reducesScattered(k, layout);
    blockedProduct(sums, gk, chooses, scatters);
    // The router's choice follows on the chain's last core, which keeps
    // each block's sums (writing them in place of sending them on).
    if (chooses)
      routerChoiceOperations(work, t, k, sums.perColumn);
    // The chain runs along a segment: the token group's `gk` adjacent
    // cores, whatever the rectangle's width.
    time.fixed = (resident ? 0.0 : entry) +
                 multicastFill(rows + ceilDiv(width, gk)) +
                 (scatters ? scatterFill : chainFill(gk));
    break;
  }
  case KernelKind::weight_grad: {
    if (resident) {
      // The gradient stays where its weight is: a core holds a block of
      // dW's rows by columns and adds each token's outer product into it.
      // The tokens' inputs stream in and are stored, then each output
      // gradient wavelet starts a task, an FMAC over the core's rows per
      // element it carries.
      int64_t tokens = microBatch * k.contracted;
      int64_t kb = ceilDiv(k.rows, gk), nb = ceilDiv(k.columns, gt);
      double gradient = static_cast<double>(
          tokens * nb /
          streamPacking(tokens * nb, elementsPerWavelet(t, k.elementBytes)));
      double inputs = wavelets(static_cast<double>(tokens) * kb);
      work.tasks(1 + gradient);
      work.stream(inputs);
      work.operations(static_cast<double>(tokens * nb), kb, lanes,
                      eb + kPartialSumBytes, kPartialSumBytes);
      time.fabric = gradient + inputs;
      time.fixed = multicastFill(gk + rows);
      break;
    }
    // dW[K, N] summed over the tokens: the output gradient of the core's
    // tokens streams along its segment, each element starting an FMAC over
    // the core's input features (entering the segment's first core, then
    // across it); the partial dW then passes down the columns of token
    // groups, one column of segments after another, a chain through every
    // token group.
    blockedProduct(sumBlockShape(k, layout, microBatch), gt, false, false,
                   /*crossesColumns=*/true);
    time.fixed = multicastFill(1 + gk) + columnsChainFill;
    break;
  }
  case KernelKind::attention: {
    // One block of query blocks by key blocks per (sequence, head), the
    // pairs one after another: attentionOperations, on the segment's last
    // core (it also sends the results east).
    AttentionPass pass = attentionPass(k, layout, query.rect, microBatch);
    AttentionBlock block =
        attentionBlock(pass, elementsPerWavelet(t, k.elementBytes));
    int64_t segment = pass.block.featureGroups;
    double chain = chainFill(segment) + multicastFill(segment);
    double columnChain = chainFill(pass.block.tokenGroups);
    double rowChain = segment > 1 ? chain : -1;
    if (layout.keyBlock > 0 && block.gradient)
      time.fabric =
          attentionOperationsByKeys(work, t, block, layout.sumBlock,
                                    layout.keyBlock, rowChain, columnChain);
    else if (layout.keyBlock > 0)
      time.fabric = attentionForwardOperationsByKeys(
          work, t, block, layout.sumBlock, layout.keyBlock, rowChain);
    else
      time.fabric = attentionOperations(work, t, block, layout.sumBlock,
                                        rowChain, columnChain);
    time.fixed = multicastFill(
        std::max(pass.block.tokenGroups, pass.block.featureGroups));
    break;
  }
  case KernelKind::token_sum: {
    // Each core adds its tokens, one row of a block of its features at a
    // time (`layout.sumBlock` features, or all), into f32 sums; each
    // block's sums then pass down the column of token groups (as many as
    // it holds), each core adding its own (or leave the core, alone with
    // more blocks to come), and are cleared for the next. The columns of
    // segments' sums, a few features' worth, add up off the mesh,
    // uncharged (docs/runtime.md).
    SumBlockShape sums = sumBlockShape(k, layout, microBatch);
    int64_t tb = ceilDiv(microBatch * k.rows, gt);
    int64_t nb = sums.blockColumns(layout.sumBlock);
    double blocks = static_cast<double>(ceilDiv(sums.columns, nb));
    work.tasks(1);
    work.operations(blocks * static_cast<double>(tb), nb, t.getF32OpsPerCycle(),
                    eb + kPartialSumBytes, kPartialSumBytes);
    double passed = blocks * static_cast<double>(nb) * kPartialSumBytes / link;
    if (rows > 1 || blocks > 1)
      work.stream(passed);
    if (blocks > 1)
      work.operations(blocks, nb, t.getF32OpsPerCycle(), 0, kPartialSumBytes);
    if (rows > 1) {
      time.fabric = passed;
      time.fixed = chainFill(rows);
    }
    break;
  }
  case KernelKind::reduction:
  case KernelKind::elementwise:
  case KernelKind::embedding: {
    // Vector operations over the core's tokens and features, in one task;
    // a reduction then passes each token's statistics along the row and
    // back.
    int64_t tb = ceilDiv(microBatch * k.rows, gt);
    int64_t cb = ceilDiv(k.columns, gk);
    bool gradient = isNormGradient(k.function);
    bool lossGrad = k.function == RowFunction::crossEntropyGrad;
    bool loss = k.function == RowFunction::crossEntropy;
    work.tasks(1);
    if (gradient)
      normGradOperations(work, t, k.function, tb, cb, k.elementBytes);
    else if (lossGrad)
      lossGradOperations(work, t, tb, cb, k.elementBytes);
    else if (loss)
      crossEntropyOperations(work, t, tb, cb, k.elementBytes, finalChunk);
    else if (k.function == RowFunction::map)
      mapOperations(work, t, k.map, tb, cb, k.elementBytes);
    else if (k.function == RowFunction::gather)
      gatherOperations(work, t, tb, cb, k.elementBytes, k.positionRows > 0);
    else if (k.function == RowFunction::scatterAdd)
      scatterAddOperations(work, t, tb, cb, k.elementBytes);
    else if (k.function != RowFunction::other)
      normOperations(work, t, k.function, tb, cb, k.elementBytes);
    // The other row kernels' executed FLOPs, or the kernels fused with a
    // norm or a map, as operations over the block.
    int64_t standIn = k.function == RowFunction::other ? vectorOperations(k)
                                                       : fusedOperations(k);
    work.operations(static_cast<double>(standIn), tb * cb, vectorWidth, 2 * eb,
                    eb);
    // The loss gradient needs no statistics: the forward pass saved them.
    if (k.kind == KernelKind::reduction && gk > 1 && !lossGrad) {
      // The f32 statistics of each token (one for an RMS norm and its
      // gradient, else two) east through every core of the segment, each
      // adding its own, then the sums multicast back west past them all.
      // The loss's two go one after the other, its maximum before the
      // exponentials and their sum after.
      bool one = k.function == RowFunction::rmsNorm ||
                 k.function == RowFunction::rmsNormGrad;
      double wavelets = 2 * (one ? 1 : 2) * tb * kPartialSumBytes / link;
      work.stream(wavelets);
      time.fabric = wavelets;
      time.fixed = (loss ? 2 : 1) * (chainFill(gk) + multicastFill(gk));
    }
    if (gradient && rows > 1) {
      // The gain's (and a layer norm's shift's) gradient down the column
      // of token groups, each core adding its own, as a token sum's.
      double sums = k.function == RowFunction::layerNormGrad ? 2 : 1;
      double passed = sums * static_cast<double>(cb) * kPartialSumBytes / link;
      work.stream(passed);
      time.fabric += passed;
      time.fixed += chainFill(rows);
    }
    if (k.function == RowFunction::gather) {
      // The table streams down each feature group's columns, from the
      // north edge or, resident, from the cores that hold it, each row of
      // the group's features in whole wavelets: every core takes in every
      // row, one wavelet a cycle, keeping those its tokens look up; then
      // the fused positions' rows, alike.
      double table =
          static_cast<double>(embeddingTableRows(k) + k.positionRows) *
          wavelets(static_cast<double>(cb));
      work.stream(table);
      time.fabric = table;
      time.fixed = entry + multicastFill(rows);
    } else if (k.function == RowFunction::scatterAdd) {
      // The f32 gradient of the group's features passes down each column,
      // every row of it, each core adding its sums to its ids' rows.
      double table = static_cast<double>(embeddingTableRows(k) * cb) *
                     kPartialSumBytes / link;
      work.stream(table);
      time.fabric = table;
      time.fixed = chainFill(rows);
    }
    break;
  }
  }
  time.compute = work.compute;
  time.sram = work.sram;
  time.fabric *= cyclesPerWavelet(t);
  // A kernel run again repeats all of its work.
  time *= static_cast<double>(k.repeats);
  return time;
}

} // namespace

KernelTime kernelTime(const KernelCostQuery &query) {
  if (query.shape.experts > 1) {
    // Expert after expert, each on the rows a static program lays out for
    // the most loaded expert.
    KernelTime time = kernelTime({expertPass(query.shape, query.microBatch),
                                  query.layout, query.rect, 1, query.target});
    time *= static_cast<double>(query.shape.experts);
    return time;
  }
  if (query.shape.chunks > 1) {
    // Chunk by chunk, each chunk the same kernel on its share; a loss
    // split along its vocabulary ends only the last chunk with the
    // logarithm and its sum.
    KernelShape chunk = vocabularyChunk(query.shape);
    KernelCostQuery one{chunk, query.layout, query.rect, query.microBatch,
                        query.target};
    KernelTime time =
        standardTime(one, /*finalChunk=*/chunk.columns == query.shape.columns);
    time *= static_cast<double>(query.shape.chunks - 1);
    time += standardTime(one, /*finalChunk=*/true);
    return time;
  }
  return standardTime(query, /*finalChunk=*/true);
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
