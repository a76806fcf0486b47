//===- Report.h - what cgpt tells its users ---------------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The human summary and the JSON report of one compiled training step. Both
// are built from the IR, never from the file it came from, so a model file
// and the IR printed from it report the same.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_REPORT_REPORT_H
#define CGPT_REPORT_REPORT_H

#include "cgpt/Dialect/Transformer/Analysis/ModelFacts.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace cgpt::report {

/// Prints the summary a person reads first. `origin` says how the model
/// file was read (empty for IR input).
void printSummary(llvm::raw_ostream &os, transformer::TrainStepOp step,
                  const transformer::ModelFacts &facts,
                  llvm::StringRef sourcePath, llvm::StringRef origin);

/// The JSON report: `model.*` and `batch.*` (docs/tools/cgpt-run.md).
llvm::json::Value buildReport(transformer::TrainStepOp step,
                              const transformer::ModelFacts &facts);

/// Writes `value` to `path` through a temporary file renamed into place, so
/// an existing report is never left half-written.
llvm::Error writeJsonFile(llvm::StringRef path, const llvm::json::Value &value);

} // namespace cgpt::report

#endif // CGPT_REPORT_REPORT_H
