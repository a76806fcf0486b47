//===- Report.cpp - summary and JSON report --------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Report/Report.h"

#include "cgpt/Support/Format.h"

#include "llvm/Support/FormatVariadic.h"

using namespace cgpt::transformer;

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
  w.meshCores = device.getNumCores();
  w.clockHz = target.getClockHz();
  w.peakFlops = target.getPeakFlopsPerSecond();
  w.microBatch = device.getMicroBatch();
  w.gradAccumSteps = device.getGradAccumSteps();
  w.plan = device.getPlan().value_or("").str();
  w.sramLimit = device.getSramBytes();
  for (auto stage : device.getBody().front().getOps<wafer::StageOp>()) {
    StepReport::Stage s{stage.getSymName().str(), {}};
    int64_t cores = 0;
    for (auto region : stage.getBody().front().getOps<wafer::RegionOp>()) {
      wafer::RectAttr rect = region.getPlacementAttr();
      int64_t sram = region.getSramBytes().value_or(0);
      s.regions.push_back({region.getSymName().str(), region.getKernel().str(),
                           rect.getX(), rect.getY(), rect.getW(), rect.getH(),
                           sram});
      cores += rect.getCores();
      if (sram > w.sramPeak) {
        w.sramPeak = sram;
        w.sramPeakWhere = "@" + region.getSymName().str() + " (" +
                          region.getKernel().str() + ") of stage @" +
                          stage.getSymName().str();
      }
    }
    w.coresUsed = std::max(w.coresUsed, cores);
    w.stages.push_back(std::move(s));
  }
  report.wafer = std::move(w);
}

/// A FLOP or byte count for people: 4 significant digits.
static std::string approx(double value) {
  return llvm::formatv("{0:e3}", value).str();
}

void printSummary(llvm::raw_ostream &os, const StepReport &report) {
  const ModelFacts &m = report.model;
  os << "cgpt: " << m.name;
  if (!report.sourcePath.empty())
    os << " (" << report.sourcePath << ")";
  os << "\n";
  if (!report.origin.empty())
    os << "  read as     " << report.origin << "\n";
  os << llvm::formatv("  model       {0} layers, d_model {1}, {2} heads x {3}, "
                      "d_ffn {4}, vocab {5}\n",
                      m.layers, m.hiddenSize, m.numHeads, m.headSize,
                      m.ffnSize, m.vocabSize);
  os << "              " << m.positionEmbedding << " positions, "
     << (m.tiedEmbeddings ? "tied" : "untied") << " embeddings"
     << (report.mup ? ", muP" : "") << "\n";
  os << "  parameters  " << formatGrouped(m.parameters) << "\n";
  os << llvm::formatv("  batch       {0} sequences x {1} tokens per step on "
                      "{2} system(s): {3} per system, micro-batch {4}\n",
                      m.globalBatch, m.sequenceLength, m.numCsx,
                      report.perSystemBatch, report.microBatchRequest);
  os << "  optimizer   " << report.optimizer << "\n";
  os << "  precision   " << report.precision << "\n";
  if (!report.dataflow)
    return;
  const dataflow::StepCosts &c = report.dataflow->costs;
  os << "  compute     " << approx(c.algorithmicFlopsPerStep())
     << " algorithmic FLOP per step (" << approx(c.flopsPerSequence)
     << " per sequence), " << approx(c.recomputeFlopsPerStep())
     << " more recomputed (recompute " << report.dataflow->recompute
     << ")\n";
  os << "  streaming   " << approx(c.weightBytesIn) << " B of weights in, "
     << approx(c.gradientBytesOut)
     << " B of gradients out per micro-batch pass\n";
  os << "  activations " << approx(c.keptBytesPerSequencePerLayer)
     << " B kept per sequence per layer\n";
  if (!report.wafer)
    return;
  const StepReport::Wafer &w = *report.wafer;
  os << llvm::formatv("  micro-batch {0} x {1} accumulation step(s) per "
                      "system\n",
                      w.microBatch, w.gradAccumSteps);
  os << "              " << w.plan << "\n";
  os << "  placement   " << w.stages.size() << " stages on "
     << formatGrouped(w.coresUsed) << " of " << formatGrouped(w.meshCores)
     << " cores (" << w.targetName << "); SRAM peak "
     << formatGrouped(w.sramPeak) << " of " << formatGrouped(w.sramLimit)
     << " B per core in " << w.sramPeakWhere << "\n";
}

llvm::json::Value buildReport(const StepReport &report) {
  const ModelFacts &m = report.model;
  llvm::json::Object json{
      {"model",
       llvm::json::Object{
           {"name", m.name},
           {"parameters", m.parameters},
           {"layers", m.layers},
           {"hidden_size", m.hiddenSize},
           {"num_heads", m.numHeads},
           {"head_size", m.headSize},
           {"ffn_size", m.ffnSize},
           {"vocab_size", m.vocabSize},
           {"sequence_length", m.sequenceLength},
           {"position_embedding", m.positionEmbedding},
           {"tied_embeddings", m.tiedEmbeddings},
           {"mup", report.mup},
       }},
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
        {"streamed_bytes", c.streamedBytesPerStep()},
    };
    json["dataflow"] = llvm::json::Object{
        {"recompute", report.dataflow->recompute},
        {"algorithmic_flops_per_sequence", c.flopsPerSequence},
        {"recompute_flops_per_sequence", c.recomputeFlopsPerSequence},
        {"weight_bytes_in_per_pass", c.weightBytesIn},
        {"gradient_bytes_out_per_pass", c.gradientBytesOut},
        {"passes_per_system", c.passesPerSystem},
        {"kept_activation_bytes_per_sequence_per_layer",
         c.keptBytesPerSequencePerLayer},
    };
  }
  if (report.wafer) {
    const StepReport::Wafer &w = *report.wafer;
    json["target"] = llvm::json::Object{{"name", w.targetName},
                                        {"cores", w.meshCores},
                                        {"clock_hz", w.clockHz},
                                        {"peak_flops", w.peakFlops}};
    llvm::json::Object *batch = json.getObject("batch");
    (*batch)["micro"] = w.microBatch;
    (*batch)["grad_accum_steps"] = w.gradAccumSteps;
    (*batch)["plan"] = w.plan;
    json["memory"] = llvm::json::Object{
        {"cores_used", w.coresUsed},
        {"max_core_sram_bytes", w.sramPeak},
        {"core_sram_limit_bytes", w.sramLimit},
        {"peak_region", w.sramPeakWhere}};
    llvm::json::Array stages;
    for (const StepReport::Stage &stage : w.stages) {
      llvm::json::Array regions;
      for (const StepReport::Region &r : stage.regions)
        regions.push_back(llvm::json::Object{
            {"name", r.name},   {"kernel", r.kernel}, {"x", r.x},
            {"y", r.y},         {"w", r.w},           {"h", r.h},
            {"sram_bytes", r.sramBytes}});
      stages.push_back(
          llvm::json::Object{{"name", stage.name}, {"regions", std::move(regions)}});
    }
    json["placement"] = llvm::json::Object{{"stages", std::move(stages)}};
  }
  return json;
}

llvm::Error writeJsonFile(llvm::StringRef path, const llvm::json::Value &value) {
  return llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
    os << llvm::formatv("{0:2}", value) << "\n";
    return llvm::Error::success();
  });
}

} // namespace cgpt::report
