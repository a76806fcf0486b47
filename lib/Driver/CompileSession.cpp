//===- CompileSession.cpp - compile and simulate one input ----------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Driver/CompileSession.h"

#include "cgpt/Dialect/Transformer/IR/Transformer.h"
#include "cgpt/Dialect/Wafer/IR/Wafer.h"
#include "cgpt/Sim/Simulator.h"
#include "cgpt/Support/Format.h"
#include "cgpt/Support/InputFile.h"
#include "cgpt/Support/Nesting.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace cgpt;
using namespace cgpt::driver;

OwningOpRef<ModuleOp> CompileSession::load(std::optional<int64_t> systems,
                                           report::StepReport &report) {
  frontend::ImportOptions import = options.import;
  import.numCsx = systems;
  StringRef inputPath = options.inputPath;
  report.sourcePath = options.inputPath;
  // Standard input can be read once: a sweep compiles it again from what
  // the first load kept, under the name the first read gave it.
  bool fromStdin = inputPath == "-";
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      options.inputText
          ? readInputText(fromStdin ? "<stdin>" : inputPath, *options.inputText)
          : readToolInput(inputPath);
  if (buffer && fromStdin && !options.inputText)
    options.inputText = (*buffer)->getBuffer().str();
  if (!buffer) {
    std::string reason = llvm::toString(buffer.takeError());
    if (frontend::modelFormatOf(inputPath))
      emitError(inputLoc())
          << "cannot read model file '" << inputPath << "': " << reason;
    else
      llvm::errs() << "cgpt-run: cannot read '" << inputPath << "': " << reason
                   << "\n";
    return nullptr;
  }
  if (std::optional<frontend::ModelFormat> format =
          frontend::modelFormatOfInput(inputPath, (*buffer)->getBuffer())) {
    FailureOr<frontend::ModelSpec> spec = frontend::readModelText(
        (*buffer)->getBufferIdentifier(), (*buffer)->getBuffer(), *format,
        &context, import);
    if (failed(spec))
      return nullptr;
    report.origin = frontend::describeOrigin(*spec);
    report.batchReading = frontend::describeBatchReading(*spec);
    return frontend::importModel(*spec, &context);
  }
  if (import.numCsx || import.microBatch || import.batchSize ||
      import.batchSemantics || import.sequenceLength) {
    llvm::errs() << "cgpt-run: --num-csx, --micro-batch-size, --batch-size, "
                    "--batch-semantics and --sequence-length apply to model "
                    "files; '"
                 << inputPath << "' is IR whose batch is already fixed\n";
    return nullptr;
  }
  if (failed(checkNoNulBytes((*buffer)->getBufferIdentifier(),
                             (*buffer)->getBuffer(), &context)) ||
      failed(checkNestingDepth((*buffer)->getBufferIdentifier(),
                               (*buffer)->getBuffer(), TextSyntax::Mlir,
                               &context)))
    return nullptr;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}

// A module the parser wraps around top-level ops has no location of its
// own, so the file's first line stands for the input as a whole.
Location CompileSession::inputLoc() {
  return FileLineColLoc::get(&context, options.inputPath, 1, 1);
}

LogicalResult CompileSession::checkLoweredInput(Phase phase) {
  StringRef level = stringifyPhase(phase);
  if (options.target || options.recompute)
    return emitError(inputLoc())
           << "--target and --recompute apply to model files and transformer "
              "IR; this "
           << level << " IR is already lowered for its target";
  if (options.placer && phase == Phase::Wafer)
    return emitError(inputLoc())
           << "--placer applies to IR not yet placed; this wafer IR is "
              "placed (edit its regions, or run cgpt-opt "
              "--wafer-place=placer=NAME)";
  // EmitKind lists the levels in Phase's order, after Summary.
  if (options.emit != EmitKind::Summary &&
      static_cast<int>(options.emit) < static_cast<int>(phase) + 1)
    return emitError(inputLoc())
           << "--emit asks for IR above the input's level; the input is "
           << level << " IR";
  return success();
}

void CompileSession::setLoweringOptions(LowerToDataflowOptions &lowering,
                                        StringRef targetName,
                                        dataflow::Recompute policy) const {
  lowering.target = !targetName.empty()
                        ? targetName.str()
                        : options.target.value_or(kDefaultTarget.str());
  lowering.recompute = policy;
  lowering.placer = options.placer.value_or("auto");
}

LogicalResult CompileSession::lower(ModuleOp module, Phase from, Phase to,
                                    StringRef targetName) {
  LowerToDataflowOptions lowering;
  setLoweringOptions(lowering, targetName, recompute);
  PassManager pm(&context);
  DefaultTimingManager timing;
  TimingScope root;
  if (options.mlirCommandLine) {
    if (failed(applyPassManagerCLOptions(pm)))
      return failure();
    applyDefaultTimingManagerCLOptions(timing);
    root = timing.getRootScope();
    pm.enableTiming(root);
  }
  if (from == Phase::Wafer)
    buildCheckPlacedPipeline(pm);
  else
    buildPipeline(pm, from, to, lowering);
  return pm.run(module);
}

LogicalResult CompileSession::simulate(wafer::DeviceOp device,
                                       report::StepReport &report) {
  FailureOr<const target::WaferTargetModel *> targetModel =
      device.getTargetModel();
  if (failed(targetModel))
    return failure();
  // The simulator checks the device is placed and planned; describing it
  // relies on that.
  FailureOr<sim::SimulationResult> simulation = sim::simulateStep(device);
  if (failed(simulation))
    return failure();
  report::describeDevice(device, **targetModel, report);
  report.simulation = std::move(*simulation);
  return success();
}

FailureOr<report::StepReport>
CompileSession::compileAndSimulate(std::optional<int64_t> systems,
                                   OwningOpRef<ModuleOp> &module,
                                   llvm::raw_ostream &irOut) {
  report::StepReport report;
  std::string recomputeChoice;
  module = load(systems, report);
  if (!module)
    return failure();
  FailureOr<Phase> phase = detectPhase(*module, inputLoc());
  if (failed(phase))
    return failure();
  if (*phase != Phase::Transformer && failed(checkLoweredInput(*phase)))
    return failure();
  auto print = [&](EmitKind level) {
    if (options.emit == level)
      irOut << *module << "\n";
  };
  // Each level in turn: describe it, print it if asked, lower it.
  if (*phase == Phase::Transformer) {
    if (failed(report::describeStep(
            *module->getOps<transformer::TrainStepOp>().begin(), report)))
      return failure();
    print(EmitKind::Transformer);
    chooseRecompute(*module, recomputeChoice);
    if (chosen)
      module = std::move(chosen->dataflow);
    else if (failed(lower(*module, Phase::Transformer, Phase::Dataflow)))
      return failure();
    phase = Phase::Dataflow;
  }
  if (*phase == Phase::Dataflow) {
    report::describeProgram(*module->getOps<dataflow::ProgramOp>().begin(),
                            report);
    report.dataflow->recomputeChoice = recomputeChoice;
    print(EmitKind::Dataflow);
    if (chosen)
      module = std::move(chosen->wafer);
    else if (failed(lower(*module, Phase::Dataflow, Phase::Wafer)))
      return failure();
  } else if (failed(lower(*module, Phase::Wafer, Phase::Wafer))) {
    return failure();
  }
  print(EmitKind::Wafer);
  auto device = *module->getOps<wafer::DeviceOp>().begin();
  if (failed(simulate(device, report)))
    return failure();
  describeTraining(device, report);
  return report;
}

void CompileSession::describeTraining(wafer::DeviceOp device,
                                      report::StepReport &report) {
  report::StepReport::Training training;
  double tokensPerStep = static_cast<double>(report.model.globalBatch) *
                         static_cast<double>(report.model.sequenceLength);
  if (options.trainSteps) {
    training.steps = *options.trainSteps;
    training.stepsFrom = "--train-steps";
  } else if (options.trainTokens && tokensPerStep > 0) {
    training.steps =
        static_cast<int64_t>(std::ceil(*options.trainTokens / tokensPerStep));
    training.stepsFrom =
        "--train-tokens " + formatExactDouble(*options.trainTokens) + " over " +
        formatGrouped(static_cast<int64_t>(tokensPerStep)) + " a step";
  } else if (report.scheduleSteps > 0) {
    training.steps = report.scheduleSteps;
    training.stepsFrom = "the learning-rate schedule's";
  } else {
    return;
  }
  if (FailureOr<const target::WaferTargetModel *> target =
          device.getTargetModel();
      succeeded(target))
    training.powerWatts = (*target)->getSystemPowerWatts();
  training.pricePerSystemHour = options.pricePerSystemHour;
  report.training = std::move(training);
}
