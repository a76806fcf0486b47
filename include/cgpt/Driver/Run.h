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
#include "cgpt/Support/OutputFiles.h"

#include "llvm/Support/Error.h"

#include <atomic>

namespace cgpt::driver {

/// The most entries a --num-csx sweep runs: each is a compile.
constexpr size_t kMaxSweepEntries = 128;
/// A training run's length, as --train-steps or --train-tokens give it:
/// far beyond any run trained (Cerebras-GPT 13B: 174,357 steps, 2.6e11
/// tokens).
constexpr int64_t kMaxTrainSteps = int64_t(1) << 40;
constexpr double kMaxTrainTokens = 1e18;

/// The numbers of systems of a --num-csx value, its comma-separated
/// `items` each a number (`4`) or an inclusive range (`4-8`), in order; a
/// range is refused before it is expanded when it alone holds more than a
/// sweep runs.
llvm::Expected<std::vector<int64_t>>
parseSystemsList(llvm::ArrayRef<std::string> items);

struct RunOptions {
  CompileOptions compile;
  /// Systems to compile for: none (the file's), one, or a sweep.
  std::vector<int64_t> numCsx;
  /// Files to write, when asked for (an empty name is refused).
  std::optional<std::string> reportPath, tablePath, tracePath, plotPath,
      placementPath;
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

} // namespace cgpt::driver

#endif // CGPT_DRIVER_RUN_H
