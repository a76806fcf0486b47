//===- JsonReport.cpp - the JSON report -----------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Report/Report.h"

#include "cgpt/Support/Format.h"
#include "cgpt/Support/Version.h"

#include "llvm/Support/FormatVariadic.h"

#include <functional>
#include <map>

using namespace cgpt::transformer;

namespace cgpt::report {
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
    model["dropout"] =
        llvm::json::Object{{"embeddings", m.embeddingDropout},
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
      {"cgpt", llvm::json::Object{{"version", getVersion()},
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
            json.value(
                llvm::json::Object{{"stage", k.stage},
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

void printJson(llvm::raw_ostream &os, const llvm::json::Value &value) {
  os << llvm::formatv("{0:2}", value) << "\n";
}

} // namespace cgpt::report
