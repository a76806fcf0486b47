//===- MemoryModel.h - what each core holds while a region runs -*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// A core's SRAM while a region runs, from the placed step: the reserve, the
// weights it buffers or holds, the checkpoints the policy keeps, the
// activations live at that point of the stage spread as the region's
// layout spreads them over its rectangle, its share of the gradient it
// sums, and a weight kernel's block of partial sums (docs/wafer.md). The memory
// check, the planner and the report all read this.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_WAFER_ANALYSIS_MEMORYMODEL_H
#define CGPT_DIALECT_WAFER_ANALYSIS_MEMORYMODEL_H

#include "cgpt/Dialect/Wafer/Analysis/CheckpointPolicy.h"
#include "cgpt/Dialect/Wafer/Analysis/KernelCost.h"
#include "cgpt/Dialect/Wafer/Analysis/StepProgram.h"

#include <array>

namespace cgpt::wafer {

/// f32 weights and two f32 Adam moments per parameter on the weight servers.
constexpr int64_t kServerBytesPerParameter = 12;

/// What one core holds while a region runs, in bytes.
struct CoreMemory {
  /// Code, queues and stack (the target's `reserved_bytes`).
  int64_t reserve = 0;
  /// Weight streaming: the current and the next stage's weights, spread
  /// over the mesh. Layer pipelined: the slot's weights, held on its
  /// rectangle (`resident`).
  int64_t weightBuffers = 0;
  bool resident = false;
  /// Checkpoints the policy keeps on the wafer; layer pipelined, those of
  /// the micro-batches in flight through the slot.
  int64_t checkpoints = 0;
  /// Activations live while the region runs (with the uneven split's
  /// imbalance).
  int64_t live = 0;
  /// The share of the weight gradients summed on the core.
  int64_t accumulator = 0;
  /// A weight kernel's f32 sums of one block of its output columns (the
  /// layout's `sum_block`, or all of them); a token sum's of its features.
  int64_t sums = 0;
  /// Attention's buffers (AttentionBlock) for the layout's `sum_block`
  /// queries at a time.
  int64_t attention = 0;
  /// A map's f32 work rows and constants (wafer::mapWorkBytes).
  int64_t mapWork = 0;
  /// A weight matmul's epilogue's constants (wafer::epilogueConstantBytes;
  /// its work rows lie in its sums).
  int64_t epilogue = 0;
  /// An embedding's lists of its tokens' ids, its row passed over or sums,
  /// and a lookup's fused positions' rows (wafer::embeddingWorkBytes).
  int64_t embeddingWork = 0;
  /// The router's logits, probabilities, choices and work rows on the
  /// chain's last core (wafer::routerChoiceBytes).
  int64_t routerChoice = 0;

  /// What the layout's `sum_block` decides: the sums or attention's
  /// buffers.
  int64_t blocked() const { return sums + attention; }
  int64_t total() const {
    return reserve + weightBuffers + checkpoints + live + accumulator +
           blocked() + mapWork + epilogue + embeddingWork + routerChoice;
  }
  /// "reserve 8,192 B, weight buffers 134 B, ...", attention's buffers,
  /// a map's work rows, an epilogue's constants, an embedding's lists and
  /// the router's choice named where it has them.
  std::string describe() const;
};

/// The region with the largest per-core memory, and that memory.
struct MemoryPeak {
  RegionOp region;
  CoreMemory memory;
};

/// How the cores of a region share bytes held for each sequence of the
/// micro-batch: none, evenly, or by the tokens a core holds with each
/// token's bytes over its feature groups.
class SequenceSpread {
public:
  SequenceSpread() = default;
  static SequenceSpread even(int64_t microBatch, int64_t cores) {
    return {Kind::even, microBatch, cores, 1};
  }
  static SequenceSpread byTokens(int64_t tokens, int64_t seqLen,
                                 int64_t featureGroups) {
    return {Kind::byTokens, tokens, seqLen, featureGroups};
  }
  /// A core's bytes of `perSequence` bytes of each sequence.
  int64_t bytes(int64_t perSequence) const;
  /// Its kind and figures: equal for spreads that share bytes alike.
  std::array<int64_t, 4> key() const {
    return {static_cast<int64_t>(kind), a, b, c};
  }

private:
  enum class Kind : uint8_t { none, even, byTokens };
  SequenceSpread(Kind kind, int64_t a, int64_t b, int64_t c)
      : kind(kind), a(a), b(b), c(c) {}
  Kind kind = Kind::none;
  /// even: the micro-batch and the cores; byTokens: a core's tokens, the
  /// sequence length and the feature groups.
  int64_t a = 0, b = 1, c = 1;
};

/// The memory of every region of one placed step at one micro-batch,
/// accounted once but for the checkpoints, which the policy decides: the
/// planner weighs every policy against the same placement, and a deep
/// model's step has more than a hundred thousand regions.
class PlacedMemory {
public:
  /// `placement` is read until this is destroyed.
  PlacedMemory(const StepProgram &program, const Placement &placement,
               int64_t microBatch);

  /// The layout of region `region` of stage `stage` with its `sum_block`
  /// set: a weight kernel's; attention's, with its blocks chosen again for
  /// the room the region leaves (bestAttentionLayout).
  struct SumBlock {
    size_t stage, region;
    Layout layout;
  };
  /// The `sum_block` of every weight kernel and attention under `policy`,
  /// as
  /// withSumBlocks sets them, in program order; with `peak`, also the
  /// memoryPeak of the placement with them.
  std::vector<SumBlock> sumBlocks(CheckpointPolicy policy,
                                  MemoryPeak *peak = nullptr) const;

private:
  /// What a region asks of a core: its bytes without checkpoints or what
  /// `sum_block` decides, how it shares the checkpoints, and a weight
  /// kernel's sums (none where not `blockable`) with its stream's elements
  /// a wavelet, or an attention region (whose own layout changes nothing
  /// else it holds) on its rectangle.
  struct Need {
    int64_t fixed = 0;
    SequenceSpread checkpoints;
    SumBlockShape sums;
    int64_t perWavelet = 1;
    const ProgramRegion *attention = nullptr;
    Rect rect;
    Edge weights = Edge::none;
  };
  const StepProgram &program;
  const Placement &placement;
  int64_t microBatch;
  /// The distinct needs, once each (a model's layers repeat theirs), in
  /// the order of the first region of each.
  std::vector<Need> needs;
  /// The first region of each need.
  std::vector<std::pair<size_t, size_t>> firstOf;
  /// The weight kernels and attention regions (`block` unset), and the
  /// need of each.
  std::vector<SumBlock> weightKernels;
  std::vector<int32_t> weightKernelNeeds;
};

/// Per-core memory of region `r` of stage `s` as placed, at `microBatch`
/// under `policy`.
CoreMemory regionMemory(const StepProgram &program, const Placement &placement,
                        size_t s, size_t r, int64_t microBatch,
                        CheckpointPolicy policy);
/// Per stage, per region: regionMemory of each, in one pass.
std::vector<std::vector<CoreMemory>> regionMemories(const StepProgram &program,
                                                    const Placement &placement,
                                                    int64_t microBatch,
                                                    CheckpointPolicy policy);
MemoryPeak memoryPeak(const StepProgram &program, const Placement &placement,
                      int64_t microBatch, CheckpointPolicy policy);

/// `placement` with each weight kernel's `sum_block` set: all its output
/// columns at once where their sums fit beside everything else its cores
/// hold at `microBatch` under `policy`, else as many as fit (at least one),
/// spread evenly over the blocks; and attention's, its queries at once
/// (attentionChunkFor). With `peak`, also its memoryPeak, from the same
/// account (a block changes only its region's sums or buffers).
Placement withSumBlocks(const StepProgram &program, Placement placement,
                        int64_t microBatch, CheckpointPolicy policy,
                        MemoryPeak *peak = nullptr);

} // namespace cgpt::wafer

#endif // CGPT_DIALECT_WAFER_ANALYSIS_MEMORYMODEL_H
