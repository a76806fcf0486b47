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

#include "cgpt/Driver/Run.h"
#include "cgpt/Exec/ExecutionModels.h"
#include "cgpt/Frontend/ModelSpec.h"
#include "cgpt/InitAllDialects.h"
#include "cgpt/Support/Debug.h"
#include "cgpt/Support/Diagnostics.h"
#include "cgpt/Support/InputFile.h"
#include "cgpt/Support/Version.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"

#ifdef CGPT_ENABLE_MPI
#include "cgpt/Sim/Mesh/MpiLinks.h"
#endif

#include <atomic>
#include <csignal>
#include <memory>
#include <set>

using namespace mlir;
namespace cl = llvm::cl;

namespace {
using cgpt::driver::EmitKind;

cl::OptionCategory runCategory("cgpt-run options");
cl::list<std::string> inputPaths(cl::Positional, cl::OneOrMore,
                                 cl::desc("<model file or .mlir> (several "
                                          "model files sweep over them)"),
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
cl::opt<std::string> compileReportPath(
    "compile-report",
    cl::desc("Write the per-kernel compile report: each placed kernel's "
             "rectangle, cores and share of the mesh, wave, SRAM a core, "
             "time and bound; each stage's active cores (text, or .csv, "
             ".json)"),
    cl::value_desc("file"), cl::cat(runCategory));
cl::opt<std::string> tablePath(
    "table",
    cl::desc("Write a sweep's table, or explore's, as CSV (.csv) or JSON "
             "(.json)"),
    cl::value_desc("file.csv|file.json"), cl::cat(runCategory));
cl::opt<std::string> tracePath(
    "trace", cl::desc("Write the simulated timeline (Chrome trace-event JSON)"),
    cl::value_desc("file"), cl::cat(runCategory));
cl::list<std::string>
    numCsx("num-csx",
           cl::desc("Number of systems (overrides the file); a list such as "
                    "1,2,4,8,16 or 1-16 runs a sweep"),
           cl::value_desc("N|N1,N2,...|A-B"), cl::CommaSeparated,
           cl::cat(runCategory));
cl::opt<std::string> plotPath(
    "plot",
    cl::desc("With a --num-csx sweep: draw samples/s by systems, a line for "
             "each point of the other lists (.svg, or .png through "
             "rsvg-convert)"),
    cl::value_desc("file.svg|file.png"), cl::cat(runCategory));
cl::opt<int64_t> steps(
    "steps",
    cl::desc("Simulate this many optimizer steps, with Model Zoo log lines"),
    cl::init(0), cl::cat(runCategory));
cl::opt<int64_t> trainSteps(
    "train-steps",
    cl::desc("Steps of the training run whose time, tokens and energy the "
             "summary states (default: the learning-rate schedule's)"),
    cl::cat(runCategory));
cl::opt<double> trainTokens(
    "train-tokens",
    cl::desc("Tokens the training run trains on, instead of --train-steps"),
    cl::cat(runCategory));
cl::opt<double> pricePerSystemHour(
    "price-per-system-hour",
    cl::desc("Price of one system for an hour: the summary states the "
             "training run's cost"),
    cl::cat(runCategory));
cl::opt<int64_t>
    logSteps("log-steps",
             cl::desc("With --steps: log every this many steps (default: "
                      "about ten lines in all)"),
             cl::init(0), cl::cat(runCategory));
cl::list<std::string> microBatchSize(
    "micro-batch-size",
    cl::desc("Micro-batch per system (overrides the file): an integer, "
             "auto, explore, explore:MIN-MAX or none; a list sweeps"),
    cl::value_desc("size"), cl::CommaSeparated, cl::cat(runCategory));
cl::list<std::string> batchSize(
    "batch-size",
    cl::desc("batch_size as the file would give it (overrides the file; a "
             "config.json gives none); a list such as 128,256 or 64-66 "
             "sweeps"),
    cl::value_desc("sequences"), cl::CommaSeparated, cl::cat(runCategory));
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
cl::list<std::string>
    sequenceLength("sequence-length",
                   cl::desc("Tokens per sequence (overrides the file; at most "
                            "max_position_embeddings); a list sweeps"),
                   cl::value_desc("tokens"), cl::CommaSeparated,
                   cl::cat(runCategory));
cl::opt<std::string>
    placementPath("emit-placement",
                  cl::desc("Draw a stage's placement and SRAM heat map as SVG"),
                  cl::value_desc("file.svg"), cl::cat(runCategory));
cl::opt<bool> cycleLevel(
    "cycle-level",
    cl::desc("Also run each kernel through the cycle-level mesh model and "
             "print its cycles beside the analytic ones; with --functional, "
             "run the weight kernels on it with real values (meshes up to "
             "128 x 128 cores). Under mpirun, over the job's processes"),
    cl::cat(runCategory));
cl::opt<int> threads("threads",
                     cl::desc("Threads of the --cycle-level run (default: "
                              "one per host core)"),
                     cl::value_desc("n"), cl::init(0), cl::cat(runCategory));
cl::opt<std::string> cycleLevelLimit(
    "cycle-level-limit",
    cl::desc("The longest a --cycle-level run may take at the speed "
             "measured on this host before it starts (90s, 10min, 1h; "
             "default 10min), or a bare number of core-cycles (2e10)"),
    cl::value_desc("time|core-cycles"), cl::cat(runCategory));
cl::opt<std::string> memoryLimit(
    "memory-limit",
    cl::desc("The most host memory a --functional or --cycle-level run may "
             "need, judged before it starts: bytes, or with K, M, G or T "
             "(default: three quarters of this host's memory)"),
    cl::value_desc("size"), cl::cat(runCategory));
cl::opt<std::string> placementStage(
    "placement-stage",
    cl::desc("The stage --emit-placement draws (default: the first decoder "
             "layer's forward stage)"),
    cl::value_desc("name"), cl::cat(runCategory));
cl::list<std::string> target("target",
                             cl::desc("Target: wse2 (default), wse3, mini, or "
                                      "a target description file; a list "
                                      "such as wse2,wse3 sweeps"),
                             cl::CommaSeparated, cl::cat(runCategory));
cl::opt<std::string> placer(
    "placer",
    cl::desc("The placers the planner weighs: auto (default: whole-mesh and "
             "side-by-side, all three under explore), whole-mesh, "
             "side-by-side or pipelined"),
    cl::value_desc("name"), cl::init("auto"), cl::cat(runCategory));
cl::opt<cgpt::dataflow::Recompute> recompute(
    "recompute",
    cl::desc("Which activations the backward pass recomputes (default: "
             "layer or tensor, whichever plans the faster step)"),
    cl::values(clEnumValN(cgpt::dataflow::Recompute::none, "none",
                          "keep every activation the backward pass reads"),
               clEnumValN(cgpt::dataflow::Recompute::layer, "layer",
                          "keep each layer's input, recompute the rest"),
               clEnumValN(cgpt::dataflow::Recompute::tensor, "tensor",
                          "as layer, and rebuild late the recomputed "
                          "tensors live across a stage's peak")),
    cl::cat(runCategory));

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

/// The run the command line asks for, or what in it is not a value.
static llvm::Expected<cgpt::driver::RunOptions> runOptions() {
  cgpt::driver::RunOptions options;
  cgpt::driver::CompileOptions &compile = options.compile;
  cgpt::driver::RunLists lists;
  for (const std::string &path : inputPaths)
    lists.inputs.push_back({path, std::nullopt});
  lists.numCsx.assign(numCsx.begin(), numCsx.end());
  lists.targets.assign(target.begin(), target.end());
  lists.sequenceLengths.assign(sequenceLength.begin(), sequenceLength.end());
  lists.batchSizes.assign(batchSize.begin(), batchSize.end());
  lists.microBatches.assign(microBatchSize.begin(), microBatchSize.end());
  if (llvm::Error error = cgpt::driver::setRunLists(options, lists))
    return std::move(error);
  if (batchSemantics.getNumOccurrences())
    compile.import.batchSemantics = batchSemantics;
  if (recompute.getNumOccurrences())
    compile.recompute = recompute;
  if (placer.getNumOccurrences())
    compile.placer = placer;
  if (trainSteps.getNumOccurrences())
    compile.trainSteps = trainSteps;
  if (trainTokens.getNumOccurrences())
    compile.trainTokens = trainTokens;
  if (pricePerSystemHour.getNumOccurrences())
    compile.pricePerSystemHour = pricePerSystemHour;
  compile.emit = emit;
  // Only when one was given: a compile with them cannot reuse the quiet
  // lowering that weighed a recompute policy.
  compile.mlirCommandLine =
      llvm::any_of(cl::getRegisteredOptions(), [](const auto &entry) {
        return entry.second->getNumOccurrences() &&
               llvm::is_contained(entry.second->Categories,
                                  &cl::getGeneralCategory());
      });
  options.placementStage = placementStage;
  if (steps.getNumOccurrences())
    options.steps = steps;
  options.logSteps = logSteps;
  options.cycleLevel = cycleLevel;
  options.threads = threads;
  options.cycleLevelLimit = cycleLevelLimit;
  options.memoryLimit = memoryLimit;
  options.functional = functional;
  if (seed.getNumOccurrences())
    options.seed = seed;
  options.dataPath = dataPath;
  options.initWeightsPath = initWeightsPath;
  options.bf16Storage = bf16Storage;
  // Output files: set when given, even empty (checkRunOptions refuses that).
  for (auto [option, path] : {std::pair{&reportPath, &options.reportPath},
                              {&tracePath, &options.tracePath},
                              {&tablePath, &options.tablePath},
                              {&plotPath, &options.plotPath},
                              {&placementPath, &options.placementPath},
                              {&compileReportPath, &options.compileReportPath},
                              {&saveWeightsPath, &options.saveWeightsPath},
                              {&dumpStepPath, &options.dumpStepPath},
                              {&lossCurvePath, &options.lossCurvePath}})
    if (option->getNumOccurrences())
      *path = *option;
  return options;
}

/// What the command line itself gets wrong: an option given twice (a
/// mistake, not a choice of the last), a list such as --num-csx among them
/// (one comma-separated list takes several values).
static bool checkCommandLine() {
  // LLVM counts each value of a comma-separated list as an occurrence; the
  // values of one occurrence share its position on the command line.
  // cl::list's operator& gives its storage, hence std::addressof.
  for (cl::list<std::string> *list :
       {std::addressof(numCsx), std::addressof(target),
        std::addressof(sequenceLength), std::addressof(batchSize),
        std::addressof(microBatchSize)}) {
    std::set<unsigned> listPositions;
    for (unsigned index = 0; index < list->size(); ++index)
      listPositions.insert(list->getPosition(index));
    if (listPositions.size() > 1) {
      llvm::errs() << "cgpt-run: --" << list->ArgStr << " is given "
                   << listPositions.size()
                   << " times; give one list, such as --" << list->ArgStr << " "
                   << (*list)[0] << "," << (*list)[1] << "\n";
      return false;
    }
  }
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option *option = entry.second;
    bool ours = llvm::is_contained(option->Categories, &runCategory) ||
                llvm::is_contained(option->Categories, &functionalCategory);
    if (ours && option->getNumOccurrencesFlag() == cl::Optional &&
        option->getNumOccurrences() > 1) {
      llvm::errs() << "cgpt-run: --" << option->ArgStr << " is given "
                   << option->getNumOccurrences() << " times; give it once\n";
      return false;
    }
  }
  return true;
}

/// Set by SIGINT or SIGTERM: the cycle-level run stops after the cycle it
/// is simulating and reports what it simulated.
static std::atomic<bool> stopRequested{false};

extern "C" void requestStop(int) {
  stopRequested.store(true, std::memory_order_relaxed);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
#ifdef CGPT_ENABLE_MPI
  // Started by mpirun or srun: this process is one of the job's, and only
  // the first prints.
  std::unique_ptr<cgpt::sim::mesh::MpiLinks> processes =
      cgpt::sim::mesh::MpiLinks::join(argc, argv);
  bool quiet = processes && processes->worker() != 0;
#else
  bool quiet = false;
#endif
  cl::HideUnrelatedOptions({&runCategory, &functionalCategory});
  llvm::cl::SetVersionPrinter(cgpt::printVersion);
  // MLIR's own options, as in cgpt-opt: IR dumps, timing, crash reproducers.
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  registerAsmPrinterCLOptions();
  cgpt::registerDebugOptions();
  // They stay usable, listed by --help-hidden: --help shows cgpt-run's own.
  for (auto &entry : cl::getRegisteredOptions())
    if (llvm::is_contained(entry.second->Categories,
                           &cl::getGeneralCategory()) &&
        entry.second->getOptionHiddenFlag() == cl::NotHidden)
      entry.second->setHiddenFlag(cl::Hidden);
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
  if (!checkCommandLine())
    return EXIT_FAILURE;
  llvm::Expected<cgpt::driver::RunOptions> parsed = runOptions();
  if (!parsed) {
    llvm::errs() << "cgpt-run: " << llvm::toString(parsed.takeError()) << "\n";
    return EXIT_FAILURE;
  }
  cgpt::driver::RunOptions &options = *parsed;
#ifdef CGPT_ENABLE_MPI
  options.processes = processes.get();
#endif
  if (options.cycleLevel) {
    options.stop = &stopRequested;
    std::signal(SIGINT, requestStop);
    std::signal(SIGTERM, requestStop);
  }
  if (llvm::Error error = cgpt::driver::checkRunOptions(options)) {
    llvm::errs() << "cgpt-run: " << llvm::toString(std::move(error)) << "\n";
    return EXIT_FAILURE;
  }
  DialectRegistry registry;
  cgpt::registerAllDialects(registry);
  cgpt::exec::registerExecutionModels(registry);
  MLIRContext context(registry);
  // Diagnostics name the op by location; its printed form would only
  // repeat that at length.
  context.printOpOnDiagnostic(false);
  cgpt::PlainDiagnosticHandler diagnostics(&context, quiet ? llvm::nulls()
                                                           : llvm::errs());
  // Every file is staged, then committed together once the run and its
  // standard output have succeeded.
  cgpt::OutputFiles outputs;
  if (failed(cgpt::driver::runCommand(
          context, options, quiet ? llvm::nulls() : llvm::outs(), outputs)))
    return EXIT_FAILURE;
  if (quiet)
    return EXIT_SUCCESS;
  // Standard output first: if it cannot be written, no file changes.
  if (llvm::Error error = outputs.commitAfter(llvm::outs())) {
    llvm::errs() << "cgpt-run: " << llvm::toString(std::move(error)) << "\n";
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}
