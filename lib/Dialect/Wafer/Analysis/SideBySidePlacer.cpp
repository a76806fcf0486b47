//===- SideBySidePlacer.cpp - independent kernels sharing the mesh --------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Weight streaming with kernels side by side. Starting from the whole-mesh
// placement, each run of consecutive regions of a stage that read none of
// each other's results (a layer's input gradient, weight gradient and bias
// gradient; the attention and feed-forward branches of a parallel block)
// may share the mesh at once, each on its own band of columns. A kernel
// that streams its weights pays one task per weight wavelet per core
// whatever its tokens, so on a narrower band with more tokens per core it
// wastes less; fills shrink with the band. The bands are sized in
// proportion to each kernel's work and balanced until the slowest is as
// fast as it gets; the run goes side by side only when its slowest kernel
// then ends before the run would have ended one kernel after another.
//
//===----------------------------------------------------------------------===//

#include "ColumnShares.h"

#include "cgpt/Dialect/Wafer/Analysis/LayoutSearch.h"
#include "cgpt/Dialect/Wafer/Analysis/Placer.h"

#include "llvm/ADT/STLExtras.h"

#include <map>

namespace cgpt::wafer {
namespace {

/// Rebalancing rounds of the band widths: each gives a kernel columns in
/// proportion to its work at the last widths.
constexpr int kBalancingRounds = 6;

class SideBySidePlacer : public Placer {
public:
  llvm::StringRef getName() const override { return "side-by-side"; }
  ExecutionMode getMode() const override {
    return ExecutionMode::weight_streaming;
  }
  std::optional<Placement> place(const StepProgram &program, int64_t microBatch,
                                 std::string &whyNot) const override;

private:
  /// Regions [first, last) of stage `s` side by side on the mesh's bands,
  /// if that ends sooner than `sequentialCycles`.
  std::optional<std::vector<RegionPlacement>>
  shareMesh(const StepProgram &program, size_t s, size_t first, size_t last,
            int64_t microBatch, double sequentialCycles) const;
};

/// Runs of consecutive regions of `stage` that read none of each other's
/// results: [first, last) index pairs, two regions or more.
std::vector<std::pair<size_t, size_t>>
independentRuns(const ProgramStage &stage, int64_t maxRegions) {
  std::vector<std::pair<size_t, size_t>> runs;
  size_t first = 0;
  auto close = [&](size_t end) {
    if (end - first >= 2)
      runs.push_back({first, end});
    first = end;
  };
  for (size_t r = 1; r < stage.regions.size(); ++r) {
    bool readsRun = llvm::any_of(stage.regions[r].reads,
                                 [&](unsigned read) { return read >= first; });
    if (readsRun || static_cast<int64_t>(r - first) >= maxRegions)
      close(r);
  }
  close(stage.regions.size());
  return runs;
}

std::optional<std::vector<RegionPlacement>>
SideBySidePlacer::shareMesh(const StepProgram &program, size_t s, size_t first,
                            size_t last, int64_t microBatch,
                            double sequentialCycles) const {
  const ProgramStage &stage = program.getStages()[s];
  Rect mesh = program.getMesh();
  size_t count = last - first;
  // A region on a band gathers what it reads and writes onto the band's
  // cores: the band must be wide enough that this costs a core no more
  // than the stage's live activations cost it on the whole mesh.
  std::vector<int64_t> minimum;
  int64_t needed = 0;
  for (size_t r = first; r < last; ++r) {
    const ProgramRegion &region = stage.regions[r];
    minimum.push_back(std::max<int64_t>(
        1, region.live
               ? (mesh.w * region.operandBytes + region.live - 1) / region.live
               : 1));
    needed += minimum.back();
  }
  if (needed > mesh.w)
    return std::nullopt;
  std::vector<double> work;
  for (size_t r = first; r < last; ++r)
    work.push_back(static_cast<double>(stage.regions[r].shape.flops) + 1);
  std::vector<int64_t> widths = detail::shareColumns(mesh.w, work, minimum);
  std::vector<RegionPlacement> best;
  double bestCycles = -1;
  for (int round = 0; round < kBalancingRounds; ++round) {
    std::vector<RegionPlacement> placed;
    double slowest = 0;
    int64_t x = 0;
    for (size_t i = 0; i < count; ++i) {
      const ProgramRegion &region = stage.regions[first + i];
      Rect band{x, 0, widths[i], mesh.h};
      x += widths[i];
      auto [layout, time] =
          bestRegionLayout(program, region, band, microBatch,
                           weightsOf(region, ExecutionMode::weight_streaming));
      placed.push_back({band, layout, 0});
      slowest = std::max(slowest, time.cycles());
      // Work at these widths, in column-cycles: the next widths share the
      // columns so that each kernel would take as long as the others.
      work[i] = static_cast<double>(widths[i]) * time.cycles();
    }
    if (bestCycles < 0 || slowest < bestCycles) {
      bestCycles = slowest;
      best = std::move(placed);
    }
    std::vector<int64_t> next = detail::shareColumns(mesh.w, work, minimum);
    if (next == widths)
      break;
    widths = std::move(next);
  }
  if (bestCycles >= sequentialCycles)
    return std::nullopt;
  return best;
}

std::optional<Placement> SideBySidePlacer::place(const StepProgram &program,
                                                 int64_t microBatch,
                                                 std::string &whyNot) const {
  std::optional<Placement> placement =
      createWholeMeshPlacer()->place(program, microBatch, whyNot);
  if (!placement)
    return std::nullopt;
  placement->placer = getName().str();
  Rect mesh = program.getMesh();
  // Layers are alike: one decision per kind of stage.
  std::map<int64_t, std::vector<RegionPlacement>> decided;
  for (auto [s, stage] : llvm::enumerate(program.getStages())) {
    std::vector<RegionPlacement> &regions = placement->regions[s];
    auto [it, inserted] = decided.try_emplace(stage.placementClass);
    if (!inserted) {
      regions = it->second;
      continue;
    }
    for (auto [first, last] : independentRuns(stage, mesh.w)) {
      double sequential = 0;
      for (size_t r = first; r < last; ++r)
        sequential +=
            placedKernelTime(program, *placement, s, r, microBatch).cycles();
      std::optional<std::vector<RegionPlacement>> shared =
          shareMesh(program, s, first, last, microBatch, sequential);
      if (!shared)
        continue;
      for (size_t r = first; r < last; ++r)
        regions[r] = (*shared)[r - first];
      // The run is one wave, numbered as its first region was.
      for (size_t r = first; r < last; ++r)
        regions[r].wave = static_cast<int64_t>(first);
    }
    // Waves numbered 0, 1, 2, ... in order.
    int64_t wave = -1, previous = -1;
    for (RegionPlacement &region : regions) {
      if (region.wave != previous)
        ++wave;
      previous = region.wave;
      region.wave = wave;
    }
    it->second = regions;
  }
  return placement;
}

} // namespace

std::unique_ptr<Placer> createSideBySidePlacer() {
  return std::make_unique<SideBySidePlacer>();
}

} // namespace cgpt::wafer
