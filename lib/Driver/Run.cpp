//===- Run.cpp - what one cgpt-run invocation does ------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Driver/Run.h"

#include "cgpt/Dialect/Transformer/IR/Transformer.h"
#include "cgpt/Dialect/Wafer/IR/Wafer.h"
#include "cgpt/Exec/HostMemory.h"
#include "cgpt/Exec/Parameters.h"
#include "cgpt/Exec/TrainingSession.h"
#include "cgpt/Report/CompileReport.h"
#include "cgpt/Sim/Mesh/CycleLevel.h"
#include "cgpt/Sim/Mesh/MeshKernelOffload.h"
#include "cgpt/Support/Diagnostics.h"
#include "cgpt/Support/Format.h"
#include "cgpt/Support/HostMachine.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <cmath>
#include <thread>

using namespace mlir;
using namespace cgpt;
using namespace cgpt::driver;

/// An error whose message reads after "cgpt-run: ".
static llvm::Error refuse(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Refuses `path`, given to `option`, unless it ends in one of `suffixes`
/// (in any case); `why` follows the list.
static llvm::Error checkSuffix(llvm::StringRef option, llvm::StringRef path,
                               llvm::ArrayRef<llvm::StringRef> suffixes,
                               llvm::StringRef why = "") {
  if (llvm::any_of(suffixes, [&](llvm::StringRef suffix) {
        return path.ends_with_insensitive(suffix);
      }))
    return llvm::Error::success();
  return refuse(option + " '" + path + "' must end in " +
                llvm::join(suffixes, " or ") + why);
}

/// What --plot and --loss-curve draw: SVG, or PNG converted from it.
static constexpr llvm::StringRef kChartSuffixes[] = {".svg", ".png"};

/// Output files: writable, never an input, never another output.
static llvm::Error checkOutputPaths(const RunOptions &o) {
  std::pair<const std::optional<std::string> *, llvm::StringRef> outputs[] = {
      {&o.reportPath, "--report"},
      {&o.tracePath, "--trace"},
      {&o.tablePath, "--table"},
      {&o.plotPath, "--plot"},
      {&o.placementPath, "--emit-placement"},
      {&o.compileReportPath, "--compile-report"},
      {&o.saveWeightsPath, "--save-weights"},
      {&o.dumpStepPath, "--dump-step"},
      {&o.lossCurvePath, "--loss-curve"}};
  std::vector<std::string> inputs = {o.compile.inputPath, o.dataPath,
                                     o.initWeightsPath};
  for (const ModelInput &input : o.sweep.inputs)
    inputs.push_back(input.path);
  std::vector<std::string> targets = o.sweep.targets;
  if (o.compile.target)
    targets.push_back(*o.compile.target);
  for (const std::string &target : targets)
    if (llvm::sys::fs::is_regular_file(target))
      inputs.push_back(target);
  std::vector<std::string> seen;
  for (auto [option, name] : outputs) {
    if (!*option)
      continue;
    llvm::StringRef path(**option);
    if (llvm::Error error = cgpt::OutputFiles::checkWritable(path, inputs))
      return refuse(name + " '" + path +
                    "': " + llvm::toString(std::move(error)));
    for (const std::string &other : seen)
      if (path == other || llvm::sys::fs::equivalent(path, other))
        return refuse(name + " '" + path +
                      "' is also another output of this run");
    seen.push_back(path.str());
  }
  if (o.placementPath)
    return checkSuffix("--emit-placement", *o.placementPath, {".svg"},
                       ": the picture is SVG");
  return llvm::Error::success();
}

llvm::Expected<std::vector<int64_t>>
driver::parseNumberList(llvm::StringRef option,
                        llvm::ArrayRef<std::string> items) {
  std::vector<int64_t> numbers;
  auto number = [](llvm::StringRef text, int64_t &value) {
    return !text.trim().getAsInteger(10, value);
  };
  for (const std::string &item : items) {
    auto [first, last] = llvm::StringRef(item).split('-');
    int64_t from = 0, to = 0;
    bool range = !last.empty() && !first.trim().empty();
    if (!number(range ? first : llvm::StringRef(item), from) ||
        (range && !number(last, to)))
      return refuse(option + " has '" + item +
                    "'; allowed: numbers (4) and ranges (4-8), separated by "
                    "commas");
    if (!range) {
      numbers.push_back(from);
      continue;
    }
    if (to < from)
      return refuse(option + " has the range " + item +
                    ", which runs backwards; write it " + std::to_string(to) +
                    "-" + std::to_string(from));
    if (to - from >= static_cast<int64_t>(kMaxSweepEntries))
      return refuse(option + " has the range " + item + ", " +
                    std::to_string(to - from + 1) +
                    " numbers; a sweep runs at most " +
                    std::to_string(kMaxSweepEntries) + " points");
    for (int64_t n = from; n <= to; ++n)
      numbers.push_back(n);
    if (numbers.size() > kMaxSweepEntries)
      break; // checkSweep says so, with the count
  }
  return numbers;
}

llvm::Error driver::setRunLists(RunOptions &o, const RunLists &lists) {
  CompileOptions &compile = o.compile;
  frontend::ImportOptions &import = compile.import;
  SweepAxes &sweep = o.sweep;
  if (lists.inputs.size() == 1) {
    compile.inputPath = lists.inputs.front().path;
    compile.inputText = lists.inputs.front().text;
  } else if (!lists.inputs.empty()) {
    compile.inputPath = lists.inputs.front().path;
    sweep.inputs = lists.inputs;
  }
  llvm::Expected<std::vector<int64_t>> systems =
      parseNumberList("--num-csx", lists.numCsx);
  if (!systems)
    return systems.takeError();
  o.numCsx = std::move(*systems);
  if (lists.targets.size() == 1)
    compile.target = lists.targets.front();
  else
    sweep.targets = lists.targets;
  for (auto [option, items, single, axis] :
       {std::tuple{"--sequence-length", &lists.sequenceLengths,
                   &import.sequenceLength, &sweep.sequenceLengths},
        {"--batch-size", &lists.batchSizes, &import.batchSize,
         &sweep.batchSizes}}) {
    llvm::Expected<std::vector<int64_t>> numbers =
        parseNumberList(option, *items);
    if (!numbers)
      return numbers.takeError();
    if (numbers->size() == 1)
      *single = numbers->front();
    else
      *axis = std::move(*numbers);
  }
  if (lists.microBatches.size() == 1) {
    llvm::Expected<frontend::MicroBatchChoice> choice =
        frontend::parseMicroBatchChoice(lists.microBatches.front());
    if (!choice)
      return choice.takeError();
    import.microBatch = *choice;
  } else {
    sweep.microBatches = lists.microBatches;
  }
  return llvm::Error::success();
}

size_t RunOptions::sweepSize() const {
  // Each axis is checked to hold at most kMaxSweepEntries values before
  // this is used to bound the run, so the product cannot overflow.
  size_t size = 1;
  for (size_t axis : {numCsx.size(), sweep.inputs.size(), sweep.targets.size(),
                      sweep.sequenceLengths.size(), sweep.batchSizes.size(),
                      sweep.microBatches.size()})
    size *= std::max<size_t>(1, std::min(axis, kMaxSweepEntries + 1));
  return size;
}

/// A sweep, checked whole before the first compile: no axis names a value
/// twice, every number of systems is one a cluster has, and all the axes
/// together hold no more points than a sweep runs.
static llvm::Error checkSweep(const RunOptions &o) {
  auto checkAxis = [](llvm::StringRef option, auto values,
                      auto describe) -> llvm::Error {
    if (values.size() > kMaxSweepEntries)
      return refuse("a sweep runs at most " + std::to_string(kMaxSweepEntries) +
                    " points, one compile each; " + option + " has " +
                    std::to_string(values.size()) + " values");
    for (size_t index = 0; index < values.size(); ++index)
      for (size_t before = 0; before < index; ++before)
        if (describe(values[before]) == describe(values[index]))
          return refuse(option + " names " + describe(values[index]) +
                        " twice");
    return llvm::Error::success();
  };
  auto number = [](int64_t value) { return std::to_string(value); };
  auto text = [](const std::string &value) { return value; };
  const SweepAxes &axes = o.sweep;
  std::vector<std::string> inputs;
  for (const ModelInput &input : axes.inputs)
    inputs.push_back(input.path);
  for (const std::string &choice : axes.microBatches)
    if (llvm::Expected<frontend::MicroBatchChoice> parsed =
            frontend::parseMicroBatchChoice(choice);
        !parsed)
      return parsed.takeError();
  if (llvm::Error error =
          checkAxis("--num-csx", llvm::ArrayRef(o.numCsx), number))
    return error;
  if (llvm::Error error =
          checkAxis("the model inputs", llvm::ArrayRef(inputs), text))
    return error;
  if (llvm::Error error =
          checkAxis("--target", llvm::ArrayRef(axes.targets), text))
    return error;
  if (llvm::Error error = checkAxis(
          "--sequence-length", llvm::ArrayRef(axes.sequenceLengths), number))
    return error;
  if (llvm::Error error =
          checkAxis("--batch-size", llvm::ArrayRef(axes.batchSizes), number))
    return error;
  if (llvm::Error error = checkAxis("--micro-batch-size",
                                    llvm::ArrayRef(axes.microBatches), text))
    return error;
  for (int64_t systems : o.numCsx)
    if (systems < 1 || systems > frontend::kMaxSystems)
      return refuse("--num-csx is " + std::to_string(systems) +
                    "; allowed 1 to " + std::to_string(frontend::kMaxSystems));
  if (o.sweepSize() > kMaxSweepEntries)
    return refuse("a sweep runs at most " + std::to_string(kMaxSweepEntries) +
                  " points, one compile each; its lists make " +
                  std::to_string(o.sweepSize()));
  return llvm::Error::success();
}

llvm::Error driver::checkRunOptions(const RunOptions &o) {
  if (llvm::Error error = checkOutputPaths(o))
    return error;
  if (o.plotPath) {
    if (o.numCsx.size() < 2)
      return refuse("--plot draws samples/s by systems; give --num-csx a "
                    "list such as 1,2,4,8,16");
    if (llvm::Error error = checkSuffix("--plot", *o.plotPath, kChartSuffixes))
      return error;
  }
  if (o.isSweep() &&
      (o.tracePath || o.placementPath || o.compileReportPath ||
       o.steps.value_or(0) > 0 || o.compile.emit != EmitKind::Summary))
    return refuse("a sweep prints its table (and writes --report, --table, "
                  "--plot); run one point for --trace, --emit-placement, "
                  "--compile-report, --steps or --emit");
  if (o.tablePath) {
    if (llvm::Error error =
            checkSuffix("--table", *o.tablePath, {".csv", ".json"}))
      return error;
    const std::optional<cgpt::frontend::MicroBatchChoice> &microBatch =
        o.compile.import.microBatch;
    if (!o.isSweep() && microBatch &&
        microBatch->mode != cgpt::training::MicroBatchMode::explore)
      return refuse("--table writes a sweep's table or explore's; "
                    "--micro-batch-size " +
                    (microBatch->mode == cgpt::training::MicroBatchMode::fixed
                         ? std::to_string(microBatch->size)
                         : stringifyMicroBatchMode(microBatch->mode).str()) +
                    " has none");
  }
  if (llvm::Error error = checkSweep(o))
    return error;
  if (o.cycleLevel && o.isSweep())
    return refuse("--cycle-level runs one simulation; it does not apply to "
                  "sweeps");
  if (o.threads < 0 || o.threads > 4096)
    return refuse("--threads takes 1 to 4096 threads (0: one per host "
                  "core), not " +
                  std::to_string(o.threads));
  if (!o.cycleLevelLimit.empty() &&
      !cgpt::sim::mesh::parseCycleLevelLimit(o.cycleLevelLimit))
    return refuse("--cycle-level-limit is '" + o.cycleLevelLimit +
                  "'; allowed: a time above 0 with its unit, s, min or h "
                  "(90s, 10min; at most a year), or a number of core-cycles "
                  "above 0 (2e10; at most 1e18)");
  if (!o.memoryLimit.empty() && !cgpt::parseByteSize(o.memoryLimit))
    return refuse("--memory-limit is '" + o.memoryLimit +
                  "'; allowed: a size in bytes above 0, with K, M, G or T "
                  "for binary multiples (8G), up to 2^62 bytes");
  if (!o.memoryLimit.empty() && !o.cycleLevel && !o.functional)
    return refuse("--memory-limit applies to --functional and --cycle-level "
                  "runs");
  if ((o.threads || !o.cycleLevelLimit.empty()) && !o.cycleLevel)
    return refuse("--threads and --cycle-level-limit apply to --cycle-level "
                  "runs");
  if (o.steps.value_or(0) < 0 || o.logSteps < 0)
    return refuse("--steps and --log-steps must be 0 or more");
  const CompileOptions &c = o.compile;
  if (c.trainSteps && (*c.trainSteps < 1 || *c.trainSteps > kMaxTrainSteps))
    return refuse("--train-steps is " + std::to_string(*c.trainSteps) +
                  "; allowed: 1 to " + std::to_string(kMaxTrainSteps));
  if (c.trainTokens &&
      !(*c.trainTokens >= 1 && *c.trainTokens <= kMaxTrainTokens))
    return refuse("--train-tokens is " + formatExactDouble(*c.trainTokens) +
                  "; allowed: 1 to " + formatExactDouble(kMaxTrainTokens));
  if (c.trainSteps && c.trainTokens)
    return refuse("--train-steps and --train-tokens both say how long a run "
                  "is; give one");
  if (c.pricePerSystemHour &&
      !(*c.pricePerSystemHour >= 0 && std::isfinite(*c.pricePerSystemHour)))
    return refuse("--price-per-system-hour is " +
                  formatExactDouble(*c.pricePerSystemHour) +
                  "; allowed: 0 or more");
  if (o.functional && o.steps == 0)
    return refuse("--functional trains at least one step; --steps 0 would "
                  "train none (leave --steps out for one)");
  bool functionalOnly = o.seed.has_value() || !o.dataPath.empty() ||
                        !o.initWeightsPath.empty() || o.saveWeightsPath ||
                        o.dumpStepPath || o.lossCurvePath || o.bf16Storage;
  if (functionalOnly && !o.functional)
    return refuse("--seed, --data, --init-weights, --save-weights, "
                  "--dump-step, --loss-curve and --bf16 apply to --functional "
                  "runs");
  for (auto [option, path] : {std::pair{"--data", &o.dataPath},
                              {"--init-weights", &o.initWeightsPath}})
    if (*path == "-")
      return refuse(llvm::Twine(option) +
                    " reads a file; '-' would be standard input, which "
                    "cgpt-run reads a model from: name the file");
  if (o.functional) {
    if (o.isSweep() || o.reportPath || o.tracePath || o.tablePath ||
        o.placementPath || o.compileReportPath ||
        o.compile.emit != EmitKind::Summary)
      return refuse("--functional runs one number of systems and prints its "
                    "log; sweeps, --report, --compile-report, --trace, "
                    "--table, "
                    "--emit-placement and --emit belong to simulation runs");
    if (o.lossCurvePath)
      return checkSuffix("--loss-curve", *o.lossCurvePath, kChartSuffixes);
  }
  return llvm::Error::success();
}

namespace {

/// One invocation: its options, the compile session, where it prints and
/// the files it stages.
class Runner {
public:
  Runner(MLIRContext &context, const RunOptions &o, llvm::raw_ostream &out,
         OutputFiles &outputs)
      : context(context), o(o), out(out), outputs(outputs),
        session(context, o.compile), warnings(&context) {}

  /// Compiles, simulates, sweeps or trains as the options say.
  LogicalResult runCommand() {
    if (o.isSweep())
      return runSweep();
    std::optional<int64_t> systems;
    if (!o.numCsx.empty())
      systems = o.numCsx.front();
    if (o.functional)
      return success(runFunctional(systems));
    return simulate(systems);
  }

private:
  /// A sweep: one compile and simulation per point, a table of them, and
  /// the report, table and plot asked for.
  LogicalResult runSweep() {
    FailureOr<SweepResult> result =
        driver::runSweep(context, o, out, o.reportPath.has_value(), &warnings);
    if (failed(result))
      return failure();
    cgpt::report::printSweepTable(out, result->rows);
    if (o.reportPath)
      stage(*o.reportPath, [&](llvm::raw_ostream &os) {
        llvm::json::OStream json(os, 2);
        json.object([&] {
          json.attribute("schema_version", cgpt::report::kReportSchemaVersion);
          json.attributeArray("sweep", [&] {
            for (const cgpt::report::StepReport &report : result->reports)
              cgpt::report::writeReport(json, report);
          });
        });
        os << "\n";
      });
    if (o.tablePath)
      stageTable(cgpt::report::sweepData(result->rows));
    if (o.plotPath && !writeChart(*o.plotPath, [&](llvm::raw_ostream &os) {
          cgpt::report::printSweepPlot(os, result->rows);
        }))
      return failure();
    return success();
  }

  /// The workers, limit and log of a --cycle-level run. Its estimate goes
  /// to standard error, with a progress line when that is a terminal; in
  /// an MPI job, from the first process only.
  cgpt::sim::mesh::CycleLevelOptions cycleLevelOptions() const {
    cgpt::sim::mesh::CycleLevelOptions options;
    options.workers.threads =
        o.threads ? o.threads
                  : static_cast<int>(
                        std::max(1u, std::thread::hardware_concurrency()));
    options.workers.processes = o.processes;
    options.workers.stop = o.stop;
    if (!o.cycleLevelLimit.empty())
      options.limit = *cgpt::sim::mesh::parseCycleLevelLimit(o.cycleLevelLimit);
    options.maxHostBytes = memoryLimitBytes();
    if (!o.processes || o.processes->worker() == 0) {
      options.log = &llvm::errs();
      options.progress = llvm::errs().is_displayed();
    }
    return options;
  }

  /// One compile and simulation, with the summary, pictures, cycle-level
  /// run and log lines asked for.
  LogicalResult simulate(std::optional<int64_t> systems) {
    OwningOpRef<ModuleOp> module;
    FailureOr<cgpt::report::StepReport> report =
        session.compileAndSimulate(systems, module, out);
    if (failed(report))
      return failure();
    if (o.placementPath && !drawPlacement(*module, *report))
      return failure();
    if (o.cycleLevel) {
      cgpt::sim::mesh::CycleLevelOptions options = cycleLevelOptions();
      FailureOr<cgpt::sim::mesh::CycleLevelRun> run =
          cgpt::sim::mesh::runCycleLevel(
              *module->getOps<cgpt::wafer::DeviceOp>().begin(), options);
      if (failed(run))
        return failure();
      if (!run->stoppedIn.empty()) {
        // Stopped: what was simulated, and no report (said once in an MPI
        // job).
        cgpt::report::printCycleLevel(out, *run);
        if (!o.processes || o.processes->worker() == 0)
          llvm::errs() << "cgpt-run: --cycle-level stopped in "
                       << run->stoppedIn
                       << (run->stoppedAtLimit
                               ? " at its limit of " +
                                     cgpt::sim::mesh::describeCycleLevelLimit(
                                         options.limit)
                               : std::string())
                       << "; the " << run->kernels.size()
                       << " kernel(s) simulated before it are above\n";
        return failure();
      }
      report->cycleLevel = std::move(*run);
    }
    report->warnings = warnings.getWarnings();
    if (!writeReport(*report))
      return failure();
    if (o.compile.emit == EmitKind::Summary)
      cgpt::report::printSummary(out, *report);
    if (report->cycleLevel)
      cgpt::report::printCycleLevel(out, *report->cycleLevel);
    if (o.steps.value_or(0) > 0)
      logTraining(*report);
    return success();
  }

  /// Stages `table` as the --table file: CSV or JSON, by its name.
  void stageTable(const cgpt::report::DataTable &table) {
    bool csv = llvm::StringRef(*o.tablePath).ends_with_insensitive(".csv");
    stage(*o.tablePath, [&](llvm::raw_ostream &os) {
      cgpt::report::printDataTable(os, table, csv);
    });
  }

  /// Stages what `print` prints as the contents of `path`.
  void stage(llvm::StringRef path,
             llvm::function_ref<void(llvm::raw_ostream &)> print) {
    std::string contents;
    llvm::raw_string_ostream os(contents);
    print(os);
    os.flush();
    outputs.add(path, std::move(contents));
  }

  /// Stages the picture of the stage --emit-placement asks for: by name,
  /// or the one the simulated step spent longest in.
  bool drawPlacement(ModuleOp module, const cgpt::report::StepReport &report) {
    auto device = *module.getOps<cgpt::wafer::DeviceOp>().begin();
    std::string name = o.placementStage;
    if (name.empty()) {
      double longest = -1;
      for (const cgpt::sim::StageTiming &run : report.simulation->stages)
        if (run.end - run.start > longest) {
          longest = run.end - run.start;
          name = run.name;
        }
    }
    cgpt::wafer::StageOp drawn;
    for (auto stage : device.getBody().front().getOps<cgpt::wafer::StageOp>())
      if (stage.getSymName() == name) {
        drawn = stage;
        break;
      }
    if (!drawn) {
      llvm::errs() << "cgpt-run: no stage '" << o.placementStage
                   << "' to draw; --emit=wafer lists the stages\n";
      return false;
    }
    FailureOr<const cgpt::target::WaferTargetModel *> targetModel =
        device.getTargetModel();
    if (failed(targetModel))
      return false;
    stage(*o.placementPath, [&](llvm::raw_ostream &os) {
      cgpt::report::printPlacementSvg(os, device, drawn, **targetModel);
    });
    return true;
  }

  /// Steps between log lines for a run of `total` steps: --log-steps, or
  /// about ten lines in all.
  int64_t logInterval(int64_t total) {
    if (o.logSteps > 0)
      return o.logSteps;
    return std::max<int64_t>(1, total / 10 + (total % 10 != 0));
  }

  /// Model Zoo 2.x log lines for `steps` simulated optimizer steps, with a
  /// progress bar when standard error is a terminal.
  void logTraining(const cgpt::report::StepReport &report) {
    cgpt::report::StepRates rates = cgpt::report::computeStepRates(report);
    // Every simulated step is the same step, so only the logged ones are
    // visited: the loop runs once per line, whatever the number of steps.
    int64_t last = o.steps.value_or(0);
    int64_t every = logInterval(last);
    for (int64_t step = std::min(every, last); step <= last;) {
      out << llvm::formatv(
          "| Train Device=CSX, Step={0}, Rate={1:f2} samples/sec, "
          "GlobalRate={1:f2} samples/sec, SimulatedTime={2:f3} s\n",
          step, rates.samplesPerSecond,
          static_cast<double>(step) * rates.seconds);
      if (step == last)
        break;
      step = last - step > every ? step + every : last;
    }
  }

  bool writeReport(const cgpt::report::StepReport &report) {
    if (o.reportPath)
      stage(*o.reportPath, [&](llvm::raw_ostream &os) {
        cgpt::report::printReport(os, report);
      });
    if (o.compileReportPath)
      stage(*o.compileReportPath, [&](llvm::raw_ostream &os) {
        llvm::StringRef path(*o.compileReportPath);
        bool csv = path.ends_with_insensitive(".csv");
        if (csv || path.ends_with_insensitive(".json"))
          cgpt::report::printDataTable(
              os, cgpt::report::compileReportData(report), csv);
        else
          cgpt::report::printCompileReport(os, report);
      });
    if (o.tablePath) {
      if (report.wafer->explored.empty()) {
        llvm::errs() << "cgpt-run: --table writes a sweep's table or "
                        "explore's; this run explored no micro-batches (give "
                        "--micro-batch-size explore)\n";
        return false;
      }
      stageTable(cgpt::report::exploreData(report.wafer->explored));
    }
    if (o.tracePath)
      stage(*o.tracePath, [&](llvm::raw_ostream &os) {
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
  bool writeChart(llvm::StringRef path,
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

  /// --memory-limit, or three quarters of the host's memory; 0: no limit.
  int64_t memoryLimitBytes() const {
    if (!o.memoryLimit.empty())
      return cgpt::parseByteSize(o.memoryLimit).value_or(0);
    return cgpt::defaultMemoryLimitBytes();
  }

  /// The most parameters functional mode executes: it keeps weights, AdamW
  /// moments and gradients in host memory and runs on one host core.
  static constexpr int64_t kMaxFunctionalParameters = int64_t(1) << 26;

  /// --functional: compiles the step for the target (mini by default),
  /// executes `--steps` optimizer steps of it with real numbers and logs the
  /// loss. Prints what it ran, Model Zoo 2.x log lines and the host time.
  bool runFunctional(std::optional<int64_t> systems) {
    cgpt::report::StepReport report;
    OwningOpRef<ModuleOp> module = session.load(systems, report);
    if (!module)
      return false;
    FailureOr<cgpt::Phase> phase =
        cgpt::detectPhase(*module, session.inputLoc());
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
    if (failed(session.lower(*module, cgpt::Phase::Transformer,
                             cgpt::Phase::Dataflow,
                             o.compile.target.value_or("mini"))))
      return false;
    OwningOpRef<ModuleOp> placed = module->clone();
    if (failed(
            session.lower(*placed, cgpt::Phase::Dataflow, cgpt::Phase::Wafer)))
      return false;
    auto device = *placed->getOps<cgpt::wafer::DeviceOp>().begin();
    if (failed(session.simulate(device, report)))
      return false;
    auto program = *module->getOps<cgpt::dataflow::ProgramOp>().begin();
    // Before anything is allocated: what the executor will hold.
    double needs = cgpt::exec::estimateFunctionalBytes(
        program, report.model.parameters, device.getMicroBatch(),
        o.bf16Storage);
    if (int64_t limit = memoryLimitBytes();
        limit > 0 && needs > static_cast<double>(limit)) {
      emitError(session.inputLoc())
          << "--functional would hold about "
          << cgpt::formatGrouped(static_cast<int64_t>(needs / (1 << 20)))
          << " MiB on this host (the weights, gradients and AdamW moments of "
          << cgpt::formatGrouped(report.model.parameters)
          << " parameters, and every tensor of a pass of "
          << device.getMicroBatch() << " sequences through "
          << report.model.layers << " layers), over the limit of "
          << (limit >= (1 << 20)
                  ? cgpt::formatGrouped(limit / (1 << 20)) + " MiB"
                  : cgpt::formatGrouped(limit) + " B")
          << " (--memory-limit; by default three quarters of this host's "
             "memory)";
      return false;
    }

    cgpt::exec::SessionOptions options;
    // --cycle-level: the weight kernels run on the mesh with real values.
    std::optional<cgpt::sim::mesh::MeshKernelOffload> mesh;
    if (o.cycleLevel) {
      auto created = cgpt::sim::mesh::MeshKernelOffload::create(device);
      if (failed(created))
        return false;
      mesh = std::move(*created);
      options.offload = &*mesh;
    }
    options.steps = std::max<int64_t>(o.steps.value_or(0), 1);
    options.logEvery = logInterval(options.steps);
    options.seed = o.seed.value_or(0);
    options.dataPath = o.dataPath;
    options.initWeightsPath = o.initWeightsPath;
    options.bf16Storage = o.bf16Storage;
    options.dumpLastStep = o.dumpStepPath.has_value();
    options.samplesPerSecond =
        cgpt::report::computeStepRates(report).samplesPerSecond;
    options.estimateLog = &llvm::errs();
    llvm::Expected<cgpt::exec::SessionResult> training =
        cgpt::exec::runTrainingSession(program, device, std::move(specs),
                                       report.model.name, options, out);
    if (!training) {
      llvm::errs() << "cgpt-run: " << llvm::toString(training.takeError())
                   << "\n";
      return false;
    }
    if (mesh)
      printMeshRuns(*mesh, options.steps);
    out.flush();
    llvm::errs() << llvm::formatv("executed {0} step(s) in {1:f2} s on this "
                                  "host ({2:f4} s per step)\n",
                                  options.steps, training->hostSeconds,
                                  training->hostSeconds / options.steps);
    if (o.saveWeightsPath)
      outputs.add(*o.saveWeightsPath, std::move(training->weights));
    if (o.dumpStepPath)
      outputs.add(*o.dumpStepPath, std::move(training->lastStep));
    return !o.lossCurvePath ||
           writeChart(*o.lossCurvePath, [&](llvm::raw_ostream &os) {
             cgpt::report::printLossCurve(os, report.model.name,
                                          training->losses);
           });
  }

  /// What --functional --cycle-level ran on the mesh, and what stayed with
  /// the executor and why.
  void printMeshRuns(const cgpt::sim::mesh::MeshKernelOffload &mesh,
                     int64_t steps) {
    out << llvm::formatv(
        "cycle-level: {0} weight kernel, {1} token sum, {2} norm, {3} "
        "norm gradient, {4} attention, {5} attention gradient, {6} loss, "
        "{7} loss gradient, {8} map, {9} fused map, {10} embedding, {11} "
        "embedding gradient and {12} router choice runs in {13} step(s) on "
        "the mesh with real values, {14} simulated cycles\n",
        mesh.getWeightKernelRuns(), mesh.getTokenSumRuns(), mesh.getNormRuns(),
        mesh.getNormGradRuns(), mesh.getAttentionRuns(),
        mesh.getAttentionGradRuns(), mesh.getLossRuns(), mesh.getLossGradRuns(),
        mesh.getMapRuns(), mesh.getFusedMapRuns(), mesh.getEmbeddingRuns(),
        mesh.getEmbeddingGradRuns(), mesh.getRouterChoices(), steps,
        cgpt::formatGrouped(mesh.getMeshCycles()));
    for (const auto &[why, runs] : mesh.getHostRuns())
      out << llvm::formatv("cycle-level: {0} run(s) on the host: {1}\n", runs,
                           why);
  }

  MLIRContext &context;
  const RunOptions &o;
  llvm::raw_ostream &out;
  OutputFiles &outputs;
  CompileSession session;
  /// Every warning said so far, for the reports.
  cgpt::WarningRecorder warnings;
};

} // namespace

/// The compile options of each point of `o`'s sweep but the systems, in
/// order: inputs, then targets, sequence lengths, batches and micro-batches.
static std::vector<CompileOptions> sweepPoints(const RunOptions &o) {
  std::vector<CompileOptions> points{o.compile};
  // Replaces `points` by each of them with each value of an axis.
  auto expand = [&](auto values, auto set) {
    if (values.empty())
      return;
    std::vector<CompileOptions> expanded;
    for (const CompileOptions &point : points)
      for (const auto &value : values) {
        expanded.push_back(point);
        set(expanded.back(), value);
      }
    points = std::move(expanded);
  };
  const SweepAxes &axes = o.sweep;
  expand(llvm::ArrayRef(axes.inputs),
         [](CompileOptions &c, const ModelInput &input) {
           c.inputPath = input.path;
           c.inputText = input.text;
         });
  expand(
      llvm::ArrayRef(axes.targets),
      [](CompileOptions &c, const std::string &target) { c.target = target; });
  expand(llvm::ArrayRef(axes.sequenceLengths),
         [](CompileOptions &c, int64_t length) {
           c.import.sequenceLength = length;
         });
  expand(llvm::ArrayRef(axes.batchSizes),
         [](CompileOptions &c, int64_t batch) { c.import.batchSize = batch; });
  expand(llvm::ArrayRef(axes.microBatches),
         [](CompileOptions &c, const std::string &choice) {
           // checkRunOptions parsed every choice already.
           c.import.microBatch =
               llvm::cantFail(frontend::parseMicroBatchChoice(choice));
         });
  return points;
}

FailureOr<SweepResult> driver::runSweep(MLIRContext &context,
                                        const RunOptions &o,
                                        llvm::raw_ostream &irOut,
                                        bool keepReports,
                                        const WarningRecorder *warnings) {
  SweepResult result;
  std::vector<std::optional<int64_t>> systemsList(o.numCsx.begin(),
                                                  o.numCsx.end());
  if (systemsList.empty())
    systemsList.push_back(std::nullopt);
  for (const CompileOptions &point : sweepPoints(o)) {
    CompileSession session(context, point);
    size_t groupFirst = result.rows.size();
    for (std::optional<int64_t> systems : systemsList) {
      OwningOpRef<ModuleOp> module;
      FailureOr<report::StepReport> report =
          session.compileAndSimulate(systems, module, irOut);
      if (failed(report))
        return failure();
      // The group's first compile reads the batch: an entry with more
      // systems than sequences is refused now, not after the compiles
      // before it.
      if (result.rows.size() == groupFirst)
        for (int64_t other : o.numCsx)
          if (other > report->model.globalBatch)
            return emitError(session.inputLoc())
                   << "--num-csx names " << other << " systems, more than the "
                   << report->model.globalBatch
                   << " sequences of a step: every system needs at least "
                      "one";
      report::SweepRow row = report::sweepRow(*report);
      row.groupFirst = groupFirst;
      result.rows.push_back(std::move(row));
      if (keepReports) {
        report->simulation->trace.clear();
        report->simulation->trace.shrink_to_fit();
        if (warnings)
          report->warnings = warnings->getWarnings();
        result.reports.push_back(std::move(*report));
      }
    }
  }
  return result;
}

LogicalResult driver::runCommand(MLIRContext &context,
                                 const RunOptions &options,
                                 llvm::raw_ostream &out, OutputFiles &outputs) {
  return Runner(context, options, out, outputs).runCommand();
}
