//===- Describe.cpp - the report, read from the IR ------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Report/Report.h"

#include "cgpt/Support/Format.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>

using namespace cgpt::transformer;
using namespace cgpt::training;

namespace cgpt::report {
/// The micro-batch request as a user writes it in a params file.
static std::string describeMicroBatch(MicroBatchAttr microBatch) {
  switch (microBatch.getMode()) {
  case MicroBatchMode::fixed:
    return std::to_string(microBatch.getSize());
  case MicroBatchMode::explore:
    if (microBatch.getMin() || microBatch.getMax())
      return llvm::formatv("explore {0}..{1}", microBatch.getMin(),
                           microBatch.getMax());
    return "explore";
  default:
    return stringifyMicroBatchMode(microBatch.getMode()).str();
  }
}

static std::string typeName(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

mlir::LogicalResult describeStep(TrainStepOp step, StepReport &report) {
  mlir::FailureOr<ModelFacts> facts = computeModelFacts(step);
  if (mlir::failed(facts))
    return mlir::failure();
  report.model = *facts;
  report.fromStep = true;
  report.perSystemBatch = step.getPerSystemBatch();
  report.microBatchRequest = describeMicroBatch(step.getMicroBatch());
  report.mup = static_cast<bool>(step.getMupAttr());
  auto exact = [](const llvm::APFloat &value) {
    return formatExactDouble(value.convertToDouble());
  };
  AdamWAttr adamw = step.getOptimizer();
  report.optimizer =
      "AdamW betas (" + exact(adamw.getBeta1()) + ", " +
      exact(adamw.getBeta2()) + "), eps " + exact(adamw.getEpsilon()) +
      ", weight decay " + exact(adamw.getWeightDecay()) + ", clip " +
      formatExactDouble(step.getMaxGradientNorm().convertToDouble());
  PrecisionAttr precision = step.getPrecision();
  report.precision = typeName(precision.getStorage()) + " storage, " +
                     typeName(precision.getAccumulate()) + " accumulation";
  // The verifier admits steps = 0 (until the end) only in the last phase.
  report.scheduleSteps = 0;
  for (auto phase : step.getSchedule().getAsRange<LRPhaseAttr>()) {
    if (phase.getSteps() == 0) {
      report.scheduleSteps = 0;
      break;
    }
    report.scheduleSteps += static_cast<int64_t>(phase.getSteps());
  }
  return mlir::success();
}

void describeProgram(dataflow::ProgramOp program, StepReport &report) {
  StepReport::Dataflow flow;
  flow.target = program.getTarget().value_or("").str();
  flow.recompute = dataflow::stringifyRecompute(program.getRecompute()).str();
  flow.costs = dataflow::computeStepCosts(program);
  report.dataflow = flow;
}

void describeDevice(wafer::DeviceOp device,
                    const target::WaferTargetModel &target,
                    StepReport &report) {
  StepReport::Wafer w;
  w.targetName = target.getName().str();
  w.targetSource = device.getTarget().str();
  w.meshCores = target.getNumCores();
  w.serverCapacity = target.getWeightServerCapacityBytes();
  w.clockHz = target.getClockHz();
  w.peakFlops = target.getPeakFlopsPerSecond();
  w.algorithmicFlopsPerStep = device.getAlgorithmicFlopsPerStep();
  w.microBatch = device.getMicroBatch();
  w.gradAccumSteps = device.getGradAccumSteps();
  // The planned passes are the step's: what streams per step follows them.
  if (report.dataflow)
    report.dataflow->costs.passesPerSystem = w.gradAccumSteps;
  w.plan = device.getPlan().value_or("").str();
  if (std::optional<mlir::ArrayAttr> explored = device.getExplored())
    for (auto candidate : explored->getAsRange<wafer::CandidateAttr>())
      w.explored.push_back(
          {candidate.getMicroBatch(), candidate.getPlacer().str(),
           wafer::CheckpointPolicy::fromAttr(candidate.getCheckpoint()).str(),
           candidate.getFits(), candidate.getSramPeak(),
           candidate.getSamplesPerSecond().convertToDouble()});
  if (wafer::CheckpointAttr checkpoint = device.getCheckpointAttr())
    w.checkpoint = wafer::CheckpointPolicy::fromAttr(checkpoint).str();
  w.placer = device.getPlacer().value_or("").str();
  w.execution =
      wafer::stringifyExecutionMode(device.getExecution().value_or(
                                        wafer::ExecutionMode::weight_streaming))
          .str();
  w.sramLimit = target.getCoreSramBytes();
  // The most cores at work at once: a stage's widest wave under weight
  // streaming, every slot's band at once when layer pipelined.
  std::map<int64_t, int64_t> coresBySlot;
  for (auto stage : device.getBody().front().getOps<wafer::StageOp>()) {
    StepReport::Stage s{stage.getSymName().str(), stage.getSlot(), {}};
    // Cores at work at once: the regions of one wave side by side.
    std::map<int64_t, int64_t> coresByWave;
    for (auto [index, region] :
         llvm::enumerate(stage.getBody().front().getOps<wafer::RegionOp>())) {
      wafer::LayoutAttr layout = region.getLayoutAttr();
      wafer::RectAttr rect = region.getPlacementAttr();
      int64_t sram = region.getSramBytes().value_or(0);
      int64_t wave = region.getWave().value_or(static_cast<int64_t>(index));
      s.regions.push_back({region.getSymName().str(),
                           wafer::stringifyKernelKind(region.getKind()).str(),
                           region.getKernel().str(),
                           rect ? rect.getRect() : wafer::Rect{}, wave,
                           layout ? layout.getTokenGroups() : 0,
                           layout ? layout.getFeatureGroups() : 0, sram});
      if (rect)
        coresByWave[wave] += rect.getCores();
      if (sram > w.sramPeak) {
        w.sramPeak = sram;
        w.sramPeakWhere = "@" + region.getSymName().str() + " (" +
                          region.getKernel().str() + ") of stage @" +
                          stage.getSymName().str();
      }
    }
    int64_t stageCores = 0;
    for (auto [wave, cores] : coresByWave)
      stageCores = std::max(stageCores, cores);
    if (std::optional<int64_t> slot = stage.getSlot())
      coresBySlot[*slot] = std::max(coresBySlot[*slot], stageCores);
    else
      w.coresUsed = std::max(w.coresUsed, stageCores);
    w.stages.push_back(std::move(s));
  }
  for (auto [slot, cores] : coresBySlot)
    w.coresUsed += cores;
  // What crosses the system's I/O per step, from the placed streams:
  // every pass under weight streaming, once when the weights stay.
  int64_t perPass = 0;
  device.walk([&](wafer::IngressOp in) { perPass += in.getBytes(); });
  device.walk([&](wafer::EgressOp out) { perPass += out.getBytes(); });
  w.streamedBytesPerStep =
      static_cast<double>(perPass) *
      static_cast<double>(w.execution == "layer_pipelined" ? 1
                                                           : w.gradAccumSteps);
  report.wafer = std::move(w);
  if (report.fromStep)
    return;
  ModelFacts &m = report.model;
  m.name = device.getSymName().str();
  m.parameters = device.getParameters();
  m.sequenceLength = device.getSeqLen();
  m.globalBatch = device.getGlobalBatch();
  m.numCsx = device.getNumCsx();
  for (auto stage : device.getBody().front().getOps<wafer::StageOp>())
    m.layers = std::max(m.layers, stage.getLayer().value_or(-1) + 1);
  report.perSystemBatch = device.getPerSystemBatch();
  report.microBatchRequest = describeMicroBatch(device.getMicroBatchRequest());
}

StepRates computeStepRates(const StepReport &report) {
  const sim::SimulationResult &r = *report.simulation;
  const ModelFacts &m = report.model;
  StepRates rates;
  rates.seconds = r.stepSeconds;
  rates.stepsPerSecond = 1 / r.stepSeconds;
  rates.samplesPerSecond = m.globalBatch / r.stepSeconds;
  rates.tokensPerSecond =
      static_cast<double>(m.globalBatch) * m.sequenceLength / r.stepSeconds;
  rates.achievedFlopsPerSecond =
      report.wafer->algorithmicFlopsPerStep / r.stepSeconds;
  rates.peakFlopsPerSecond =
      report.wafer->peakFlops * static_cast<double>(r.numCsx);
  rates.utilization = rates.achievedFlopsPerSecond / rates.peakFlopsPerSecond;
  return rates;
}

TrainingEstimate estimateTraining(const StepReport &report) {
  const StepReport::Training &t = *report.training;
  StepRates rates = computeStepRates(report);
  TrainingEstimate e;
  double steps = static_cast<double>(t.steps);
  e.tokens = steps * static_cast<double>(report.model.globalBatch) *
             static_cast<double>(report.model.sequenceLength);
  e.seconds = steps * rates.seconds;
  double systems = static_cast<double>(report.simulation->numCsx);
  e.systemHours = e.seconds * systems / 3600.0;
  e.energyJoules = t.powerWatts * systems * e.seconds;
  if (t.pricePerSystemHour)
    e.cost = e.systemHours * *t.pricePerSystemHour;
  return e;
}

} // namespace cgpt::report
