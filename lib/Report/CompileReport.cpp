//===- CompileReport.cpp - the per-kernel compile report ------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Report/CompileReport.h"

#include "cgpt/Dialect/Wafer/Analysis/Schedule.h"
#include "cgpt/Support/Format.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

namespace cgpt::report {

namespace {
/// A region's part of the first pass: the timeline's intervals of its name
/// (wafer::kernelIntervalName), summed (a rerun stage has several).
struct RegionRun {
  double seconds = 0, flops = 0;
  std::string bound;
};

llvm::StringMap<RegionRun> regionRuns(const StepReport &report) {
  llvm::StringMap<RegionRun> runs;
  for (const sim::TraceEvent &event : report.simulation->trace) {
    RegionRun &run = runs[event.name];
    run.seconds += event.duration;
    run.flops += event.facts.flops;
    if (event.facts.bound && run.bound.empty())
      run.bound = event.facts.bound;
  }
  return runs;
}

double meshPercent(int64_t cores, int64_t meshCores) {
  return 100.0 * static_cast<double>(cores) /
         static_cast<double>(std::max<int64_t>(1, meshCores));
}

/// The most cores one wave of `stage` holds.
int64_t activeCores(const StepReport::Stage &stage) {
  std::map<int64_t, int64_t> byWave;
  for (const StepReport::Region &region : stage.regions)
    byWave[region.wave] += region.rect.cores();
  int64_t most = 0;
  for (auto [wave, cores] : byWave)
    most = std::max(most, cores);
  return most;
}
} // namespace

DataTable compileReportData(const StepReport &report) {
  const StepReport::Wafer &w = *report.wafer;
  DataTable table{{"stage", "region", "kind", "kernel", "x", "y", "width",
                   "height", "cores", "mesh_percent", "wave",
                   "sram_bytes_per_core", "seconds", "flops", "bound"},
                  {}};
  llvm::StringMap<RegionRun> runs = regionRuns(report);
  for (const StepReport::Stage &stage : w.stages)
    for (const StepReport::Region &region : stage.regions) {
      llvm::json::Object row{
          {"stage", stage.name},
          {"region", region.name},
          {"kind", region.kind},
          {"kernel", region.kernel},
          {"x", region.rect.x},
          {"y", region.rect.y},
          {"width", region.rect.w},
          {"height", region.rect.h},
          {"cores", region.rect.cores()},
          {"mesh_percent", meshPercent(region.rect.cores(), w.meshCores)},
          {"wave", region.wave},
          {"sram_bytes_per_core", region.sramBytes},
          {"seconds", nullptr},
          {"flops", nullptr},
          {"bound", nullptr}};
      auto run = runs.find(wafer::kernelIntervalName(stage.name, region.name));
      if (run != runs.end()) {
        row["seconds"] = run->second.seconds;
        row["flops"] = run->second.flops;
        if (!run->second.bound.empty())
          row["bound"] = run->second.bound;
      }
      table.rows.push_back(std::move(row));
    }
  return table;
}

void printCompileReport(llvm::raw_ostream &os, const StepReport &report) {
  const StepReport::Wafer &w = *report.wafer;
  os << "cgpt compile report: " << report.model.name << " on " << w.targetName
     << ", " << report.simulation->numCsx << " system(s)\n";
  os << "  plan          " << w.plan << "\n";
  os << "  execution     " << w.execution << ", placer " << w.placer << ", "
     << w.stages.size() << " stages\n";
  os << llvm::formatv("  mesh          {0} cores; active at most {1} "
                      "({2:f1}%)\n",
                      formatGrouped(w.meshCores), formatGrouped(w.coresUsed),
                      meshPercent(w.coresUsed, w.meshCores));
  os << "  SRAM peak     " << formatGrouped(w.sramPeak) << " of "
     << formatGrouped(w.sramLimit) << " B a core (" << w.sramPeakWhere << ")\n";
  llvm::StringMap<RegionRun> runs = regionRuns(report);
  for (const StepReport::Stage &stage : w.stages) {
    int64_t active = activeCores(stage);
    os << llvm::formatv("\n{0}: active cores {1} ({2:f1}% of the mesh)",
                        stage.name, formatGrouped(active),
                        meshPercent(active, w.meshCores));
    if (stage.slot)
      os << ", slot " << *stage.slot;
    os << "\n";
    os << llvm::formatv("  {0,-18} {1,-14} {2,-22} {3,10} {4,7} {5,4} "
                        "{6,11} {7,12} {8,10} {9}\n",
                        "region", "kind", "rectangle", "cores", "mesh %",
                        "wave", "SRAM (B)", "time (s)", "GFLOP", "bound");
    for (const StepReport::Region &region : stage.regions) {
      auto run = runs.find(wafer::kernelIntervalName(stage.name, region.name));
      bool ran = run != runs.end();
      std::string rectangle =
          llvm::formatv("({0},{1}) {2}x{3}", region.rect.x, region.rect.y,
                        region.rect.w, region.rect.h)
              .str();
      os << llvm::formatv(
          "  {0,-18} {1,-14} {2,-22} {3,10} {4,7:f1} {5,4} {6,11} {7,12} "
          "{8,10} {9}\n",
          "@" + region.name, region.kind, rectangle,
          formatGrouped(region.rect.cores()),
          meshPercent(region.rect.cores(), w.meshCores), region.wave,
          formatGrouped(region.sramBytes),
          ran ? llvm::formatv("{0:e3}", run->second.seconds).str() : "-",
          ran ? llvm::formatv("{0:f3}", run->second.flops / 1e9).str() : "-",
          ran && !run->second.bound.empty() ? run->second.bound : "-");
    }
  }
}

} // namespace cgpt::report
