//===- CycleLevel.cpp - every kernel of a device on the mesh model --------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/CycleLevel.h"

#include "cgpt/Dialect/Wafer/Analysis/StepProgram.h"
#include "cgpt/Sim/Mesh/KernelPrograms.h"
#include "cgpt/Support/Debug.h"
#include "cgpt/Support/Format.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#define DEBUG_TYPE "mesh-engine"

using namespace mlir;
using namespace cgpt::wafer;

namespace cgpt::sim::mesh {

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

  /// Core-cycles its run takes, by the analytic time.
  double coreCycles() const { return analytic * width * height; }
};

} // namespace

std::optional<CycleLevelLimit> parseCycleLevelLimit(llvm::StringRef text) {
  text = text.trim();
  double scale = 0;
  for (auto [unit, seconds] :
       {std::pair{"min", 60.0}, {"s", 1.0}, {"h", 3600.0}})
    if (text.consume_back(unit)) {
      scale = seconds;
      break;
    }
  double value = 0;
  if (text.trim().getAsDouble(value) || !std::isfinite(value) || value <= 0)
    return std::nullopt;
  CycleLevelLimit limit;
  if (scale == 0) {
    if (value > 1e18)
      return std::nullopt;
    limit.coreCycles = value;
    return limit;
  }
  limit.seconds = value * scale;
  if (limit.seconds > 365.0 * 86400)
    return std::nullopt;
  return limit;
}

std::string describeCycleLevelLimit(const CycleLevelLimit &limit) {
  if (limit.coreCycles > 0)
    return llvm::formatv("{0:e2} core-cycles", limit.coreCycles).str();
  for (auto [unit, seconds] : {std::pair{"h", 3600.0}, {"min", 60.0}})
    if (limit.seconds >= seconds && std::fmod(limit.seconds, seconds) == 0)
      return llvm::formatv("{0} {1}",
                           llvm::format("%g", limit.seconds / seconds), unit)
          .str();
  return llvm::formatv("{0} s", llvm::format("%g", limit.seconds)).str();
}

LogicalResult checkCycleLevelTarget(DeviceOp device,
                                    const target::WaferTargetModel &target) {
  if (target.getLinkBytesPerCycle() != kWaveletBytes)
    return device.emitOpError()
           << "cannot run cycle by cycle: the cycle-level model moves "
           << kWaveletBytes << "-byte wavelets, and target '"
           << device.getTarget() << "' has links of "
           << target.getLinkBytesPerCycle() << " B per cycle";
  if (target.getHopLatencyCycles() != 1)
    return device.emitOpError()
           << "cannot run cycle by cycle: the cycle-level model moves a "
              "wavelet one hop a cycle, and target '"
           << device.getTarget() << "' has hops of "
           << target.getHopLatencyCycles() << " cycles";
  return success();
}

FailureOr<CycleLevelRun> runCycleLevel(DeviceOp device,
                                       const CycleLevelOptions &options) {
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
  // in chunks over the vocabulary; of one expert's pass, the rows of the
  // most loaded, for a routed kernel).
  std::vector<Planned> planned;
  for (auto [s, stage] : llvm::enumerate(program->getStages())) {
    for (auto [r, region] : llvm::enumerate(stage.regions)) {
      const RegionPlacement &placed = placement->regions[s][r];
      KernelShape kernel = vocabularyChunk(region.shape);
      kernel.repeats = 1;
      int64_t batch = micro;
      if (kernel.experts > 1) {
        kernel = expertPass(kernel, micro);
        batch = 1;
      }
      double analytic =
          region.cost({kernel, placed.layout, placed.rect, batch, target})
              .cycles();
      Layout layout = placed.layout;
      if (kernel.kind == KernelKind::attention) {
        // One block of one head with its share of the (sequence, head)
        // pairs, one after another: the blocks run side by side, each
        // alike.
        AttentionPass pass =
            attentionPass(kernel, placed.layout, placed.rect, micro);
        kernel = pass.pair;
        layout = pass.block;
        batch = pass.pairsPerBlock;
      }
      SegmentGrid grid = segmentGrid(layout, placed.rect);
      int columns = segmentColumnsBuilt(kernel, layout, placed.rect,
                                        /*allTokenGroups=*/false);
      planned.push_back({s, r, kernel, layout, placed.rect, batch,
                         grid.segment * columns, grid.rows, analytic});
    }
  }
  auto regionOf = [&](const Planned &p) {
    return program->getStages()[p.stage].regions[p.region].op;
  };
  auto programOf = [&](const Planned &p) {
    return buildKernelProgram(p.kernel, p.layout, p.batch, target, p.rect).mesh;
  };
  auto waveOf = [&](const Planned &p) {
    return placement->regions[p.stage][p.region].wave;
  };
  // One past the last region of the wave of one stage that `first` begins.
  auto waveEnd = [&](size_t first) {
    size_t last = first + 1;
    while (last < planned.size() &&
           planned[last].stage == planned[first].stage &&
           waveOf(planned[last]) == waveOf(planned[first]))
      ++last;
    return last;
  };

  // What the run will take, before it starts: its core-cycles (a wave's
  // regions run again side by side), and the time at the speed this host
  // simulates the costliest program, measured on its first cycles.
  const MeshWorkers &workers = options.workers;
  int workerCount =
      meshWorkers(static_cast<int>(width), static_cast<int>(height), workers);
  double total = 0;
  const Planned *costliest = nullptr;
  bool sideBySide = false;
  for (size_t first = 0; first < planned.size();) {
    size_t last = waveEnd(first);
    sideBySide |= last - first > 1;
    for (size_t i = first; i < last; ++i) {
      double coreCycles = planned[i].coreCycles();
      total += last - first > 1 ? 2 * coreCycles : coreCycles;
      if (!costliest || coreCycles > costliest->coreCycles())
        costliest = &planned[i];
    }
    first = last;
  }
  // How a refusal for time ends.
  const char *const shorterRun = ": raise it with --cycle-level-limit, or "
                                 "use a smaller micro-batch, model or mesh";
  if (options.limit.coreCycles > 0 && total > options.limit.coreCycles)
    return device.emitOpError()
           << "would take about " << llvm::formatv("{0:e2}", total)
           << " core-cycles to simulate cycle by cycle; the limit is "
           << describeCycleLevelLimit(options.limit) << shorterRun;
  // The largest region's program, and as much again a core for a wave
  // on the whole mesh.
  int64_t largestBytes = 0;
  auto largest = std::max_element(
      planned.begin(), planned.end(), [](const Planned &a, const Planned &b) {
        return int64_t(a.width) * a.height < int64_t(b.width) * b.height;
      });
  if (largest != planned.end()) {
    largestBytes = estimateHostBytes(programOf(*largest), config, workers);
    if (sideBySide)
      largestBytes = static_cast<int64_t>(
          static_cast<double>(largestBytes) * width * height /
          (int64_t(largest->width) * largest->height));
  }
  if (options.maxHostBytes > 0 && largestBytes > options.maxHostBytes)
    return device.emitOpError()
           << "would need about " << largestBytes / (1 << 20)
           << " MiB of host memory to simulate cycle by cycle, over the "
              "limit of "
           << options.maxHostBytes / (1 << 20)
           << " MiB (--memory-limit; by default three quarters of this "
              "host's memory): run it over MPI processes on several hosts "
              "(docs/runtime.md)";
  double speed = 0;
  if (costliest) {
    MeshWorkers measuring = workers;
    measuring.progress = nullptr;
    measuring.stopAfterSeconds = kSpeedMeasurementSeconds;
    std::string error;
    std::optional<MeshResult> result =
        simulate(programOf(*costliest), config, error, {}, measuring);
    if (!result)
      return regionOf(*costliest).emitOpError()
             << "fails in the cycle-level model: " << error;
    speed = static_cast<double>(result->coreCycles) /
            std::max(result->seconds, 1e-6);
  }
  double seconds = speed > 0 ? total / speed : 0;
  if (options.limit.coreCycles == 0 && seconds > options.limit.seconds)
    return device.emitOpError()
           << "would take about " << llvm::formatv("{0:e2}", total)
           << " core-cycles to simulate cycle by cycle, "
           << formatRoughDuration(seconds) << " on " << workerCount
           << " worker(s) at the " << llvm::formatv("{0:e1}", speed)
           << " core-cycles a second measured on this host; the limit is "
           << describeCycleLevelLimit(options.limit) << shorterRun;
  if (options.log)
    *options.log << llvm::formatv(
        "cycle-level: {0} kernels, about {1:e2} core-cycles: {2} on {3} "
        "worker(s) at {4:e1} core-cycles a second; about {5} MiB of memory "
        "a process\n",
        planned.size(), total, formatRoughDuration(seconds), workerCount, speed,
        std::max<int64_t>(1, largestBytes / (1 << 20)));

  CycleLevelRun run;
  run.clockHz = target.getClockHz();
  // Each simulation on the workers asked for, with a line of progress.
  double doneCoreCycles = 0;
  std::string current;
  bool progressShown = false;
  // The progress line gives way to whatever is printed after a mesh run.
  auto clearProgress = [&] {
    if (progressShown)
      *options.log << "\r" << std::string(78, ' ') << "\r";
    progressShown = false;
  };
  // A limit in seconds holds however far the estimate was off.
  const auto started = std::chrono::steady_clock::now();
  auto simulateHere = [&](const MeshProgram &mesh,
                          std::string &error) -> std::optional<MeshResult> {
    MeshWorkers here = workers;
    if (options.limit.coreCycles == 0)
      here.stopAfterSeconds =
          std::max(1e-9, options.limit.seconds -
                             std::chrono::duration<double>(
                                 std::chrono::steady_clock::now() - started)
                                 .count());
    if (options.progress && options.log)
      here.progress = [&](const MeshProgress &at) {
        progressShown = true;
        double done = doneCoreCycles + static_cast<double>(at.coreCycles);
        *options.log << llvm::formatv(
            "\rcycle-level: {0}: {1} cycles; {2:f0}% of the run, {3} left  ",
            current, formatGrouped(at.cycle),
            std::min(99.0, 100 * done / std::max(1.0, total)),
            formatRoughDuration(std::max(0.0, total - done) /
                                std::max(speed, 1.0)));
        options.log->flush();
      };
    std::optional<MeshResult> result = simulate(mesh, config, error, {}, here);
    clearProgress();
    if (result)
      doneCoreCycles += static_cast<double>(result->coreCycles);
    return result;
  };
  auto stopped = [&] {
    run.stoppedIn = current;
    run.stoppedAtLimit =
        !workers.stop || !workers.stop->load(std::memory_order_relaxed);
    return std::move(run);
  };
  for (size_t first = 0; first < planned.size();) {
    size_t last = waveEnd(first);
    for (size_t i = first; i < last; ++i) {
      const Planned &p = planned[i];
      std::string error;
      current = "@" + regionOf(p).getSymName().str();
      std::optional<MeshResult> result = simulateHere(programOf(p), error);
      if (!result)
        return regionOf(p).emitOpError()
               << "fails in the cycle-level model: " << error;
      if (result->stopped)
        return stopped();
      run.coreCycles += result->coreCycles;
      CGPT_DEBUG(CGPT_DBGS()
                 << current << " on " << p.width << " x " << p.height
                 << " cores: " << result->cycles << " cycles simulated, "
                 << llvm::formatv("{0:f0}", p.analytic) << " analytic\n");
      run.kernels.push_back(
          {program->getStages()[p.stage].name, regionOf(p).getSymName().str(),
           static_cast<int64_t>(p.width) * p.height, p.analytic, result->cycles,
           std::move(result->rowActivity)});
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
      current = wave.stage + " side by side";
      std::optional<MeshResult> result = simulateHere(mesh, error);
      if (!result)
        return regionOf(planned[first]).emitOpError()
               << "fails in the cycle-level model beside the other regions "
                  "of its wave: "
               << error;
      if (result->stopped)
        return stopped();
      run.coreCycles += result->coreCycles;
      CGPT_DEBUG(CGPT_DBGS()
                 << current << ": " << result->cycles
                 << " cycles, the slowest alone " << wave.slowestAlone << "\n");
      wave.simulatedCycles = result->cycles;
      run.waves.push_back(std::move(wave));
    }
    first = last;
  }
  return run;
}

} // namespace cgpt::sim::mesh
