//===- Trace.cpp - the timeline as trace events ---------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Report/Report.h"

#include "cgpt/Support/Format.h"

#include "llvm/ADT/STLExtras.h"

namespace cgpt::report {
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
              {event.facts.flops, event.facts.bytes, event.facts.bound}, 0, tid,
              event.start * 1e6, event.duration * 1e6);
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

} // namespace cgpt::report
