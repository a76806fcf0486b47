//===- CycleLevel.cpp - every kernel of a device on the mesh model --------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/CycleLevel.h"

#include "cgpt/Sim/Mesh/KernelPrograms.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace cgpt::wafer;

namespace cgpt::sim::mesh {

FailureOr<CycleLevelRun> runCycleLevel(DeviceOp device) {
  FailureOr<const target::WaferTargetModel *> loaded = device.getTargetModel();
  if (failed(loaded))
    return failure();
  const target::WaferTargetModel &target = **loaded;
  int64_t width = target.getMeshWidth(), height = target.getMeshHeight();
  if (width > kMaxCycleLevelSide || height > kMaxCycleLevelSide)
    return device.emitOpError()
           << "cannot run cycle by cycle: the cycle-level model takes meshes "
              "of at most "
           << kMaxCycleLevelSide << " x " << kMaxCycleLevelSide
           << " cores, and target '" << device.getTarget() << "' has "
           << width << " x " << height
           << " cores; use --target mini or a target file of your own";
  if (device.getMicroBatch() == 0)
    return device.emitOpError() << "is not planned; run wafer-plan-batch "
                                   "before the cycle-level model";
  MeshConfig config = meshConfig(target);
  int64_t micro = device.getMicroBatch();

  // Each kernel as the mesh model runs it: the rectangle, the batch and
  // the analytic cycles for that split.
  struct Planned {
    StageOp stage;
    RegionOp region;
    KernelShape kernel;
    int64_t batch;
    int width, height;
    double analytic;
  };
  std::vector<Planned> planned;
  double total = 0;
  for (auto stage : device.getBody().front().getOps<StageOp>()) {
    for (auto region : stage.getBody().front().getOps<RegionOp>()) {
      KernelShape kernel = KernelShape::of(region);
      kernel.repeats = kernel.chunks = 1;
      int64_t batch = micro;
      int rectWidth = static_cast<int>(width);
      int rectHeight = static_cast<int>(height);
      if (kernel.kind == KernelKind::attention) {
        // One (sequence, head) block, as the analytic split cuts it: the
        // blocks run side by side, each alike.
        int64_t heads = std::max<int64_t>(1, kernel.rows / kernel.columns);
        int64_t pairs = micro * heads;
        int64_t cores = width * height;
        Layout block = kernelTime(kernel, {1, 1}, micro, target, width, height)
                           .layout;
        kernel.flops /= heads;
        kernel.rows = kernel.columns;
        if (pairs > cores)
          kernel.flops *= (pairs + cores - 1) / cores;
        batch = 1;
        rectHeight = static_cast<int>(block.tokenGroups);
        rectWidth = static_cast<int>(block.featureGroups);
      }
      Layout layout = rectangleLayout(rectWidth, rectHeight);
      double analytic = kernelTime(kernel, layout, batch, target, rectWidth,
                                   rectHeight, layout)
                            .cycles();
      total += analytic * rectWidth * rectHeight;
      planned.push_back(
          {stage, region, kernel, batch, rectWidth, rectHeight, analytic});
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
  for (Planned &p : planned) {
    MeshProgram program =
        buildKernelProgram(p.kernel, p.batch, target, p.width, p.height);
    std::string error;
    std::optional<MeshResult> result = simulate(program, config, error);
    if (!result)
      return p.region.emitOpError() << "fails in the cycle-level model: "
                                    << error;
    run.coreCycles += result->coreCycles;
    run.kernels.push_back({p.stage.getSymName().str(),
                           p.region.getSymName().str(),
                           static_cast<int64_t>(p.width) * p.height,
                           p.analytic, result->cycles,
                           std::move(result->rowActivity)});
  }
  return run;
}

} // namespace cgpt::sim::mesh
