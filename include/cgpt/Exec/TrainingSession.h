//===- TrainingSession.h - a functional training run ------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// What `cgpt-run --functional` does once the step is compiled: start from
// seeded weights or a safetensors file, read a text or make synthetic
// tokens, run the optimizer steps with Model Zoo 2.x log lines, stop on a
// loss that is not a number, and hand back the trained weights and the
// last step in full as safetensors bytes for the caller to write.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_EXEC_TRAININGSESSION_H
#define CGPT_EXEC_TRAININGSESSION_H

#include "cgpt/Exec/KernelOffload.h"
#include "cgpt/Exec/Parameters.h"

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"
#include "cgpt/Dialect/Wafer/IR/Wafer.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace cgpt::exec {

struct SessionOptions {
  /// Optimizer steps to run (at least one).
  int64_t steps = 1;
  /// A log line every this many steps, and at the last.
  int64_t logEvery = 1;
  uint64_t seed = 0;
  /// A text to train on, tokenized by bytes; empty: seeded synthetic tokens.
  std::string dataPath;
  /// Weights to start from (safetensors); empty: the seeded initialization.
  std::string initWeightsPath;
  bool bf16Storage = false;
  /// Runs the kernels it takes in place of the executor (Executor.h).
  KernelOffload *offload = nullptr;
  /// Keep the last step in full (batch, weights and moments before it,
  /// gradients, loss, weights after it).
  bool dumpLastStep = false;
  /// The simulated system's rate, for the log lines (Model Zoo's Rate and
  /// GlobalRate; the host's own pace is said apart).
  double samplesPerSecond = 0;
  /// Where a long run says, after its first step, how long the rest will
  /// take on this host (and, on a terminal, how far it has gone); null:
  /// nowhere.
  llvm::raw_ostream *estimateLog = nullptr;
};

struct SessionResult {
  std::vector<double> losses;
  /// The trained weights, as a safetensors file.
  std::string weights;
  /// The last step in full, as a safetensors file (when asked).
  std::string lastStep;
  /// Wall-clock seconds the steps took on this host.
  double hostSeconds = 0;
};

/// Trains `program` (placed as `device`) for `options.steps` steps,
/// printing what it runs and a log line every `options.logEvery` steps to
/// `log`. Fails with a message for people (a weights file that does not
/// match, a text too short, a loss that is not a number, naming its step).
llvm::Expected<SessionResult>
runTrainingSession(dataflow::ProgramOp program, wafer::DeviceOp device,
                   std::vector<ParameterSpec> specs, llvm::StringRef modelName,
                   const SessionOptions &options, llvm::raw_ostream &log);

} // namespace cgpt::exec

#endif // CGPT_EXEC_TRAININGSESSION_H
