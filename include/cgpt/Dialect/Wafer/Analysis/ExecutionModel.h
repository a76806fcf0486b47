//===- ExecutionModel.h - how weight streaming runs a step ------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The one execution model the placer, the memory check, the batch planner
// and the simulator share (docs/wafer.md, docs/runtime.md). A stage is an
// ordered sequence of kernels, each run over the whole mesh; a kernel's time
// is the largest of its compute, fabric and SRAM bounds plus a fixed cost
// derived from the mesh; a core's memory is what is live while the peak
// kernel runs, the checkpoints the policy keeps, the weight buffers and a
// stated reserve. Every rate and size comes from the target model.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_WAFER_ANALYSIS_EXECUTIONMODEL_H
#define CGPT_DIALECT_WAFER_ANALYSIS_EXECUTIONMODEL_H

#include "cgpt/Dialect/Wafer/IR/Wafer.h"
#include "cgpt/Target/WaferTargetModel.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cgpt::wafer {

/// Where the activations kept for the backward pass live
/// (`#wafer.checkpoint`).
struct CheckpointPolicy {
  enum class Kind { keep, every, offload };
  Kind kind = Kind::keep;
  /// For `every`: layers 0, k, 2k, ... keep theirs.
  int64_t interval = 0;

  static CheckpointPolicy fromAttr(CheckpointAttr attr);
  CheckpointAttr toAttr(mlir::MLIRContext *context) const;
  /// "keep", "every 4", "offload".
  std::string str() const;
  /// The policies the planner weighs for a model of `layers` layers: keep,
  /// offload, and every k for k from 2 to about 2 sqrt(layers); past
  /// kMaxEveryIntervals such k (models over 156 layers), that many spaced
  /// evenly on a log scale, so that planning stays linear in layers.
  static std::vector<CheckpointPolicy> candidates(int64_t layers);
};

/// The most `every` intervals the planner weighs (all of them for every
/// model in models/, whose deepest has 96 layers).
constexpr int64_t kMaxEveryIntervals = 24;

/// A kernel's data split: token groups by feature groups (for attention,
/// query blocks by key blocks of each (sequence, head)).
struct Layout {
  int64_t tokenGroups = 1, featureGroups = 1;
};

/// The time of one kernel over the mesh, in cycles, by bound.
struct KernelTime {
  Layout layout;
  double compute = 0, fabric = 0, sram = 0;
  /// Configuring the kernel and filling and draining the mesh.
  double fixed = 0;
  double cycles() const { return std::max({compute, fabric, sram}) + fixed; }
  /// "compute", "fabric" or "sram": the largest bound.
  const char *bound() const;
};

/// Partial sums and weight gradients are f32.
constexpr int64_t kPartialSumBytes = 4;

/// FMACs per cycle for operands of `elementBytes`: 16-bit operands
/// accumulate in f32 (bf16 storage, f32 accumulation), f32 ones run the
/// f32 FMAC.
int64_t fmacLanes(const target::WaferTargetModel &target,
                  int64_t elementBytes);
/// Elements of `elementBytes` one wavelet carries (two 16-bit values).
int64_t elementsPerWavelet(const target::WaferTargetModel &target,
                           int64_t elementBytes);

/// What the timing model needs of one kernel: a region's attributes.
struct KernelShape {
  KernelKind kind = KernelKind::elementwise;
  /// Per sequence: [rows, columns, contracted] and executed FLOPs.
  int64_t rows = 1, columns = 1, contracted = 1, flops = 0;
  int64_t elementBytes = 2, weightBytes = 0, accumulator = 0;
  int64_t chunks = 1, repeats = 1;

  static KernelShape of(RegionOp region);
};

/// The time of `kernel` on a `width` x `height` rectangle of `target`'s
/// cores whose data is split as `layout`, for `microBatch` sequences. The
/// algorithm each kind runs, and so each term, is what the cycle-level mesh
/// model executes (lib/Sim/Mesh, docs/runtime.md). Attention picks its own
/// block split unless `attentionBlock` gives one: query blocks by key
/// blocks of one (sequence, head).
KernelTime kernelTime(const KernelShape &kernel, Layout layout,
                      int64_t microBatch,
                      const target::WaferTargetModel &target, int64_t width,
                      int64_t height,
                      std::optional<Layout> attentionBlock = std::nullopt);

/// What one core holds while a kernel runs, in bytes.
struct CoreMemory {
  /// Code, queues and stack (the target's `reserved_bytes`).
  int64_t reserve = 0;
  /// The current and the next stage's weights, spread over the mesh.
  int64_t weightBuffers = 0;
  /// Checkpoints the policy keeps on the wafer.
  int64_t checkpoints = 0;
  /// Activations live while the kernel runs (with the uneven split's
  /// imbalance), and attention's score block.
  int64_t live = 0;
  /// The share of the weight gradient it sums.
  int64_t accumulator = 0;

  int64_t total() const {
    return reserve + weightBuffers + checkpoints + live + accumulator;
  }
  /// "reserve 8,192 B, weight buffers 134 B, ...".
  std::string describe() const;
};

/// The region with the largest per-core memory, and that memory.
struct MemoryPeak {
  RegionOp region;
  CoreMemory memory;
};

/// One stage as the schedule ran it, for reports and traces.
struct StageRun {
  std::string name;
  std::optional<int64_t> layer;
  /// "forward", "backward", "loss", or "recompute" for a rerun forward
  /// stage under the `every` policy.
  std::string phase;
  double start = 0, end = 0;
  /// "compute", "fabric", "sram" or "weights in".
  std::string bound;
};

/// What an interval of the timeline did, for the trace's `args`: the
/// FLOPs a kernel executed, the bytes a kernel streamed in or a transfer
/// moved, and what bound a kernel ("compute", "fabric", "sram", or
/// "weights in" when it waited for its weights). Zero and null: not stated.
struct IntervalFacts {
  double flops = 0;
  double bytes = 0;
  const char *bound = nullptr;
};

/// Receives the intervals of the first pass and of the step's tail as the
/// schedule computes them (the simulator's timeline).
class ScheduleObserver {
public:
  virtual ~ScheduleObserver() = default;
  virtual void interval(llvm::StringRef track, llvm::StringRef name,
                        double start, double duration,
                        const IntervalFacts &facts) = 0;
  virtual void stage(const StageRun &run) = 0;
};

/// What a step costs at one micro-batch and policy.
struct StepEstimate {
  int64_t passes = 0;
  double firstPassSeconds = 0;
  /// Until the last pass's last kernel ends.
  double passesSeconds = 0;
  /// Then the gradients (and checkpoints) still leaving the system.
  double drainSeconds = 0;
  /// All passes of one system, gradients and checkpoints out included:
  /// passesSeconds + drainSeconds.
  double systemSeconds = 0;
  /// After the last gradient leaves: the reduce tree's latency and drain.
  double reduceSeconds = 0;
  /// Then the weight servers' optimizer still running.
  double optimizerSeconds = 0;
  double stepSeconds = 0;
  double samplesPerSecond = 0;
};

/// The execution model of one placed device on its target.
class ExecutionModel {
public:
  /// Reads the device's stages and regions once; fails with a diagnostic
  /// on IR it cannot model (a stage or region the model does not know).
  static mlir::FailureOr<ExecutionModel> build(DeviceOp device);

  const target::WaferTargetModel &getTarget() const { return *target; }
  int64_t getLayers() const { return layers; }

  /// The layout of `stage`'s token-major kernels at `microBatch`: the split
  /// that makes its kernels fastest.
  Layout stageLayout(size_t stage, int64_t microBatch) const;
  /// Per-core memory of that region at `microBatch` under `policy`.
  CoreMemory regionMemory(size_t stage, size_t index, int64_t microBatch,
                          CheckpointPolicy policy) const;
  /// Per stage, per region: the per-core memory at `microBatch` under
  /// `policy` (regionMemory of each, in one pass over the model).
  std::vector<std::vector<CoreMemory>>
  memories(int64_t microBatch, CheckpointPolicy policy) const;
  MemoryPeak memoryPeak(int64_t microBatch, CheckpointPolicy policy) const;

  /// Runs the schedule of one step: the device's passes of `microBatch`
  /// sequences on one system (the busiest), then the reduce across systems
  /// and the weight servers' optimizer. Reports the first pass and the
  /// tail to `observer` when given.
  StepEstimate estimate(int64_t microBatch, CheckpointPolicy policy,
                        ScheduleObserver *observer = nullptr) const;

  /// Writes each region's layout and the whole mesh it runs on for
  /// `microBatch` into the IR.
  void annotateLayouts(int64_t microBatch) const;

private:
  // Op handles are mutable: reading an op's attributes is not const in
  // MLIR's API, and annotateLayouts writes them.
  struct Kernel {
    mutable RegionOp op;
    KernelShape shape;
    int64_t live;
    /// Weight bytes entering the mesh for this kernel (its ingress ops).
    int64_t ingressBytes = 0;
    /// Gradient bytes leaving after it (its egress ops).
    int64_t egressBytes = 0;
  };
  struct Stage {
    StageOp op;
    std::string name, phase;
    std::optional<int64_t> layer;
    int64_t checkpointBytes = 0;
    /// For a layer's backward stage: what its forward stage checkpoints
    /// per sequence (the bytes an offloaded checkpoint brings back).
    int64_t forwardCheckpointBytes = 0;
    std::vector<Kernel> kernels;
  };

  KernelTime timeWith(const Kernel &kernel, Layout layout,
                      int64_t microBatch) const;
  /// Tries the splits of the mesh for `stage` and returns the fastest.
  Layout searchLayout(size_t stage, int64_t microBatch) const;
  /// Checkpoint bytes per sequence `policy` holds on the wafer at once.
  int64_t checkpointBytesPerSequence(CheckpointPolicy policy) const;
  CoreMemory memoryOf(size_t stage, size_t index, int64_t microBatch,
                      int64_t checkpointBytes) const;
  /// The stage executions of one pass under `policy`: indices into
  /// `stages`, with true for a forward stage run again.
  std::vector<std::pair<size_t, bool>>
  passSchedule(CheckpointPolicy policy) const;

  /// What depends on the micro-batch alone, whatever the policy: each
  /// stage's layout and each of its kernels' time with it.
  struct AtMicroBatch {
    std::vector<Layout> layouts;
    std::vector<std::vector<KernelTime>> times;
  };
  /// Computed once per micro-batch, for every policy weighed at it.
  const AtMicroBatch &at(int64_t microBatch) const;

  mutable DeviceOp device;
  const target::WaferTargetModel *target = nullptr;
  mutable std::map<int64_t, AtMicroBatch> microBatchCache;
  std::vector<Stage> stages;
  int64_t layers = 0;
  int64_t largestStageWeights = 0;
  int64_t totalGradientBytes = 0;
};

} // namespace cgpt::wafer

#endif // CGPT_DIALECT_WAFER_ANALYSIS_EXECUTIONMODEL_H
