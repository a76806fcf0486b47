//===- LayoutSearch.cpp - the split that makes kernels fastest ------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/Analysis/LayoutSearch.h"
#include "cgpt/Support/Debug.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/FormatVariadic.h"

#define DEBUG_TYPE "wafer-layout"

namespace cgpt::wafer {

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

Edge weightsOf(const ProgramRegion &region, ExecutionMode mode) {
  if (mode == ExecutionMode::layer_pipelined) {
    switch (region.shape.kind) {
    case KernelKind::weight_matmul:
    case KernelKind::weight_grad:
    case KernelKind::embedding:
      return Edge::resident;
    default:
      return region.ingressBytes ? Edge::resident : Edge::none;
    }
  }
  return region.ingressBytes ? Edge::north : Edge::none;
}

llvm::SmallVector<Layout> layoutCandidates(Rect rect, int64_t extent,
                                           int64_t lanes, Edge weights) {
  llvm::SmallVector<Layout> candidates;
  for (int64_t gk = 1; gk <= rect.w; gk *= 2)
    candidates.push_back({tokenGroupsOn(rect, gk), gk, weights});
  // Items per core from the fewest that leave no group without a core;
  // each step jumps to the next count that makes fewer groups, so the
  // candidates are the distinct group counts (at most about 2 sqrt(extent)),
  // however wide the SIMD. Each count takes the widest segments that still
  // hold all its groups.
  int64_t maxPerCore = 64 * std::max<int64_t>(1, lanes);
  for (int64_t perCore = std::max<int64_t>(1, ceilDiv(extent, rect.cores()));
       perCore <= maxPerCore;) {
    int64_t groups = ceilDiv(extent, perCore);
    int64_t segmentsARow = ceilDiv(groups, rect.h);
    if (segmentsARow <= rect.w)
      candidates.push_back({groups, rect.w / segmentsARow, weights});
    if (groups == 1)
      break;
    perCore = ceilDiv(extent, groups - 1);
  }
  return candidates;
}

/// The distinct values of `extent / n` for n = 1..extent, each at most
/// `cap`: the widest groups for each count of them, about 2 sqrt(extent).
static llvm::SmallVector<int64_t> widestGroups(int64_t extent, int64_t cap) {
  llvm::SmallVector<int64_t> sizes;
  for (int64_t n = 1; n <= extent; n = extent / (extent / n) + 1)
    if (int64_t size = std::min(cap, extent / n);
        sizes.empty() || size != sizes.back())
      sizes.push_back(size);
  return sizes;
}

llvm::SmallVector<Layout> attentionCandidates(int64_t seqLen, Rect rect,
                                              Edge weights) {
  llvm::SmallVector<Layout> candidates;
  for (int64_t rows : widestGroups(rect.h, seqLen))
    for (int64_t columns : widestGroups(rect.w, seqLen))
      candidates.push_back({rows, columns, weights});
  return candidates;
}

/// bestStageLayout, searched.
static Layout searchStageLayout(const StepProgram &program, size_t s, Rect rect,
                                int64_t microBatch) {
  const ProgramStage &stage = program.getStages()[s];
  const target::WaferTargetModel &target = program.getTarget();
  llvm::SmallVector<Layout> candidates =
      layoutCandidates(rect, microBatch * program.getSeqLen(),
                       target.getMixedFmacsPerCycle(), Edge::none);
  Layout best = candidates.front();
  double bestCycles = -1;
  for (Layout layout : candidates) {
    double cycles = 0;
    for (const ProgramRegion &region : stage.regions) {
      if (region.shape.kind == KernelKind::attention)
        continue;
      Layout own = layout;
      own.weights = weightsOf(region, ExecutionMode::weight_streaming);
      cycles +=
          region.cost({region.shape, own, rect, microBatch, target}).cycles();
    }
    CGPT_DEBUG(CGPT_DBGS() << "@" << stage.name << " on " << rect.w << " x "
                           << rect.h << ", micro-batch " << microBatch << ": "
                           << layout.tokenGroups << " token x "
                           << layout.featureGroups << " feature groups, "
                           << llvm::formatv("{0:f0}", cycles) << " cycles\n");
    if (bestCycles < 0 || cycles < bestCycles) {
      best = layout;
      bestCycles = cycles;
    }
  }
  CGPT_DEBUG(CGPT_DBGS() << "@" << stage.name << ": chose " << best.tokenGroups
                         << " x " << best.featureGroups << " ("
                         << llvm::formatv("{0:f0}", bestCycles)
                         << " cycles)\n");
  return best;
}

/// bestRegionLayout, searched; for attention, bestAttentionLayout with
/// `room` bytes a core.
static std::pair<Layout, KernelTime>
searchRegionLayout(const StepProgram &program, const ProgramRegion &region,
                   Rect rect, int64_t microBatch, Edge weights, int64_t room) {
  const target::WaferTargetModel &target = program.getTarget();
  const KernelShape &shape = region.shape;
  auto timeOf = [&](Layout layout) {
    return region.cost({shape, layout, rect, microBatch, target});
  };
  // The fastest layout; for attention, the fastest whose block's buffers
  // a core holds in `room`.
  std::pair<Layout, KernelTime> best;
  double bestCycles = -1;
  auto weighTimed = [&](Layout layout, KernelTime time) {
    CGPT_DEBUG(CGPT_DBGS() << "@" << region.op.getSymName() << " on " << rect.w
                           << " x " << rect.h << ": " << layout.tokenGroups
                           << " token x " << layout.featureGroups
                           << " feature groups, "
                           << llvm::formatv("{0:f0}", time.cycles())
                           << " cycles (" << time.bound() << ")\n");
    if (bestCycles < 0 || time.cycles() < bestCycles) {
      best = {layout, time};
      bestCycles = time.cycles();
    }
  };
  auto weigh = [&](Layout layout) { weighTimed(layout, timeOf(layout)); };
  if (shape.kind == KernelKind::attention) {
    auto &order = program.getLayoutSearchMemo().attentionOrder;
    auto [known, inserted] =
        order.try_emplace({region.costClass, rect.x, rect.y, rect.w, rect.h,
                           microBatch, static_cast<int64_t>(weights)});
    if (inserted) {
      for (Layout block : attentionCandidates(shape.columns, rect, weights)) {
        AttentionBlock buffers =
            attentionBlock(shape, block, rect, microBatch, target);
        known->second.push_back({timeOf(block).cycles(), block, buffers,
                                 buffers.bytes(1), buffers.bytes(1, 1)});
      }
      llvm::stable_sort(known->second, [](const auto &a, const auto &b) {
        return a.allAtOnce < b.allAtOnce;
      });
    }
    // Where none fits, the one that needs the fewest bytes, so that the
    // memory check names the smallest shortfall.
    std::pair<Layout, KernelTime> smallest;
    int64_t smallestBytes = -1;
    for (AttentionCandidate &candidate : known->second) {
      // Queries in chunks or keys in blocks never make a block faster than
      // all at once: past the fastest that fits, no block can be faster.
      if (bestCycles >= 0 && candidate.allAtOnce >= bestCycles)
        break;
      // Timed with as many queries at once as the room holds.
      Layout block = candidate.block;
      const AttentionBlock &buffers = candidate.buffers;
      // One query at a time needs the fewest bytes: past the room, no
      // chunk fits (attentionChunkFor would say 1).
      int64_t fewest = candidate.fewestResident;
      block.sumBlock = fewest <= room ? attentionChunkFor(buffers, room) : 1;
      int64_t bytes = fewest <= room ? buffers.bytes(block.sumBlock) : fewest;
      if (bytes <= room) {
        weigh(block);
        continue;
      }
      // Attention can take its keys in blocks instead: the largest first,
      // then smaller ones while they get faster (fewer keys at once leave
      // room for more queries at once, whose chunks each restream the
      // keys). None is faster than all keys in one block with all queries
      // at once, which bounds them.
      bool keyBlocksFit = candidate.fewestInKeyBlocks <= room;
      if (keyBlocksFit && candidate.oneKeyBlock < 0) {
        Layout oneBlock = block;
        oneBlock.sumBlock = 0;
        oneBlock.keyBlock = buffers.keys;
        candidate.oneKeyBlock = timeOf(oneBlock).cycles();
      }
      if (keyBlocksFit && bestCycles >= 0 &&
          candidate.oneKeyBlock >= bestCycles)
        continue;
      std::vector<int64_t> keyBlocks =
          keyBlocksFit ? attentionKeyBlocksFor(buffers, room)
                       : std::vector<int64_t>();
      double previous = -1;
      for (int64_t keyBlock : keyBlocks) {
        block.sumBlock = attentionChunkFor(buffers, room, keyBlock);
        block.keyBlock = keyBlock;
        KernelTime time = timeOf(block);
        if (previous >= 0 && time.cycles() >= previous)
          break;
        previous = time.cycles();
        weighTimed(block, time);
      }
      if (keyBlocks.empty() && (smallestBytes < 0 || bytes < smallestBytes)) {
        smallest = {block, timeOf(block)};
        smallestBytes = bytes;
      }
    }
    return bestCycles < 0 ? smallest : best;
  }
  // What the token groups split: a resident weight's output columns, the
  // tokens a weight gradient sums over, or the tokens of the rows.
  int64_t extent = microBatch * shape.rows;
  if (weights == Edge::resident && (shape.kind == KernelKind::weight_matmul ||
                                    shape.kind == KernelKind::weight_grad))
    extent = shape.columns;
  else if (shape.kind == KernelKind::weight_grad)
    extent = microBatch * shape.contracted;
  for (Layout layout : layoutCandidates(
           rect, extent, fmacLanes(target, shape.elementBytes), weights))
    weigh(layout);
  return best;
}

Layout bestStageLayout(const StepProgram &program, size_t s, Rect rect,
                       int64_t microBatch) {
  auto &memo = program.getLayoutSearchMemo().stages;
  auto [it, inserted] =
      memo.try_emplace({program.getStages()[s].placementClass, rect.x, rect.y,
                        rect.w, rect.h, microBatch});
  if (inserted)
    it->second = searchStageLayout(program, s, rect, microBatch);
  return it->second;
}

std::pair<Layout, KernelTime> bestRegionLayout(const StepProgram &program,
                                               const ProgramRegion &region,
                                               Rect rect, int64_t microBatch,
                                               Edge weights) {
  const target::WaferTargetModel &target = program.getTarget();
  if (region.shape.kind == KernelKind::attention)
    return bestAttentionLayout(program, region, rect, microBatch, weights,
                               target.getCoreSramBytes() -
                                   target.getReservedBytes());
  auto &memo = program.getLayoutSearchMemo().regions;
  auto [it, inserted] =
      memo.try_emplace({region.costClass, rect.x, rect.y, rect.w, rect.h,
                        microBatch, static_cast<int64_t>(weights)});
  if (inserted)
    it->second =
        searchRegionLayout(program, region, rect, microBatch, weights, 0);
  return it->second;
}

std::pair<Layout, KernelTime> bestAttentionLayout(const StepProgram &program,
                                                  const ProgramRegion &region,
                                                  Rect rect, int64_t microBatch,
                                                  Edge weights, int64_t room) {
  auto &memo = program.getLayoutSearchMemo().attention;
  auto [it, inserted] =
      memo.try_emplace({region.costClass, rect.x, rect.y, rect.w, rect.h,
                        microBatch, static_cast<int64_t>(weights), room});
  if (inserted)
    it->second =
        searchRegionLayout(program, region, rect, microBatch, weights, room);
  return it->second;
}

} // namespace cgpt::wafer
