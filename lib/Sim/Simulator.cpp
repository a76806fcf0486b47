//===- Simulator.cpp - simulation of a training step ----------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Simulator.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace cgpt::wafer;

namespace cgpt::sim {
namespace {

/// Collects the schedule's intervals and stages into a result.
class Recorder : public ScheduleObserver {
public:
  explicit Recorder(SimulationResult &result) : result(result) {}
  void interval(llvm::StringRef track, llvm::StringRef name, double start,
                double duration, const IntervalFacts &facts) override {
    result.trace.push_back({track.str(), name.str(), start, duration, facts});
  }
  void stage(const StageRun &run) override { result.stages.push_back(run); }

private:
  SimulationResult &result;
};

} // namespace

FailureOr<SimulationResult> simulateStep(DeviceOp device) {
  if (device.getMicroBatch() == 0 || !device.getCheckpoint())
    return device.emitOpError()
           << "is not planned; the runtime needs the placed, planned wafer "
              "IR of cgpt-lower-to-wafer";
  FailureOr<PlacedStep> placed = PlacedStep::read(device);
  if (failed(placed))
    return failure();
  SimulationResult result;
  result.placer = placed->placement.placer;
  result.execution = placed->placement.mode;
  Recorder recorder(result);
  CheckpointPolicy policy = CheckpointPolicy::fromAttr(*device.getCheckpoint());
  static_cast<StepEstimate &>(result) = estimateStep(
      placed->program,
      TimedPlacement::of(placed->program, std::move(placed->placement),
                         device.getMicroBatch()),
      policy, &recorder);
  result.numCsx = device.getNumCsx();
  result.checkpoint = policy.str();
  // No step does more useful work than its systems' peak allows: a device
  // whose FLOPs its stages do not run (cut to one stage, or an edited
  // flops_per_sequence) would report more than 100% of peak.
  double peak = placed->program.getTarget().getPeakFlopsPerSecond() *
                static_cast<double>(device.getNumCsx());
  double useful = device.getAlgorithmicFlopsPerStep();
  if (useful > peak * result.stepSeconds)
    return device.emitOpError()
           << "claims " << llvm::formatv("{0:e3}", useful)
           << " FLOPs a step (flops_per_sequence "
           << device.getFlopsPerSequence() << "), more than its "
           << device.getNumCsx() << " system(s) at their peak of "
           << llvm::formatv("{0:e3}", peak) << " FLOP/s execute in the "
           << llvm::formatv("{0:e3}", result.stepSeconds)
           << " s its stages take";
  return result;
}

} // namespace cgpt::sim
