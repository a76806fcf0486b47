//===- CompileSession.h - compile and simulate one input --------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// What cgpt-run does with its input before any output is written: read it
// (a model file through the frontend, anything else as MLIR), find the
// level it stands at, lower it from there with lib/Pipelines under MLIR's
// pass-manager options, describe each level for the report, and simulate
// the placed step.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DRIVER_COMPILESESSION_H
#define CGPT_DRIVER_COMPILESESSION_H

#include "cgpt/Frontend/ModelSpec.h"
#include "cgpt/Pipelines/Pipelines.h"
#include "cgpt/Report/Report.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace cgpt::driver {

/// The IR printed on the way down, if any: the levels in Phase's order.
enum class EmitKind { Summary, Transformer, Dataflow, Wafer };

struct CompileOptions {
  /// A model file, IR, or "-" for standard input.
  std::string inputPath;
  /// The input's contents, when given in memory: `inputPath` then only
  /// names it (in diagnostics, and by its extension the format).
  std::optional<std::string> inputText;
  /// Overrides of what the model file says; `numCsx` is set per compile.
  frontend::ImportOptions import;
  /// The target and recompute policy when the user named them: they apply
  /// to model files and transformer IR only.
  std::optional<std::string> target;
  std::optional<dataflow::Recompute> recompute;
  /// The placers the planner weighs, when the user named them: they apply
  /// to IR not yet placed.
  std::optional<std::string> placer;
  EmitKind emit = EmitKind::Summary;
  /// A training run's length, instead of the schedule's steps, and a price
  /// per system-hour for its cost.
  std::optional<int64_t> trainSteps;
  std::optional<double> trainTokens;
  std::optional<double> pricePerSystemHour;
  /// Apply MLIR's pass-manager and timing command-line options
  /// (--mlir-print-ir-after-all, --mlir-timing...) to each lowering; a tool
  /// that registered them sets this when the user gave one.
  bool mlirCommandLine = false;
};

class CompileSession {
public:
  /// The target a compile uses when the user names none.
  static constexpr llvm::StringLiteral kDefaultTarget = "wse2";

  CompileSession(mlir::MLIRContext &context, CompileOptions options)
      : context(context), options(std::move(options)) {}

  /// Reads the input for `systems` systems (the file's when unset) as a
  /// verified module; records in `report` where it came from and how its
  /// batch was read.
  mlir::OwningOpRef<mlir::ModuleOp> load(std::optional<int64_t> systems,
                                         report::StepReport &report);

  /// Where errors about the input as a whole point: its first line.
  mlir::Location inputLoc();

  /// Lowers `module` from `from` to `to` for `targetName` (the user's
  /// target, else `kDefaultTarget`, when empty). Placed wafer IR (`from`
  /// and `to` both the wafer) is checked instead: every region placed, and
  /// every core's memory within its SRAM.
  mlir::LogicalResult lower(mlir::ModuleOp module, Phase from, Phase to,
                            llvm::StringRef targetName = {});

  /// Simulates a step of the placed, planned `device` and adds the device
  /// and the simulation to `report`.
  mlir::LogicalResult simulate(wafer::DeviceOp device,
                               report::StepReport &report);

  /// Loads the input for `systems`, lowers it from wherever it stands to
  /// the wafer, printing the level `emit` asks for to `irOut` on the way,
  /// and simulates a step.
  mlir::FailureOr<report::StepReport>
  compileAndSimulate(std::optional<int64_t> systems,
                     mlir::OwningOpRef<mlir::ModuleOp> &module,
                     llvm::raw_ostream &irOut);

private:
  /// Adds to `report` the training run the options or the schedule ask
  /// for, on the target of `device`.
  void describeTraining(wafer::DeviceOp device, report::StepReport &report);

  /// Fails when options ask for what lowered IR has already fixed.
  mlir::LogicalResult checkLoweredInput(Phase phase);
  /// Sets `lowering` for `targetName` (as lower() reads it) and recompute
  /// policy `policy`.
  void setLoweringOptions(LowerToDataflowOptions &lowering,
                          llvm::StringRef targetName,
                          dataflow::Recompute policy) const;

  /// The recompute policy of transformer IR `module`'s lowering: the
  /// user's, else the one whose planned step predicts the most samples per
  /// second of those that fit (RecomputeChoice.cpp). Sets `recompute`,
  /// says in `why` what was weighed, and keeps the winner's lowering in
  /// `chosen` when it said nothing, so that it is not lowered again.
  void chooseRecompute(mlir::ModuleOp module, std::string &why);

  mlir::MLIRContext &context;
  CompileOptions options;
  /// The policy lowerings from transformer IR use.
  dataflow::Recompute recompute = dataflow::Recompute::layer;
  /// The chosen policy's lowering, at the dataflow level and placed.
  struct Lowered {
    mlir::OwningOpRef<mlir::ModuleOp> dataflow, wafer;
  };
  std::optional<Lowered> chosen;
};

} // namespace cgpt::driver

#endif // CGPT_DRIVER_COMPILESESSION_H
