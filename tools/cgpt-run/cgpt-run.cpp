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
enum class EmitKind { Summary, Transformer, Dataflow, Wafer };

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
                          "the tiled dataflow IR"),
               clEnumValN(EmitKind::Wafer, "wafer",
                          "the placed, routed and planned wafer IR")),
    cl::init(EmitKind::Summary), cl::cat(runCategory));
cl::opt<std::string> reportPath("report",
                                cl::desc("Write the JSON report to this file"),
                                cl::value_desc("file"), cl::cat(runCategory));
cl::opt<int64_t> numCsx("num-csx",
                        cl::desc("Number of systems (overrides the file)"),
                        cl::init(0), cl::cat(runCategory));
cl::opt<std::string> microBatchSize(
    "micro-batch-size",
    cl::desc("Micro-batch per system (overrides the file): an integer, "
             "auto, explore, explore:MIN-MAX or none"),
    cl::value_desc("size"), cl::cat(runCategory));
cl::opt<std::string> placementPath(
    "emit-placement",
    cl::desc("Draw a stage's placement and SRAM heat map as SVG"),
    cl::value_desc("file.svg"), cl::cat(runCategory));
cl::opt<std::string> placementStage(
    "placement-stage",
    cl::desc("The stage --emit-placement draws (default: the first decoder "
             "layer's forward stage)"),
    cl::value_desc("name"), cl::cat(runCategory));
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
  if (microBatchSize.getNumOccurrences())
    options.microBatchSize = microBatchSize;
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
  if (options.numCsx || options.microBatchSize) {
    llvm::errs() << "cgpt-run: --num-csx and --micro-batch-size apply to "
                    "model files; '"
                 << inputPath << "' is IR whose batch is already fixed\n";
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
  // Diagnostics name the op by location; its printed form would only
  // repeat that at length.
  context.printOpOnDiagnostic(false);
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

  // Lower to dataflow first, to report on the kernels, then place.
  cgpt::LowerToDataflowOptions lowering;
  lowering.target = std::string(target);
  lowering.recompute = cgpt::dataflow::Recompute(recompute);
  PassManager toDataflow(&context);
  cgpt::buildLowerToDataflowPipeline(toDataflow, lowering);
  if (failed(toDataflow.run(*module)))
    return EXIT_FAILURE;
  cgpt::report::describeProgram(
      *module->getOps<cgpt::dataflow::ProgramOp>().begin(), report);
  if (emit == EmitKind::Dataflow) {
    module->print(llvm::outs());
    llvm::outs() << "\n";
  }

  PassManager toWafer(&context);
  cgpt::buildDataflowToWaferPipeline(toWafer);
  if (failed(toWafer.run(*module)))
    return EXIT_FAILURE;
  auto device = *module->getOps<cgpt::wafer::DeviceOp>().begin();
  FailureOr<cgpt::target::WaferTargetModel> targetModel =
      cgpt::target::WaferTargetModel::load(device.getTarget(), &context);
  if (failed(targetModel))
    return EXIT_FAILURE;
  cgpt::report::describeDevice(device, *targetModel, report);

  if (!placementPath.empty()) {
    cgpt::wafer::StageOp drawn;
    for (auto stage : device.getBody().front().getOps<cgpt::wafer::StageOp>())
      if (placementStage.empty() ? stage.getLayer().has_value()
                                 : stage.getSymName() == placementStage) {
        drawn = stage;
        break;
      }
    if (!drawn) {
      llvm::errs() << "cgpt-run: no stage '" << placementStage
                   << "' to draw; --emit=wafer lists the stages\n";
      return EXIT_FAILURE;
    }
    if (llvm::Error error =
            cgpt::report::writePlacementSvg(placementPath, device, drawn)) {
      llvm::errs() << "cgpt-run: cannot write '" << placementPath
                   << "': " << llvm::toString(std::move(error)) << "\n";
      return EXIT_FAILURE;
    }
  }

  if (!reportPath.empty())
    if (llvm::Error error = cgpt::report::writeJsonFile(
            reportPath, cgpt::report::buildReport(report))) {
      llvm::errs() << "cgpt-run: cannot write report '" << reportPath
                   << "': " << llvm::toString(std::move(error)) << "\n";
      return EXIT_FAILURE;
    }

  switch (emit) {
  case EmitKind::Transformer:
  case EmitKind::Dataflow:
    break;
  case EmitKind::Wafer:
    module->print(llvm::outs());
    llvm::outs() << "\n";
    break;
  case EmitKind::Summary:
    cgpt::report::printSummary(llvm::outs(), report);
    break;
  }
  return EXIT_SUCCESS;
}
