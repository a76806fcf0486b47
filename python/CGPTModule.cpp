//===- CGPTModule.cpp - the cgpt Python package's native module -----------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// `cgpt._cgpt`: the same driver library cgpt-run runs (lib/Driver), behind
// the calls the package's Python layer (python/cgpt/__init__.py) wraps.
// Each run takes a request dict (the models as name and text, the run's lists
// as text, the other options) and returns what it made, or the diagnostics
// that say why it made nothing, so that the Python layer raises CgptError
// and issues the warnings.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Driver/Run.h"
#include "cgpt/Exec/ExecutionModels.h"
#include "cgpt/InitAllDialects.h"
#include "cgpt/Report/CompileReport.h"
#include "cgpt/Support/Diagnostics.h"
#include "cgpt/Support/InputFile.h"
#include "cgpt/Support/Nesting.h"
#include "cgpt/Support/Version.h"
#include "cgpt/Target/WaferTargetModel.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <yaml-cpp/yaml.h>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <set>
#include <stdexcept>

namespace py = pybind11;
using namespace cgpt;
using namespace cgpt::driver;

namespace {

/// What one call gives Python: its output when it succeeded, and every
/// diagnostic said on the way (warnings included) as cgpt-run prints them.
struct Outcome {
  bool ok = false;
  std::string output;
  std::string diagnostics;
};

/// `request[key]` as a T, or nullopt when it is None or missing.
template <typename T>
std::optional<T> optionalItem(const py::dict &request, const char *key) {
  if (!request.contains(key) || request[key].is_none())
    return std::nullopt;
  return request[key].cast<T>();
}

std::vector<std::string> listItem(const py::dict &request, const char *key) {
  return optionalItem<std::vector<std::string>>(request, key)
      .value_or(std::vector<std::string>{});
}

llvm::Error refuse(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The run a request asks for, checked as cgpt-run checks its options.
llvm::Expected<RunOptions> runOptionsFrom(const py::dict &request) {
  RunOptions options;
  RunLists lists;
  for (const auto &[name, text] :
       request["models"]
           .cast<std::vector<std::pair<std::string, std::string>>>())
    lists.inputs.push_back({name, text});
  if (lists.inputs.empty())
    return refuse("no model given");
  lists.numCsx = listItem(request, "num_csx");
  lists.targets = listItem(request, "target");
  lists.sequenceLengths = listItem(request, "sequence_length");
  lists.batchSizes = listItem(request, "batch_size");
  lists.microBatches = listItem(request, "micro_batch_size");
  if (llvm::Error error = setRunLists(options, lists))
    return std::move(error);
  CompileOptions &compile = options.compile;
  if (std::optional<std::string> semantics =
          optionalItem<std::string>(request, "batch_semantics")) {
    if (*semantics == "global")
      compile.import.batchSemantics = frontend::BatchSemantics::Global;
    else if (*semantics == "per-system")
      compile.import.batchSemantics = frontend::BatchSemantics::PerSystem;
    else
      return refuse("batch_semantics is '" + *semantics +
                    "'; allowed: global, per-system");
  }
  if (std::optional<std::string> recompute =
          optionalItem<std::string>(request, "recompute")) {
    std::optional<dataflow::Recompute> policy =
        dataflow::symbolizeRecompute(*recompute);
    if (!policy)
      return refuse("recompute is '" + *recompute +
                    "'; allowed: none, layer, tensor");
    compile.recompute = policy;
  }
  compile.placer = optionalItem<std::string>(request, "placer");
  compile.trainSteps = optionalItem<int64_t>(request, "train_steps");
  compile.trainTokens = optionalItem<double>(request, "train_tokens");
  compile.pricePerSystemHour =
      optionalItem<double>(request, "price_per_system_hour");
  std::string emit =
      optionalItem<std::string>(request, "emit").value_or("summary");
  if (emit == "summary")
    compile.emit = EmitKind::Summary;
  else if (emit == "transformer")
    compile.emit = EmitKind::Transformer;
  else if (emit == "dataflow")
    compile.emit = EmitKind::Dataflow;
  else if (emit == "wafer")
    compile.emit = EmitKind::Wafer;
  else
    return refuse("level is '" + emit +
                  "'; allowed: transformer, dataflow, wafer");
  if (llvm::Error error = checkRunOptions(options))
    return std::move(error);
  return options;
}

/// Runs `body` on the options of `request` in a fresh context whose
/// diagnostics go to the outcome; `body` writes the output.
Outcome call(const py::dict &request,
             llvm::function_ref<mlir::LogicalResult(
                 mlir::MLIRContext &, const RunOptions &, llvm::raw_ostream &)>
                 body) {
  Outcome outcome;
  llvm::Expected<RunOptions> options = runOptionsFrom(request);
  if (!options) {
    outcome.diagnostics = llvm::toString(options.takeError());
    return outcome;
  }
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  exec::registerExecutionModels(registry);
  mlir::MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  llvm::raw_string_ostream diagnostics(outcome.diagnostics);
  PlainDiagnosticHandler handler(&context, diagnostics);
  llvm::raw_string_ostream output(outcome.output);
  outcome.ok = mlir::succeeded(body(context, *options, output));
  output.flush();
  diagnostics.flush();
  if (!outcome.ok)
    outcome.output.clear();
  return outcome;
}

/// What cgpt-run prints: the summary, the IR at the level asked for, or a
/// sweep's table.
Outcome printed(const py::dict &request) {
  return call(request, [](mlir::MLIRContext &context, const RunOptions &o,
                          llvm::raw_ostream &out) {
    OutputFiles noFiles;
    return runCommand(context, o, out, noFiles);
  });
}

/// Compiles and simulates the one point of `o` (`what` names the call in
/// the error for a sweep) and writes what `render` makes of its report.
mlir::LogicalResult
renderOnePoint(mlir::MLIRContext &context, const RunOptions &o,
               llvm::StringRef what,
               llvm::function_ref<void(report::StepReport &)> render) {
  if (o.isSweep())
    return mlir::emitError(mlir::UnknownLoc::get(&context))
           << what << "() runs one point; sweep() runs lists";
  WarningRecorder warnings(&context);
  CompileSession session(context, o.compile);
  std::optional<int64_t> systems;
  if (!o.numCsx.empty())
    systems = o.numCsx.front();
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::FailureOr<report::StepReport> step =
      session.compileAndSimulate(systems, module, llvm::nulls());
  if (mlir::failed(step))
    return mlir::failure();
  step->warnings = warnings.getWarnings();
  render(*step);
  return mlir::success();
}

/// The JSON report of one compiled and simulated step.
Outcome stepReport(const py::dict &request) {
  return call(request, [](mlir::MLIRContext &context, const RunOptions &o,
                          llvm::raw_ostream &out) {
    return renderOnePoint(context, o, "simulate", [&](report::StepReport &r) {
      report::printReport(out, r);
    });
  });
}

/// The per-kernel compile report's rows as a JSON array.
Outcome compileReportTable(const py::dict &request) {
  return call(request, [](mlir::MLIRContext &context, const RunOptions &o,
                          llvm::raw_ostream &out) {
    return renderOnePoint(
        context, o, "compile_report", [&](report::StepReport &r) {
          report::printDataTable(out, report::compileReportData(r),
                                 /*csv=*/false);
        });
  });
}

/// A sweep's table as a JSON array of rows.
Outcome sweepTable(const py::dict &request) {
  return call(request,
              [](mlir::MLIRContext &context, const RunOptions &o,
                 llvm::raw_ostream &out) -> mlir::LogicalResult {
                mlir::FailureOr<SweepResult> result =
                    runSweep(context, o, llvm::nulls(), /*keepReports=*/false);
                if (mlir::failed(result))
                  return mlir::failure();
                report::printDataTable(out, report::sweepData(result->rows),
                                       /*csv=*/false);
                return mlir::success();
              });
}

/// A plain YAML scalar as JSON, by the YAML 1.1 rules Model Zoo's reader
/// (PyYAML) applies: booleans, null, integers, floats, else a string.
llvm::json::Value plainScalar(const std::string &text) {
  static const std::set<std::string> trueWords = {
      "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
  static const std::set<std::string> falseWords = {
      "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"};
  if (trueWords.count(text))
    return true;
  if (falseWords.count(text))
    return false;
  if (text.empty() || text == "~" || text == "null" || text == "Null" ||
      text == "NULL")
    return nullptr;
  llvm::StringRef ref(text);
  int64_t integer;
  if (!ref.getAsInteger(0, integer))
    return integer;
  // A float has a digit and parses whole; .inf and .nan have no JSON form
  // and stay text.
  double number;
  if (llvm::any_of(ref, llvm::isDigit) && !ref.getAsDouble(number) &&
      std::isfinite(number))
    return number;
  return text;
}

llvm::json::Value toJson(const YAML::Node &node, int depth) {
  if (depth > static_cast<int>(kMaxNestingDepth))
    throw std::runtime_error("nested more than " +
                             std::to_string(kMaxNestingDepth) + " levels deep");
  switch (node.Type()) {
  case YAML::NodeType::Map: {
    llvm::json::Object object;
    for (const auto &entry : node)
      object[entry.first.as<std::string>()] = toJson(entry.second, depth + 1);
    return object;
  }
  case YAML::NodeType::Sequence: {
    llvm::json::Array array;
    for (const YAML::Node &item : node)
      array.push_back(toJson(item, depth + 1));
    return array;
  }
  case YAML::NodeType::Scalar:
    // Quoted scalars carry the tag "!": always text.
    if (node.Tag() == "!")
      return node.Scalar();
    return plainScalar(node.Scalar());
  default:
    return nullptr;
  }
}

/// A YAML model file's contents as JSON, for the package's Model.to_dict.
Outcome yamlToJson(const std::string &name, const std::string &text) {
  Outcome outcome;
  // The limits a model file meets: its size, and the nesting of flow
  // collections, which nest without indentation (bounded before the
  // parser recurses into them); refused in the frontend's words.
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      readInputText(name, text);
  if (!buffer) {
    outcome.diagnostics =
        name + ": cannot read: " + llvm::toString(buffer.takeError());
    return outcome;
  }
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  llvm::raw_string_ostream diagnostics(outcome.diagnostics);
  PlainDiagnosticHandler handler(&context, diagnostics);
  if (mlir::failed(checkNestingDepth(name, (*buffer)->getBuffer(),
                                     TextSyntax::Json, &context)))
    return outcome;
  try {
    llvm::raw_string_ostream os(outcome.output);
    os << toJson(YAML::Load((*buffer)->getBuffer().str()), 0);
    outcome.ok = true;
  } catch (const std::exception &error) {
    outcome.output.clear();
    outcome.diagnostics = name + ": cannot read as YAML: " + error.what();
  }
  return outcome;
}

} // namespace

PYBIND11_MODULE(_cgpt, m) {
  m.doc() = "cgpt's native module: the driver library cgpt-run runs. Use "
            "the cgpt package, which wraps it.";
  py::class_<Outcome>(m, "Outcome")
      .def_readonly("ok", &Outcome::ok)
      .def_readonly("output", &Outcome::output)
      .def_readonly("diagnostics", &Outcome::diagnostics);
  m.def("printed", &printed,
        "What cgpt-run prints for the request: summary, IR or sweep table");
  m.def("report", &stepReport, "The JSON report of one step");
  m.def("compile_report", &compileReportTable,
        "The per-kernel compile report's rows");
  m.def("sweep", &sweepTable, "A sweep's table as a JSON array of rows");
  m.def("yaml_to_json", &yamlToJson,
        "A YAML model file's contents as JSON text");
  m.def("version", &getFullVersion, "cgpt's version and git commit");
  m.def(
      "builtin_targets",
      [] {
        std::vector<std::string> names;
        for (llvm::StringRef name : target::WaferTargetModel::builtinNames())
          names.push_back(name.str());
        return names;
      },
      "The targets known by name");
}
