//===- MemoryModel.cpp - what each core holds while a region runs ---------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/Analysis/MemoryModel.h"
#include "cgpt/Dialect/Wafer/Analysis/LayoutSearch.h"
#include "cgpt/Dialect/Wafer/Analysis/MapAlgorithm.h"

#include "cgpt/Support/Format.h"

#include "llvm/ADT/DenseMap.h"

#include <map>
#include <numeric>

using namespace mlir;

namespace cgpt::wafer {

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t SequenceSpread::bytes(int64_t perSequence) const {
  switch (kind) {
  case Kind::none:
    return 0;
  case Kind::even:
    return ceilDiv(a * perSequence, b);
  case Kind::byTokens:
    return a * ceilDiv(ceilDiv(perSequence, b), c);
  }
  return 0;
}

std::string CoreMemory::describe() const {
  return "reserve " + formatGrouped(reserve) + " B, " +
         (resident ? "resident weights " : "weight buffers ") +
         formatGrouped(weightBuffers) + " B, checkpoints " +
         formatGrouped(checkpoints) + " B, live activations " +
         formatGrouped(live) + " B, gradient accumulator " +
         formatGrouped(accumulator) + " B, partial sums " +
         formatGrouped(sums) + " B" +
         (attention ? ", attention buffers " + formatGrouped(attention) + " B"
                    : "") +
         (mapWork ? ", map work rows " + formatGrouped(mapWork) + " B" : "") +
         (epilogue ? ", epilogue constants " + formatGrouped(epilogue) + " B"
                   : "") +
         (embeddingWork
              ? ", embedding lists " + formatGrouped(embeddingWork) + " B"
              : "") +
         (routerChoice
              ? ", router's choice " + formatGrouped(routerChoice) + " B"
              : "");
}

namespace {

/// Whether a kernel's data is split by tokens (and features), as the
/// layout's groups say; attention splits (sequence, head) blocks instead.
bool isTokenMajor(KernelKind kind) { return kind != KernelKind::attention; }

/// Checkpoint bytes per sequence `policy` holds on the wafer at once.
int64_t checkpointBytesPerSequence(const StepProgram &program,
                                   CheckpointPolicy policy) {
  int64_t perSequence = 0, largestLayer = 0;
  for (const ProgramStage &stage : program.getStages()) {
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
  // What the policy holds besides: a run's rebuilt checkpoints (the layers
  // between two kept ones, never more than the model has), or the
  // offloaded checkpoint in use and the next one arriving.
  if (policy.kind == CheckpointPolicy::Kind::every) {
    int64_t runLayers =
        std::min(policy.interval, std::max<int64_t>(1, program.getLayers()));
    perSequence += (runLayers - 1) * largestLayer;
  }
  if (policy.kind == CheckpointPolicy::Kind::offload)
    perSequence += 2 * largestLayer;
  return perSequence;
}

/// The memory of every region of one placed step at one micro-batch and
/// policy, with what all regions share computed once.
class MemoryAccount {
public:
  /// Without a policy, no checkpoints but a pipeline slot's.
  MemoryAccount(const StepProgram &program, const Placement &placement,
                int64_t microBatch, std::optional<CheckpointPolicy> policy)
      : program(program), placement(placement), microBatch(microBatch),
        meshCores(program.getTarget().getNumCores()) {
    if (placement.mode == ExecutionMode::layer_pipelined)
      accountSlots();
    else if (policy)
      checkpointBytes = checkpointBytesPerSequence(program, *policy);
  }

  CoreMemory of(size_t s, size_t r) const;
  /// How the cores of region `r` of stage `s` share the checkpoints a
  /// policy keeps (none, layer pipelined: a slot's are its own).
  SequenceSpread checkpointSpread(size_t s, size_t r) const;
  /// What a core of region `r` of stage `s` holds for attention; none for
  /// another kernel.
  std::optional<AttentionBlock> attentionBuffers(size_t s, size_t r) const {
    const ProgramRegion &region = program.getStages()[s].regions[r];
    if (region.shape.kind != KernelKind::attention)
      return std::nullopt;
    const RegionPlacement &placed = placement.regions[s][r];
    return attentionBlock(region.shape, placed.layout, placed.rect, microBatch,
                          program.getTarget());
  }

private:
  /// What each pipeline slot holds for the whole step.
  void accountSlots();
  /// How the cores of region `r` of stage `s` share data of each of the
  /// micro-batch's sequences: as the data of the region is spread.
  SequenceSpread dataSpread(size_t s, size_t r) const;
  int64_t spread(size_t s, size_t r, int64_t perSequence) const {
    return dataSpread(s, r).bytes(perSequence);
  }

  const StepProgram &program;
  const Placement &placement;
  int64_t microBatch, meshCores;
  int64_t checkpointBytes = 0;
  struct Slot {
    int64_t weights = 0, accumulator = 0, stashBytes = 0;
  };
  llvm::DenseMap<int64_t, Slot> slots;
};

void MemoryAccount::accountSlots() {
  int64_t numSlots = placement.numSlots();
  int64_t passes = ceilDiv(program.getPerSystemBatch(), microBatch);
  for (auto [s, stage] : llvm::enumerate(program.getStages())) {
    Slot &slot = slots[*placement.slots[s]];
    // A layer's forward and backward stages read the same weights: the
    // slot holds them once.
    slot.weights = std::max(slot.weights, stage.weightBytes);
    for (const ProgramRegion &region : stage.regions)
      slot.accumulator += region.shape.accumulator;
    // One-forward-one-backward: the slot p-th from the first holds the
    // checkpoints of the micro-batches between its forward and its
    // backward, at most numSlots - p of them (and no more than a step has).
    int64_t inFlight = std::min(passes, numSlots - *placement.slots[s]);
    slot.stashBytes = std::max(slot.stashBytes,
                               inFlight * microBatch * stage.checkpointBytes);
  }
}

SequenceSpread MemoryAccount::dataSpread(size_t s, size_t r) const {
  const ProgramStage &stage = program.getStages()[s];
  const RegionPlacement &placed = placement.regions[s][r];
  // Attention reads what the token-major kernel before it on the same
  // cores left there, spread as that kernel's layout spreads it.
  std::optional<size_t> source;
  if (isTokenMajor(stage.regions[r].shape.kind)) {
    source = r;
  } else {
    for (size_t i = r; i-- > 0 && !source;)
      if (isTokenMajor(stage.regions[i].shape.kind) &&
          placement.regions[s][i].rect == placed.rect)
        source = i;
  }
  if (!source || placement.regions[s][*source].layout.weights == Edge::resident)
    return SequenceSpread::even(microBatch, placed.rect.cores());
  // Tokens over token groups, each token's bytes over feature groups.
  const Layout &layout = placement.regions[s][*source].layout;
  int64_t seq = program.getSeqLen();
  return SequenceSpread::byTokens(ceilDiv(microBatch * seq, layout.tokenGroups),
                                  seq, layout.featureGroups);
}

SequenceSpread MemoryAccount::checkpointSpread(size_t s, size_t r) const {
  if (placement.mode == ExecutionMode::layer_pipelined)
    return {};
  // Checkpoints rest on the whole mesh as the kernels that made them left
  // them; a region on part of the mesh sees its even share.
  if (placement.regions[s][r].rect == program.getMesh())
    return dataSpread(s, r);
  return SequenceSpread::even(microBatch, meshCores);
}

CoreMemory MemoryAccount::of(size_t s, size_t r) const {
  const ProgramRegion &region = program.getStages()[s].regions[r];
  const RegionPlacement &placed = placement.regions[s][r];
  int64_t cores = placed.rect.cores();
  CoreMemory memory;
  memory.reserve = program.getTarget().getReservedBytes();
  SumBlockShape sums = sumBlockShape(region.shape, placed.layout, microBatch);
  if (sums.blockable())
    memory.sums = sums.bytes(placed.layout.sumBlock);
  bool wholeMesh = placed.rect == program.getMesh();
  if (wholeMesh || placement.mode == ExecutionMode::layer_pipelined) {
    memory.live = spread(s, r, region.live);
  } else {
    // On part of the mesh: the stage's activations stay spread over the
    // whole mesh where the kernels before left them, and the region
    // gathers what it reads and writes onto its own cores.
    memory.live = ceilDiv(microBatch * region.live, meshCores) +
                  spread(s, r, region.operandBytes);
  }
  if (std::optional<AttentionBlock> block = attentionBuffers(s, r))
    memory.attention = block->bytes(placed.layout);
  if (region.shape.function == RowFunction::map)
    memory.mapWork =
        mapWorkBytes(region.shape.map, ceilDiv(region.shape.columns,
                                               placed.layout.featureGroups));
  else if (reducesScattered(region.shape, placed.layout))
    memory.epilogue = epilogueConstantBytes(region.shape);
  if (region.shape.function == RowFunction::gather ||
      region.shape.function == RowFunction::scatterAdd)
    memory.embeddingWork = embeddingWorkBytes(
        region.shape,
        ceilDiv(microBatch * region.shape.rows, placed.layout.tokenGroups),
        ceilDiv(region.shape.columns, placed.layout.featureGroups),
        program.getTarget());
  memory.routerChoice =
      routerChoiceBytes(region.shape, placed.layout, microBatch);
  if (placement.mode == ExecutionMode::layer_pipelined) {
    const Slot &slot = slots.find(*placement.slots[s])->second;
    memory.resident = true;
    memory.weightBuffers = ceilDiv(slot.weights, cores);
    memory.accumulator = ceilDiv(slot.accumulator, cores);
    memory.checkpoints = ceilDiv(slot.stashBytes, cores);
    return memory;
  }
  memory.weightBuffers =
      2 * ceilDiv(program.getLargestStageWeights(), meshCores);
  memory.checkpoints = checkpointSpread(s, r).bytes(checkpointBytes);
  // A routed kernel's experts each stream their gradient out after their
  // own pass: one expert's accumulator is held at a time.
  memory.accumulator =
      ceilDiv(expertPass(region.shape, microBatch).accumulator, cores);
  return memory;
}

} // namespace

CoreMemory regionMemory(const StepProgram &program, const Placement &placement,
                        size_t s, size_t r, int64_t microBatch,
                        CheckpointPolicy policy) {
  return MemoryAccount(program, placement, microBatch, policy).of(s, r);
}

std::vector<std::vector<CoreMemory>> regionMemories(const StepProgram &program,
                                                    const Placement &placement,
                                                    int64_t microBatch,
                                                    CheckpointPolicy policy) {
  MemoryAccount account(program, placement, microBatch, policy);
  std::vector<std::vector<CoreMemory>> result(program.getStages().size());
  for (size_t s = 0; s < result.size(); ++s)
    for (size_t r = 0; r < program.getStages()[s].regions.size(); ++r)
      result[s].push_back(account.of(s, r));
  return result;
}

MemoryPeak memoryPeak(const StepProgram &program, const Placement &placement,
                      int64_t microBatch, CheckpointPolicy policy) {
  MemoryAccount account(program, placement, microBatch, policy);
  MemoryPeak peak;
  for (size_t s = 0; s < program.getStages().size(); ++s)
    for (size_t r = 0; r < program.getStages()[s].regions.size(); ++r) {
      CoreMemory memory = account.of(s, r);
      if (!peak.region || memory.total() > peak.memory.total())
        peak = {program.getStages()[s].regions[r].op, memory};
    }
  return peak;
}

/// The `sum_block` of a weight kernel whose sums are `sums`, its stream
/// `perWavelet` elements a wavelet, with `room` bytes a core beside
/// everything else: 0 (all columns at once) where they fit, else as many
/// as fit (at least one), spread evenly over the blocks.
static int64_t sumBlockFor(const SumBlockShape &sums, int64_t perWavelet,
                           int64_t room) {
  // A reduce-scattered block of nb columns on a segment of k holds nb +
  // ceil(nb / k) columns of sums (SumBlockShape::bytes): from about that
  // many, the most that fit.
  int64_t fit = room / (sums.perColumn * kPartialSumBytes);
  if (sums.scatteredOver > 1)
    fit = fit * sums.scatteredOver / (sums.scatteredOver + 1);
  while (fit > 0 && sums.bytes(fit) > room)
    --fit;
  if (fit >= sums.columns)
    return 0;
  // The fewest blocks, evenly, each block's stream in whole wavelets where a
  // block that fits can be: rounded up, as rounding down would add a block
  // (every block streams as long as the first).
  int64_t blocks = ceilDiv(sums.columns, std::max<int64_t>(1, fit));
  int64_t block = ceilDiv(sums.columns, blocks);
  int64_t whole = perWavelet / std::gcd(sums.streamed, perWavelet);
  if (whole <= fit) {
    // A block of at most `fit` in whole wavelets holds at most the largest
    // multiple of `whole` that fits: the fewest blocks are those that leave
    // no more than that to a block.
    int64_t largest = fit / whole * whole;
    blocks = std::max(blocks, ceilDiv(sums.columns, largest));
    block = ceilDiv(ceilDiv(sums.columns, blocks), whole) * whole;
  }
  return block;
}

PlacedMemory::PlacedMemory(const StepProgram &program,
                           const Placement &placement, int64_t microBatch)
    : program(program), placement(placement), microBatch(microBatch) {
  MemoryAccount account(program, placement, microBatch, std::nullopt);
  std::map<std::array<int64_t, 16>, int32_t> known;
  for (auto [s, stage] : llvm::enumerate(program.getStages()))
    for (auto [r, region] : llvm::enumerate(stage.regions)) {
      CoreMemory memory = account.of(s, r);
      Need need;
      need.fixed = memory.total() - memory.blocked();
      need.checkpoints = account.checkpointSpread(s, r);
      need.sums = sumBlockShape(region.shape, placement.regions[s][r].layout,
                                microBatch);
      if (need.sums.blockable())
        need.perWavelet =
            elementsPerWavelet(program.getTarget(), region.shape.elementBytes);
      int64_t attentionClass = -1;
      if (region.shape.kind == KernelKind::attention) {
        const RegionPlacement &placed = placement.regions[s][r];
        need.attention = &region;
        need.rect = placed.rect;
        need.weights = placed.layout.weights;
        attentionClass = region.costClass;
      }
      std::array<int64_t, 4> spread = need.checkpoints.key();
      auto [it, inserted] = known.try_emplace(
          {need.fixed, spread[0], spread[1], spread[2], spread[3],
           need.sums.columns, need.sums.perColumn, need.sums.streamed,
           need.sums.scatteredOver, need.perWavelet, attentionClass,
           need.rect.x, need.rect.y, need.rect.w, need.rect.h,
           static_cast<int64_t>(need.weights)},
          static_cast<int32_t>(needs.size()));
      if (inserted) {
        needs.push_back(need);
        firstOf.push_back({s, r});
      }
      if (need.sums.blockable() || need.attention) {
        weightKernels.push_back({s, r, Layout{}});
        weightKernelNeeds.push_back(it->second);
      }
    }
}

std::vector<PlacedMemory::SumBlock>
PlacedMemory::sumBlocks(CheckpointPolicy policy, MemoryPeak *peak) const {
  int64_t sram = program.getTarget().getCoreSramBytes();
  int64_t checkpointBytes = placement.mode == ExecutionMode::layer_pipelined
                                ? 0
                                : checkpointBytesPerSequence(program, policy);
  // Each need under the policy: its sum block and its sums' bytes (or
  // attention's layout and buffers), and what a core holds in all.
  struct UnderPolicy {
    int64_t block = 0, sumBytes = 0, total = 0;
    Layout attention;
  };
  std::vector<UnderPolicy> under;
  under.reserve(needs.size());
  for (const Need &need : needs) {
    UnderPolicy &u = under.emplace_back();
    u.total = need.fixed + need.checkpoints.bytes(checkpointBytes);
    if (need.sums.blockable()) {
      u.block = sumBlockFor(need.sums, need.perWavelet, sram - u.total);
      u.sumBytes = need.sums.bytes(u.block);
    } else if (need.attention) {
      u.attention =
          bestAttentionLayout(program, *need.attention, need.rect, microBatch,
                              need.weights, sram - u.total)
              .first;
      u.sumBytes = attentionBlock(need.attention->shape, u.attention, need.rect,
                                  microBatch, program.getTarget())
                       .bytes(u.attention);
    }
    u.total += u.sumBytes;
  }
  std::vector<SumBlock> blocks = weightKernels;
  for (auto [block, need] : llvm::zip_equal(blocks, weightKernelNeeds)) {
    if (needs[need].attention) {
      block.layout = under[need].attention;
      continue;
    }
    block.layout = placement.regions[block.stage][block.region].layout;
    block.layout.sumBlock = under[need].block;
  }
  // The peak is the first region, in program order, that holds the most:
  // the first region of the first need that does (needs are in the order
  // of their first regions).
  std::optional<std::pair<size_t, size_t>> highest;
  int64_t highestTotal = 0, highestSums = 0;
  for (auto [need, u] : llvm::enumerate(under))
    if (!highest || u.total > highestTotal) {
      highest = firstOf[need];
      highestTotal = u.total;
      highestSums = u.sumBytes;
    }
  if (peak) {
    *peak = {};
    if (highest) {
      auto [s, r] = *highest;
      CoreMemory memory =
          MemoryAccount(program, placement, microBatch, policy).of(s, r);
      (program.getStages()[s].regions[r].shape.kind == KernelKind::attention
           ? memory.attention
           : memory.sums) = highestSums;
      *peak = {program.getStages()[s].regions[r].op, memory};
    }
  }
  return blocks;
}

Placement withSumBlocks(const StepProgram &program, Placement placement,
                        int64_t microBatch, CheckpointPolicy policy,
                        MemoryPeak *peak) {
  std::vector<PlacedMemory::SumBlock> blocks =
      PlacedMemory(program, placement, microBatch).sumBlocks(policy, peak);
  for (const PlacedMemory::SumBlock &block : blocks)
    placement.regions[block.stage][block.region].layout = block.layout;
  return placement;
}

} // namespace cgpt::wafer
