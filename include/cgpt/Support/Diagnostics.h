//===- Diagnostics.h - one-line diagnostics for cgpt's tools ----*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SUPPORT_DIAGNOSTICS_H
#define CGPT_SUPPORT_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"

#include <string>
#include <vector>

namespace cgpt {

/// Prints every diagnostic of `context` as one line,
/// `file:line:col: error: message`, the form compilers use and editors
/// jump to. Notes follow on lines of their own. Locations without a file
/// (an op built by a pass) print as `<unknown>`.
class PlainDiagnosticHandler : public mlir::ScopedDiagnosticHandler {
public:
  PlainDiagnosticHandler(mlir::MLIRContext *context, llvm::raw_ostream &os);
};

/// Keeps every warning emitted while it lives, as the line the plain
/// handler prints ("file:line:col: warning: ..."), and passes each on to
/// the handler installed before it: for reports that list them.
class WarningRecorder : public mlir::ScopedDiagnosticHandler {
public:
  explicit WarningRecorder(mlir::MLIRContext *context);
  const std::vector<std::string> &getWarnings() const { return warnings; }

private:
  std::vector<std::string> warnings;
};

} // namespace cgpt

#endif // CGPT_SUPPORT_DIAGNOSTICS_H
