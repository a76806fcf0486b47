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

#include "cgpt/Driver/CompileSession.h"
#include "cgpt/Exec/Parameters.h"
#include "cgpt/Exec/TrainingSession.h"
#include "cgpt/Frontend/ModelSpec.h"
#include "cgpt/InitAllDialects.h"
#include "cgpt/Report/Report.h"
#include "cgpt/Support/Diagnostics.h"
#include "cgpt/Support/Format.h"
#include "cgpt/Support/InputFile.h"
#include "cgpt/Support/OutputFiles.h"
#include "cgpt/Support/Version.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
using cgpt::driver::EmitKind;

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
cl::opt<std::string> tablePath(
    "table",
    cl::desc("Write the --num-csx sweep's table, or explore's, as CSV "
             "(.csv) or JSON (.json)"),
    cl::value_desc("file.csv|file.json"), cl::cat(runCategory));
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
cl::opt<int64_t>
    logSteps("log-steps",
             cl::desc("With --steps: log every this many steps (default: "
                      "about ten lines in all)"),
             cl::init(0), cl::cat(runCategory));
cl::opt<std::string> microBatchSize(
    "micro-batch-size",
    cl::desc("Micro-batch per system (overrides the file): an integer, "
             "auto, explore, explore:MIN-MAX or none"),
    cl::value_desc("size"), cl::cat(runCategory));
cl::opt<int64_t> batchSize(
    "batch-size",
    cl::desc("batch_size as the file would give it (overrides the file; a "
             "config.json gives none)"),
    cl::value_desc("sequences"), cl::cat(runCategory));
cl::opt<cgpt::frontend::BatchSemantics> batchSemantics(
    "batch-semantics",
    cl::desc("How to read the file's batch_size (default: from the file's "
             "schema and release, as the summary's 'read as' line says)"),
    cl::values(clEnumValN(cgpt::frontend::BatchSemantics::Global, "global",
                          "the batch of all systems together (Model Zoo "
                          "1.9.0 on)"),
               clEnumValN(cgpt::frontend::BatchSemantics::PerSystem,
                          "per-system",
                          "each system's batch (TensorFlow files and "
                          "PyTorch files before 1.9.0)")),
    cl::cat(runCategory));
cl::opt<int64_t>
    sequenceLength("sequence-length",
                   cl::desc("Tokens per sequence (overrides the file; at most "
                            "max_position_embeddings)"),
                   cl::value_desc("tokens"), cl::cat(runCategory));
cl::opt<std::string>
    placementPath("emit-placement",
                  cl::desc("Draw a stage's placement and SRAM heat map as SVG"),
                  cl::value_desc("file.svg"), cl::cat(runCategory));
cl::opt<bool> cycleLevel(
    "cycle-level",
    cl::desc("Also run each kernel through the cycle-level mesh model and "
             "print its cycles beside the analytic ones (meshes up to 128 x "
             "128 cores)"),
    cl::cat(runCategory));
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

cl::OptionCategory functionalCategory(
    "functional mode: execute the placed program with real numbers");
cl::opt<bool> functional(
    "functional",
    cl::desc("Execute --steps training steps for real (target mini unless "
             "--target says otherwise)"),
    cl::cat(functionalCategory));
cl::opt<uint64_t> seed("seed",
                       cl::desc("Seed of the weight initialization and of "
                                "synthetic batches (default 0)"),
                       cl::init(0), cl::cat(functionalCategory));
cl::opt<std::string>
    dataPath("data",
             cl::desc("Train on this text, tokenized by bytes (default: "
                      "seeded synthetic tokens)"),
             cl::value_desc("file"), cl::cat(functionalCategory));
cl::opt<std::string> initWeightsPath(
    "init-weights",
    cl::desc("Start from these weights (safetensors) instead of the seeded "
             "initialization"),
    cl::value_desc("file.safetensors"), cl::cat(functionalCategory));
cl::opt<std::string> saveWeightsPath(
    "save-weights", cl::desc("Write the trained weights (safetensors)"),
    cl::value_desc("file.safetensors"), cl::cat(functionalCategory));
cl::opt<std::string> dumpStepPath(
    "dump-step",
    cl::desc("Write the last step in full (safetensors): its batch, the "
             "weights and AdamW moments before it, the summed gradients, "
             "the loss and the weights after it"),
    cl::value_desc("file.safetensors"), cl::cat(functionalCategory));
cl::opt<std::string>
    lossCurvePath("loss-curve",
                  cl::desc("Draw the loss by step (.svg, or .png through "
                           "rsvg-convert)"),
                  cl::value_desc("file.svg|file.png"),
                  cl::cat(functionalCategory));
cl::opt<bool> bf16Storage(
    "bf16",
    cl::desc("Store streams in bfloat16 and accumulate in f32, as the wafer "
             "does in mixed precision (default: f32 throughout)"),
    cl::cat(functionalCategory));
} // namespace

/// The compile options the command line gives.
static cgpt::driver::CompileOptions compileOptions() {
  cgpt::driver::CompileOptions options;
  options.inputPath = inputPath;
  cgpt::frontend::ImportOptions &import = options.import;
  if (microBatchSize.getNumOccurrences())
    import.microBatchSize = microBatchSize;
  if (batchSize.getNumOccurrences())
    import.batchSize = batchSize;
  if (batchSemantics.getNumOccurrences())
    import.batchSemantics = batchSemantics;
  if (sequenceLength.getNumOccurrences())
    import.sequenceLength = sequenceLength;
  if (target.getNumOccurrences())
    options.target = target;
  if (recompute.getNumOccurrences())
    options.recompute = recompute;
  options.emit = emit;
  return options;
}

/// Every file this run writes, committed together once the run and its
/// standard output have succeeded (cgpt::OutputFiles).
static cgpt::OutputFiles outputs;

/// Stages what `print` prints as the contents of `path`.
static void stage(llvm::StringRef path,
                  llvm::function_ref<void(llvm::raw_ostream &)> print) {
  std::string contents;
  llvm::raw_string_ostream os(contents);
  print(os);
  os.flush();
  outputs.add(path, std::move(contents));
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
  FailureOr<const cgpt::target::WaferTargetModel *> target =
      device.getTargetModel();
  if (failed(target))
    return false;
  stage(placementPath, [&](llvm::raw_ostream &os) {
    cgpt::report::printPlacementSvg(os, device, drawn, **target);
  });
  return true;
}

/// Steps between log lines for a run of `total` steps: --log-steps, or
/// about ten lines in all.
static int64_t logInterval(int64_t total) {
  if (logSteps > 0)
    return logSteps;
  return std::max<int64_t>(1, total / 10 + (total % 10 != 0));
}

/// Model Zoo style log lines for `steps` simulated optimizer steps, with a
/// progress bar when standard error is a terminal.
static void logTraining(const cgpt::report::StepReport &report) {
  cgpt::report::StepRates rates = cgpt::report::computeStepRates(report);
  // Every simulated step is the same step, so only the logged ones are
  // visited: the loop runs once per line, whatever the number of steps.
  int64_t every = logInterval(steps);
  int64_t last = steps;
  for (int64_t step = std::min(every, last); step <= last;) {
    llvm::outs() << llvm::formatv(
        "global_step = {0}, rate = {1:f4} steps/sec, samples/sec = {2:f2}, "
        "simulated time = {3:f3} s\n",
        step, rates.stepsPerSecond, rates.samplesPerSecond,
        static_cast<double>(step) * rates.seconds);
    if (step == last)
      break;
    step = last - step > every ? step + every : last;
  }
}

static bool writeReport(const cgpt::report::StepReport &report) {
  if (!reportPath.empty())
    stage(reportPath, [&](llvm::raw_ostream &os) {
      cgpt::report::printJson(os, cgpt::report::buildReport(report));
    });
  if (!tablePath.empty()) {
    if (report.wafer->explored.empty()) {
      llvm::errs() << "cgpt-run: --table writes a --num-csx sweep's table or "
                      "explore's; this run explored no micro-batches (give "
                      "--micro-batch-size explore)\n";
      return false;
    }
    stage(tablePath, [&](llvm::raw_ostream &os) {
      cgpt::report::printDataTable(
          os, cgpt::report::exploreData(report.wafer->explored),
          llvm::StringRef(tablePath).ends_with_insensitive(".csv"));
    });
  }
  if (!tracePath.empty())
    stage(tracePath, [&](llvm::raw_ostream &os) {
      cgpt::report::printTrace(
          os, report.model.name + " on " + report.wafer->targetName,
          *report.simulation,
          report.cycleLevel ? &*report.cycleLevel : nullptr);
    });
  return true;
}

/// Stages a chart for `path`: SVG as `draw` prints it, or PNG converted
/// from that SVG by rsvg-convert (librsvg2-bin, which scripts/setup.sh
/// installs), through files of its own in the temporary folder.
static bool writeChart(llvm::StringRef path,
                       llvm::function_ref<void(llvm::raw_ostream &)> draw) {
  if (!path.ends_with_insensitive(".png")) {
    stage(path, draw);
    return true;
  }
  llvm::ErrorOr<std::string> converter =
      llvm::sys::findProgramByName("rsvg-convert");
  if (!converter) {
    llvm::errs() << "cgpt-run: " << path
                 << " needs rsvg-convert (Debian package librsvg2-bin); "
                    "write .svg instead\n";
    return false;
  }
  llvm::SmallString<128> svgPath, pngPath;
  if (llvm::sys::fs::createTemporaryFile("cgpt-chart", "svg", svgPath) ||
      llvm::sys::fs::createTemporaryFile("cgpt-chart", "png", pngPath)) {
    llvm::errs() << "cgpt-run: cannot make temporary files for '" << path
                 << "'\n";
    return false;
  }
  llvm::FileRemover removeSvg(svgPath), removePng(pngPath);
  std::error_code error;
  {
    llvm::raw_fd_ostream svg(svgPath, error);
    if (!error)
      draw(svg);
  }
  std::string message;
  int status = error ? -1
                     : llvm::sys::ExecuteAndWait(
                           *converter, {*converter, "-o", pngPath, svgPath},
                           std::nullopt, {}, 0, 0, &message);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> png =
      llvm::MemoryBuffer::getFile(pngPath, /*IsText=*/false);
  if (status != 0 || !png) {
    llvm::errs() << "cgpt-run: rsvg-convert could not draw '" << path << "'"
                 << (message.empty() ? "" : ": " + message) << "\n";
    return false;
  }
  outputs.add(path, (*png)->getBuffer().str());
  return true;
}

/// The most parameters functional mode executes: it keeps weights, AdamW
/// moments and gradients in host memory and runs on one host core.
static constexpr int64_t kMaxFunctionalParameters = int64_t(1) << 26;

/// --functional: compiles the step for the target (mini by default),
/// executes `--steps` optimizer steps of it with real numbers and logs the
/// loss. Prints what it ran, Model Zoo style log lines and the host time.
static bool runFunctional(cgpt::driver::CompileSession &session,
                          std::optional<int64_t> systems) {
  cgpt::report::StepReport report;
  OwningOpRef<ModuleOp> module = session.load(systems, report);
  if (!module)
    return false;
  FailureOr<cgpt::Phase> phase = cgpt::detectPhase(*module, session.inputLoc());
  if (failed(phase))
    return false;
  if (*phase != cgpt::Phase::Transformer) {
    emitError(session.inputLoc())
        << "--functional needs a model file or transformer IR: lowered IR "
           "no longer says how the weights start";
    return false;
  }
  auto step = *module->getOps<cgpt::transformer::TrainStepOp>().begin();
  if (failed(cgpt::report::describeStep(step, report)))
    return false;
  if (report.model.parameters > kMaxFunctionalParameters) {
    emitError(session.inputLoc())
        << "--functional executes models of up to "
        << cgpt::formatGrouped(kMaxFunctionalParameters)
        << " parameters on the host; this one has "
        << cgpt::formatGrouped(report.model.parameters);
    return false;
  }
  std::vector<cgpt::exec::ParameterSpec> specs =
      cgpt::exec::collectParameters(step);

  // The program executes as placed: lower a copy to the wafer for its
  // tiles and batch plan, and simulate it for the log lines' rate.
  if (failed(session.lower(
          *module, cgpt::Phase::Transformer, cgpt::Phase::Dataflow,
          target.getNumOccurrences() ? StringRef(target) : StringRef("mini"))))
    return false;
  OwningOpRef<ModuleOp> placed = module->clone();
  if (failed(session.lower(*placed, cgpt::Phase::Dataflow, cgpt::Phase::Wafer)))
    return false;
  auto device = *placed->getOps<cgpt::wafer::DeviceOp>().begin();
  if (failed(session.simulate(device, report)))
    return false;
  auto program = *module->getOps<cgpt::dataflow::ProgramOp>().begin();

  cgpt::exec::SessionOptions options;
  options.steps = std::max<int64_t>(steps, 1);
  options.logEvery = logInterval(options.steps);
  options.seed = seed;
  options.dataPath = dataPath;
  options.initWeightsPath = initWeightsPath;
  options.bf16Storage = bf16Storage;
  options.dumpLastStep = !dumpStepPath.empty();
  options.stepsPerSecond =
      cgpt::report::computeStepRates(report).stepsPerSecond;
  llvm::Expected<cgpt::exec::SessionResult> training =
      cgpt::exec::runTrainingSession(program, device, std::move(specs),
                                     report.model.name, options, llvm::outs());
  if (!training) {
    llvm::errs() << "cgpt-run: " << llvm::toString(training.takeError())
                 << "\n";
    return false;
  }
  llvm::outs().flush();
  llvm::errs() << llvm::formatv("executed {0} step(s) in {1:f2} s on this "
                                "host ({2:f4} s per step)\n",
                                options.steps, training->hostSeconds,
                                training->hostSeconds / options.steps);
  if (!saveWeightsPath.empty())
    outputs.add(saveWeightsPath, std::move(training->weights));
  if (!dumpStepPath.empty())
    outputs.add(dumpStepPath, std::move(training->lastStep));
  return lossCurvePath.empty() ||
         writeChart(lossCurvePath, [&](llvm::raw_ostream &os) {
           cgpt::report::printLossCurve(os, report.model.name,
                                        training->losses);
         });
}

/// Option combinations that cannot work, refused before any compiling.
/// Output files: named, not empty, and never the input itself.
static bool checkOutputPaths() {
  std::pair<cl::opt<std::string> *, llvm::StringRef> outputs[] = {
      {&reportPath, "--report"},
      {&tracePath, "--trace"},
      {&tablePath, "--table"},
      {&plotPath, "--plot"},
      {&placementPath, "--emit-placement"},
      {&saveWeightsPath, "--save-weights"},
      {&dumpStepPath, "--dump-step"},
      {&lossCurvePath, "--loss-curve"}};
  std::vector<std::string> inputs = {inputPath, dataPath, initWeightsPath};
  if (llvm::sys::fs::is_regular_file(target))
    inputs.push_back(target);
  std::vector<std::string> seen;
  for (auto [option, name] : outputs) {
    if (!option->getNumOccurrences())
      continue;
    llvm::StringRef path(*option);
    if (llvm::Error error = cgpt::OutputFiles::checkWritable(path, inputs)) {
      llvm::errs() << "cgpt-run: " << name << " '" << path
                   << "': " << llvm::toString(std::move(error)) << "\n";
      return false;
    }
    for (const std::string &other : seen)
      if (path == other || llvm::sys::fs::equivalent(path, other)) {
        llvm::errs() << "cgpt-run: " << name << " '" << path
                     << "' is also another output of this run\n";
        return false;
      }
    seen.push_back(path.str());
  }
  llvm::StringRef picture(placementPath);
  if (!picture.empty() && !picture.ends_with_insensitive(".svg")) {
    llvm::errs() << "cgpt-run: --emit-placement '" << picture
                 << "' must end in .svg: the picture is SVG\n";
    return false;
  }
  return true;
}

static bool checkOptions() {
  auto refuse = [](const llvm::Twine &message) {
    llvm::errs() << "cgpt-run: " << message << "\n";
    return false;
  };
  if (!checkOutputPaths())
    return false;
  // An option given twice is a mistake, not a choice of the last (lists,
  // such as --num-csx, take several values).
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option *option = entry.second;
    bool ours = llvm::is_contained(option->Categories, &runCategory) ||
                llvm::is_contained(option->Categories, &functionalCategory);
    if (ours && option->getNumOccurrencesFlag() == cl::Optional &&
        option->getNumOccurrences() > 1)
      return refuse("--" + option->ArgStr + " is given " +
                    llvm::Twine(option->getNumOccurrences()) +
                    " times; give it once");
  }
  if (!plotPath.empty()) {
    if (numCsx.size() < 2)
      return refuse("--plot draws a sweep; give --num-csx a list such as "
                    "1,2,4,8,16");
    llvm::StringRef path(plotPath);
    if (!path.ends_with_insensitive(".svg") &&
        !path.ends_with_insensitive(".png"))
      return refuse("--plot '" + path + "' must end in .svg or .png");
  }
  if (numCsx.size() > 1 && (!tracePath.empty() || !placementPath.empty() ||
                            steps > 0 || emit != EmitKind::Summary))
    return refuse("a --num-csx sweep prints its table (and writes --report, "
                  "--table, --plot); run one number of systems for --trace, "
                  "--emit-placement, --steps or --emit");
  if (!tablePath.empty()) {
    llvm::StringRef path(tablePath);
    if (!path.ends_with_insensitive(".csv") &&
        !path.ends_with_insensitive(".json"))
      return refuse("--table '" + path + "' must end in .csv or .json");
    bool exploring = llvm::StringRef(microBatchSize).starts_with("explore");
    if (numCsx.size() < 2 && !exploring && !microBatchSize.empty())
      return refuse("--table writes a --num-csx sweep's table or explore's; "
                    "--micro-batch-size " +
                    microBatchSize + " has none");
  }
  if (cycleLevel && (numCsx.size() > 1 || functional))
    return refuse("--cycle-level runs one simulation; it does not apply to "
                  "--num-csx sweeps or --functional runs");
  if (steps < 0 || logSteps < 0)
    return refuse("--steps and --log-steps must be 0 or more");
  if (functional && steps.getNumOccurrences() && steps == 0)
    return refuse("--functional trains at least one step; --steps 0 would "
                  "train none (leave --steps out for one)");
  bool functionalOnly = seed.getNumOccurrences() || !dataPath.empty() ||
                        !initWeightsPath.empty() || !saveWeightsPath.empty() ||
                        !dumpStepPath.empty() || !lossCurvePath.empty() ||
                        bf16Storage;
  if (functionalOnly && !functional)
    return refuse("--seed, --data, --init-weights, --save-weights, "
                  "--dump-step, --loss-curve and --bf16 apply to --functional "
                  "runs");
  if (functional) {
    if (numCsx.size() > 1 || !reportPath.empty() || !tracePath.empty() ||
        !placementPath.empty() || emit != EmitKind::Summary)
      return refuse("--functional runs one number of systems and prints its "
                    "log; --num-csx sweeps, --report, --trace, "
                    "--emit-placement and --emit belong to simulation runs");
    llvm::StringRef path(lossCurvePath);
    if (!path.empty() && !path.ends_with_insensitive(".svg") &&
        !path.ends_with_insensitive(".png"))
      return refuse("--loss-curve '" + path + "' must end in .svg or .png");
  }
  return true;
}

static int run(MLIRContext &context);

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions({&runCategory, &functionalCategory});
  llvm::cl::SetVersionPrinter(cgpt::printVersion);
  // MLIR's own options, as in cgpt-opt: IR dumps, timing, crash reproducers.
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  registerAsmPrinterCLOptions();
  llvm::BumpPtrAllocator allocator;
  llvm::StringSaver saver(allocator);
  llvm::Expected<llvm::SmallVector<const char *>> args =
      cgpt::expandResponseFiles(argc, argv, saver);
  if (!args) {
    llvm::errs() << "cgpt-run: " << llvm::toString(args.takeError()) << "\n";
    return EXIT_FAILURE;
  }
  cl::ParseCommandLineOptions(args->size(), args->data(),
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
  if (run(context) != EXIT_SUCCESS)
    return EXIT_FAILURE;
  // Standard output first: if it cannot be written, no file changes.
  llvm::outs().flush();
  if (llvm::outs().has_error()) {
    std::error_code error = llvm::outs().error();
    llvm::outs().clear_error();
    llvm::errs() << "cgpt-run: cannot write standard output: "
                 << error.message() << "; no file was written\n";
    return EXIT_FAILURE;
  }
  if (llvm::Error error = outputs.commit()) {
    llvm::errs() << "cgpt-run: " << llvm::toString(std::move(error))
                 << "; no file was changed\n";
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}

/// Compiles, simulates or trains as the options say, printing to standard
/// output and staging every file in `outputs`.
static int run(MLIRContext &context) {
  cgpt::driver::CompileSession session(context, compileOptions());
  // A sweep: one compile and simulation per number of systems.
  if (numCsx.size() > 1) {
    std::vector<cgpt::report::ScalingRow> rows;
    llvm::json::Array reports;
    std::string model;
    for (int64_t systems : numCsx) {
      OwningOpRef<ModuleOp> module;
      FailureOr<cgpt::report::StepReport> report =
          session.compileAndSimulate(systems, module, llvm::outs());
      if (failed(report))
        return EXIT_FAILURE;
      model = report->model.name;
      cgpt::report::StepRates rates = cgpt::report::computeStepRates(*report);
      rows.push_back({systems, report->wafer->microBatch,
                      report->wafer->gradAccumSteps, rates.seconds,
                      rates.samplesPerSecond});
      if (!reportPath.empty())
        reports.push_back(cgpt::report::buildReport(*report));
    }
    cgpt::report::printScalingTable(llvm::outs(), rows);
    if (!reportPath.empty())
      stage(reportPath, [&](llvm::raw_ostream &os) {
        cgpt::report::printJson(
            os, llvm::json::Object{{"sweep", std::move(reports)}});
      });
    if (!tablePath.empty())
      stage(tablePath, [&](llvm::raw_ostream &os) {
        cgpt::report::printDataTable(
            os, cgpt::report::scalingData(rows),
            llvm::StringRef(tablePath).ends_with_insensitive(".csv"));
      });
    if (!plotPath.empty() && !writeChart(plotPath, [&](llvm::raw_ostream &os) {
          cgpt::report::printScalingPlot(os, model, rows);
        }))
      return EXIT_FAILURE;
    return EXIT_SUCCESS;
  }

  std::optional<int64_t> systems;
  if (!numCsx.empty())
    systems = numCsx.front();
  if (functional)
    return runFunctional(session, systems) ? EXIT_SUCCESS : EXIT_FAILURE;
  OwningOpRef<ModuleOp> module;
  FailureOr<cgpt::report::StepReport> report =
      session.compileAndSimulate(systems, module, llvm::outs());
  if (failed(report))
    return EXIT_FAILURE;
  if (!placementPath.empty() && !drawPlacement(*module))
    return EXIT_FAILURE;
  if (cycleLevel) {
    FailureOr<cgpt::sim::mesh::CycleLevelRun> run =
        cgpt::sim::mesh::runCycleLevel(
            *module->getOps<cgpt::wafer::DeviceOp>().begin());
    if (failed(run))
      return EXIT_FAILURE;
    report->cycleLevel = std::move(*run);
  }
  if (!writeReport(*report))
    return EXIT_FAILURE;
  if (emit == EmitKind::Summary)
    cgpt::report::printSummary(llvm::outs(), *report);
  if (report->cycleLevel)
    cgpt::report::printCycleLevel(llvm::outs(), *report->cycleLevel);
  if (steps > 0)
    logTraining(*report);
  return EXIT_SUCCESS;
}
