//===- KernelCost.h - a kernel's time on its rectangle ----------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The cost of one kernel on a given rectangle and layout: what one core's
// compute engine runs, task by task and operation by operation (each at
// its SIMD width, held to its SRAM ports' rate), or the wavelets its ramp
// takes in if that is longer, plus the time to fill and drain its streams,
// from the target's rates (docs/runtime.md). The standard
// algorithm of each kernel kind is here; a kernel with its own algorithm
// brings its cost through KernelCostOpInterface, and KernelCostModel asks
// it first.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_WAFER_ANALYSIS_KERNELCOST_H
#define CGPT_DIALECT_WAFER_ANALYSIS_KERNELCOST_H

#include "cgpt/Dialect/Wafer/IR/Wafer.h"
#include "cgpt/Target/WaferTargetModel.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <algorithm>
#include <vector>

namespace cgpt::wafer {

/// Partial sums and weight gradients are f32.
constexpr int64_t kPartialSumBytes = 4;

/// FMACs per cycle for operands of `elementBytes`: 16-bit operands
/// accumulate in f32 (bf16 storage, f32 accumulation), f32 ones run the
/// f32 FMAC.
int64_t fmacLanes(const target::WaferTargetModel &target, int64_t elementBytes);
/// Cycles a stream takes a wavelet: one, unless the queues are too shallow
/// to cover the time a place is held (a link's latency and the freeing's
/// way back), which credit-based flow control makes a stream wait for.
double cyclesPerWavelet(const target::WaferTargetModel &target);
/// Elements of `elementBytes` one wavelet carries (two 16-bit values).
int64_t elementsPerWavelet(const target::WaferTargetModel &target,
                           int64_t elementBytes);

/// A region's attributes as the timing model reads them.
KernelShape shapeOf(RegionOp region);

/// How an attention kernel of `shape` runs with `layout` on `rect` at
/// `microBatch`: whole blocks of query blocks by key blocks side by side
/// (at least one), each taking its share of the (sequence, head) pairs one
/// after another. The analytic model, the cycle-level run and the timing
/// check all read it here.
struct AttentionPass {
  /// One (sequence, head) pair: a sequence's rows, one head's FLOPs.
  KernelShape pair;
  /// One block's layout: query blocks down, key blocks along, at most one
  /// a position of the sequence.
  Layout block;
  /// The pairs each block takes in turn.
  int64_t pairsPerBlock = 1;
};
AttentionPass attentionPass(const KernelShape &shape, const Layout &layout,
                            const Rect &rect, int64_t microBatch);

/// One chunk of a kernel that runs over the vocabulary in `chunks` (the
/// loss turn-around): its widest dimension, the vocabulary, and its FLOPs
/// and bytes divided among the chunks. The kernel itself when it has one.
KernelShape vocabularyChunk(const KernelShape &shape);

/// The expected load of the most loaded of `experts` experts when `rows`
/// routed rows each pick one uniformly: the mean plus the binomial spread
/// times the expected largest of `experts` standard normals, at most
/// `rows` (docs/wafer.md, "Mixture of experts").
double expectedLargestLoad(int64_t rows, int64_t experts);

/// One expert's pass of a routed kernel (`shape.experts` > 1) at
/// `microBatch`: its routed rows `shape.expertRows` as planned, or before
/// planning those of the expected most loaded expert over the whole
/// micro-batch (so the pass runs at a micro-batch of 1); its weight and
/// accumulator one expert's. The kernel itself otherwise.
KernelShape expertPass(const KernelShape &shape, int64_t microBatch);

/// What a weight kernel or a token sum sums in f32 on each core, the unit
/// of its layout's `sum_block`: `columns` output columns (a resident
/// matmul: tokens; a token sum: the core's features), each of `perColumn`
/// sums, each made from `streamed` elements that arrive for that column
/// (none for a token sum, whose elements are in memory); of one chunk, for
/// a kernel run in chunks. Kernels without such sums have no columns.
struct SumBlockShape {
  int64_t columns = 0, perColumn = 0, streamed = 0;
  /// The segment a weight matmul's block is reduce-scattered along
  /// (reducesScattered; 1: a core alone in its segment): where it is longer
  /// than one core, each core also holds its own part of a block as it
  /// comes from the east.
  int64_t scatteredOver = 0;
  /// The f32 work rows of its epilogue's maps (the most any of them
  /// needs), which lie in the block's sums, a token of each at least
  /// (epilogueChunk).
  int64_t epilogueRows = 0;
  bool blockable() const { return columns > 0; }
  /// The columns one block sums under `sumBlock` (a layout's; 0: all).
  int64_t blockColumns(int64_t sumBlock) const {
    return sumBlock > 0 ? std::min(sumBlock, columns) : columns;
  }
  /// The largest part of a block of `blockColumns` a core owns after the
  /// reduce-scatter (0 where the sums are not scattered).
  int64_t ownPart(int64_t blockColumns) const {
    return scatteredOver > 0
               ? (blockColumns + scatteredOver - 1) / scatteredOver
               : 0;
  }
  /// The f32 sums of a block under `sumBlock`, room for a token of each of
  /// the epilogue's work rows at least.
  int64_t blockSums(int64_t sumBlock) const {
    return std::max(blockColumns(sumBlock) * perColumn, epilogueRows);
  }
  /// The f32 sums a core holds under `sumBlock`: the block's, and its own
  /// part as it comes from the east.
  int64_t bytes(int64_t sumBlock) const {
    int64_t fromEast =
        scatteredOver > 1 ? ownPart(blockColumns(sumBlock)) * perColumn : 0;
    return (blockSums(sumBlock) + fromEast) * kPartialSumBytes;
  }
};
SumBlockShape sumBlockShape(const KernelShape &shape, const Layout &layout,
                            int64_t microBatch);

/// Elements of a weight kernel's stream one wavelet carries, for a block of
/// `elements`: the most, up to `perWavelet`, that fill whole wavelets, so
/// that a block never shares a wavelet with the next.
int64_t streamPacking(int64_t elements, int64_t perWavelet);

/// One buffer a kernel's core program declares: its name and bytes.
struct CoreBuffer {
  const char *name;
  int64_t bytes;
};

/// What one core of an attention block holds for its (sequence, head)
/// pairs, as attention's programs run it (docs/runtime.md, "Attention on
/// the mesh"; attentionForward and attentionBackward in
/// lib/Sim/Mesh/AttentionPrograms.cpp): its keys and values, streamed in whole
/// wavelets, and its queries taken a chunk at a time, the layout's
/// `sum_block` of them (0: all), each chunk's scores, statistics and
/// partial outputs in f32 (backward: the recomputed probabilities, their
/// gradients, the queries and their output gradients, and the keys' and
/// values' f32 gradients), then the constants and work rows of the softmax.
struct AttentionBlock {
  /// The backward pass (RowFunction::attentionGrad).
  bool gradient = false;
  int64_t pairs = 1, queries = 1, keys = 1, headSize = 1;
  int64_t elementBytes = 2, perWavelet = 2;

  /// The queries a core takes at once under a layout's `sumBlock`, and the
  /// chunks they make, the last padded.
  int64_t chunk(int64_t sumBlock) const {
    return sumBlock > 0 ? std::min(sumBlock, queries) : queries;
  }
  int64_t chunks(int64_t sumBlock) const {
    return (queries + chunk(sumBlock) - 1) / chunk(sumBlock);
  }
  /// The keys a core takes at once under a layout's `keyBlock` (0: all,
  /// resident), and the blocks they make, the last padded.
  int64_t keyChunk(int64_t keyBlock) const {
    return keyBlock > 0 ? std::min(keyBlock, keys) : keys;
  }
  int64_t keyChunks(int64_t keyBlock) const {
    return (keys + keyChunk(keyBlock) - 1) / keyChunk(keyBlock);
  }
  /// Elements of a head's row, and of a pair's keys (or values), in whole
  /// wavelets.
  int64_t rowElements() const { return whole(headSize); }
  int64_t keyElements() const { return whole(keys * headSize); }
  /// The buffers a core holds under `sumBlock` and `keyBlock`, in the
  /// programs' order.
  std::vector<CoreBuffer> buffers(int64_t sumBlock, int64_t keyBlock = 0) const;
  int64_t bytes(int64_t sumBlock, int64_t keyBlock = 0) const;
  int64_t bytes(const Layout &layout) const {
    return bytes(layout.sumBlock, layout.keyBlock);
  }

private:
  /// Calls `buffer(name, bytes)` for each buffer; a template, so that
  /// bytes(), which the layout search asks often, sums them inline.
  template <typename Fn>
  void forEachBuffer(int64_t sumBlock, int64_t keyBlock, Fn buffer) const;
  int64_t whole(int64_t elements) const {
    return (elements + perWavelet - 1) / perWavelet * perWavelet;
  }
};
AttentionBlock attentionBlock(const AttentionPass &pass, int64_t perWavelet);
/// The block of an attention kernel of `shape` with `layout` on `rect` at
/// `microBatch` on `target`'s cores.
AttentionBlock attentionBlock(const KernelShape &shape, const Layout &layout,
                              const Rect &rect, int64_t microBatch,
                              const target::WaferTargetModel &target);

/// Attention's `sum_block` for `block` on a core with `room` bytes beside
/// everything else: 0 (all queries at once) where they fit, else the
/// queries of the fewest even chunks that fit, or about as few (one
/// query when none does: the memory check then refuses the region).
int64_t attentionChunkFor(const AttentionBlock &block, int64_t room);

/// The key blocks (`key_block`) with which `block` fits `room` bytes
/// taking its keys in blocks: the largest even one that fits beside one
/// query at a time, then up to five halvings of it. None when not even a
/// key and a query at a time fit.
std::vector<int64_t> attentionKeyBlocksFor(const AttentionBlock &block,
                                           int64_t room);
/// `block`'s `sum_block` beside key blocks of `keyBlock` keys in `room`
/// bytes: the queries of the fewest even chunks that fit (0: all); 1 when
/// none does.
int64_t attentionChunkFor(const AttentionBlock &block, int64_t room,
                          int64_t keyBlock);

/// The vector operations an elementwise, reduction or embedding kernel runs
/// over each element: its FLOPs per element, two to an operation.
int64_t vectorOperations(const KernelShape &shape);

/// The rows of the table an embedding's lookup (RowFunction::gather)
/// streams, or of the gradient its scatter (RowFunction::scatterAdd) sums:
/// its weight's (or f32 gradient's) bytes over a row's.
int64_t embeddingTableRows(const KernelShape &shape);

/// The bytes an embedding's program holds on a core of `tb` tokens by `cb`
/// features beside its tokens' rows: its lists of their distinct ids (the
/// stream's elements before each id's row and after the last, the row's
/// elements taken, and where rows land or sum), a row of the stream passed
/// over (the lookup's, in whole wavelets) or the f32 sums of its ids' rows
/// (the gradient's), the scale, and a lookup's fused positions' rows and
/// their lists.
int64_t embeddingWorkBytes(const KernelShape &shape, int64_t tb, int64_t cb,
                           const target::WaferTargetModel &target);

/// Whether a router's choice (KernelShape::choices) runs after its product
/// on the chain's last core of each segment, which holds every expert's
/// logits of its tokens: so where the router's weights stream, in one
/// piece. Resident, or in chunks, each core sums a share of the experts,
/// and the choice is not modelled.
bool choosesOnChain(const KernelShape &shape, const Layout &layout);

/// Whether a weight matmul's block sums are reduce-scattered along the
/// segment rather than chained to its last core: where its weights stream
/// (not resident) and no router's choice needs every expert on one core.
/// Each core then ends a block holding its own part of the block's output
/// columns (scatteredPart), the layout its tokens' outputs keep for the
/// kernels after it (docs/runtime.md, "The weight matmul's
/// reduce-scatter").
bool reducesScattered(const KernelShape &shape, const Layout &layout);

/// The f32 constants a reduce-scattered weight matmul's epilogue holds on
/// each core: its maps' and the scale (0 without either).
int64_t epilogueConstantBytes(const KernelShape &shape);

/// The tokens of a column a reduce-scattered weight matmul's epilogue maps
/// at a time: its maps' f32 work rows (as many as the map that needs most)
/// lie in the block's `blockColumns` x `perColumn` sums, dead once the
/// core's part is stored, so a chunk is as many tokens as leave room for
/// every row there (at least one: the sums then hold a token of each row,
/// SumBlockShape::blockSums), at most a column's `perColumn`.
int64_t epilogueChunk(const KernelShape &shape, int64_t blockColumns,
                      int64_t perColumn);

/// The f32 work rows of `shape`'s epilogue: the most any of its maps needs.
int64_t epilogueRows(const KernelShape &shape);

/// Whether a weight matmul's bias streams with its weights as one more
/// contracted row, against an input of ones (1: a reduce-scattered
/// matmul's; 0: none, or resident weights, whose bias the host adds):
/// the product's sums then hold the bias (docs/runtime.md, "The weight
/// matmul's epilogue").
int64_t biasRow(const KernelShape &shape, const Layout &layout);

/// The output columns of a block of `blockColumns` that the core at
/// `place` of a segment of `segment` cores owns after the reduce-scatter:
/// `count` columns from `first`, the block split as evenly as it divides
/// (`place * blockColumns / segment` onwards).
struct ScatteredPart {
  int64_t first = 0, count = 0;
};
ScatteredPart scatteredPart(int64_t place, int64_t segment,
                            int64_t blockColumns);

/// The bytes the router's choice holds on the chain's last core beside its
/// inputs and sums at `microBatch`: each block's logits as the chain
/// delivers them (none alone in its chain with one block, where the sums
/// are the logits), the logits rounded to 16 bits where they round, the
/// probabilities and their choice marks, the chosen weights and indices,
/// f32 work rows (ten, and one for a null expert's exponential) and 20
/// constants.
int64_t routerChoiceBytes(const KernelShape &shape, const Layout &layout,
                          int64_t microBatch);

/// The vector operations a region whose program is its own algorithm (a
/// norm's, its gradient's, the loss gradient's, a map's) runs over each
/// element for the kernels fused with it (a residual's add): the FLOPs
/// beyond the program's own (a map's counted as dataflow.map counts them),
/// two to an operation.
int64_t fusedOperations(const KernelShape &shape);

/// The time of the standard algorithm of `query.shape.kind` (the one the
/// cycle-level mesh model executes, lib/Sim/Mesh) on `query.rect` with
/// `query.layout`.
KernelTime kernelTime(const KernelCostQuery &query);

/// How the time of a region running one dataflow kernel is found: that
/// op's own KernelCostOpInterface when it has one, else the standard
/// algorithm of the region's kind. Looked up once per region.
class KernelCostModel {
public:
  /// For regions running `kernel` (a dataflow op's name).
  static KernelCostModel forKernel(mlir::StringAttr kernel);
  KernelTime operator()(const KernelCostQuery &query) const;

private:
  const detail::KernelCostOpInterfaceInterfaceTraits::Concept *own = nullptr;
};

} // namespace cgpt::wafer

#endif // CGPT_DIALECT_WAFER_ANALYSIS_KERNELCOST_H
