//===- PipelinedPlacer.cpp - every layer resident on its own band ---------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Layer pipelined, as Cerebras software ran small models before weight
// streaming: the embedding, every layer and the loss each hold their
// weights on their own band of columns for the whole step (a slot), and
// micro-batches flow from one band to the next and back. Bands are sized
// in proportion to each slot's work, then balanced on the slots' measured
// times, since the slowest slot sets the pipeline's pace. Whether the
// weights, their gradients and the micro-batches in flight fit is the
// memory model's to say.
//
//===----------------------------------------------------------------------===//

#include "ColumnShares.h"

#include "cgpt/Dialect/Wafer/Analysis/LayoutSearch.h"
#include "cgpt/Dialect/Wafer/Analysis/Placer.h"

#include "llvm/ADT/StringMap.h"

namespace cgpt::wafer {
namespace {

/// Rebalancing rounds of the band widths.
constexpr int kBalancingRounds = 3;

class PipelinedPlacer : public Placer {
public:
  llvm::StringRef getName() const override { return "pipelined"; }
  ExecutionMode getMode() const override {
    return ExecutionMode::layer_pipelined;
  }
  std::optional<Placement> place(const StepProgram &program, int64_t microBatch,
                                 std::string &whyNot) const override;
};

/// What a stage shares its slot with: its layer, or its name without the
/// pass (`embed` for `embed.forward` and `embed.backward`).
std::string slotKey(const ProgramStage &stage) {
  if (stage.layer)
    return "layer " + std::to_string(*stage.layer);
  return llvm::StringRef(stage.name).rsplit('.').first.str();
}

std::optional<Placement> PipelinedPlacer::place(const StepProgram &program,
                                                int64_t microBatch,
                                                std::string &whyNot) const {
  llvm::ArrayRef<ProgramStage> stages = program.getStages();
  Rect mesh = program.getMesh();
  Placement placement;
  placement.placer = getName().str();
  placement.mode = getMode();
  // Slots in the order the forward pass reaches them.
  llvm::StringMap<int64_t> slotOf;
  for (const ProgramStage &stage : stages) {
    auto [it, inserted] =
        slotOf.try_emplace(slotKey(stage), static_cast<int64_t>(slotOf.size()));
    placement.slots.push_back(it->second);
  }
  auto numSlots = static_cast<int64_t>(slotOf.size());
  if (numSlots > mesh.w) {
    whyNot = "layer pipelining needs a band of at least one column for each "
             "of its " +
             std::to_string(numSlots) + " slots, and the mesh has " +
             std::to_string(mesh.w) + " columns";
    return std::nullopt;
  }

  // The best layout of a region at a band width (searched once for each
  // kind of region and width: LayoutSearchMemo).
  auto layoutOn = [&](const ProgramRegion &region, int64_t width) {
    return bestRegionLayout(program, region, {0, 0, width, mesh.h}, microBatch,
                            weightsOf(region, placement.mode));
  };
  // Slot times at `widths`: each slot's regions one after another.
  auto slotCycles = [&](const std::vector<int64_t> &widths) {
    std::vector<double> cycles(numSlots);
    for (auto [s, stage] : llvm::enumerate(stages))
      for (const ProgramRegion &region : stage.regions)
        cycles[*placement.slots[s]] +=
            layoutOn(region, widths[*placement.slots[s]]).second.cycles();
    return cycles;
  };

  // A slot holds its weights and their f32 gradients all step: its band
  // must be wide enough to keep them in half of what a core has beside its
  // reserve, the other half left for the activations in flight.
  const target::WaferTargetModel &target = program.getTarget();
  int64_t budget = std::max<int64_t>(
      1, (target.getCoreSramBytes() - target.getReservedBytes()) / 2);
  std::vector<int64_t> weights(numSlots), accumulators(numSlots);
  std::vector<double> work(numSlots);
  for (auto [s, stage] : llvm::enumerate(stages)) {
    int64_t slot = *placement.slots[s];
    weights[slot] = std::max(weights[slot], stage.weightBytes);
    for (const ProgramRegion &region : stage.regions) {
      work[slot] += static_cast<double>(region.shape.flops) + 1;
      accumulators[slot] += region.shape.accumulator;
    }
  }
  std::vector<int64_t> minimum(numSlots);
  int64_t needed = 0;
  for (int64_t p = 0; p < numSlots; ++p) {
    int64_t perColumn = budget * mesh.h;
    minimum[p] = std::max<int64_t>(
        1, (weights[p] + accumulators[p] + perColumn - 1) / perColumn);
    needed += minimum[p];
  }
  if (needed > mesh.w) {
    whyNot = "its slots' weights and gradients need " + std::to_string(needed) +
             " columns of cores at half of each "
             "core's free SRAM, and the mesh has " +
             std::to_string(mesh.w);
    return std::nullopt;
  }
  std::vector<int64_t> widths = detail::shareColumns(mesh.w, work, minimum);
  std::vector<int64_t> bestWidths = widths;
  double bestSlowest = -1;
  for (int round = 0; round < kBalancingRounds; ++round) {
    std::vector<double> cycles = slotCycles(widths);
    double slowest = *std::max_element(cycles.begin(), cycles.end());
    if (bestSlowest < 0 || slowest < bestSlowest) {
      bestSlowest = slowest;
      bestWidths = widths;
    }
    for (int64_t p = 0; p < numSlots; ++p)
      work[p] = static_cast<double>(widths[p]) * cycles[p];
    std::vector<int64_t> next = detail::shareColumns(mesh.w, work, minimum);
    if (next == widths)
      break;
    widths = std::move(next);
  }

  std::vector<int64_t> offsets(numSlots);
  for (int64_t p = 1; p < numSlots; ++p)
    offsets[p] = offsets[p - 1] + bestWidths[p - 1];
  for (auto [s, stage] : llvm::enumerate(stages)) {
    int64_t slot = *placement.slots[s];
    Rect band{offsets[slot], 0, bestWidths[slot], mesh.h};
    auto &regions = placement.regions.emplace_back();
    for (auto [r, region] : llvm::enumerate(stage.regions))
      regions.push_back(
          {band, layoutOn(region, band.w).first, static_cast<int64_t>(r)});
  }
  return placement;
}

} // namespace

std::unique_ptr<Placer> createPipelinedPlacer() {
  return std::make_unique<PipelinedPlacer>();
}

} // namespace cgpt::wafer
