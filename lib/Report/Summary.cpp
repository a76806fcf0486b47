//===- Summary.cpp - the summary a person reads first ---------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Report/Report.h"

#include "cgpt/Dialect/Wafer/Analysis/MemoryModel.h"
#include "cgpt/Support/Format.h"
#include "cgpt/Support/MicroBatches.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>

using namespace cgpt::transformer;

namespace cgpt::report {
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
     << "; SRAM peak " << formatGrouped(w.sramPeak) << " of "
     << formatGrouped(w.sramLimit) << " B per core in " << w.sramPeakWhere
     << "\n";
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
       << " steps (" << report.training->stepsFrom << "), " << approx(e.tokens)
       << " tokens: " << formatRoughDuration(e.seconds) << " on " << r.numCsx
       << " system(s), " << llvm::formatv("{0:f1}", e.systemHours)
       << " system-hours";
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

void printExploreTable(llvm::raw_ostream &os,
                       llvm::ArrayRef<StepReport::Wafer::Explored> rows) {
  os << llvm::formatv("{0,12} {1,13} {2,12} {3,5} {4,16} {5,18}\n",
                      "micro-batch", "placer", "checkpoints", "fits",
                      "SRAM peak (B)", "samples/s");
  for (const StepReport::Wafer::Explored &row : rows)
    os << llvm::formatv(
        "{0,12} {1,13} {2,12} {3,5} {4,16} {5,18}\n", row.microBatch,
        row.placer, row.checkpoint, row.fits ? "yes" : "no",
        formatGrouped(row.sramPeak),
        row.fits ? llvm::formatv("{0:f2}", row.samplesPerSecond).str()
                 : std::string("-"));
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
      os << ", "
         << (m.ffn == "swiglu"  ? "SwiGLU"
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

} // namespace cgpt::report
