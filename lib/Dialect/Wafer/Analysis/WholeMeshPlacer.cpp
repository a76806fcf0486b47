//===- WholeMeshPlacer.cpp - every kernel over the whole mesh -------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Weight streaming as the vendor describes it: one kernel at a time over the
// entire wafer (shared/reference/weight-streaming.md, section 1.1). Each
// stage's token-major kernels share the split that makes them fastest
// together, so nothing moves between them; attention takes its own split of
// each (sequence, head) into query and key blocks.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/Analysis/LayoutSearch.h"
#include "cgpt/Dialect/Wafer/Analysis/Placer.h"

#include <map>

namespace cgpt::wafer {
namespace {

class WholeMeshPlacer : public Placer {
public:
  llvm::StringRef getName() const override { return "whole-mesh"; }
  ExecutionMode getMode() const override {
    return ExecutionMode::weight_streaming;
  }
  std::optional<Placement> place(const StepProgram &program, int64_t microBatch,
                                 std::string &whyNot) const override;
};

std::optional<Placement> WholeMeshPlacer::place(const StepProgram &program,
                                                int64_t microBatch,
                                                std::string &) const {
  Placement placement;
  placement.placer = getName().str();
  placement.mode = getMode();
  Rect mesh = program.getMesh();
  // Layers are alike: one search per kind of stage.
  std::map<int64_t, std::vector<Layout>> stageLayouts;
  for (auto [s, stage] : llvm::enumerate(program.getStages())) {
    auto [it, inserted] = stageLayouts.try_emplace(stage.placementClass);
    if (inserted) {
      Layout shared = bestStageLayout(program, s, mesh, microBatch);
      for (const ProgramRegion &region : stage.regions) {
        Layout layout = shared;
        layout.weights = weightsOf(region, placement.mode);
        if (region.shape.kind == KernelKind::attention)
          layout = bestRegionLayout(program, region, mesh, microBatch,
                                    layout.weights)
                       .first;
        it->second.push_back(layout);
      }
    }
    placement.slots.push_back(std::nullopt);
    auto &regions = placement.regions.emplace_back();
    for (auto [r, layout] : llvm::enumerate(it->second))
      regions.push_back({mesh, layout, static_cast<int64_t>(r)});
  }
  return placement;
}

} // namespace

std::unique_ptr<Placer> createWholeMeshPlacer() {
  return std::make_unique<WholeMeshPlacer>();
}

} // namespace cgpt::wafer
