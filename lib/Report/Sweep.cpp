//===- Sweep.cpp - a sweep's rows and table -------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Report/Report.h"

#include "SweepGroups.h"
#include "cgpt/Support/Format.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

namespace cgpt::report {

using detail::speedUp;
using detail::VaryingAxes;
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
  addColumn(varying.sequence, "sequence",
            [](const SweepRow &r) { return std::to_string(r.sequenceLength); });
  addColumn(varying.batch, "batch",
            [](const SweepRow &r) { return std::to_string(r.globalBatch); });
  printRow(prefixes[0],
           {"systems", "micro-batch", "step (s)", "samples/s", "speed-up"});
  for (auto [index, row] : llvm::enumerate(rows))
    printRow(
        prefixes[index + 1],
        {std::to_string(row.systems),
         llvm::formatv("{0} x {1}", row.microBatch, row.gradAccumSteps).str(),
         llvm::formatv("{0:e3}", row.stepSeconds).str(),
         llvm::formatv("{0:f2}", row.samplesPerSecond).str(),
         llvm::formatv("{0:f2}", speedUp(rows, row)).str()});
}

DataTable sweepData(llvm::ArrayRef<SweepRow> rows) {
  DataTable table{{"model", "target", "sequence_length", "global_batch",
                   "systems", "micro_batch_request", "micro_batch",
                   "grad_accum_steps", "step_seconds", "samples_per_second",
                   "speed_up", "train_steps", "train_tokens", "train_hours",
                   "train_system_hours", "train_energy_kwh", "train_cost"},
                  {}};
  for (const SweepRow &row : rows) {
    llvm::json::Object object{{"model", row.model},
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

} // namespace cgpt::report
