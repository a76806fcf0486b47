//===- cgpt-run.cpp - compile and simulate a GPT training step ------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// cgpt-run takes a model file (Model Zoo params YAML, Hugging Face
// config.json) or IR from cgpt-opt at any level, compiles one training step
// down to the wafer, simulates it on the target and the cluster, and
// reports how fast training goes and why. Usage and exit status:
// docs/tools/cgpt-run.md.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Frontend/ModelSpec.h"
#include "cgpt/InitAllDialects.h"
#include "cgpt/Pipelines/Pipelines.h"
#include "cgpt/Report/Report.h"
#include "cgpt/Support/Diagnostics.h"
#include "cgpt/Support/InputFile.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
enum class EmitKind { Summary, Transformer, Dataflow, Wafer };

cl::OptionCategory runCategory("cgpt-run options");
cl::opt<std::string> inputPath(cl::Positional, cl::Required,
                               cl::desc("<model file or .mlir>"),
                               cl::cat(runCategory));
cl::opt<EmitKind>
    emit("emit", cl::desc("What to print on standard output"),
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
cl::opt<std::string> tracePath(
    "trace", cl::desc("Write the simulated timeline (Chrome trace-event JSON)"),
    cl::value_desc("file"), cl::cat(runCategory));
cl::list<int64_t>
    numCsx("num-csx",
           cl::desc("Number of systems (overrides the file); a list such as "
                    "1,2,4,8,16 runs a sweep"),
           cl::CommaSeparated, cl::cat(runCategory));
cl::opt<std::string> plotPath(
    "plot",
    cl::desc("With a --num-csx sweep: draw samples/s by systems (.svg, or "
             ".png through rsvg-convert)"),
    cl::value_desc("file.svg|file.png"), cl::cat(runCategory));
cl::opt<int64_t> steps(
    "steps",
    cl::desc("Simulate this many optimizer steps, with Model Zoo log lines"),
    cl::init(0), cl::cat(runCategory));
cl::opt<int64_t> logSteps("log-steps",
                          cl::desc("With --steps: log every this many steps"),
                          cl::init(1), cl::cat(runCategory));
cl::opt<std::string> microBatchSize(
    "micro-batch-size",
    cl::desc("Micro-batch per system (overrides the file): an integer, "
             "auto, explore, explore:MIN-MAX or none"),
    cl::value_desc("size"), cl::cat(runCategory));
cl::opt<std::string>
    placementPath("emit-placement",
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
                                        std::optional<int64_t> systems,
                                        std::string &origin) {
  cgpt::frontend::ImportOptions options;
  options.numCsx = systems;
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
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      cgpt::readToolInput(inputPath);
  if (!buffer) {
    llvm::errs() << "cgpt-run: cannot read '" << inputPath
                 << "': " << llvm::toString(buffer.takeError()) << "\n";
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}

static void printModule(ModuleOp module) {
  module.print(llvm::outs());
  llvm::outs() << "\n";
}

/// Where errors about the input as a whole point: the start of the file
/// (a module the parser wraps around top-level ops has no location).
static Location inputLoc(ModuleOp module) {
  return FileLineColLoc::get(module.getContext(), inputPath, 1, 1);
}

/// The one op of `OpTy` in `module`, or null after a diagnostic when there
/// are several.
template <typename OpTy> static FailureOr<OpTy> findSingle(ModuleOp module) {
  auto ops = module.getOps<OpTy>();
  if (ops.empty())
    return OpTy();
  if (std::next(ops.begin()) != ops.end())
    return emitError(inputLoc(module))
           << "expected at most one '" << OpTy::getOperationName()
           << "' in the module";
  return *ops.begin();
}

/// Fails with a diagnostic when options ask for what IR below the
/// transformer level has already fixed.
static LogicalResult checkLoweredInput(ModuleOp module, EmitKind inputLevel) {
  StringRef level = inputLevel == EmitKind::Dataflow ? "dataflow" : "wafer";
  if (target.getNumOccurrences() || recompute.getNumOccurrences())
    return emitError(inputLoc(module))
           << "--target and --recompute apply to model files and transformer "
              "IR; this "
           << level << " IR is already lowered for its target";
  if (emit != EmitKind::Summary && emit < inputLevel)
    return emitError(inputLoc(module))
           << "--emit asks for IR above the input's level; the input is "
           << level << " IR";
  return success();
}

/// Compiles the input for `systems` (the file's when unset) and simulates
/// a step. The input may be a model file or IR at any of the three levels;
/// lowering starts where the input stands. Prints the IR `--emit` asks for
/// on the way.
static FailureOr<cgpt::report::StepReport>
compileAndSimulate(MLIRContext &context, std::optional<int64_t> systems,
                   OwningOpRef<ModuleOp> &module) {
  cgpt::report::StepReport report;
  report.sourcePath = inputPath;
  module = loadModule(context, systems, report.origin);
  if (!module)
    return failure();
  FailureOr<cgpt::transformer::TrainStepOp> step =
      findSingle<cgpt::transformer::TrainStepOp>(*module);
  FailureOr<cgpt::dataflow::ProgramOp> program =
      findSingle<cgpt::dataflow::ProgramOp>(*module);
  FailureOr<cgpt::wafer::DeviceOp> device =
      findSingle<cgpt::wafer::DeviceOp>(*module);
  if (failed(step) || failed(program) || failed(device))
    return failure();
  if (!!*step + !!*program + !!*device != 1)
    return emitError(inputLoc(*module))
           << "expected one transformer.train_step, dataflow.program or "
              "wafer.device in the module";

  if (*step) {
    if (failed(cgpt::report::describeStep(*step, report)))
      return failure();
    if (emit == EmitKind::Transformer)
      printModule(*module);
    cgpt::LowerToDataflowOptions lowering;
    lowering.target = std::string(target);
    lowering.recompute = cgpt::dataflow::Recompute(recompute);
    PassManager toDataflow(&context);
    cgpt::buildLowerToDataflowPipeline(toDataflow, lowering);
    if (failed(toDataflow.run(*module)))
      return failure();
    program = *module->getOps<cgpt::dataflow::ProgramOp>().begin();
  } else if (failed(checkLoweredInput(*module, *program ? EmitKind::Dataflow
                                                        : EmitKind::Wafer))) {
    return failure();
  }

  if (*program) {
    cgpt::report::describeProgram(*program, report);
    if (emit == EmitKind::Dataflow)
      printModule(*module);
    PassManager toWafer(&context);
    cgpt::buildDataflowToWaferPipeline(toWafer);
    if (failed(toWafer.run(*module)))
      return failure();
    device = *module->getOps<cgpt::wafer::DeviceOp>().begin();
  }
  if (emit == EmitKind::Wafer)
    printModule(*module);

  FailureOr<cgpt::target::WaferTargetModel> targetModel =
      cgpt::target::WaferTargetModel::load((*device).getTarget(), &context);
  if (failed(targetModel))
    return failure();
  // The simulator checks the device is placed and planned; describing it
  // relies on that.
  FailureOr<cgpt::sim::SimulationResult> simulation =
      cgpt::sim::simulateStep(*device, *targetModel);
  if (failed(simulation))
    return failure();
  cgpt::report::describeDevice(*device, *targetModel, report);
  report.simulation = std::move(*simulation);
  return report;
}

/// Says why writing `what` (e.g. "report ", or "" for a picture) to `path`
/// failed; true when `error` is success.
static bool written(llvm::Error error, StringRef what, StringRef path) {
  if (!error)
    return true;
  llvm::errs() << "cgpt-run: cannot write " << what << "'" << path
               << "': " << llvm::toString(std::move(error)) << "\n";
  return false;
}

static bool drawPlacement(ModuleOp module) {
  auto device = *module.getOps<cgpt::wafer::DeviceOp>().begin();
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
    return false;
  }
  return written(cgpt::report::writePlacementSvg(placementPath, device, drawn),
                 "", placementPath);
}

/// Model Zoo style log lines for `steps` simulated optimizer steps, with a
/// progress bar when standard error is a terminal.
static void logTraining(const cgpt::report::StepReport &report) {
  cgpt::report::StepRates rates = cgpt::report::computeStepRates(report);
  bool terminal = llvm::sys::Process::StandardErrIsDisplayed();
  for (int64_t step = 1; step <= steps; ++step) {
    if (step % logSteps == 0 || step == steps)
      llvm::outs() << llvm::formatv(
          "global_step = {0}, rate = {1:f4} steps/sec, samples/sec = {2:f2}, "
          "simulated time = {3:f3} s\n",
          step, rates.stepsPerSecond, rates.samplesPerSecond,
          step * rates.seconds);
    if (terminal) {
      int filled = static_cast<int>(40 * step / steps);
      llvm::errs() << "\r[" << std::string(filled, '#')
                   << std::string(40 - filled, ' ') << "] " << step << "/"
                   << steps;
    }
  }
  if (terminal)
    llvm::errs() << "\n";
}

static bool writeReport(const cgpt::report::StepReport &report) {
  if (!reportPath.empty() &&
      !written(cgpt::report::writeJsonFile(reportPath,
                                           cgpt::report::buildReport(report)),
               "report ", reportPath))
    return false;
  return tracePath.empty() ||
         written(cgpt::report::writeTrace(tracePath, *report.simulation),
                 "trace ", tracePath);
}

/// Writes the sweep's chart: SVG directly, PNG by converting that SVG with
/// rsvg-convert (librsvg2-bin, which scripts/setup.sh installs).
static bool writePlot(llvm::StringRef model,
                      llvm::ArrayRef<cgpt::report::ScalingRow> rows) {
  bool png = llvm::StringRef(plotPath).ends_with_insensitive(".png");
  std::string svgPath = png ? plotPath + ".svg" : std::string(plotPath);
  if (!written(cgpt::report::writeScalingPlot(svgPath, model, rows), "",
               svgPath))
    return false;
  if (!png)
    return true;
  llvm::ErrorOr<std::string> converter =
      llvm::sys::findProgramByName("rsvg-convert");
  if (!converter) {
    llvm::errs() << "cgpt-run: --plot " << plotPath
                 << " needs rsvg-convert (Debian package librsvg2-bin); the "
                    "chart is in '"
                 << svgPath << "'\n";
    return false;
  }
  std::string message;
  int status = llvm::sys::ExecuteAndWait(*converter,
                                         {*converter, "-o", plotPath, svgPath},
                                         std::nullopt, {}, 0, 0, &message);
  llvm::sys::fs::remove(svgPath);
  if (status != 0) {
    llvm::errs() << "cgpt-run: rsvg-convert could not write '" << plotPath
                 << "'" << (message.empty() ? "" : ": " + message) << "\n";
    return false;
  }
  return true;
}

/// Option combinations that cannot work, refused before any compiling.
static bool checkOptions() {
  auto refuse = [](const llvm::Twine &message) {
    llvm::errs() << "cgpt-run: " << message << "\n";
    return false;
  };
  if (!plotPath.empty()) {
    if (numCsx.size() < 2)
      return refuse("--plot draws a sweep; give --num-csx a list such as "
                    "1,2,4,8,16");
    llvm::StringRef path(plotPath);
    if (!path.ends_with_insensitive(".svg") &&
        !path.ends_with_insensitive(".png"))
      return refuse("--plot '" + path + "' must end in .svg or .png");
  }
  if (numCsx.size() > 1 &&
      (!reportPath.empty() || !tracePath.empty() || !placementPath.empty() ||
       steps > 0 || emit != EmitKind::Summary))
    return refuse("a --num-csx sweep prints its table only; run one number "
                  "of systems for --report, --trace, --emit-placement, "
                  "--steps or --emit");
  if (steps < 0 || logSteps < 1)
    return refuse("--steps must be 0 or more and --log-steps 1 or more");
  return true;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(runCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "cgpt-run: compile a GPT training step and "
                              "simulate it on a wafer-scale cluster\n");
  if (!checkOptions())
    return EXIT_FAILURE;
  DialectRegistry registry;
  cgpt::registerAllDialects(registry);
  MLIRContext context(registry);
  // Diagnostics name the op by location; its printed form would only
  // repeat that at length.
  context.printOpOnDiagnostic(false);
  cgpt::PlainDiagnosticHandler diagnostics(&context, llvm::errs());

  // A sweep: one compile and simulation per number of systems.
  if (numCsx.size() > 1) {
    std::vector<cgpt::report::ScalingRow> rows;
    std::string model;
    for (int64_t systems : numCsx) {
      OwningOpRef<ModuleOp> module;
      FailureOr<cgpt::report::StepReport> report =
          compileAndSimulate(context, systems, module);
      if (failed(report))
        return EXIT_FAILURE;
      model = report->model.name;
      cgpt::report::StepRates rates = cgpt::report::computeStepRates(*report);
      rows.push_back({systems, report->wafer->microBatch,
                      report->wafer->gradAccumSteps, rates.seconds,
                      rates.samplesPerSecond});
    }
    cgpt::report::printScalingTable(llvm::outs(), rows);
    if (!plotPath.empty() && !writePlot(model, rows))
      return EXIT_FAILURE;
    return EXIT_SUCCESS;
  }

  std::optional<int64_t> systems;
  if (!numCsx.empty())
    systems = numCsx.front();
  OwningOpRef<ModuleOp> module;
  FailureOr<cgpt::report::StepReport> report =
      compileAndSimulate(context, systems, module);
  if (failed(report))
    return EXIT_FAILURE;
  if (!placementPath.empty() && !drawPlacement(*module))
    return EXIT_FAILURE;
  if (!writeReport(*report))
    return EXIT_FAILURE;
  if (emit == EmitKind::Summary)
    cgpt::report::printSummary(llvm::outs(), *report);
  if (steps > 0)
    logTraining(*report);
  return EXIT_SUCCESS;
}
