//===- PipelineFuzzer.cpp - fuzz parse, verify, lower and simulate --------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Parses arbitrary bytes as IR of the three dialects and, when they parse
// and verify, lowers them from their level (transformer, dataflow or wafer)
// to placed wafer IR on the mini target and simulates the step: the path
// cgpt-run takes. Bad IR must end in a diagnostic, never a crash.
//
//===----------------------------------------------------------------------===//

#include "cgpt/InitAllDialects.h"
#include "cgpt/Pipelines/Pipelines.h"
#include "cgpt/Sim/Simulator.h"
#include "cgpt/Support/Nesting.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstddef>
#include <cstdint>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DialectRegistry registry;
  cgpt::registerAllDialects(registry);
  MLIRContext context(registry);
  ScopedDiagnosticHandler quiet(&context,
                                [](Diagnostic &) { return success(); });
  // MLIR's lexer reads a null-terminated buffer, as files are read; a copy
  // gives the fuzzer's bytes one.
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  // As the tools do: deep nesting is refused before MLIR's parser recurses.
  if (failed(cgpt::checkNestingDepth("fuzz.mlir", text, cgpt::TextSyntax::Mlir,
                                     &context)))
    return 0;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text),
                               llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 0;

  PassManager pm(&context);
  cgpt::LowerToDataflowOptions options;
  options.target = "mini";
  if (!module->getOps<cgpt::transformer::TrainStepOp>().empty()) {
    cgpt::buildLowerToDataflowPipeline(pm, options);
    cgpt::buildDataflowToWaferPipeline(pm, options);
  } else if (!module->getOps<cgpt::dataflow::ProgramOp>().empty()) {
    cgpt::buildDataflowToWaferPipeline(pm, options);
  } else {
    cgpt::buildCheckPlacedPipeline(pm);
  }
  if (failed(pm.run(*module)))
    return 0;
  for (auto device : module->getOps<cgpt::wafer::DeviceOp>())
    (void)cgpt::sim::simulateStep(device);
  return 0;
}
