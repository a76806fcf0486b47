//===- CycleLevel.cpp - every kernel of a device on the mesh model --------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/CycleLevel.h"

#include "cgpt/Dialect/Wafer/Analysis/StepProgram.h"
#include "cgpt/Sim/Mesh/KernelPrograms.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace cgpt::wafer;

namespace cgpt::sim::mesh {

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

namespace {

/// One region as the mesh model runs it: the kernel, its placed layout and
/// rectangle, the grid simulated and the analytic cycles for the same.
struct Planned {
  size_t stage, region;
  KernelShape kernel;
  Layout layout;
  Rect rect;
  int64_t batch;
  int width, height;
  double analytic;
};

} // namespace

LogicalResult checkCycleLevelTarget(DeviceOp device,
                                    const target::WaferTargetModel &target) {
  int64_t width = target.getMeshWidth(), height = target.getMeshHeight();
  if (width > kMaxCycleLevelSide || height > kMaxCycleLevelSide)
    return device.emitOpError()
           << "cannot run cycle by cycle: the cycle-level model takes meshes "
              "of at most "
           << kMaxCycleLevelSide << " x " << kMaxCycleLevelSide
           << " cores, and target '" << device.getTarget() << "' has "
           << width << " x " << height
           << " cores; use --target mini or a target file of your own";
  if (target.getLinkBytesPerCycle() != kWaveletBytes)
    return device.emitOpError()
           << "cannot run cycle by cycle: the cycle-level model moves "
           << kWaveletBytes << "-byte wavelets, and target '"
           << device.getTarget() << "' has links of "
           << target.getLinkBytesPerCycle() << " B per cycle";
  return success();
}

FailureOr<CycleLevelRun> runCycleLevel(DeviceOp device) {
  FailureOr<const target::WaferTargetModel *> loaded = device.getTargetModel();
  if (failed(loaded) || failed(checkCycleLevelTarget(device, **loaded)))
    return failure();
  const target::WaferTargetModel &target = **loaded;
  int64_t width = target.getMeshWidth(), height = target.getMeshHeight();
  if (device.getMicroBatch() == 0)
    return device.emitOpError() << "is not planned; run wafer-plan-batch "
                                   "before the cycle-level model";
  FailureOr<PlacedStep> placed = PlacedStep::read(device);
  if (failed(placed))
    return failure();
  const StepProgram *program = &placed->program;
  const Placement *placement = &placed->placement;
  MeshConfig config = meshConfig(target);
  int64_t micro = device.getMicroBatch();

  // Each region as placed: one run of it (of one chunk, for a kernel run
  // in chunks over the vocabulary).
  std::vector<Planned> planned;
  double total = 0;
  for (auto [s, stage] : llvm::enumerate(program->getStages())) {
    for (auto [r, region] : llvm::enumerate(stage.regions)) {
      const RegionPlacement &placed = placement->regions[s][r];
      KernelShape kernel = vocabularyChunk(region.shape);
      kernel.repeats = 1;
      double analytic =
          region.cost({kernel, placed.layout, placed.rect, micro, target})
              .cycles();
      int64_t batch = micro;
      if (kernel.kind == KernelKind::attention) {
        // One block of one head with its share of the (sequence, head)
        // pairs, one after another: the blocks run side by side, each
        // alike.
        int64_t heads = std::max<int64_t>(1, kernel.rows / kernel.columns);
        int64_t blocks = std::max<int64_t>(
            1, placed.rect.cores() /
                   (std::min(placed.layout.tokenGroups, kernel.columns) *
                    std::min(placed.layout.featureGroups, kernel.columns)));
        kernel.flops /= heads;
        kernel.rows = kernel.columns;
        batch = ceilDiv(micro * heads, blocks);
      }
      int gridWidth = static_cast<int>(
          std::clamp<int64_t>(placed.layout.featureGroups, 1, placed.rect.w));
      int gridHeight = static_cast<int>(
          std::clamp<int64_t>(placed.layout.tokenGroups, 1, placed.rect.h));
      total += analytic * gridWidth * gridHeight;
      planned.push_back({s, r, kernel, placed.layout, placed.rect, batch,
                         gridWidth, gridHeight, analytic});
    }
  }
  if (total > kMaxCoreCycles)
    return device.emitOpError()
           << "would take about " << llvm::formatv("{0:e2}", total)
           << " core-cycles to simulate cycle by cycle; the limit is "
           << llvm::formatv("{0:e2}", kMaxCoreCycles)
           << ": use a smaller micro-batch, model or mesh";

  CycleLevelRun run;
  run.clockHz = target.getClockHz();
  auto regionOf = [&](const Planned &p) {
    return program->getStages()[p.stage].regions[p.region].op;
  };
  auto programOf = [&](const Planned &p) {
    return buildKernelProgram(p.kernel, p.layout, p.batch, target, p.rect)
        .mesh;
  };
  for (size_t first = 0; first < planned.size();) {
    // The regions of one wave of one stage.
    size_t last = first + 1;
    auto waveOf = [&](const Planned &p) {
      return placement->regions[p.stage][p.region].wave;
    };
    while (last < planned.size() && planned[last].stage == planned[first].stage &&
           waveOf(planned[last]) == waveOf(planned[first]))
      ++last;
    for (size_t i = first; i < last; ++i) {
      const Planned &p = planned[i];
      std::string error;
      std::optional<MeshResult> result =
          simulate(programOf(p), config, error);
      if (!result)
        return regionOf(p).emitOpError()
               << "fails in the cycle-level model: " << error;
      run.coreCycles += result->coreCycles;
      run.kernels.push_back(
          {program->getStages()[p.stage].name,
           regionOf(p).getSymName().str(),
           static_cast<int64_t>(p.width) * p.height, p.analytic,
           result->cycles, std::move(result->rowActivity)});
    }
    if (last - first > 1) {
      // Side by side, as on the wafer: every region of the wave on its own
      // rectangle of one mesh, at once.
      MeshProgram mesh(static_cast<int>(width), static_cast<int>(height));
      CycleLevelWave wave;
      wave.stage = program->getStages()[planned[first].stage].name;
      for (size_t i = first; i < last; ++i) {
        const Planned &p = planned[i];
        embedProgram(mesh, programOf(p), static_cast<int>(p.rect.x),
                     static_cast<int>(p.rect.y));
        wave.regions.push_back(regionOf(p).getSymName().str());
        wave.slowestAlone =
            std::max(wave.slowestAlone, run.kernels[i].simulatedCycles);
      }
      std::string error;
      std::optional<MeshResult> result = simulate(mesh, config, error);
      if (!result)
        return regionOf(planned[first]).emitOpError()
               << "fails in the cycle-level model beside the other regions "
                  "of its wave: "
               << error;
      run.coreCycles += result->coreCycles;
      wave.simulatedCycles = result->cycles;
      run.waves.push_back(std::move(wave));
    }
    first = last;
  }
  return run;
}

} // namespace cgpt::sim::mesh
