//===- ExecutionModel.cpp - how weight streaming runs a step --------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/Analysis/ExecutionModel.h"

#include "cgpt/Support/Format.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <cmath>

using namespace mlir;

namespace cgpt::wafer {

/// The weight servers read and write an f32 weight and two f32 Adam
/// moments per parameter, and read its f32 gradient: 28 bytes.
constexpr double kOptimizerBytesPerParameter = 28;

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

//===----------------------------------------------------------------------===//
// CheckpointPolicy
//===----------------------------------------------------------------------===//

CheckpointPolicy CheckpointPolicy::fromAttr(CheckpointAttr attr) {
  CheckpointPolicy policy;
  if (!attr)
    return policy;
  if (attr.getPolicy() == "every")
    policy = {Kind::every, attr.getInterval()};
  else if (attr.getPolicy() == "offload")
    policy.kind = Kind::offload;
  return policy;
}

CheckpointAttr CheckpointPolicy::toAttr(MLIRContext *context) const {
  switch (kind) {
  case Kind::keep:
    return CheckpointAttr::get(context, "keep", 0);
  case Kind::every:
    return CheckpointAttr::get(context, "every", interval);
  case Kind::offload:
    return CheckpointAttr::get(context, "offload", 0);
  }
  llvm_unreachable("unknown checkpoint policy");
}

std::string CheckpointPolicy::str() const {
  switch (kind) {
  case Kind::keep:
    return "keep";
  case Kind::every:
    return "every " + std::to_string(interval);
  case Kind::offload:
    return "offload";
  }
  llvm_unreachable("unknown checkpoint policy");
}

std::vector<CheckpointPolicy> CheckpointPolicy::candidates(int64_t layers) {
  std::vector<CheckpointPolicy> policies = {{Kind::keep, 0}};
  // Intervals around sqrt(layers) keep the fewest checkpoints at once
  // (layers / k kept plus k - 1 rebuilt); shorter ones recompute less.
  int64_t top = 1;
  while (top + 1 < layers && (top + 1) * (top + 1) <= 4 * layers)
    ++top;
  if (top - 1 <= kMaxEveryIntervals) {
    for (int64_t k = 2; k <= top; ++k)
      policies.push_back({Kind::every, k});
  } else {
    // Deep models: intervals spaced evenly on a log scale from 2 to the
    // top, so that planning stays linear in layers.
    double ratio = std::pow(static_cast<double>(top) / 2,
                            1.0 / (kMaxEveryIntervals - 1));
    int64_t last = 0;
    for (int64_t i = 0; i < kMaxEveryIntervals; ++i) {
      auto k = static_cast<int64_t>(std::llround(2 * std::pow(ratio, i)));
      k = std::clamp<int64_t>(k, last + 1, top);
      if (k > last)
        policies.push_back({Kind::every, k});
      last = k;
    }
  }
  policies.push_back({Kind::offload, 0});
  return policies;
}

//===----------------------------------------------------------------------===//
// KernelTime, CoreMemory
//===----------------------------------------------------------------------===//

const char *KernelTime::bound() const {
  if (compute >= fabric && compute >= sram)
    return "compute";
  return fabric >= sram ? "fabric" : "sram";
}

std::string CoreMemory::describe() const {
  return "reserve " + formatGrouped(reserve) + " B, weight buffers " +
         formatGrouped(weightBuffers) + " B, checkpoints " +
         formatGrouped(checkpoints) + " B, live activations " +
         formatGrouped(live) + " B, gradient accumulator " +
         formatGrouped(accumulator) + " B";
}

//===----------------------------------------------------------------------===//
// ExecutionModel
//===----------------------------------------------------------------------===//

FailureOr<ExecutionModel> ExecutionModel::build(DeviceOp device) {
  FailureOr<const target::WaferTargetModel *> target = device.getTargetModel();
  if (failed(target))
    return failure();
  ExecutionModel model;
  model.device = device;
  model.target = *target;
  for (Operation &op : device.getBody().front()) {
    auto stage = dyn_cast<StageOp>(op);
    if (!stage)
      return op.emitOpError()
             << "is not a wafer.stage; the execution model cannot run it";
    Stage s{stage, stage.getSymName().str(), stage.getPhase().str(),
            stage.getLayer(), stage.getCheckpointBytes(), {}};
    llvm::DenseMap<StringAttr, size_t> index;
    int64_t stageWeights = 0;
    for (Operation &inner : stage.getBody().front()) {
      if (auto region = dyn_cast<RegionOp>(inner)) {
        index[region.getSymNameAttr()] = s.kernels.size();
        s.kernels.push_back(
            {region, KernelShape::of(region), region.getLive(), 0, 0});
      } else if (auto ingress = dyn_cast<IngressOp>(inner)) {
        s.kernels[index.at(ingress.getDestAttr().getAttr())].ingressBytes +=
            ingress.getBytes();
        stageWeights += ingress.getBytes();
      } else if (auto egress = dyn_cast<EgressOp>(inner)) {
        s.kernels[index.at(egress.getSourceAttr().getAttr())].egressBytes +=
            egress.getBytes();
        model.totalGradientBytes += egress.getBytes();
      }
    }
    if (s.layer)
      model.layers = std::max(model.layers, *s.layer + 1);
    model.largestStageWeights =
        std::max(model.largestStageWeights, stageWeights);
    model.stages.push_back(std::move(s));
  }
  if (model.stages.empty())
    return device.emitOpError()
           << "has no stages; the execution model needs at least one";
  llvm::DenseMap<int64_t, int64_t> forwardCheckpoint;
  for (const Stage &stage : model.stages)
    if (stage.layer && stage.phase == "forward")
      forwardCheckpoint[*stage.layer] = stage.checkpointBytes;
  for (Stage &stage : model.stages)
    if (stage.layer && stage.phase == "backward")
      stage.forwardCheckpointBytes = forwardCheckpoint.lookup(*stage.layer);
  return model;
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

KernelShape KernelShape::of(RegionOp region) {
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

KernelTime kernelTime(const KernelShape &k, Layout layout, int64_t microBatch,
                      const target::WaferTargetModel &t, int64_t width,
                      int64_t height, std::optional<Layout> attentionBlock) {
  KernelTime time;
  time.layout = layout;
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

  switch (k.kind) {
  case KernelKind::weight_matmul: {
    // Tokens over token groups, the contracted features over feature
    // groups. Each weight wavelet arrives (multicast down the column of its
    // feature group) and starts one task: an FMAC over the core's tokens
    // for each element it carries. The partial sums then pass along the
    // row, each core adding its own.
    int64_t tb = ceilDiv(microBatch * k.rows, gt);
    int64_t kb = ceilDiv(k.contracted, gk);
    double elements = static_cast<double>(kb) * k.columns;
    double partials = gk > 1 ? static_cast<double>(tb) * k.columns : 0;
    time.compute = wavelets(elements) * a +
                   elements * std::ceil(static_cast<double>(tb) / lanes) +
                   chain(partials);
    // Weights in, partial sums in: the core's ramp carries both.
    time.fabric = wavelets(elements) + partials * kPartialSumBytes / link;
    time.sram = elements * std::max(tb * (eb + kPartialSumBytes) / read,
                                    tb * kPartialSumBytes / write);
    // Weights fill a feature group's columns; partial sums cross the row.
    time.fixed = multicastFill(height + ceilDiv(width, gk)) +
                 chainFill(gk, width);
    break;
  }
  case KernelKind::weight_grad: {
    // dW[K, N] summed over the tokens: the output gradient of the core's
    // tokens streams along its row, each element starting an FMAC over the
    // core's input features; the partial dW then passes down the columns.
    int64_t tb = ceilDiv(microBatch * k.contracted, gt);
    int64_t kb = ceilDiv(k.rows, gk);
    double gradient = static_cast<double>(tb) * k.columns;
    double partials = gt > 1 ? static_cast<double>(kb) * k.columns : 0;
    time.compute = wavelets(gradient) * a +
                   gradient * std::ceil(static_cast<double>(kb) / lanes) +
                   chain(partials);
    time.fabric = wavelets(gradient) + partials * kPartialSumBytes / link;
    time.sram = gradient * kb * (eb + kPartialSumBytes) / read;
    time.fixed = multicastFill(width + ceilDiv(height, gt)) +
                 chainFill(gt, height);
    break;
  }
  case KernelKind::attention: {
    // One block of cores per (sequence, head), split into query blocks by
    // key blocks; the scores stay in the block. Each core stores its
    // queries, keys and values as they stream in (and their gradients,
    // backward), runs vector operations along its keys, then passes its
    // softmax statistics and partial outputs along the row.
    int64_t heads = std::max<int64_t>(1, k.rows / std::max<int64_t>(
                                                     1, k.columns));
    int64_t seq = k.columns, headSize = k.contracted;
    int64_t pairs = microBatch * heads;
    double pairFlops = static_cast<double>(k.flops) / heads;
    // Products of S x S x head_size this region executes (2 forward).
    double products = std::max(
        1.0, pairFlops / (2.0 * static_cast<double>(seq) * seq * headSize));
    int64_t cores = width * height;
    int64_t q = seq, keys = seq, pairsPerCore = ceilDiv(pairs, cores);
    double perCore = pairFlops * pairsPerCore;
    int64_t cq = 1, ck = 1;
    if (attentionBlock) {
      cq = attentionBlock->tokenGroups;
      ck = attentionBlock->featureGroups;
      q = ceilDiv(seq, cq);
      keys = ceilDiv(seq, ck);
      perCore = pairFlops * (static_cast<double>(q) * keys) /
                (static_cast<double>(seq) * seq);
    } else if (pairs <= cores) {
      // About square blocks: of the splits near sqrt(cores per pair), the
      // one that leaves each core the fewest scores.
      int64_t perPair = cores / pairs;
      int64_t root = static_cast<int64_t>(std::sqrt(static_cast<double>(perPair)));
      int64_t fewest = -1;
      for (int64_t rows = std::max<int64_t>(1, std::min(root, seq) - 8);
           rows <= std::min({seq, perPair, root + 8}); ++rows) {
        int64_t columns = std::clamp<int64_t>(perPair / rows, 1, seq);
        int64_t scores = ceilDiv(seq, rows) * ceilDiv(seq, columns);
        if (fewest < 0 || scores < fewest) {
          fewest = scores;
          cq = rows;
          ck = columns;
        }
      }
      q = ceilDiv(seq, cq);
      keys = ceilDiv(seq, ck);
      perCore = pairFlops * (static_cast<double>(q) * keys) /
                (static_cast<double>(seq) * seq);
    }
    time.layout = {cq, ck};
    double operands = static_cast<double>(q + 2 * keys) * headSize *
                      products / 2 * pairsPerCore;
    double stored = wavelets(operands);
    double partials =
        ck > 1 ? static_cast<double>(2 * q + q * headSize) * products / 2 *
                     pairsPerCore
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
    if (k.kind == KernelKind::embedding) {
      // The table (or its gradient) streams down each feature group's
      // columns; each core takes in its slice, one wavelet a cycle.
      double table = std::ceil(static_cast<double>(
                                   std::max(k.weightBytes, k.accumulator)) /
                               gk / link);
      time.compute += a + table;
      time.fabric = table;
      time.fixed = multicastFill(height);
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

KernelTime ExecutionModel::timeWith(const Kernel &kernel, Layout layout,
                                    int64_t microBatch) const {
  return kernelTime(kernel.shape, layout, microBatch, *target,
                    target->getMeshWidth(), target->getMeshHeight());
}

Layout ExecutionModel::stageLayout(size_t stage, int64_t microBatch) const {
  return at(microBatch).layouts[stage];
}

Layout ExecutionModel::searchLayout(size_t stageIndex,
                                    int64_t microBatch) const {
  const Stage &stage = stages[stageIndex];
  int64_t cores = target->getNumCores();
  // Two families of splits: feature groups by powers of two, and token
  // groups that give each core any whole number of tokens up to 64 SIMD
  // widths (whole widths, so that a larger micro-batch never has to leave
  // lanes empty, and every count between, so that a target with wider
  // SIMD keeps every split a narrower one had and is never slower).
  SmallVector<Layout> candidates;
  for (int64_t gk = 1; gk <= cores; gk *= 2)
    candidates.push_back({cores / gk, gk});
  int64_t tokens = microBatch * device.getSeqLen();
  int64_t lanes = std::max<int64_t>(1, target->getMixedFmacsPerCycle());
  for (int64_t perCore = 1; perCore <= 64 * lanes; ++perCore) {
    int64_t gt = ceilDiv(tokens, perCore);
    if (gt <= cores)
      candidates.push_back({gt, cores / gt});
  }
  Layout best = candidates.front();
  double bestCycles = -1;
  for (Layout layout : candidates) {
    double cycles = 0;
    for (const Kernel &kernel : stage.kernels)
      if (kernel.shape.kind != KernelKind::attention)
        cycles += timeWith(kernel, layout, microBatch).cycles();
    if (bestCycles < 0 || cycles < bestCycles) {
      best = layout;
      bestCycles = cycles;
    }
  }
  return best;
}

const ExecutionModel::AtMicroBatch &
ExecutionModel::at(int64_t microBatch) const {
  auto [it, inserted] = microBatchCache.try_emplace(microBatch);
  if (inserted)
    for (size_t s = 0; s < stages.size(); ++s) {
      Layout layout = searchLayout(s, microBatch);
      it->second.layouts.push_back(layout);
      auto &times = it->second.times.emplace_back();
      for (const Kernel &kernel : stages[s].kernels)
        times.push_back(timeWith(kernel, layout, microBatch));
    }
  return it->second;
}

int64_t
ExecutionModel::checkpointBytesPerSequence(CheckpointPolicy policy) const {
  int64_t perSequence = 0, largestLayer = 0;
  for (const Stage &stage : stages) {
    if (!stage.checkpointBytes)
      continue;
    largestLayer = std::max(largestLayer, stage.checkpointBytes);
    bool kept = true;
    if (stage.layer && policy.kind == CheckpointPolicy::Kind::every)
      kept = *stage.layer % policy.interval == 0;
    if (stage.layer && policy.kind == CheckpointPolicy::Kind::offload)
      kept = false;
    if (kept)
      perSequence += stage.checkpointBytes;
  }
  // What the policy holds besides: a run's rebuilt checkpoints, or the
  // offloaded checkpoint in use and the next one arriving.
  if (policy.kind == CheckpointPolicy::Kind::every)
    perSequence += (policy.interval - 1) * largestLayer;
  if (policy.kind == CheckpointPolicy::Kind::offload)
    perSequence += 2 * largestLayer;
  return perSequence;
}

CoreMemory ExecutionModel::regionMemory(size_t stageIndex, size_t index,
                                        int64_t microBatch,
                                        CheckpointPolicy policy) const {
  return memoryOf(stageIndex, index, microBatch,
                  checkpointBytesPerSequence(policy));
}

CoreMemory ExecutionModel::memoryOf(size_t stageIndex, size_t index,
                                    int64_t microBatch,
                                    int64_t checkpointBytes) const {
  const Kernel &kernel = stages[stageIndex].kernels[index];
  const AtMicroBatch &cached = at(microBatch);
  Layout layout = cached.layouts[stageIndex];
  int64_t cores = target->getNumCores(), seq = device.getSeqLen();
  // Tokens over token groups, each token's bytes over feature groups.
  auto spread = [&](int64_t perSequence) {
    return ceilDiv(microBatch * seq, layout.tokenGroups) *
           ceilDiv(ceilDiv(perSequence, seq), layout.featureGroups);
  };
  CoreMemory memory;
  memory.reserve = target->getReservedBytes();
  memory.weightBuffers = 2 * ceilDiv(largestStageWeights, cores);
  memory.checkpoints = spread(checkpointBytes);
  memory.live = spread(kernel.live);
  if (kernel.shape.kind == KernelKind::attention) {
    // A core takes its queries one row at a time against all its keys, with
    // a running maximum and sum (the online softmax): one row of f32 scores
    // and their gradient per (sequence, head) it holds.
    const KernelTime &time = cached.times[stageIndex][index];
    int64_t pairs =
        microBatch *
        std::max<int64_t>(1, kernel.shape.rows / kernel.shape.columns);
    int64_t keys = ceilDiv(kernel.shape.columns, time.layout.featureGroups);
    memory.live += 2 * keys * kPartialSumBytes * ceilDiv(pairs, cores);
  }
  memory.accumulator = ceilDiv(kernel.shape.accumulator, cores);
  return memory;
}

std::vector<std::vector<CoreMemory>>
ExecutionModel::memories(int64_t microBatch, CheckpointPolicy policy) const {
  int64_t checkpointBytes = checkpointBytesPerSequence(policy);
  std::vector<std::vector<CoreMemory>> result(stages.size());
  for (size_t s = 0; s < stages.size(); ++s)
    for (size_t k = 0; k < stages[s].kernels.size(); ++k)
      result[s].push_back(memoryOf(s, k, microBatch, checkpointBytes));
  return result;
}

MemoryPeak ExecutionModel::memoryPeak(int64_t microBatch,
                                      CheckpointPolicy policy) const {
  MemoryPeak peak;
  int64_t checkpointBytes = checkpointBytesPerSequence(policy);
  for (size_t s = 0; s < stages.size(); ++s)
    for (size_t k = 0; k < stages[s].kernels.size(); ++k) {
      CoreMemory memory = memoryOf(s, k, microBatch, checkpointBytes);
      if (!peak.region || memory.total() > peak.memory.total())
        peak = {stages[s].kernels[k].op, memory};
    }
  return peak;
}

std::vector<std::pair<size_t, bool>>
ExecutionModel::passSchedule(CheckpointPolicy policy) const {
  llvm::DenseMap<int64_t, size_t> forwardOfLayer;
  for (auto [index, stage] : llvm::enumerate(stages))
    if (stage.layer && stage.phase == "forward")
      forwardOfLayer[*stage.layer] = index;
  std::vector<std::pair<size_t, bool>> schedule;
  for (auto [index, stage] : llvm::enumerate(stages)) {
    bool runTop = policy.kind == CheckpointPolicy::Kind::every && stage.layer &&
                  stage.phase == "backward" &&
                  (*stage.layer % policy.interval == policy.interval - 1 ||
                   *stage.layer == layers - 1);
    if (runTop) {
      // Rebuild the run's checkpoints from the one kept at its first layer.
      int64_t first = *stage.layer / policy.interval * policy.interval;
      for (int64_t layer = first; layer < *stage.layer; ++layer)
        if (auto it = forwardOfLayer.find(layer); it != forwardOfLayer.end())
          schedule.push_back({it->second, true});
    }
    schedule.push_back({index, false});
  }
  return schedule;
}

StepEstimate ExecutionModel::estimate(int64_t microBatch,
                                      CheckpointPolicy policy,
                                      ScheduleObserver *observer) const {
  const target::WaferTargetModel &t = *target;
  double clock = t.getClockHz();
  int64_t systems = device.getNumCsx();
  // The broadcast/reduce tree between the weight servers and the systems.
  int64_t depth = 0;
  for (int64_t reach = 1; reach < systems; reach *= t.getReduceFanout())
    ++depth;
  double treeLatency = depth * t.getReduceLevelLatencySeconds();
  double inRate = std::min({t.getIoBytesPerSecond(),
                            t.getWeightServerBytesPerSecond(),
                            systems > 1 ? t.getReduceBytesPerSecond()
                                        : t.getIoBytesPerSecond()});
  double outRate = std::min(t.getIoBytesPerSecond(),
                            systems > 1 ? t.getReduceBytesPerSecond()
                                        : t.getIoBytesPerSecond());
  bool offload = policy.kind == CheckpointPolicy::Kind::offload;

  const std::vector<std::vector<KernelTime>> &times = at(microBatch).times;
  std::vector<std::pair<size_t, bool>> schedule = passSchedule(policy);
  int64_t perSystem = device.getPerSystemBatch();
  StepEstimate estimate;
  estimate.passes = ceilDiv(perSystem, microBatch);
  // Token ids and labels (i32) from the activation workers, each pass.
  double tokenBytes = 2.0 * 4 * microBatch * device.getSeqLen();

  // The two directions of the system's I/O; each is busy until its last
  // transfer ends. The step's first weights cannot be prefetched: they are
  // the last the optimizer updated.
  double inFree = treeLatency, outFree = 0, time = 0;
  // When the last pass's gradients reach the weight servers, in order.
  std::vector<std::pair<double, double>> lastGradients; // arrival, bytes
  auto runPass = [&](bool first, bool last) {
    double prefetchFrom = time;
    for (auto [position, entry] : llvm::enumerate(schedule)) {
      auto [s, rerun] = entry;
      const Stage &stage = stages[s];
      double stageStart = time;
      // What the stage's first kernel reads before any weight: the token
      // ids, or the layer's offloaded checkpoint coming back.
      double inputBytes = position == 0 ? tokenBytes : 0;
      if (offload && stage.phase == "backward" && stage.layer)
        inputBytes +=
            static_cast<double>(microBatch) * stage.forwardCheckpointBytes;
      double inBytes = inputBytes;
      for (const Kernel &kernel : stage.kernels)
        inBytes += static_cast<double>(kernel.ingressBytes);
      double weightsStart = std::max(inFree, prefetchFrom);
      double weightsEnd = weightsStart + inBytes / inRate;
      inFree = weightsEnd;
      // Kernels run one after another; the first cannot end before its
      // inputs have arrived, and one that reads a weight not before the
      // stage's weights up to its own.
      double arrived = weightsStart + inputBytes / inRate, slowest = 0;
      const char *bound = "compute";
      bool ioBound = false;
      for (auto [k, kernel] : llvm::enumerate(stage.kernels)) {
        double seconds = times[s][k].cycles() / clock;
        double begin = time;
        double end = begin + seconds;
        arrived += static_cast<double>(kernel.ingressBytes) / inRate;
        if ((k == 0 || kernel.ingressBytes) && arrived > end) {
          end = arrived;
          ioBound = true;
        }
        if (seconds > slowest) {
          slowest = seconds;
          bound = times[s][k].bound();
        }
        if (first && observer)
          observer->interval(
              stringifyKernelKind(kernel.shape.kind),
              stage.name + " @" + kernel.op.getSymName().str(), begin,
              end - begin,
              {static_cast<double>(kernel.shape.flops) *
                   static_cast<double>(microBatch),
               static_cast<double>(kernel.ingressBytes),
               end > begin + seconds ? "weights in" : times[s][k].bound()});
        time = end;
        if (kernel.egressBytes && !rerun) {
          double outStart = std::max(outFree, time);
          outFree = outStart + static_cast<double>(kernel.egressBytes) / outRate;
          if (first && observer)
            observer->interval("gradients out", stage.name, outStart,
                               outFree - outStart,
                               {0, static_cast<double>(kernel.egressBytes)});
          if (last)
            lastGradients.push_back(
                {outFree + treeLatency, static_cast<double>(kernel.egressBytes)});
        }
      }
      if (offload && stage.phase == "forward" && stage.layer && !rerun &&
          stage.checkpointBytes) {
        double outStart = std::max(outFree, time);
        outFree = outStart + static_cast<double>(microBatch) *
                                 stage.checkpointBytes / outRate;
        if (first && observer)
          observer->interval("checkpoints out", stage.name, outStart,
                             outFree - outStart,
                             {0, static_cast<double>(microBatch) *
                                     static_cast<double>(stage.checkpointBytes)});
      }
      if (first && observer) {
        if (weightsEnd > weightsStart)
          observer->interval("weights in", stage.name, weightsStart,
                             weightsEnd - weightsStart, {0, inBytes});
        observer->stage({stage.name, stage.layer,
                         rerun ? "recompute" : stage.phase, stageStart, time,
                         ioBound ? "weights in" : bound});
      }
      prefetchFrom = stageStart;
    }
  };
  runPass(/*first=*/true, /*last=*/estimate.passes == 1);
  estimate.firstPassSeconds = time;
  if (estimate.passes > 1) {
    // Every later pass but the last repeats the first in the steady state:
    // run one to learn its length, then the last to place its gradients.
    double secondStart = time;
    runPass(false, estimate.passes == 2);
    double steady = time - secondStart;
    if (estimate.passes > 2) {
      double skipped = steady * static_cast<double>(estimate.passes - 3);
      time += skipped;
      inFree += skipped;
      outFree += skipped;
      runPass(false, true);
    }
    if (observer)
      observer->interval("passes", "passes 2 to " +
                                       std::to_string(estimate.passes),
                         estimate.firstPassSeconds,
                         time - estimate.firstPassSeconds, {});
  }
  estimate.passesSeconds = time;
  estimate.systemSeconds = std::max(time, outFree);
  estimate.drainSeconds = estimate.systemSeconds - time;
  if (observer && estimate.drainSeconds > 0)
    observer->interval("gradient drain",
                       "gradients still leaving after the last pass", time,
                       estimate.drainSeconds, {});

  // The weight servers update each tensor once its reduced gradient has
  // arrived, one tensor after another at their bandwidth.
  double parametersPerByte =
      totalGradientBytes ? static_cast<double>(device.getParameters()) /
                               static_cast<double>(totalGradientBytes)
                         : 0;
  double serverFree = 0, lastArrival = estimate.systemSeconds;
  for (auto [arrival, bytes] : lastGradients) {
    double start = std::max(serverFree, arrival);
    serverFree = start + bytes * parametersPerByte *
                             kOptimizerBytesPerParameter /
                             t.getOptimizerBytesPerSecond();
    lastArrival = std::max(lastArrival, arrival);
  }
  estimate.reduceSeconds = lastArrival - estimate.systemSeconds;
  estimate.optimizerSeconds = std::max(0.0, serverFree - lastArrival);
  estimate.stepSeconds = estimate.systemSeconds + estimate.reduceSeconds +
                         estimate.optimizerSeconds;
  if (observer) {
    if (estimate.reduceSeconds > 0)
      observer->interval("reduce", "gradients through the tree",
                         estimate.systemSeconds, estimate.reduceSeconds, {});
    if (estimate.optimizerSeconds > 0)
      observer->interval("optimizer", "AdamW on the weight servers",
                         lastArrival, estimate.optimizerSeconds, {});
  }
  estimate.samplesPerSecond =
      static_cast<double>(device.getGlobalBatch()) / estimate.stepSeconds;
  return estimate;
}

void ExecutionModel::annotateLayouts(int64_t microBatch) const {
  MLIRContext *context = device.getContext();
  auto whole = RectAttr::get(context, 0, 0, target->getMeshWidth(),
                             target->getMeshHeight());
  const AtMicroBatch &cached = at(microBatch);
  for (size_t s = 0; s < stages.size(); ++s) {
    for (auto [k, kernel] : llvm::enumerate(stages[s].kernels)) {
      const KernelTime &time = cached.times[s][k];
      bool streamsWeights = kernel.ingressBytes > 0;
      ReduceAxis partials = ReduceAxis::none;
      KernelKind kind = kernel.shape.kind;
      if (kind == KernelKind::weight_matmul &&
          time.layout.featureGroups > 1)
        partials = ReduceAxis::rows;
      else if (kind == KernelKind::weight_grad &&
               time.layout.tokenGroups > 1)
        partials = ReduceAxis::columns;
      else if (kind == KernelKind::attention &&
               time.layout.featureGroups > 1)
        partials = ReduceAxis::rows;
      kernel.op.setPlacementAttr(whole);
      kernel.op.setLayoutAttr(LayoutAttr::get(
          context, time.layout.tokenGroups, time.layout.featureGroups,
          streamsWeights ? Edge::north : Edge::none, partials));
    }
  }
}

} // namespace cgpt::wafer
