//===- KernelPrograms.h - placed kernels as per-core programs ---*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Turns one kernel of the wafer IR, laid out as its region was placed, into
// the program every core of its rectangle runs (CoreProgram.h) and the
// routes between them: the algorithm each kernel kind runs, in the SDK's
// terms, with buffers in each core's SRAM, blocked as the layout's
// `sum_block` says. Nothing in a program is a cycle count: the mesh model
// derives the time from the operations and the target's rates.
//
// The layout's groups fold onto the rectangle in segments: a token group's
// feature groups are a segment of adjacent cores along a row, a column of
// segments holds as many token groups as the rectangle has rows, and the
// columns of segments stand side by side. Every column of segments runs
// alike, so for its time one stands for the rectangle; to carry values all
// of them run, and so do they all where a chain runs through them (a
// weight gradient's sums).
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SIM_MESH_KERNELPROGRAMS_H
#define CGPT_SIM_MESH_KERNELPROGRAMS_H

#include "cgpt/Dialect/Wafer/Analysis/KernelCost.h"
#include "cgpt/Sim/Mesh/MeshSimulator.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace cgpt::sim::mesh {

/// Colors the kernel programs use: the streamed operand (weights, the
/// output gradient, a table) on 0, chains on 1 and 2 (and 3 for a
/// reduction's way back, or attention's second stream; a norm gradient's
/// chain down the columns on 4 and 5).
constexpr int kStreamColor = 0, kChainColor = 1;

/// Attention's softmax, for its programs that compute it
/// (AttentionValues.h): its scale, and whether it is causal and adds
/// ALiBi's biases.
struct AttentionSoftmax {
  double scale = 1;
  bool causal = false, alibi = false;
};

struct KernelProgramOptions {
  /// Every column of segments, not only the first: needed to carry the
  /// values of every token group.
  bool allTokenGroups = false;
  /// A norm's epsilon and the loss's (or its gradient's) scale, constants
  /// of their programs (the timing does not depend on them).
  double epsilon = 0, lossScale = 1;
  /// Whether the loss's program is of its last chunk of the vocabulary
  /// (or of its only one), which ends with the log-sum-exp and the loss.
  bool finalChunk = true;
  /// The embedding's scale (its lookup's or its gradient's), a constant of
  /// their programs.
  double tableScale = 1;
  /// Attention's softmax, for its programs (attentionForward and, for
  /// RowFunction::attentionGrad, attentionBackward in AttentionPrograms.cpp);
  /// without it, a causal one scaled by the head's size without ALiBi,
  /// which times the same but for ALiBi's one multiply-add a query.
  std::optional<AttentionSoftmax> attentionSoftmax;
};

/// The buffers a norm's program declares, in order: its tokens' rows
/// (normalized in place), the statistics its segment sums (a layer norm's
/// rows' sums, then the sums of squares), per token a layer norm's mean,
/// the reciprocal standard deviation and a layer norm's shift, a row's
/// squares, the gain and a layer norm's shift of its features, and its
/// constants.
enum NormBuffer : int {
  kNormData,
  kNormStatistics,
  kNormPerToken,
  kNormSquares,
  kNormGain,
  kNormShift,
  kNormConstants,
};

/// The buffers a norm gradient's program declares, in order: its tokens'
/// rows of the norm's input (normalized in place) and of the output
/// gradient (scaled by the gain in place, then the input gradient), the
/// statistics its segment sums (a layer norm's sums of the scaled
/// gradient, then the sums of its products with the normalized input; both
/// then the coefficients of the input gradient), per token a layer norm's
/// mean (then its shift) and the reciprocal standard deviation, a row's
/// products, the gain, the gain's (and a layer norm's shift's) gradient
/// of its features, and its constants.
enum NormGradBuffer : int {
  kGradInput,
  kGradOutputGradient,
  kGradStatistics,
  kGradPerToken,
  kGradProducts,
  kGradGain,
  kGradSums,
  kGradConstants,
};

/// The buffers a map's program declares, in order: its tokens' rows of the
/// map's first input (the result in place) and of its second (a two-input
/// map's), then the f32 work rows and the constants of its algorithm
/// (wafer::mapAlgorithm).
enum MapBuffer : int {
  kMapFirstInput,
  kMapSecondInput,
};

/// The buffers a product against a stream (a weight matmul's or a weight
/// gradient's) declares first: the rows it holds, and the f32 sums of a
/// block of output columns.
enum ProductBuffer : int {
  kProductInputs,
  kProductSums,
  /// A reduce-scattered weight matmul's (wafer::reducesScattered) third:
  /// its part of every block's outputs, [block][column][token], in the
  /// stored element; then its own part of a block as it comes from the
  /// east (empty on the segment's last core, and alone in the segment).
  kProductOutputs,
  kProductFromEast,
};

/// Where a reduce-scattered weight matmul's epilogue (KernelShape::epilogue;
/// docs/runtime.md, "The weight matmul's epilogue") keeps its operands and
/// results on a core, after ProductBuffer's: map by map, the other input
/// of a binary map and, where the running value is kept, the map's result,
/// each [block][column][token] as the outputs are. The maps' constants and
/// the scale follow.
struct EpilogueBuffers {
  struct Map {
    /// A binary map's other input; the running value it reads; where its
    /// result lands (the running value's buffer unless that is kept).
    int held = -1, source = -1, result = -1;
  };
  std::vector<Map> maps;
};
EpilogueBuffers epilogueBuffers(const wafer::KernelShape &kernel);

/// The buffers the router's product declares on the chain's last core of
/// each segment, in order (the other cores: its inputs and sums): its
/// tokens' rows of its inputs and the sums (ProductBuffer); the logits,
/// [expert][token], each block's sums as the chain delivers them (empty
/// alone in its chain with one block: the sums are the logits); the logits
/// rounded to 16 bits (empty unless they round); the probabilities, then
/// the choice marks, [expert][token]; the chosen experts' weights and their
/// indices, [choice][token]; the choice's f32 work rows (RouterRow) and its
/// constants.
enum RouterBuffer : int {
  kRouterLogits = kProductSums + 1,
  kRouterRounded,
  kRouterProbabilities,
  kRouterMarks,
  kRouterWeights,
  kRouterExperts,
  kRouterWork,
  kRouterConstants,
};

/// The buffers the embedding lookup's program declares, in order: its
/// tokens' rows (the result in place); per distinct id among its tokens,
/// in increasing order, the elements of the table's stream to pass over
/// before the id's row (and, one more, after the last), the elements of
/// the row to take (0 past the distinct ids) and where the row lands (the
/// offset of the id's first token's row); per token, the offset of its
/// id's first token's row; a row of the stream passed over; its constants
/// (the scale); then, for fused learned positions (empty without), their
/// rows and the same four lists, each token's place in its sequence its
/// id.
enum GatherBuffer : int {
  kGatherRows,
  kGatherSkips,
  kGatherTakes,
  kGatherTargets,
  kGatherSources,
  kGatherPassed,
  kGatherConstants,
  kGatherPositionRows,
  kGatherPositionSkips,
  kGatherPositionTakes,
  kGatherPositionTargets,
  kGatherPositionSources,
};

/// The buffers of one table a lookup takes rows of: its rows and its four
/// lists, as GatherBuffer places them for the tokens' table and for the
/// positions'.
struct GatherTableBuffers {
  int rows, skips, takes, targets, sources;
  bool operator==(const GatherTableBuffers &other) const {
    return rows == other.rows && skips == other.skips && takes == other.takes &&
           targets == other.targets && sources == other.sources;
  }
};
constexpr GatherTableBuffers kGatherTokenTable{
    kGatherRows, kGatherSkips, kGatherTakes, kGatherTargets, kGatherSources};
constexpr GatherTableBuffers kGatherPositionTable{
    kGatherPositionRows, kGatherPositionSkips, kGatherPositionTakes,
    kGatherPositionTargets, kGatherPositionSources};

/// The buffers the embedding gradient's program declares, in order: its
/// tokens' rows of the output gradient; per distinct id among its tokens,
/// in increasing order, the f32 sum of their rows times the scale; per
/// token, the offset of its id's sums; per distinct id, the elements of
/// the gradient's stream to pass on before the id's row (and, one more,
/// after the last) and the elements of the row to add to (0 past the
/// distinct ids); and its constants (the scale).
enum ScatterAddBuffer : int {
  kScatterGradient,
  kScatterSums,
  kScatterSlots,
  kScatterSkips,
  kScatterTakes,
  kScatterConstants,
};

/// The buffers the loss gradient's program declares, in order: its tokens'
/// rows of logits (the gradient in place) and one spare element, per token
/// the log-sum-exp and the label's place among the rows (the spare
/// element's when the label is another core's), a row's work in f32 (the
/// exponent's argument, then its fraction; 2^n; the polynomial), and its
/// constants.
enum LossGradBuffer : int {
  kLossLogits,
  kLossLogSumExp,
  kLossLabels,
  kLossFraction,
  kLossPowerOfTwo,
  kLossPolynomial,
  kLossConstants,
};

/// The buffers the loss's program declares, in order: its tokens' rows of
/// logits and one spare element (0), per token the label's place among the
/// rows (the spare element's when the label is another core's) and the
/// weight of its log-sum-exp in the core's loss (1 on the first core of
/// a real token's segment, else 0), the chunk's statistics (per token the
/// maximum, then the sum of exponentials), the running ones over the
/// chunks so far (the same two), per token the log-sum-exp, the core's
/// part of the loss, f32 work rows for the exponential (its fraction,
/// power of two and polynomial) and one for a product, and its constants.
enum LossBuffer : int {
  kCrossEntropyLogits,
  kCrossEntropyLabels,
  kCrossEntropyWeights,
  kCrossEntropyStatistics,
  kCrossEntropyRunning,
  kCrossEntropyLogSumExp,
  kCrossEntropyLoss,
  kCrossEntropyFraction,
  kCrossEntropyPowerOfTwo,
  kCrossEntropyPolynomial,
  kCrossEntropyProducts,
  kCrossEntropyConstants,
};

/// The buffers attention's forward program declares, in order: the pair's
/// keys (transposed: a row a head dimension) then values, a query row,
/// the scores of the core's queries against its keys (f32, as the other
/// buffers but the first two), each query's maximum score, the partial
/// outputs (a row of the head's size a query) then each query's sum of
/// exponentials, per query the offset of its mask window, the core's key
/// positions, each pair's ALiBi slope, work rows for the exponential (its
/// fraction, power of two and polynomial, a key's each), and its
/// constants; as wafer::AttentionBlock::buffers counts them. With key
/// blocks (attentionForwardByKeys) they hold a block of keys and values,
/// a chunk's queries, a row of scores, a work element a query beside its
/// maximum, and the mask offsets and positions as the backward pass's.
enum AttentionBuffer : int {
  kAttentionKeysValues,
  kAttentionQuery,
  kAttentionScores,
  kAttentionMaxima,
  kAttentionPartials,
  kAttentionMaskOffsets,
  kAttentionKeyPositions,
  kAttentionSlopes,
  kAttentionFraction,
  kAttentionPowerOfTwo,
  kAttentionPolynomial,
  kAttentionConstants,
};

/// The buffers attention's backward program declares, in order: the
/// pair's keys transposed (a row a head dimension), its keys (a row a key)
/// and its values transposed; the core's queries and output gradients (a
/// row a query); the scores, then the probabilities, and their gradients
/// (f32, as the other buffers after these); per query the maximum score,
/// the sum of exponentials, the sum of the probabilities times their
/// gradients and the sum's reciprocal; the query gradients; the key
/// gradients then the value gradients (a row a key); per query the offset
/// of its mask window, the core's key positions, each pair's ALiBi slope,
/// the exponential's work rows and the constants; as
/// wafer::AttentionBlock::buffers counts them. With key blocks
/// (attentionBackwardByKeys) the same buffers hold a block of keys, a
/// query's rows of scores, every query's statistics (and a chunk's copy),
/// mask offsets (a chunk's clamped, every query's first and current) and
/// the block's positions (current, then first).
enum AttentionGradBuffer : int {
  kAttentionGradKeysTransposed,
  kAttentionGradKeys,
  kAttentionGradValuesTransposed,
  kAttentionGradQueries,
  kAttentionGradOutputGrads,
  kAttentionGradProbabilities,
  kAttentionGradProbabilityGrads,
  kAttentionGradStatistics,
  kAttentionGradQueryGrads,
  kAttentionGradKeyValueGrads,
  kAttentionGradMaskOffsets,
  kAttentionGradKeyPositions,
  kAttentionGradSlopes,
  kAttentionGradFraction,
  kAttentionGradPowerOfTwo,
  kAttentionGradPolynomial,
  kAttentionGradConstants,
};

/// Where attention's programs (AttentionBuffer, AttentionGradBuffer) keep
/// their mask
/// among their constants: `keys` zeros, then `keys` of kMaskedScore, so
/// that the window of `keys` at a query's offset adds nothing to the keys
/// it sees and kMaskedScore to the others.
constexpr int64_t kAttentionMaskAt = 6;
constexpr float kMaskedScore = -1e30f;

/// A kernel's program with what it decided.
struct KernelProgram {
  MeshProgram mesh;
  /// Token groups down the rows of each column of segments, feature groups
  /// along each segment, and the columns of segments built.
  int rows = 1, segment = 1, segmentColumns = 1;
  /// Per core: the token and feature group it holds (-1 for an idle core).
  std::vector<int> tokenGroup, featureGroup;
  /// Core `core`'s place in its segment: its feature group, or for an idle
  /// core the one whose chains it carries.
  int placeInSegment(int core) const { return core % mesh.width % segment; }
  /// A weight kernel's or token sum's sums (wafer::sumBlockShape), the
  /// columns it sums at once (the layout's `sum_block`, or all) and the
  /// blocks.
  wafer::SumBlockShape sums;
  int64_t blockColumns = 0, blocks = 1;
  /// A core's tokens and features, for the other kernels.
  int64_t tokens = 0, features = 0;
  /// Attention's: the queries a core takes at once (its tokens in chunks
  /// of as many, the last padded; the layout's `sum_block`).
  int64_t tokensAtOnce = 0;
  /// The keys attention takes at once (its features in blocks of as many,
  /// the last padded; the layout's `key_block`, or all).
  int64_t keysAtOnce = 0;
};

/// The grid one column of segments takes of `rect` under `layout` (one the
/// region verifier accepts): its feature groups along a row and its token
/// groups down the rows, at most the rectangle's height.
struct SegmentGrid {
  int segment = 1, rows = 1;
};
SegmentGrid segmentGrid(const wafer::Layout &layout, const wafer::Rect &rect);

/// Whether `kernel`'s chain runs through every column of segments (a
/// weight gradient whose weights stream): their sums add up on the mesh,
/// so one column cannot stand for the rectangle.
bool chainsThroughColumns(const wafer::KernelShape &kernel,
                          const wafer::Layout &layout);

/// The columns of segments buildKernelProgram builds: every one that holds
/// token groups for values (`allTokenGroups`) or for a chain through them,
/// else the first, which stands for the rectangle.
int segmentColumnsBuilt(const wafer::KernelShape &kernel,
                        const wafer::Layout &layout, const wafer::Rect &rect,
                        bool allTokenGroups);

/// The program of `kernel` for `microBatch` sequences, laid out as `layout`
/// on `rect` of `target`'s cores. For attention the program is one
/// (sequence, head) block with `kernel.flops` its share of the pairs.
KernelProgram buildKernelProgram(const wafer::KernelShape &kernel,
                                 const wafer::Layout &layout,
                                 int64_t microBatch,
                                 const target::WaferTargetModel &target,
                                 const wafer::Rect &rect,
                                 const KernelProgramOptions &options = {});

/// Why the programs cannot lay out `layout` on `rect` (its token groups do
/// not fit in segments along the rectangle's rows, which a region's
/// verifier also refuses); empty when they can.
std::string segmentsRefusal(const wafer::Layout &layout,
                            const wafer::Rect &rect);

/// The layout a `width` x `height` rectangle stands for: its rows as token
/// groups and its columns as feature groups.
wafer::Layout rectangleLayout(int width, int height);

/// The mesh model's figures from `target`.
MeshConfig meshConfig(const target::WaferTargetModel &target);

/// Simulates `mesh` on `target`'s cores with values in its wavelets and
/// buffers, `memory` filling and reading the cores' buffers (the value
/// runners: KernelValues.h, TokenSumValues.h).
std::optional<MeshResult>
simulateWithValues(const MeshProgram &mesh,
                   const target::WaferTargetModel &target,
                   const CoreMemoryAccess &memory, std::string &error);

/// A stream's elements, `perWavelet` to a wavelet (one, or two 16-bit
/// halves; the last half empty for an odd count): an injector's payload.
std::vector<Wavelet> wavelets(const std::vector<float> &elements,
                              int64_t perWavelet);

/// Calls `fn(core, i, value)` for the value of each wavelet `i` that left
/// `mesh` in `run` at a recording drain (at `port`, when given), `core`
/// the one the drain is at.
void forEachDrained(const MeshProgram &mesh, const MeshResult &run,
                    llvm::function_ref<void(int, int64_t, float)> fn,
                    std::optional<Port> port = std::nullopt);

/// Calls `fn(t, c, row, column)` for each of core `core`'s elements in
/// `built`, a row kernel's program (its token `t` and feature `c`), that
/// hold one of `tokens` tokens (`row`) and `features` features (`column`);
/// the others are the padding of the last group.
template <typename Fn>
void forEachElement(const KernelProgram &built, int core, int64_t tokens,
                    int64_t features, Fn fn) {
  int token = built.tokenGroup[core];
  if (token < 0)
    return;
  int64_t feature = built.placeInSegment(core);
  int64_t tb = built.tokens, cb = built.features;
  for (int64_t t = 0; t < tb; ++t)
    for (int64_t c = 0; c < cb; ++c)
      if (int64_t row = token * tb + t, column = feature * cb + c;
          row < tokens && column < features)
        fn(t, c, row, column);
}

/// Copies core `core`'s elements of the row-major `tokens` x `features`
/// `matrix` into its block buffer `block` ([token][feature] on the core,
/// as forEachElement walks them).
inline void loadBlock(const KernelProgram &built, int core, int64_t tokens,
                      int64_t features, llvm::ArrayRef<float> matrix,
                      std::vector<float> &block) {
  forEachElement(built, core, tokens, features,
                 [&](int64_t t, int64_t c, int64_t row, int64_t column) {
                   block[t * built.features + c] =
                       matrix[row * features + column];
                 });
}

/// Copies core `core`'s block buffer `block` into its place in the
/// row-major `tokens` x `features` `matrix` (loadBlock's reverse).
inline void storeBlock(const KernelProgram &built, int core, int64_t tokens,
                       int64_t features, const std::vector<float> &block,
                       std::vector<float> &matrix) {
  forEachElement(built, core, tokens, features,
                 [&](int64_t t, int64_t c, int64_t row, int64_t column) {
                   matrix[row * features + column] =
                       block[t * built.features + c];
                 });
}

/// Copies `part` into `mesh` with its north-west core at (x, y).
void embedProgram(MeshProgram &mesh, const MeshProgram &part, int x, int y);

} // namespace cgpt::sim::mesh

#endif // CGPT_SIM_MESH_KERNELPROGRAMS_H
