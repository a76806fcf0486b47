//===- Diagnostics.cpp - one-line diagnostics -----------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Support/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace cgpt {

/// The first file position inside `loc` (names, call sites and fusions
/// wrap one).
static std::optional<FileLineColLoc> findFilePosition(Location loc) {
  std::optional<FileLineColLoc> found;
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      found = file;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

static StringRef severityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

static void printOne(llvm::raw_ostream &os, Location loc,
                     DiagnosticSeverity severity, const Diagnostic &diag) {
  if (std::optional<FileLineColLoc> file = findFilePosition(loc))
    os << file->getFilename().getValue() << ':' << file->getLine() << ':'
       << file->getColumn();
  else
    os << "<unknown>";
  os << ": " << severityName(severity) << ": " << diag << "\n";
}

PlainDiagnosticHandler::PlainDiagnosticHandler(MLIRContext *context,
                                               llvm::raw_ostream &os)
    : ScopedDiagnosticHandler(context) {
  setHandler([&os](Diagnostic &diag) {
    printOne(os, diag.getLocation(), diag.getSeverity(), diag);
    for (const Diagnostic &note : diag.getNotes())
      printOne(os, note.getLocation(), note.getSeverity(), note);
    os.flush();
    return success();
  });
}

WarningRecorder::WarningRecorder(MLIRContext *context)
    : ScopedDiagnosticHandler(context) {
  setHandler([this](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Warning) {
      std::string line;
      llvm::raw_string_ostream os(line);
      printOne(os, diag.getLocation(), diag.getSeverity(), diag);
      warnings.push_back(StringRef(line).rtrim("\n").str());
    }
    // Not handled here: the handler before prints it.
    return failure();
  });
}

} // namespace cgpt
