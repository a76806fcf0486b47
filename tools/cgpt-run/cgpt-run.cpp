//===- cgpt-run.cpp - compile and report a GPT training step ---------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// cgpt-run takes a model file (Model Zoo params YAML, Hugging Face
// config.json) or transformer IR, and reports what one training step is.
// Usage and exit status: docs/tools/cgpt-run.md.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Frontend/ModelSpec.h"
#include "cgpt/InitAllDialects.h"
#include "cgpt/Pipelines/Pipelines.h"
#include "cgpt/Report/Report.h"
#include "cgpt/Support/Diagnostics.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
enum class EmitKind { Summary, Transformer, Dataflow };

cl::OptionCategory runCategory("cgpt-run options");
cl::opt<std::string> inputPath(cl::Positional, cl::Required,
                               cl::desc("<model file or .mlir>"),
                               cl::cat(runCategory));
cl::opt<EmitKind> emit(
    "emit", cl::desc("What to print on standard output"),
    cl::values(clEnumValN(EmitKind::Summary, "summary",
                          "the human summary (default)"),
               clEnumValN(EmitKind::Transformer, "transformer",
                          "the imported transformer IR"),
               clEnumValN(EmitKind::Dataflow, "dataflow",
                          "the tiled dataflow IR")),
    cl::init(EmitKind::Summary), cl::cat(runCategory));
cl::opt<std::string> reportPath("report",
                                cl::desc("Write the JSON report to this file"),
                                cl::value_desc("file"), cl::cat(runCategory));
cl::opt<int64_t> numCsx("num-csx",
                        cl::desc("Number of systems (overrides the file)"),
                        cl::init(0), cl::cat(runCategory));
cl::opt<std::string> target("target",
                            cl::desc("Target: wse2 (default), wse3, mini, or "
                                     "a target description file"),
                            cl::init("wse2"), cl::cat(runCategory));
cl::opt<cgpt::dataflow::Recompute> recompute(
    "recompute", cl::desc("Which activations the backward pass recomputes"),
    cl::values(clEnumValN(cgpt::dataflow::Recompute::none, "none",
                          "keep every activation the backward pass reads"),
               clEnumValN(cgpt::dataflow::Recompute::layer, "layer",
                          "keep each layer's input, recompute the rest "
                          "(default)")),
    cl::init(cgpt::dataflow::Recompute::layer), cl::cat(runCategory));
} // namespace

/// The input as a verified module: a model file is imported (and `origin`
/// says how it was read), anything else is parsed as MLIR.
static OwningOpRef<ModuleOp> loadModule(MLIRContext &context,
                                        std::string &origin) {
  cgpt::frontend::ImportOptions options;
  if (numCsx.getNumOccurrences())
    options.numCsx = numCsx;
  if (cgpt::frontend::isModelFile(inputPath)) {
    FailureOr<cgpt::frontend::ModelSpec> spec =
        cgpt::frontend::readModelFile(inputPath, &context, options);
    if (failed(spec))
      return nullptr;
    origin = cgpt::frontend::describeOrigin(*spec);
    OwningOpRef<ModuleOp> module =
        cgpt::frontend::buildTrainStep(*spec, &context);
    if (failed(verify(*module)))
      return nullptr;
    return module;
  }
  if (options.numCsx) {
    llvm::errs() << "cgpt-run: --num-csx applies to model files; '"
                 << inputPath << "' is IR whose systems are already fixed\n";
    return nullptr;
  }
  llvm::SourceMgr sourceMgr;
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(inputPath, /*IsText=*/true);
  if (!buffer) {
    llvm::errs() << "cgpt-run: cannot read '" << inputPath
                 << "': " << buffer.getError().message() << "\n";
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(runCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "cgpt-run: compile a GPT training step and "
                              "report on it\n");
  DialectRegistry registry;
  cgpt::registerAllDialects(registry);
  MLIRContext context(registry);
  cgpt::PlainDiagnosticHandler diagnostics(&context, llvm::errs());

  std::string origin;
  OwningOpRef<ModuleOp> module = loadModule(context, origin);
  if (!module)
    return EXIT_FAILURE;
  auto steps = module->getOps<cgpt::transformer::TrainStepOp>();
  if (std::distance(steps.begin(), steps.end()) != 1) {
    emitError(module->getLoc())
        << "expected exactly one transformer.train_step in the module";
    return EXIT_FAILURE;
  }
  cgpt::report::StepReport report;
  report.sourcePath = inputPath;
  report.origin = origin;
  if (failed(cgpt::report::describeStep(*steps.begin(), report)))
    return EXIT_FAILURE;
  if (emit == EmitKind::Transformer) {
    module->print(llvm::outs());
    llvm::outs() << "\n";
  }

  PassManager pm(&context);
  cgpt::LowerToDataflowOptions lowering;
  lowering.target = std::string(target);
  lowering.recompute = cgpt::dataflow::Recompute(recompute);
  cgpt::buildLowerToDataflowPipeline(pm, lowering);
  if (failed(pm.run(*module)))
    return EXIT_FAILURE;
  cgpt::report::describeProgram(
      *module->getOps<cgpt::dataflow::ProgramOp>().begin(), report);

  if (!reportPath.empty())
    if (llvm::Error error = cgpt::report::writeJsonFile(
            reportPath, cgpt::report::buildReport(report))) {
      llvm::errs() << "cgpt-run: cannot write report '" << reportPath
                   << "': " << llvm::toString(std::move(error)) << "\n";
      return EXIT_FAILURE;
    }

  switch (emit) {
  case EmitKind::Transformer:
    break;
  case EmitKind::Dataflow:
    module->print(llvm::outs());
    llvm::outs() << "\n";
    break;
  case EmitKind::Summary:
    cgpt::report::printSummary(llvm::outs(), report);
    break;
  }
  return EXIT_SUCCESS;
}
