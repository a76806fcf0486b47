//===- Run.h - what one cgpt-run invocation does ----------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// cgpt-run parses its command line into RunOptions and hands them here:
// checkRunOptions refuses what cannot work before any compiling, and
// runCommand compiles, simulates, sweeps or trains, printing to standard
// output and staging every file it writes in an OutputFiles that the tool
// commits once everything succeeded. docs/tools/cgpt-run.md is the manual.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DRIVER_RUN_H
#define CGPT_DRIVER_RUN_H

#include "cgpt/Driver/CompileSession.h"
#include "cgpt/Sim/Mesh/BandLinks.h"
#include "cgpt/Support/Diagnostics.h"
#include "cgpt/Support/OutputFiles.h"

#include "llvm/Support/Error.h"

#include <atomic>

namespace cgpt::driver {

/// The most points a sweep runs, all its axes together: each is a compile.
constexpr size_t kMaxSweepEntries = 128;
/// A training run's length, as --train-steps or --train-tokens give it:
/// far beyond any run trained (Cerebras-GPT 13B: 174,357 steps, 2.6e11
/// tokens).
constexpr int64_t kMaxTrainSteps = int64_t(1) << 40;
constexpr double kMaxTrainTokens = 1e18;

/// The numbers of a list-valued option such as --num-csx (`option` names
/// it in errors), its comma-separated `items` each a number (`4`) or an
/// inclusive range (`4-8`), in order; a range is refused before it is
/// expanded when it alone holds more than a sweep runs.
llvm::Expected<std::vector<int64_t>>
parseNumberList(llvm::StringRef option, llvm::ArrayRef<std::string> items);

/// A model to compile: a file (or "-"), or, when `text` is set, those
/// contents under the name `path` (the Python package's strings and dicts).
struct ModelInput {
  std::string path;
  std::optional<std::string> text;
};

/// What a sweep varies besides the systems. An empty list stands for the
/// one value `RunOptions::compile` holds: the file's, or the option given
/// once.
struct SweepAxes {
  std::vector<ModelInput> inputs;
  std::vector<std::string> targets;
  std::vector<int64_t> sequenceLengths;
  std::vector<int64_t> batchSizes;
  /// As written: an integer, auto, explore, explore:MIN-MAX or none.
  std::vector<std::string> microBatches;
};

struct RunOptions {
  CompileOptions compile;
  /// Systems to compile for: none (the file's), one, or a sweep.
  std::vector<int64_t> numCsx;
  SweepAxes sweep;
  /// Whether this run is a sweep (more than one point), and how many
  /// points it has.
  bool isSweep() const { return sweepSize() > 1; }
  size_t sweepSize() const;
  /// Files to write, when asked for (an empty name is refused).
  std::optional<std::string> reportPath, tablePath, tracePath, plotPath,
      placementPath, compileReportPath;
  /// The stage --emit-placement draws; empty: the first decoder layer's
  /// forward stage.
  std::string placementStage;
  /// Optimizer steps to simulate (or train, with `functional`), when given.
  std::optional<int64_t> steps;
  /// Steps between log lines; 0: about ten lines in all.
  int64_t logSteps = 0;
  bool cycleLevel = false;
  /// The cycle-level run's threads (0: one per host core), the most it
  /// may take as given (`10min`, `2e10` core-cycles; empty: the default),
  /// the MPI job it runs over (each process one band), and a flag that
  /// stops it cleanly.
  int threads = 0;
  std::string cycleLevelLimit;
  /// The most host memory a --functional or --cycle-level run may need, as
  /// given ("8G"); empty: three quarters of the host's memory.
  std::string memoryLimit;
  cgpt::sim::mesh::BandLinks *processes = nullptr;
  const std::atomic<bool> *stop = nullptr;

  // Functional mode.
  bool functional = false;
  std::optional<uint64_t> seed;
  std::string dataPath, initWeightsPath;
  std::optional<std::string> saveWeightsPath, dumpStepPath, lossCurvePath;
  bool bf16Storage = false;
};

/// The run's lists as a user gives them (cgpt-run's options, the Python
/// package's arguments): numbers as text, so that ranges (`1-16`) work.
struct RunLists {
  std::vector<ModelInput> inputs;
  std::vector<std::string> numCsx, targets, sequenceLengths, batchSizes,
      microBatches;
};

/// Sets each list of `lists` with one value as that option of `options`,
/// and makes each longer one an axis of the sweep; fails naming the option
/// of a value that is not one.
llvm::Error setRunLists(RunOptions &options, const RunLists &lists);

/// Refuses option combinations that cannot work and output paths that
/// cannot be written (a folder, an input, another output), before any
/// compiling. The message reads after "cgpt-run: ".
llvm::Error checkRunOptions(const RunOptions &options);

/// Compiles, simulates, sweeps or trains as `options` say, printing to
/// `out` and staging every file in `outputs`. Diagnostics go to the
/// context's handler, other errors to standard error.
mlir::LogicalResult runCommand(mlir::MLIRContext &context,
                               const RunOptions &options,
                               llvm::raw_ostream &out, OutputFiles &outputs);

/// What a sweep gave: a row per point, and each point's report when asked
/// for (without its timeline).
struct SweepResult {
  std::vector<report::SweepRow> rows;
  std::vector<report::StepReport> reports;
};

/// Compiles and simulates every point of `options`' sweep (its axes and
/// systems, the systems innermost), in order. `keepReports` keeps each
/// point's report; `warnings` (when given) fills each report's warnings.
mlir::FailureOr<SweepResult>
runSweep(mlir::MLIRContext &context, const RunOptions &options,
         llvm::raw_ostream &irOut, bool keepReports,
         const WarningRecorder *warnings = nullptr);

} // namespace cgpt::driver

#endif // CGPT_DRIVER_RUN_H
