//===- Report.h - what cgpt tells its users ---------------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The human summary and the JSON report of one compiled training step. Both
// are built from the IR of each stage, never from the file it came from, so
// a model file and the IR printed from it report the same.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_REPORT_REPORT_H
#define CGPT_REPORT_REPORT_H

#include "cgpt/Dialect/Dataflow/Analysis/StepCosts.h"
#include "cgpt/Dialect/Transformer/Analysis/ModelFacts.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace cgpt::report {

/// What the report says about a step, gathered stage by stage.
struct StepReport {
  /// Where the step came from: the input path and, for a model file, how
  /// it was read (empty for IR).
  std::string sourcePath;
  std::string origin;

  // From the transformer step.
  transformer::ModelFacts model;
  int64_t perSystemBatch = 0;
  std::string microBatchRequest;
  bool mup = false;
  std::string optimizer;
  std::string precision;

  // From the dataflow program, once lowered.
  struct Dataflow {
    std::string target;
    std::string recompute;
    dataflow::StepCosts costs;
  };
  std::optional<Dataflow> dataflow;
};

/// Fills the transformer part of a report from `step`.
mlir::LogicalResult describeStep(transformer::TrainStepOp step,
                                 StepReport &report);
/// Fills the dataflow part of a report from `program`.
void describeProgram(dataflow::ProgramOp program, StepReport &report);

/// Prints the summary a person reads first.
void printSummary(llvm::raw_ostream &os, const StepReport &report);

/// The JSON report (docs/tools/cgpt-run.md lists its keys).
llvm::json::Value buildReport(const StepReport &report);

/// Writes `value` to `path` through a temporary file renamed into place, so
/// an existing report is never left half-written.
llvm::Error writeJsonFile(llvm::StringRef path, const llvm::json::Value &value);

} // namespace cgpt::report

#endif // CGPT_REPORT_REPORT_H
