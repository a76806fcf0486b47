//===- Report.cpp - summary and JSON report -------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Report/Report.h"

#include "cgpt/Dialect/Wafer/Analysis/MemoryModel.h"

#include "cgpt/Support/Format.h"
#include "cgpt/Support/MicroBatches.h"
#include "cgpt/Support/Version.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <set>

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
  w.execution = wafer::stringifyExecutionMode(
                    device.getExecution().value_or(
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
    for (auto [index, region] : llvm::enumerate(
             stage.getBody().front().getOps<wafer::RegionOp>())) {
      wafer::LayoutAttr layout = region.getLayoutAttr();
      wafer::RectAttr rect = region.getPlacementAttr();
      int64_t sram = region.getSramBytes().value_or(0);
      int64_t wave = region.getWave().value_or(static_cast<int64_t>(index));
      s.regions.push_back(
          {region.getSymName().str(),
           wafer::stringifyKernelKind(region.getKind()).str(),
           region.getKernel().str(),
           rect ? wafer::Rect{rect.getX(), rect.getY(), rect.getW(),
                              rect.getH()}
                : wafer::Rect{},
           wave, layout ? layout.getTokenGroups() : 0,
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

/// A FLOP or byte count for people: 4 significant digits.
static std::string approx(double value) {
  return llvm::formatv("{0:e3}", value).str();
}

static void printDataflowSummary(llvm::raw_ostream &os,
                                 const StepReport::Dataflow &flow) {
  const dataflow::StepCosts &c = flow.costs;
  os << "  compute     " << approx(c.algorithmicFlopsPerStep())
     << " algorithmic FLOP per step (" << approx(c.flopsPerSequence)
     << " per sequence), " << approx(c.recomputeFlopsPerStep())
     << " more recomputed (recompute " << flow.recompute
     << (flow.recomputeChoice.empty() ? "" : "; ") << flow.recomputeChoice
     << ")\n";
  os << "  streaming   " << approx(c.weightBytesIn) << " B of weights in, "
     << approx(c.gradientBytesOut)
     << " B of gradients out per micro-batch pass\n";
  os << "  activations " << approx(c.keptBytesPerSequencePerLayer)
     << " B kept per sequence per layer\n";
}

static void printWaferSummary(llvm::raw_ostream &os, const StepReport &report) {
  const StepReport::Wafer &w = *report.wafer;
  // wafer-plan-batch refused a model the weight servers cannot hold.
  double serverBytes = static_cast<double>(report.model.parameters) *
                       static_cast<double>(wafer::kServerBytesPerParameter);
  os << "  servers     " << approx(serverBytes)
     << " B of f32 weights and Adam moments: "
     << formatExactDouble(std::ceil(serverBytes / w.serverCapacity * 100) / 100)
     << " of the target's " << approx(w.serverCapacity)
     << " B of weight servers\n";
  os << llvm::formatv("  micro-batch {0} x {1} accumulation step(s) per "
                      "system",
                      w.microBatch, w.gradAccumSteps);
  // An uneven split runs its last passes one sequence short.
  PassSplit split;
  if (w.microBatch > 0 && report.perSystemBatch > 0)
    split = PassSplit::atMost(report.perSystemBatch, w.microBatch);
  if (!split.isEven())
    os << llvm::formatv(" ({0} of {1}, {2} of {3})", split.fullPasses,
                        split.microBatch, split.shortPasses(),
                        split.microBatch - 1);
  os << ", checkpoints " << w.checkpoint << "\n";
  os << "              " << w.plan << "\n";
  os << "  placement   " << w.stages.size() << " stages on "
     << formatGrouped(w.coresUsed) << " of " << formatGrouped(w.meshCores)
     << " cores (" << w.targetName << "), " << w.placer << " placer, "
     << (w.execution == "layer_pipelined" ? "layer pipelined"
                                          : "weight streaming")
     << "; SRAM peak "
     << formatGrouped(w.sramPeak) << " of " << formatGrouped(w.sramLimit)
     << " B per core in " << w.sramPeakWhere << "\n";
  if (!report.simulation)
    return;
  const sim::SimulationResult &r = *report.simulation;
  StepRates rates = computeStepRates(report);
  os << llvm::formatv("  step        {0} s: {1} steps/s, {2} samples/s, {3} "
                      "tokens/s\n",
                      approx(rates.seconds), approx(rates.stepsPerSecond),
                      approx(rates.samplesPerSecond),
                      approx(rates.tokensPerSecond));
  os << llvm::formatv(
      "              {0} FLOP/s achieved, {1}% of the {2} "
      "FLOP/s peak of {3} system(s)\n",
      approx(rates.achievedFlopsPerSecond),
      formatExactDouble(std::round(1000 * rates.utilization) / 10),
      approx(rates.peakFlopsPerSecond), r.numCsx);
  // The four parts add up to the step time.
  os << llvm::formatv("              {0} passes in {1} s (the first {2} s), "
                      "then {3} s gradient drain, {4} s reduce and {5} s "
                      "optimizer\n",
                      r.passes, approx(r.passesSeconds),
                      approx(r.firstPassSeconds), approx(r.drainSeconds),
                      approx(r.reduceSeconds), approx(r.optimizerSeconds));
  if (report.training) {
    TrainingEstimate e = estimateTraining(report);
    os << "  training    " << formatGrouped(report.training->steps)
       << " steps (" << report.training->stepsFrom << "), "
       << approx(e.tokens) << " tokens: " << formatRoughDuration(e.seconds)
       << " on " << r.numCsx << " system(s), "
       << llvm::formatv("{0:f1}", e.systemHours) << " system-hours";
    if (e.energyJoules > 0)
      os << ", " << formatGrouped(std::llround(e.energyJoules / 3.6e6))
         << " kWh at " << formatExactDouble(report.training->powerWatts / 1e3)
         << " kW a system";
    if (e.cost)
      os << ", cost " << formatGrouped(std::llround(*e.cost)) << " at "
         << formatExactDouble(*report.training->pricePerSystemHour)
         << " a system-hour";
    os << "\n";
  }
  // What bounds the stages, and the stages that take longest.
  std::map<std::string, int> bounds;
  for (const sim::StageTiming &stage : r.stages)
    ++bounds[stage.bound];
  os << "  bounds      ";
  llvm::interleaveComma(bounds, os, [&](const auto &entry) {
    os << entry.second << " " << entry.first;
  });
  os << " (stages)\n";
  std::vector<const sim::StageTiming *> slowest;
  for (const sim::StageTiming &stage : r.stages)
    slowest.push_back(&stage);
  std::stable_sort(slowest.begin(), slowest.end(), [](auto *a, auto *b) {
    return a->end - a->start > b->end - b->start;
  });
  slowest.resize(std::min<size_t>(3, slowest.size()));
  os << "  slowest     ";
  llvm::interleaveComma(slowest, os, [&](const sim::StageTiming *stage) {
    os << stage->name << " " << approx(stage->end - stage->start) << " s ("
       << stage->bound << ")";
  });
  os << "\n";
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

void printSummary(llvm::raw_ostream &os, const StepReport &report) {
  const ModelFacts &m = report.model;
  if (report.wafer && !report.wafer->explored.empty())
    printExploreTable(os, report.wafer->explored);
  os << "cgpt: " << m.name;
  if (!report.sourcePath.empty())
    os << " (" << report.sourcePath << ")";
  os << "\n";
  if (!report.origin.empty())
    os << "  read as     " << report.origin << "\n";
  if (!report.batchReading.empty())
    os << "              " << report.batchReading << "\n";
  if (report.fromStep) {
    os << llvm::formatv("  model       {0} layers, d_model {1}, {2} heads x "
                        "{3}, d_ffn {4}, vocab {5}\n",
                        m.layers, m.hiddenSize, m.numHeads, m.headSize,
                        m.ffnSize, m.vocabSize);
    os << "              " << m.positionEmbedding << " positions, "
       << (m.tiedEmbeddings ? "tied" : "untied") << " embeddings"
       << (report.mup ? ", muP" : "");
    // What LLaMA-style blocks change, said only where it differs from GPT.
    if (m.norm != "layer_norm")
      os << ", RMS norm";
    if (m.ffn == "swiglu" || m.ffn == "geglu" || m.ffn == "reglu")
      os << ", " << (m.ffn == "swiglu"  ? "SwiGLU"
                     : m.ffn == "geglu" ? "GeGLU"
                                        : "ReGLU");
    if (m.kvHeads != m.numHeads)
      os << ", " << m.kvHeads
         << (m.kvHeads == 1 ? " key/value head" : " key/value heads");
    os << "\n";
    if (m.experts)
      os << "              mixture of " << m.experts << " experts, "
         << m.expertsPerToken << " per token, in every feed-forward block\n";
    if (m.embeddingDropout || m.attentionDropout || m.blockDropout)
      os << "              dropout " << formatExactDouble(m.embeddingDropout)
         << " embeddings, " << formatExactDouble(m.attentionDropout)
         << " attention probabilities, " << formatExactDouble(m.blockDropout)
         << " block outputs (masks regenerated, not kept)\n";
  } else {
    os << "  model       " << m.layers
       << " layers (from placed wafer IR: the model's shape is not kept)\n";
  }
  os << "  parameters  " << formatGrouped(m.parameters);
  if (m.experts)
    os << " (" << formatGrouped(m.activeParameters)
       << " a token meets: " << m.expertsPerToken << " of " << m.experts
       << " experts)";
  os << "\n";
  os << llvm::formatv("  batch       {0} sequences x {1} tokens per step on "
                      "{2} system(s): {3} per system",
                      m.globalBatch, m.sequenceLength, m.numCsx,
                      report.perSystemBatch);
  // An uneven split: the busiest systems set the pace.
  if (int64_t fewer = report.perSystemBatch * m.numCsx - m.globalBatch)
    os << llvm::formatv(" on {0} and {1} on {2}", m.numCsx - fewer,
                        report.perSystemBatch - 1, fewer);
  os << ", micro-batch " << report.microBatchRequest << "\n";
  if (report.fromStep) {
    os << "  optimizer   " << report.optimizer << "\n";
    os << "  precision   " << report.precision << "\n";
  }
  if (report.dataflow)
    printDataflowSummary(os, *report.dataflow);
  if (report.wafer)
    printWaferSummary(os, report);
}

/// The sections of the report whose size does not grow with the model, as
/// values; writeReport streams the rest.
static llvm::json::Object constantSections(const StepReport &report) {
  const ModelFacts &m = report.model;
  llvm::json::Object model{
      {"name", m.name},
      {"parameters", m.parameters},
      {"layers", m.layers},
      {"sequence_length", m.sequenceLength},
  };
  // Wafer IR keeps no more of the model than the keys above.
  if (report.fromStep) {
    model["hidden_size"] = m.hiddenSize;
    model["num_heads"] = m.numHeads;
    model["head_size"] = m.headSize;
    model["ffn_size"] = m.ffnSize;
    model["vocab_size"] = m.vocabSize;
    model["position_embedding"] = m.positionEmbedding;
    model["kv_heads"] = m.kvHeads;
    model["norm"] = m.norm;
    model["ffn"] = m.ffn;
    model["tied_embeddings"] = m.tiedEmbeddings;
    if (m.experts)
      model["experts"] =
          llvm::json::Object{{"routed", m.experts},
                             {"per_token", m.expertsPerToken},
                             {"active_parameters", m.activeParameters}};
    model["dropout"] = llvm::json::Object{
        {"embeddings", m.embeddingDropout},
        {"attention_probabilities", m.attentionDropout},
        {"block_outputs", m.blockDropout}};
    model["mup"] = report.mup;
  }
  llvm::json::Object input{{"path", report.sourcePath}};
  if (!report.origin.empty()) {
    input["read_as"] = report.origin;
    input["batch_reading"] = report.batchReading;
  }
  llvm::json::Object json{
      {"schema_version", kReportSchemaVersion},
      {"cgpt",
       llvm::json::Object{{"version", getVersion()},
                          {"commit", getGitCommit()}}},
      {"input", std::move(input)},
      {"model", std::move(model)},
      {"batch",
       llvm::json::Object{
           {"global", m.globalBatch},
           {"num_csx", m.numCsx},
           {"per_system", report.perSystemBatch},
           {"micro_batch_request", report.microBatchRequest},
       }},
  };
  if (report.dataflow) {
    const dataflow::StepCosts &c = report.dataflow->costs;
    json["step"] = llvm::json::Object{
        {"algorithmic_flops", c.algorithmicFlopsPerStep()},
        {"recompute_flops", c.recomputeFlopsPerStep()},
    };
    json["dataflow"] = llvm::json::Object{
        {"recompute", report.dataflow->recompute},
        {"recompute_choice", report.dataflow->recomputeChoice},
        {"algorithmic_flops_per_sequence", c.flopsPerSequence},
        {"recompute_flops_per_sequence", c.recomputeFlopsPerSequence},
        {"weight_bytes_in_per_pass", c.weightBytesIn},
        {"gradient_bytes_out_per_pass", c.gradientBytesOut},
        {"streamed_bytes_per_pass", c.streamedBytesPerPass()},
        {"kept_activation_bytes_per_sequence_per_layer",
         c.keptBytesPerSequencePerLayer},
    };
    // Known once the micro-batch is: fixed by the request or planned.
    if (c.passesPerSystem) {
      (*json.getObject("step"))["streamed_bytes"] = c.streamedBytesPerStep();
      (*json.getObject("dataflow"))["passes_per_system"] = c.passesPerSystem;
    }
  }
  if (report.wafer) {
    const StepReport::Wafer &w = *report.wafer;
    json["target"] = llvm::json::Object{{"name", w.targetName},
                                        {"source", w.targetSource},
                                        {"cores", w.meshCores},
                                        {"clock_hz", w.clockHz},
                                        {"peak_flops", w.peakFlops}};
    llvm::json::Object *batch = json.getObject("batch");
    (*batch)["micro"] = w.microBatch;
    (*batch)["grad_accum_steps"] = w.gradAccumSteps;
    (*batch)["checkpoint"] = w.checkpoint;
    (*batch)["placer"] = w.placer;
    (*batch)["plan"] = w.plan;
    json["memory"] = llvm::json::Object{{"cores_used", w.coresUsed},
                                        {"max_core_sram_bytes", w.sramPeak},
                                        {"core_sram_limit_bytes", w.sramLimit},
                                        {"peak_region", w.sramPeakWhere}};
  }
  if (report.wafer) {
    llvm::json::Object *step = json.try_emplace("step", llvm::json::Object())
                                   .first->second.getAsObject();
    (*step)["streamed_bytes"] = report.wafer->streamedBytesPerStep;
  }
  if (report.simulation && report.wafer) {
    const sim::SimulationResult &r = *report.simulation;
    StepRates rates = computeStepRates(report);
    llvm::json::Object *step = json.getObject("step");
    (*step)["algorithmic_flops"] = report.wafer->algorithmicFlopsPerStep;
    (*step)["seconds"] = rates.seconds;
    (*step)["steps_per_second"] = rates.stepsPerSecond;
    (*step)["samples_per_second"] = rates.samplesPerSecond;
    (*step)["tokens_per_second"] = rates.tokensPerSecond;
    (*step)["achieved_flops_per_second"] = rates.achievedFlopsPerSecond;
    (*step)["utilization"] = rates.utilization;
    (*step)["passes"] = r.passes;
    (*step)["first_pass_seconds"] = r.firstPassSeconds;
    (*step)["passes_seconds"] = r.passesSeconds;
    (*step)["drain_seconds"] = r.drainSeconds;
    (*step)["reduce_seconds"] = r.reduceSeconds;
    (*step)["optimizer_seconds"] = r.optimizerSeconds;
    if (report.training) {
      TrainingEstimate e = estimateTraining(report);
      llvm::json::Object training{
          {"steps", report.training->steps},
          {"steps_from", report.training->stepsFrom},
          {"tokens", e.tokens},
          {"seconds", e.seconds},
          {"system_hours", e.systemHours},
      };
      if (e.energyJoules > 0) {
        training["energy_joules"] = e.energyJoules;
        training["power_watts_per_system"] = report.training->powerWatts;
      }
      if (e.cost)
        training["cost"] = *e.cost;
      json["training"] = std::move(training);
    }
  }
  return json;
}

void writeReport(llvm::json::OStream &json, const StepReport &report) {
  // Written as it goes: a tree of JSON values costs tens of times the text
  // (10,000 layers once took 2.4 GB for a 118 MB report). The sections
  // that grow with the model stream; the others are small values. Keys in
  // sorted order, as a printed llvm::json::Object has them.
  llvm::json::Object constant = constantSections(report);
  std::map<std::string, std::function<void()>> sections;
  for (auto &[key, value] : constant)
    sections[key.str()] = [&json, &key = key, &value = value] {
      json.attribute(key, value);
    };
  sections["warnings"] = [&] {
    json.attributeArray("warnings", [&] {
      for (const std::string &warning : report.warnings)
        json.value(warning);
    });
  };
  if (report.wafer) {
    const StepReport::Wafer &w = *report.wafer;
    sections["placement"] = [&] {
      json.attributeObject("placement", [&] {
        json.attribute("execution", w.execution);
        json.attribute("placer", w.placer);
        json.attributeArray("stages", [&] {
          for (const StepReport::Stage &stage : w.stages)
            json.object([&] {
              json.attribute("name", stage.name);
              json.attributeArray("regions", [&] {
                for (const StepReport::Region &r : stage.regions)
                  json.value(llvm::json::Object{
                      {"name", r.name},
                      {"kind", r.kind},
                      {"kernel", r.kernel},
                      {"at", llvm::json::Array{r.rect.x, r.rect.y, r.rect.w,
                                               r.rect.h}},
                      {"wave", r.wave},
                      {"token_groups", r.tokenGroups},
                      {"feature_groups", r.featureGroups},
                      {"sram_bytes", r.sramBytes}});
              });
              if (stage.slot)
                json.attribute("slot", *stage.slot);
            });
        });
      });
    };
  }
  if (report.simulation && report.wafer)
    sections["breakdown"] = [&] {
      json.attributeArray("breakdown", [&] {
        for (const sim::StageTiming &stage : report.simulation->stages)
          json.value(llvm::json::Object{{"name", stage.name},
                                        {"phase", stage.phase},
                                        {"seconds", stage.end - stage.start},
                                        {"bound", stage.bound}});
      });
    };
  if (report.cycleLevel)
    sections["cycle_level"] = [&] {
      const sim::mesh::CycleLevelRun &run = *report.cycleLevel;
      json.attributeObject("cycle_level", [&] {
        json.attribute("core_cycles", run.coreCycles);
        json.attributeArray("kernels", [&] {
          for (const sim::mesh::CycleLevelKernel &k : run.kernels)
            json.value(llvm::json::Object{
                {"stage", k.stage},
                {"name", k.name},
                {"cores", k.cores},
                {"analytic_cycles", k.analyticCycles},
                {"simulated_cycles", k.simulatedCycles}});
        });
        json.attributeArray("waves", [&] {
          for (const sim::mesh::CycleLevelWave &wave : run.waves)
            json.object([&] {
              json.attributeArray("regions", [&] {
                for (const std::string &name : wave.regions)
                  json.value(name);
              });
              json.attribute("simulated_cycles", wave.simulatedCycles);
              json.attribute("slowest_alone_cycles", wave.slowestAlone);
              json.attribute("stage", wave.stage);
            });
        });
      });
    };
  // std::map runs in key order.
  json.object([&] {
    for (auto &[key, write] : sections)
      write();
  });
}

void printReport(llvm::raw_ostream &os, const StepReport &report) {
  llvm::json::OStream json(os, 2);
  writeReport(json, report);
  os << "\n";
}

void printCycleLevel(llvm::raw_ostream &os,
                     const sim::mesh::CycleLevelRun &run) {
  os << llvm::formatv("{0,-16} {1,-22} {2,7} {3,13} {4,13} {5,8}\n", "stage",
                      "kernel", "cores", "analytic", "simulated", "error");
  double worst = 0;
  std::string worstKernel;
  for (const sim::mesh::CycleLevelKernel &k : run.kernels) {
    double simulated = static_cast<double>(k.simulatedCycles);
    double relative = (k.analyticCycles - simulated) / std::max(1.0, simulated);
    if (std::abs(relative) >= worst) {
      worst = std::abs(relative);
      worstKernel = k.stage + " @" + k.name;
    }
    os << llvm::formatv("{0,-16} {1,-22} {2,7} {3,13} {4,13} {5,7:f1}%\n",
                        k.stage, "@" + k.name, k.cores,
                        static_cast<int64_t>(std::llround(k.analyticCycles)),
                        k.simulatedCycles, 100 * relative);
  }
  // Regions of one wave again, together on one mesh as the wafer runs
  // them.
  for (const sim::mesh::CycleLevelWave &wave : run.waves) {
    os << wave.stage << ": ";
    llvm::interleaveComma(wave.regions, os,
                          [&](const std::string &name) { os << "@" << name; });
    os << llvm::formatv(" side by side on one mesh: {0} cycles (the slowest "
                        "alone {1})\n",
                        formatGrouped(wave.simulatedCycles),
                        formatGrouped(wave.slowestAlone));
  }
  os << llvm::formatv("{0} kernels, {1} core-cycles simulated; worst "
                      "disagreement {2:f1}% ({3})\n",
                      run.kernels.size(), formatGrouped(run.coreCycles),
                      100 * worst, worstKernel);
}

void printTrace(llvm::raw_ostream &os, llvm::StringRef processName,
                const sim::SimulationResult &simulation,
                const sim::mesh::CycleLevelRun *cycleLevel) {
  // Written as it goes: a tree of JSON values costs tens of times the text
  // (a 118 MB trace once took 4.5 GB). Keys in sorted order, as a printed
  // llvm::json::Object has them.
  llvm::json::OStream json(os, 2);
  auto metadata = [&](llvm::StringRef name, int64_t pid,
                      std::optional<int64_t> tid, llvm::StringRef value) {
    json.object([&] {
      json.attributeObject("args", [&] { json.attribute("name", value); });
      json.attribute("name", name);
      json.attribute("ph", "M");
      json.attribute("pid", pid);
      if (tid)
        json.attribute("tid", *tid);
    });
  };
  auto slice = [&](llvm::StringRef name, llvm::StringRef category,
                   const wafer::IntervalFacts &args, int64_t pid, int64_t tid,
                   double start, double duration) {
    json.object([&] {
      if (args.flops > 0 || args.bytes > 0 || args.bound)
        json.attributeObject("args", [&] {
          if (args.bound)
            json.attribute("bound", args.bound);
          if (args.bytes > 0)
            json.attribute("bytes", args.bytes);
          if (args.flops > 0)
            json.attribute("flops", args.flops);
        });
      json.attribute("cat", category);
      json.attribute("dur", duration);
      json.attribute("name", name);
      json.attribute("ph", "X");
      json.attribute("pid", pid);
      json.attribute("tid", tid);
      json.attribute("ts", start);
    });
  };
  json.object([&] {
    json.attribute("displayTimeUnit", "ms");
    json.attributeArray("traceEvents", [&] {
      metadata("process_name", 0, std::nullopt, processName);
      // Tracks in order of first use, so the same step gives the same file.
      std::vector<std::string> tracks;
      for (const sim::TraceEvent &event : simulation.trace) {
        auto it = std::find(tracks.begin(), tracks.end(), event.track);
        int64_t tid = it - tracks.begin();
        if (it == tracks.end())
          tracks.push_back(event.track);
        slice(event.name, event.track,
              {event.facts.flops, event.facts.bytes, event.facts.bound}, 0,
              tid, event.start * 1e6, event.duration * 1e6);
      }
      for (auto [tid, track] : llvm::enumerate(tracks))
        metadata("thread_name", 0, static_cast<int64_t>(tid), track);
      if (!cycleLevel)
        return;
      metadata("process_name", 1, std::nullopt, "cycle-level mesh");
      double microseconds = 1e6 / cycleLevel->clockHz;
      int64_t start = 0;
      size_t rows = 0;
      for (const sim::mesh::CycleLevelKernel &k : cycleLevel->kernels) {
        for (auto [row, activity] : llvm::enumerate(k.rowActivity)) {
          auto [first, last] = activity;
          if (last <= first)
            continue;
          slice(k.stage + " @" + k.name, "cycle-level", {}, 1,
                static_cast<int64_t>(row),
                static_cast<double>(start + first) * microseconds,
                static_cast<double>(last - first) * microseconds);
        }
        rows = std::max(rows, k.rowActivity.size());
        start += k.simulatedCycles;
      }
      for (size_t row = 0; row < rows; ++row)
        metadata("thread_name", 1, static_cast<int64_t>(row),
                 "row " + std::to_string(row));
    });
  });
  os << "\n";
}

SweepRow sweepRow(const StepReport &report) {
  StepRates rates = computeStepRates(report);
  SweepRow row;
  row.model = report.model.name;
  row.target = report.wafer->targetName;
  row.sequenceLength = report.model.sequenceLength;
  row.globalBatch = report.model.globalBatch;
  row.systems = report.simulation->numCsx;
  row.microBatchRequest = report.microBatchRequest;
  row.microBatch = report.wafer->microBatch;
  row.gradAccumSteps = report.wafer->gradAccumSteps;
  row.stepSeconds = rates.seconds;
  row.samplesPerSecond = rates.samplesPerSecond;
  if (report.training && report.training->steps > 0) {
    row.trainSteps = report.training->steps;
    row.training = estimateTraining(report);
  }
  return row;
}

namespace {
/// Which of a sweep's axes other than the systems differ between its rows.
struct VaryingAxes {
  bool model = false, target = false, sequence = false, batch = false,
       microBatch = false;

  explicit VaryingAxes(llvm::ArrayRef<SweepRow> rows) {
    for (const SweepRow &row : rows) {
      const SweepRow &first = rows.front();
      model |= row.model != first.model;
      target |= row.target != first.target;
      sequence |= row.sequenceLength != first.sequenceLength;
      batch |= row.globalBatch != first.globalBatch;
      microBatch |= row.microBatchRequest != first.microBatchRequest;
    }
  }
  /// What tells `row`'s group from the others, for a chart's legend.
  std::string label(const SweepRow &row) const {
    llvm::SmallVector<std::string> parts;
    if (model)
      parts.push_back(row.model);
    if (target)
      parts.push_back(row.target);
    if (sequence)
      parts.push_back("sequence " + std::to_string(row.sequenceLength));
    if (batch)
      parts.push_back("batch " + std::to_string(row.globalBatch));
    if (microBatch)
      parts.push_back("micro-batch " + row.microBatchRequest);
    return llvm::join(parts, ", ");
  }
};
} // namespace

static double speedUp(llvm::ArrayRef<SweepRow> rows, const SweepRow &row) {
  return row.samplesPerSecond / rows[row.groupFirst].samplesPerSecond;
}

void printSweepTable(llvm::raw_ostream &os, llvm::ArrayRef<SweepRow> rows) {
  VaryingAxes varying(rows);
  auto printRow = [&](llvm::ArrayRef<std::string> prefix,
                      llvm::ArrayRef<std::string> fields) {
    for (const std::string &field : prefix)
      os << field << "  ";
    os << llvm::formatv("{0,8} {1,12} {2,12} {3,14} {4,10}\n", fields[0],
                        fields[1], fields[2], fields[3], fields[4]);
  };
  // The varying axes' columns as wide as their widest entry.
  std::vector<std::vector<std::string>> prefixes(rows.size() + 1);
  auto addColumn = [&](bool shown, llvm::StringRef header,
                       llvm::function_ref<std::string(const SweepRow &)> cell) {
    if (!shown)
      return;
    size_t width = header.size();
    for (const SweepRow &row : rows)
      width = std::max(width, cell(row).size());
    auto pad = [&](llvm::StringRef text) {
      return text.str() + std::string(width - text.size(), ' ');
    };
    prefixes[0].push_back(pad(header));
    for (auto [index, row] : llvm::enumerate(rows))
      prefixes[index + 1].push_back(pad(cell(row)));
  };
  addColumn(varying.model, "model", [](const SweepRow &r) { return r.model; });
  addColumn(varying.target, "target",
            [](const SweepRow &r) { return r.target; });
  addColumn(varying.sequence, "sequence", [](const SweepRow &r) {
    return std::to_string(r.sequenceLength);
  });
  addColumn(varying.batch, "batch",
            [](const SweepRow &r) { return std::to_string(r.globalBatch); });
  printRow(prefixes[0],
           {"systems", "micro-batch", "step (s)", "samples/s", "speed-up"});
  for (auto [index, row] : llvm::enumerate(rows))
    printRow(prefixes[index + 1],
             {std::to_string(row.systems),
              llvm::formatv("{0} x {1}", row.microBatch, row.gradAccumSteps)
                  .str(),
              llvm::formatv("{0:e3}", row.stepSeconds).str(),
              llvm::formatv("{0:f2}", row.samplesPerSecond).str(),
              llvm::formatv("{0:f2}", speedUp(rows, row)).str()});
}

void printExploreTable(llvm::raw_ostream &os,
                       llvm::ArrayRef<StepReport::Wafer::Explored> rows) {
  os << llvm::formatv("{0,12} {1,13} {2,12} {3,5} {4,16} {5,18}\n",
                      "micro-batch", "placer", "checkpoints", "fits",
                      "SRAM peak (B)", "samples/s");
  for (const StepReport::Wafer::Explored &row : rows)
    os << llvm::formatv("{0,12} {1,13} {2,12} {3,5} {4,16} {5,18}\n",
                        row.microBatch, row.placer, row.checkpoint,
                        row.fits ? "yes" : "no",
                        formatGrouped(row.sramPeak),
                        row.fits ? llvm::formatv("{0:f2}", row.samplesPerSecond)
                                       .str()
                                 : std::string("-"));
}

DataTable sweepData(llvm::ArrayRef<SweepRow> rows) {
  DataTable table{{"model", "target", "sequence_length", "global_batch",
                   "systems", "micro_batch_request", "micro_batch",
                   "grad_accum_steps", "step_seconds", "samples_per_second",
                   "speed_up", "train_steps", "train_tokens", "train_hours",
                   "train_system_hours", "train_energy_kwh", "train_cost"},
                  {}};
  for (const SweepRow &row : rows) {
    llvm::json::Object object{
        {"model", row.model},
        {"target", row.target},
        {"sequence_length", row.sequenceLength},
        {"global_batch", row.globalBatch},
        {"systems", row.systems},
        {"micro_batch_request", row.microBatchRequest},
        {"micro_batch", row.microBatch},
        {"grad_accum_steps", row.gradAccumSteps},
        {"step_seconds", row.stepSeconds},
        {"samples_per_second", row.samplesPerSecond},
        {"speed_up", speedUp(rows, row)},
        {"train_steps", nullptr},
        {"train_tokens", nullptr},
        {"train_hours", nullptr},
        {"train_system_hours", nullptr},
        {"train_energy_kwh", nullptr},
        {"train_cost", nullptr}};
    if (row.training) {
      const TrainingEstimate &e = *row.training;
      object["train_steps"] = *row.trainSteps;
      object["train_tokens"] = e.tokens;
      object["train_hours"] = e.seconds / 3600.0;
      object["train_system_hours"] = e.systemHours;
      if (e.energyJoules > 0)
        object["train_energy_kwh"] = e.energyJoules / 3.6e6;
      if (e.cost)
        object["train_cost"] = *e.cost;
    }
    table.rows.push_back(std::move(object));
  }
  return table;
}

DataTable exploreData(llvm::ArrayRef<StepReport::Wafer::Explored> rows) {
  DataTable table{{"micro_batch", "placer", "checkpoint", "fits",
                   "sram_peak_bytes", "samples_per_second"},
                  {}};
  for (const StepReport::Wafer::Explored &row : rows) {
    llvm::json::Object object{{"micro_batch", row.microBatch},
                              {"placer", row.placer},
                              {"checkpoint", row.checkpoint},
                              {"fits", row.fits},
                              {"sram_peak_bytes", row.sramPeak},
                              {"samples_per_second", nullptr}};
    if (row.fits)
      object["samples_per_second"] = row.samplesPerSecond;
    table.rows.push_back(std::move(object));
  }
  return table;
}

/// One CSV field (RFC 4180): numbers in their shortest exact form, text
/// quoted when it holds a separator, a quote or a line break, null empty.
static std::string csvField(const llvm::json::Value &value) {
  if (value.kind() == llvm::json::Value::Null)
    return "";
  if (std::optional<int64_t> integer = value.getAsInteger())
    return std::to_string(*integer);
  if (std::optional<double> number = value.getAsNumber())
    return fmt::format("{}", *number);
  if (std::optional<bool> flag = value.getAsBoolean())
    return *flag ? "true" : "false";
  std::string text = value.getAsString().value_or("").str();
  if (text.find_first_of(",\"\r\n") == std::string::npos)
    return text;
  std::string quoted = "\"";
  for (char c : text)
    quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

void printDataTable(llvm::raw_ostream &os, const DataTable &table, bool csv) {
  if (!csv) {
    printJson(os, llvm::json::Array(table.rows));
    return;
  }
  os << fmt::format("{}", fmt::join(table.keys, ",")) << "\n";
  for (const llvm::json::Value &row : table.rows) {
    const llvm::json::Object &object = *row.getAsObject();
    llvm::interleave(
        table.keys, os,
        [&](const std::string &key) { os << csvField(*object.get(key)); },
        ",");
    os << "\n";
  }
}

namespace {
/// An axis from zero with round ticks: a step of 1, 2 or 5 times a power of
/// ten, giving about `ticks` intervals, and the first multiple of it at or
/// above the data's maximum as the axis' end.
struct RoundAxis {
  double step, top;
  /// Decimals that show every tick exactly.
  int decimals;

  RoundAxis(double dataMax, int ticks) {
    double raw = dataMax > 0 ? dataMax / ticks : 1;
    double power = std::pow(10.0, std::floor(std::log10(raw)));
    double mantissa = raw / power;
    step = (mantissa <= 1 ? 1 : mantissa <= 2 ? 2 : mantissa <= 5 ? 5 : 10) *
           power;
    top = std::max(step, std::ceil(dataMax / step - 1e-9) * step);
    decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step))));
  }
  std::string label(double value) const {
    return fmt::format("{:.{}f}", value, decimals);
  }
  /// The ticks, 0 included.
  llvm::SmallVector<double> values() const {
    llvm::SmallVector<double> out;
    for (int i = 0; i * step <= top * (1 + 1e-9); ++i)
      out.push_back(i * step);
    return out;
  }
};

/// The frame of a line chart from zero: title, axes, grid lines at round
/// values of y from 0, and the axis names. Data maps to pixels with x() and
/// y().
struct ChartFrame {
  static constexpr double width = 640, height = 420, left = 80, right = 50,
                          top = 40, bottom = 50;
  double xMax;
  RoundAxis yAxis;

  ChartFrame(double xMax, double yDataMax)
      : xMax(xMax), yAxis(yDataMax, 5) {}

  double x(double value) const {
    return left + (width - left - right) * value / xMax;
  }
  double y(double value) const {
    return height - bottom - (height - top - bottom) * value / yAxis.top;
  }
  /// Opens the SVG with the title, the axes and y's grid.
  void open(llvm::raw_ostream &os, const llvm::Twine &title) const {
    os << llvm::formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" "
                        "width=\"{0}\" height=\"{1}\" "
                        "font-family=\"sans-serif\">\n",
                        width, height);
    os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    os << llvm::formatv("<text x=\"{0}\" y=\"24\" font-size=\"15\" "
                        "font-weight=\"bold\">{1}</text>\n",
                        left, escapeXml(title.str()));
    os << llvm::formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" "
                        "y2=\"{1}\" stroke=\"black\"/>\n<line "
                        "x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{1}\" "
                        "stroke=\"black\"/>\n",
                        left, height - bottom, width - right, top);
    for (double value : yAxis.values()) {
      if (value > 0)
        os << llvm::formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" "
                            "y2=\"{1}\" stroke=\"#ddd\"/>\n",
                            left, y(value), width - right);
      os << llvm::formatv("<text class=\"y-tick\" x=\"{0}\" y=\"{1}\" "
                          "font-size=\"10\" text-anchor=\"end\">{2}</text>\n",
                          left - 6, y(value) + 4, yAxis.label(value));
    }
  }
  /// A label under the x axis at `value`.
  void xTick(llvm::raw_ostream &os, double value,
             const std::string &label) const {
    os << llvm::formatv("<text class=\"x-tick\" x=\"{0}\" y=\"{1}\" "
                        "font-size=\"11\" text-anchor=\"middle\">{2}</text>\n",
                        x(value), height - bottom + 16, label);
  }
  /// Names the axes and closes the SVG.
  void close(llvm::raw_ostream &os, llvm::StringRef xName,
             llvm::StringRef yName) const {
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"12\" "
                        "text-anchor=\"middle\">{2}</text>\n",
                        (left + width - right) / 2, height - 12, xName);
    os << llvm::formatv("<text x=\"14\" y=\"{0}\" font-size=\"12\" "
                        "transform=\"rotate(-90 14 {0})\" "
                        "text-anchor=\"middle\">{1}</text>\n",
                        (top + height - bottom) / 2, yName);
    os << "</svg>\n";
  }
};
} // namespace

void printSweepPlot(llvm::raw_ostream &os, llvm::ArrayRef<SweepRow> rows) {
  static constexpr llvm::StringLiteral kColours[] = {
      "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  VaryingAxes varying(rows);
  // The groups by their first row, in order.
  std::vector<size_t> groups;
  double maxSystems = 0, maxRate = 0;
  for (auto [index, row] : llvm::enumerate(rows)) {
    if (row.groupFirst == index)
      groups.push_back(index);
    maxSystems = std::max(maxSystems, static_cast<double>(row.systems));
    const SweepRow &first = rows[row.groupFirst];
    double ideal = first.samplesPerSecond / first.systems * row.systems;
    maxRate = std::max({maxRate, row.samplesPerSecond, ideal});
  }
  ChartFrame frame(maxSystems, maxRate);
  std::string title = groups.size() == 1
                          ? rows.front().model + ": samples/s by number of "
                                                 "systems"
                          : std::string("samples/s by number of systems");
  frame.open(os, title);
  frame.xTick(os, 0, "0");
  std::set<int64_t> ticks;
  for (auto [series, first] : llvm::enumerate(groups)) {
    llvm::StringRef colour = kColours[series % std::size(kColours)];
    llvm::SmallVector<const SweepRow *> points;
    for (const SweepRow &row : rows)
      if (row.groupFirst == first)
        points.push_back(&row);
    double ideal = rows[first].samplesPerSecond / rows[first].systems;
    double lastSystems = static_cast<double>(points.back()->systems);
    os << llvm::formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" "
                        "y2=\"{3}\" stroke=\"{4}\" stroke-opacity=\"0.5\" "
                        "stroke-dasharray=\"4 4\"/>\n",
                        frame.x(0), frame.y(0), frame.x(lastSystems),
                        frame.y(ideal * lastSystems), colour);
    os << llvm::formatv("<polyline fill=\"none\" stroke=\"{0}\" "
                        "stroke-width=\"2\" points=\"",
                        colour);
    for (const SweepRow *row : points)
      os << llvm::formatv("{0},{1} ", frame.x(row->systems),
                          frame.y(row->samplesPerSecond));
    os << "\"/>\n";
    for (const SweepRow *row : points) {
      double x = frame.x(row->systems), y = frame.y(row->samplesPerSecond);
      os << llvm::formatv("<circle cx=\"{0}\" cy=\"{1}\" r=\"4\" "
                          "fill=\"{2}\"/>\n",
                          x, y, colour);
      if (ticks.insert(row->systems).second)
        frame.xTick(os, static_cast<double>(row->systems),
                    std::to_string(row->systems));
      os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"10\" "
                          "text-anchor=\"middle\">{2:f1}</text>\n",
                          x, y - 9, row->samplesPerSecond);
    }
    if (groups.size() > 1)
      os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"11\" "
                          "fill=\"{2}\">{3}</text>\n",
                          ChartFrame::left + 10,
                          ChartFrame::top + 14 * (series + 1), colour,
                          escapeXml(varying.label(rows[first])));
  }
  frame.close(os, "systems (dashed: linear from each line's first point)",
              "samples/s");
}

void printLossCurve(llvm::raw_ostream &os, llvm::StringRef model,
                    llvm::ArrayRef<double> losses) {
  double maxLoss = 0;
  for (double loss : losses)
    maxLoss = std::max(maxLoss, loss);
  // Steps on round ticks too: the x axis ends at the last of them.
  RoundAxis steps(static_cast<double>(losses.size()), 4);
  ChartFrame frame(steps.top, maxLoss);
  frame.open(os, model + ": training loss by step");
  os << "<polyline fill=\"none\" stroke=\"#e15759\" stroke-width=\"1.5\" "
        "points=\"";
  for (auto [index, loss] : llvm::enumerate(losses))
    os << llvm::formatv("{0:f1},{1:f1} ", frame.x(index + 1.0),
                        frame.y(loss));
  os << "\"/>\n";
  for (double step : steps.values())
    frame.xTick(os, step, steps.label(step));
  frame.close(os, "optimizer step", "loss");
}

void printJson(llvm::raw_ostream &os, const llvm::json::Value &value) {
  os << llvm::formatv("{0:2}", value) << "\n";
}

} // namespace cgpt::report
