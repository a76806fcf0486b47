//===- StepProgram.h - a device's step, and where it runs --------*- C++
//-*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// StepProgram reads a wafer.device's stages, regions and streams once: what
// each kernel does, whatever its placement. Placement is what a placer
// decides (each region's rectangle, layout and wave; each stage's pipeline
// slot; the execution mode): wafer-place writes it into the IR, and the
// runtime, the memory check and the pictures read it back from there with
// `Placement::fromIR`. The planner weighs placements before any is written,
// with the same memory and schedule code, so its prediction is the
// runtime's.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_WAFER_ANALYSIS_STEPPROGRAM_H
#define CGPT_DIALECT_WAFER_ANALYSIS_STEPPROGRAM_H

#include "cgpt/Dialect/Wafer/Analysis/KernelCost.h"
#include "cgpt/Support/MicroBatches.h"
#include "cgpt/Target/WaferTargetModel.h"

#include "llvm/ADT/SmallVector.h"

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cgpt::wafer {

/// One region as the IR states it, placement aside.
struct ProgramRegion {
  // Reading an op's attributes is not const in MLIR's API.
  mutable RegionOp op;
  KernelShape shape;
  KernelCostModel cost;
  /// Regions of the same kernel and shape share a class (numbered in
  /// program order): placed alike, their times are equal, and a model's
  /// layers make most regions alike.
  int64_t costClass = 0;
  int64_t live = 0;
  /// Bytes per sequence of the activations it reads and writes itself.
  int64_t operandBytes = 0;
  /// Weight bytes entering the mesh for it (its ingress ops), and gradient
  /// bytes leaving after it (its egress ops), per pass.
  int64_t ingressBytes = 0, egressBytes = 0;
  /// Earlier regions of the stage whose results it reads; every earlier one
  /// when the IR does not say (`reads`).
  llvm::SmallVector<unsigned, 4> reads;
};

/// One stage as the IR states it.
struct ProgramStage {
  mutable StageOp op;
  std::string name, phase;
  std::optional<int64_t> layer;
  int64_t checkpointBytes = 0;
  /// For a layer's backward stage: what its forward stage checkpoints per
  /// sequence (the bytes an offloaded checkpoint brings back).
  int64_t forwardCheckpointBytes = 0;
  /// The weights its regions stream in per pass.
  int64_t weightBytes = 0;
  std::vector<ProgramRegion> regions;
  /// Stages alike in all that their placement depends on share a class
  /// (numbered in program order): the placers decide once a class.
  int64_t placementClass = 0;
};

/// One block attention's layout search weighs: its cycles taking all
/// queries at once with its keys resident, and, once asked, taking its
/// keys in one block with all queries at once (backward), the bound of
/// every way it takes its keys in blocks. What a core of it holds, and
/// the fewest bytes with its keys resident and in blocks (one query, and
/// one key, at a time), are the same for every room.
struct AttentionCandidate {
  double allAtOnce = 0;
  Layout block;
  AttentionBlock buffers;
  int64_t fewestResident = 0, fewestInKeyBlocks = 0;
  double oneKeyBlock = -1;
};

/// What the layout search (LayoutSearch.h) has found for one program: the
/// placers ask it the same of every layer alike, and the side-by-side
/// placer again what the whole-mesh placer asked at the same micro-batch.
struct LayoutSearchMemo {
  /// bestStageLayout's, by stage class, rectangle and micro-batch.
  std::map<std::array<int64_t, 6>, Layout> stages;
  /// bestRegionLayout's, by cost class, rectangle, micro-batch and
  /// weights edge.
  std::map<std::array<int64_t, 7>, std::pair<Layout, KernelTime>> regions;
  /// bestAttentionLayout's, by the same and a core's room.
  std::map<std::array<int64_t, 8>, std::pair<Layout, KernelTime>> attention;
  /// Attention's candidates, by the same as `regions`, fastest all at
  /// once first.
  std::map<std::array<int64_t, 7>, std::vector<AttentionCandidate>>
      attentionOrder;
};

/// A device's step, read once from its IR.
class StepProgram {
public:
  /// Fails with a diagnostic on IR it cannot run (a device without stages,
  /// an op in a stage that is not a region or a stream) or a target that
  /// cannot be read.
  static mlir::FailureOr<StepProgram> build(DeviceOp device);

  DeviceOp getDevice() const { return device; }
  const target::WaferTargetModel &getTarget() const { return *target; }
  llvm::ArrayRef<ProgramStage> getStages() const { return stages; }
  int64_t getLayers() const { return layers; }
  int64_t getLargestStageWeights() const { return largestStageWeights; }
  int64_t getTotalGradientBytes() const { return totalGradientBytes; }
  int64_t getSeqLen() const { return seqLen; }
  int64_t getPerSystemBatch() const { return perSystemBatch; }
  int64_t getGlobalBatch() const { return globalBatch; }
  int64_t getNumCsx() const { return numCsx; }
  int64_t getParameters() const { return parameters; }
  /// Whether the optimizer clips gradients by their global norm.
  bool clipsGradients() const { return clipped; }
  /// The whole mesh as a rectangle.
  Rect getMesh() const;
  /// The layout search's answers for this program so far: a memo, which
  /// changes no answer.
  LayoutSearchMemo &getLayoutSearchMemo() const { return layoutSearchMemo; }

private:
  mutable DeviceOp device;
  mutable LayoutSearchMemo layoutSearchMemo;
  const target::WaferTargetModel *target = nullptr;
  std::vector<ProgramStage> stages;
  int64_t layers = 0, largestStageWeights = 0, totalGradientBytes = 0;
  int64_t seqLen = 0, perSystemBatch = 0, globalBatch = 0, numCsx = 0;
  int64_t parameters = 0;
  bool clipped = false;
};

/// Where and how one region runs.
struct RegionPlacement {
  Rect rect;
  Layout layout;
  /// Regions of one wave run at the same time; waves one after another.
  int64_t wave = 0;
};

/// A placer's decisions for a whole step.
struct Placement {
  std::string placer;
  ExecutionMode mode = ExecutionMode::weight_streaming;
  /// Per stage: its pipeline slot (layer pipelined only).
  std::vector<std::optional<int64_t>> slots;
  /// Per stage, per region.
  std::vector<std::vector<RegionPlacement>> regions;

  /// The placement recorded in `program`'s IR. Fails naming the first
  /// region without one ("region @x has no layout; run wafer-place").
  static mlir::FailureOr<Placement> fromIR(const StepProgram &program);
  /// Writes it into the IR: each region's `at`, `layout` and `wave`, each
  /// stage's `slot`, the device's `placer` and `execution`.
  void writeTo(const StepProgram &program) const;
  /// The number of pipeline slots (0 under weight streaming).
  int64_t numSlots() const;
};

/// A placed device as the runtime reads it: its program and the placement
/// its IR records.
struct PlacedStep {
  StepProgram program;
  Placement placement;

  /// Fails with a diagnostic as StepProgram::build and Placement::fromIR
  /// do.
  static mlir::FailureOr<PlacedStep> read(DeviceOp device);
};

/// The time of region `r` of stage `s` as placed, at `microBatch`.
KernelTime placedKernelTime(const StepProgram &program,
                            const Placement &placement, size_t s, size_t r,
                            int64_t microBatch);

/// A placement with the time of every region in the passes of a system's
/// batch: what the memory model and the schedule read.
struct TimedPlacement {
  Placement placement;
  /// The even split of the per-system batch into passes (MicroBatches.h).
  PassSplit split;
  /// Per stage, per region, in a pass of `split.microBatch` sequences.
  std::vector<std::vector<KernelTime>> times;
  /// The same in a pass one sequence shorter; empty when the split is even.
  std::vector<std::vector<KernelTime>> shortTimes;

  /// Timed in the passes of at most `microBatch` sequences that split the
  /// program's per-system batch evenly.
  static TimedPlacement of(const StepProgram &program, Placement placement,
                           int64_t microBatch);

  /// Sets the layout of region `r` of stage `s` and times it again if it
  /// changed: the policies weighed for one placement change only the sum
  /// blocks of a few regions and attention's blocks.
  void setLayout(const StepProgram &program, size_t s, size_t r,
                 const Layout &layout);

private:
  /// Times region `r` of stage `s` as placed into `times` and, for an
  /// uneven split, `shortTimes`: from `known` when a region of its class
  /// was placed alike before.
  void time(const StepProgram &program, size_t s, size_t r);

  /// The times of each (cost class, layout, rectangle) met so far, in a
  /// full pass and a short one.
  std::map<std::array<int64_t, 10>, std::pair<KernelTime, KernelTime>> known;
};

} // namespace cgpt::wafer

#endif // CGPT_DIALECT_WAFER_ANALYSIS_STEPPROGRAM_H
