//===- Report.h - what cgpt tells its users ---------------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The human summary and the JSON report of one compiled training step. Both
// are built from the IR of each stage, never from the file it came from, so
// a model file and the IR printed from it report the same.
//
// StepReport is what every renderer reads; each renderer has its file in
// lib/Report: Describe.cpp fills the report from the IR, Summary.cpp prints
// the summary, JsonReport.cpp the JSON, Trace.cpp the timeline, Sweep.cpp a
// sweep's rows and table, Tables.cpp CSV and JSON tables, Charts.cpp the
// SVG charts, CompileReport.cpp the per-kernel report and Placement.cpp the
// placement picture. A new output format is one new file.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_REPORT_REPORT_H
#define CGPT_REPORT_REPORT_H

#include "cgpt/Dialect/Dataflow/Analysis/StepCosts.h"
#include "cgpt/Dialect/Transformer/Analysis/ModelFacts.h"
#include "cgpt/Dialect/Wafer/IR/Wafer.h"
#include "cgpt/Sim/Mesh/CycleLevel.h"
#include "cgpt/Sim/Simulator.h"
#include "cgpt/Target/WaferTargetModel.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace cgpt::report {

/// The version of the JSON report's form, its `schema_version` key:
/// docs/tools/cgpt-run-report.schema.json describes it. A key removed or
/// changed in meaning raises it; a key added does not.
constexpr int64_t kReportSchemaVersion = 1;

/// What the report says about a step, gathered stage by stage.
struct StepReport {
  /// Where the step came from: the input path and, for a model file, how
  /// it was read (empty for IR).
  std::string sourcePath;
  std::string origin;
  /// How the model file's batch_size was read (empty for IR).
  std::string batchReading;

  /// The warnings said while the step was read, compiled and run, as
  /// printed.
  std::vector<std::string> warnings;

  // From the transformer step; for wafer IR input only what the device
  // keeps (name, parameters, layers, batch and sequence length).
  bool fromStep = false;
  transformer::ModelFacts model;
  int64_t perSystemBatch = 0;
  std::string microBatchRequest;
  bool mup = false;
  std::string optimizer;
  std::string precision;

  // From the dataflow program, once lowered.
  struct Dataflow {
    std::string target;
    std::string recompute;
    /// How the policy was chosen, when it was weighed ("" when given).
    std::string recomputeChoice;
    dataflow::StepCosts costs;
  };
  std::optional<Dataflow> dataflow;

  // From the placed wafer device.
  struct Region {
    std::string name, kind, kernel;
    wafer::Rect rect;
    int64_t wave, tokenGroups, featureGroups, sramBytes;
  };
  struct Stage {
    std::string name;
    /// Its pipeline slot, layer pipelined.
    std::optional<int64_t> slot;
    std::vector<Region> regions;
  };
  struct Wafer {
    std::string targetName;
    /// The target as the device names it: a built-in name or a file path.
    std::string targetSource;
    int64_t meshCores = 0;
    /// What the target's weight servers hold, in bytes.
    double serverCapacity = 0;
    double clockHz = 0;
    double peakFlops = 0;
    double algorithmicFlopsPerStep = 0;
    int64_t microBatch = 0;
    int64_t gradAccumSteps = 0;
    std::string checkpoint;
    /// The placer that laid the step out, and "weight_streaming" or
    /// "layer_pipelined".
    std::string placer, execution;
    std::string plan;
    /// The most cores at work at once.
    int64_t coresUsed = 0;
    /// Weights in and gradients out per step and system, as placed.
    double streamedBytesPerStep = 0;
    int64_t sramPeak = 0;
    int64_t sramLimit = 0;
    std::string sramPeakWhere;
    /// What `micro_batch_size: explore` weighed (empty otherwise).
    struct Explored {
      int64_t microBatch;
      std::string placer;
      std::string checkpoint;
      bool fits;
      int64_t sramPeak;
      /// 0 where the micro-batch does not fit.
      double samplesPerSecond;
    };
    std::vector<Explored> explored;
    std::vector<Stage> stages;
  };
  std::optional<Wafer> wafer;

  /// The schedule's steps, its phases' sum (from the transformer step; 0
  /// when its last phase runs until the end).
  int64_t scheduleSteps = 0;
  /// A whole training run: how many steps and where that came from, the
  /// target's power per system (0: not stated), and a price per
  /// system-hour when one was given.
  struct Training {
    int64_t steps = 0;
    std::string stepsFrom;
    double powerWatts = 0;
    std::optional<double> pricePerSystemHour;
  };
  std::optional<Training> training;

  // From the simulation of a step.
  std::optional<sim::SimulationResult> simulation;
  /// Each kernel through the cycle-level mesh model (--cycle-level).
  std::optional<sim::mesh::CycleLevelRun> cycleLevel;
};

/// The rates of a simulated step, derived once for the summary, the JSON
/// report, the sweep table and the log lines.
struct StepRates {
  double seconds = 0;
  double stepsPerSecond = 0;
  double samplesPerSecond = 0;
  double tokensPerSecond = 0;
  double achievedFlopsPerSecond = 0;
  /// The peak of all the systems.
  double peakFlopsPerSecond = 0;
  /// Achieved over peak.
  double utilization = 0;
};
/// The rates of `report`'s step; it must hold a simulation and a wafer.
StepRates computeStepRates(const StepReport &report);

/// A training run of `report.training`'s steps at the simulated step's
/// pace.
struct TrainingEstimate {
  double tokens = 0, seconds = 0, systemHours = 0;
  /// 0 when the target states no power.
  double energyJoules = 0;
  std::optional<double> cost;
};
/// `report` must hold a simulation, a wafer and a training.
TrainingEstimate estimateTraining(const StepReport &report);

/// Fills the transformer part of a report from `step`.
mlir::LogicalResult describeStep(transformer::TrainStepOp step,
                                 StepReport &report);
/// Fills the dataflow part of a report from `program`.
void describeProgram(dataflow::ProgramOp program, StepReport &report);

/// Fills the wafer part of a report from a placed and planned `device`, and
/// the model facts the device keeps when no transformer step described them.
void describeDevice(wafer::DeviceOp device,
                    const target::WaferTargetModel &target, StepReport &report);

/// Prints the summary a person reads first.
void printSummary(llvm::raw_ostream &os, const StepReport &report);

/// Prints each kernel's analytic and cycle-level cycles, and the worst
/// disagreement.
void printCycleLevel(llvm::raw_ostream &os,
                     const sim::mesh::CycleLevelRun &run);

/// Writes the JSON report (docs/tools/cgpt-run.md lists its keys) as it
/// goes, keys sorted as printJson sorts them.
void writeReport(llvm::json::OStream &json, const StepReport &report);
/// The JSON report alone, indented, with a final newline.
void printReport(llvm::raw_ostream &os, const StepReport &report);

/// Prints `value` as indented JSON (keys sorted: the same value gives the
/// same bytes).
void printJson(llvm::raw_ostream &os, const llvm::json::Value &value);

/// Writes the simulation's timeline in the Chrome trace-event format
/// (Perfetto and chrome://tracing open it): a process named `processName`
/// with a track per kernel class, the weights in, the gradients out, the
/// gradient drain, the reduce and the optimizer; each slice's `args` hold
/// the FLOPs, bytes and bound it states. With a cycle-level run, a second
/// process holds one track per row of cores: when each row worked in each
/// kernel, the kernels one after another.
void printTrace(llvm::raw_ostream &os, llvm::StringRef processName,
                const sim::SimulationResult &simulation,
                const sim::mesh::CycleLevelRun *cycleLevel = nullptr);

/// One point of a sweep: the axes it varies (model, target, sequence
/// length, batch, systems, micro-batch request) and what the compile and
/// simulation gave.
struct SweepRow {
  std::string model, target;
  int64_t sequenceLength = 0;
  int64_t globalBatch = 0;
  int64_t systems = 0;
  /// The micro-batch as the point asked for it ("auto", "4", ...) and as
  /// planned.
  std::string microBatchRequest;
  int64_t microBatch = 0;
  int64_t gradAccumSteps = 0;
  double stepSeconds = 0;
  double samplesPerSecond = 0;
  /// The first row with the same model, target, sequence length, batch
  /// and micro-batch request: the speed-up is relative to it.
  size_t groupFirst = 0;
  /// The training run of the report's schedule or options, when it has
  /// steps.
  std::optional<int64_t> trainSteps;
  std::optional<TrainingEstimate> training;
};
/// The row of a simulated `report`; `groupFirst` is left for the caller.
SweepRow sweepRow(const StepReport &report);
/// Prints the sweep as a table, each row's speed-up relative to the first
/// of its group; columns for model, target, sequence length and batch only
/// where the rows differ in them.
void printSweepTable(llvm::raw_ostream &os, llvm::ArrayRef<SweepRow> rows);

/// Prints what `explore` weighed: each micro-batch with its best policy (or
/// its leanest where none fits), whether it fits, SRAM peak, samples/s.
void printExploreTable(llvm::raw_ostream &os,
                       llvm::ArrayRef<StepReport::Wafer::Explored> rows);

/// A table as data for programs: one JSON object per row, with `keys` in
/// column order (numbers stay numbers).
struct DataTable {
  std::vector<std::string> keys;
  llvm::json::Array rows;
};
DataTable sweepData(llvm::ArrayRef<SweepRow> rows);
DataTable exploreData(llvm::ArrayRef<StepReport::Wafer::Explored> rows);
/// Prints `table` as CSV (a header of keys, then one line per row) or as
/// JSON (an array of row objects).
void printDataTable(llvm::raw_ostream &os, const DataTable &table, bool csv);
/// Draws the sweep as an SVG chart: samples/s against systems, one line
/// per group of rows, each with the linear ideal from its first row.
void printSweepPlot(llvm::raw_ostream &os, llvm::ArrayRef<SweepRow> rows);

/// Draws a functional run's loss by step as an SVG line chart.
void printLossCurve(llvm::raw_ostream &os, llvm::StringRef model,
                    llvm::ArrayRef<double> losses);

/// Draws `stage` of `device` as SVG: the mesh with the layout of the first
/// kernel that streams weights (its groups, where weights enter, which way
/// partial sums are reduced), then every kernel of the stage in order with
/// its layout and its per-core SRAM peak as a bar.
void printPlacementSvg(llvm::raw_ostream &os, wafer::DeviceOp device,
                       wafer::StageOp stage,
                       const target::WaferTargetModel &target);

} // namespace cgpt::report

#endif // CGPT_REPORT_REPORT_H
