//===- Simulator.cpp - simulation of a training step ----------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Simulator.h"

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
  FailureOr<StepProgram> program = StepProgram::build(device);
  if (failed(program))
    return failure();
  FailureOr<Placement> placement = Placement::fromIR(*program);
  if (failed(placement))
    return failure();
  SimulationResult result;
  result.placer = placement->placer;
  result.execution = placement->mode;
  Recorder recorder(result);
  CheckpointPolicy policy = CheckpointPolicy::fromAttr(*device.getCheckpoint());
  StepEstimate step = estimateStep(
      *program,
      TimedPlacement::of(*program, std::move(*placement),
                         device.getMicroBatch()),
      policy, &recorder);
  result.numCsx = device.getNumCsx();
  result.passes = step.passes;
  result.checkpoint = policy.str();
  result.firstPassSeconds = step.firstPassSeconds;
  result.passesSeconds = step.passesSeconds;
  result.drainSeconds = step.drainSeconds;
  result.systemSeconds = step.systemSeconds;
  result.reduceSeconds = step.reduceSeconds;
  result.optimizerSeconds = step.optimizerSeconds;
  result.stepSeconds = step.stepSeconds;
  return result;
}

} // namespace cgpt::sim
