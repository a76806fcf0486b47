//===- FrontendFuzzer.cpp - fuzz the model-file frontend ------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to the model-file reader as YAML or as JSON (the
// first byte chooses) and, when they read as a model, builds and verifies
// the transformer IR. Any outcome but a crash, a sanitizer report or a hang
// is fine: bad input must end in a diagnostic.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Transformer/IR/Transformer.h"
#include "cgpt/Frontend/ModelSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  mlir::MLIRContext context;
  context.loadDialect<cgpt::transformer::TransformerDialect>();
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  llvm::StringRef path = data[0] & 1 ? "fuzz.json" : "fuzz.yaml";
  llvm::StringRef text(reinterpret_cast<const char *>(data) + 1, size - 1);
  mlir::FailureOr<cgpt::frontend::ModelSpec> spec =
      cgpt::frontend::readModelText(path, text,
                                    data[0] & 1
                                        ? cgpt::frontend::ModelFormat::Json
                                        : cgpt::frontend::ModelFormat::Yaml,
                                    &context);
  if (mlir::succeeded(spec))
    (void)cgpt::frontend::buildTrainStep(*spec, &context);
  return 0;
}
