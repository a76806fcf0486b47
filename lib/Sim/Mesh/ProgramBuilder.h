//===- ProgramBuilder.h - what the kernels' programs share ------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The pieces every kernel's program is built from (KernelPrograms.cpp
// dispatches to the programs of WeightPrograms.cpp, RowPrograms.cpp,
// EmbeddingPrograms.cpp and AttentionPrograms.cpp): the builder of routes
// and shared core programs, a segment's chains and statistics, a row
// task's operations, and the software exponential and reciprocal; then
// each kernel's program.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_LIB_SIM_MESH_PROGRAMBUILDER_H
#define CGPT_LIB_SIM_MESH_PROGRAMBUILDER_H

#include "cgpt/Dialect/Wafer/Analysis/MapAlgorithm.h"
#include "cgpt/Sim/Mesh/KernelPrograms.h"

#include "llvm/ADT/DenseMap.h"

#include <functional>

namespace cgpt::sim::mesh::programs {

using cgpt::wafer::Edge;
using cgpt::wafer::KernelKind;
using cgpt::wafer::KernelShape;
using cgpt::wafer::Layout;
using cgpt::wafer::streamPacking;
using cgpt::wafer::SumBlockShape;

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

inline uint8_t bit(Port port) { return static_cast<uint8_t>(1u << port); }

/// Builds a kernel's program: routes core by core, and core programs shared
/// by the cores that play the same part.
class Builder {
public:
  Builder(KernelProgram &out) : out(out), mesh(out.mesh) {}

  void route(int x, int y, int color, uint8_t rx, uint8_t tx) {
    mesh.routes[mesh.index(x, y)].push_back({color, rx, tx});
  }
  /// Gives core (x, y) the program that `part` names, built by `build` the
  /// first time a core plays that part.
  void assign(int x, int y, int part,
              const std::function<CoreProgram()> &build) {
    auto [it, inserted] = parts.try_emplace(part, -1);
    if (inserted)
      it->second = mesh.addProgram(build());
    mesh.programOf[mesh.index(x, y)] = it->second;
  }

  /// The cores of the segments: (x, y, position in the segment).
  template <typename Fn> void forEachCore(Fn fn) {
    for (int y = 0; y < out.rows; ++y)
      for (int column = 0; column < out.segmentColumns; ++column)
        for (int s = 0; s < out.segment; ++s)
          fn(column * out.segment + s, y, s);
  }

  /// `count` wavelets of `color` enter the top of every column and are
  /// multicast down it into every core.
  void downColumns(int color, int64_t count) {
    for (int x = 0; x < mesh.width; ++x) {
      for (int y = 0; y < mesh.height; ++y)
        route(x, y, color, bit(north),
              bit(ramp) | (y + 1 < mesh.height ? bit(south) : 0));
      mesh.injectors.push_back({x, 0, north, color, count, {}});
    }
  }
  /// `count` wavelets of `color` enter the west end of every segment and
  /// are multicast along it into every core.
  void alongSegments(int color, int64_t count) {
    forEachCore([&](int x, int y, int s) {
      route(x, y, color, bit(west),
            bit(ramp) | (s + 1 < out.segment ? bit(east) : 0));
      if (s == 0)
        mesh.injectors.push_back({x, y, west, color, count, {}});
    });
  }
  /// The routes of a chain of `length` steps, `step` of it at (x, y), along
  /// `onward` (east or south): the colors `first` and `first + 1`
  /// alternate, so that a core receives on one while it sends on the
  /// other; the last step's output leaves at the chain's end, unless the
  /// last core keeps it (`leaves` false). Returns the (in, out) colors of
  /// the step.
  std::pair<int, int> chainStep(int x, int y, int step, int length, Port onward,
                                int first, bool leaves = true) {
    Port back = onward == east ? west : north;
    int outColor = first + step % 2, inColor = first + (step + 1) % 2;
    bool last = step + 1 == length;
    if (!last || leaves)
      route(x, y, outColor, bit(ramp), bit(onward));
    if (step > 0)
      route(x, y, inColor, bit(back), bit(ramp));
    if (last && leaves)
      mesh.drains.push_back({x, y, onward, outColor, true});
    return {inColor, outColor};
  }

  /// The routes of core (x, y)'s step of a chain through every column of
  /// segments in turn (a weight gradient's sums): down each column on the
  /// colors `first` and `first + 1` alternating, from its last core across
  /// to the next column's first on a crossing color (crossingColor), and
  /// out south at the last column's last core. Each core takes in one
  /// chain, so the columns' sums add up on the mesh for the price of a
  /// longer fill. Returns the (in, out) colors of the step.
  std::pair<int, int> columnsChainStep(int x, int y, int first);

  KernelProgram &out;
  MeshProgram &mesh;
  llvm::DenseMap<int, int> parts;

private:
  /// The color position `s`'s sums cross on from column of segments
  /// `column` to the next: after the chain's two, one of a pair by the
  /// column's parity (neighbouring crossings overlap), a pair for each
  /// band of as many positions as the rectangle has rows (they share
  /// rows).
  int crossingColor(int first, int column, int s) const;
  /// The row position `s`'s crossing runs along: the last position's the
  /// bottom row, each before it a row higher (wrapping in bands), so that
  /// no two crossings of one color share a router.
  int crossingRow(int s) const;
  /// The routes carrying `color` from core x at the foot of its column of
  /// segments (position `s` of its segment) to the same position's first
  /// core in the next column: up its column to the crossing row (north
  /// links, which the chain leaves free), east a segment's width, up to
  /// the top row and into the core.
  void cross(int x, int s, int color);
};

/// The part a core plays in a chain through every column of segments
/// (Builder::columnsChainStep): its step's operation depends only on
/// whether it is the first and on its colors.
inline int columnsChainPart(int step, std::pair<int, int> colors) {
  return (step == 0 ? 0 : 1 + colors.first) * 64 + colors.second;
}

/// The part a core at step `step` of a chain of `stages` plays: the first,
/// a middle one or the last, each receiving on one of the two alternating
/// colors (Builder::chainStep).
inline int chainPart(int step, int stages) {
  return step == 0 ? 0 : (step + 1 == stages ? 2 : 1) + 2 * (step % 2);
}

/// How many parts chainPart names, 0 to 4.
constexpr int kChainParts = 5;

/// Step `step` of a chain passing `count` f32 sums at `sums`: the first
/// sends its own, the others add them to what comes and pass it on.
Op chainOp(int step, Dsd sums, int64_t count, std::pair<int, int> colors);

/// The chain's part of a core program, `step` of it (chainOp); then, when
/// another block follows, clear the sums for it.
void chainOps(std::vector<Op> &body, int step, int buffer, int64_t count,
              std::pair<int, int> colors, bool another);

/// A row kernel's block on a core, its tokens and its features, recorded
/// in `out`.
std::pair<int64_t, int64_t> rowBlock(KernelProgram &out, const KernelShape &k,
                                     const Layout &layout, int64_t microBatch);

/// The colors a segment's statistics pass east on (alternating, as a
/// chain's do) and come back west on.
inline std::pair<int, int> statisticsColors(int s) {
  return {kChainColor + (s + 1) % 2, kChainColor + s % 2};
}

constexpr int kStatisticsBackColor = kChainColor + 2;

/// The routes of a segment's statistics at its core `s`, (x, y): they pass
/// east along the segment, each core adding its own; the last stores the
/// sums and sends them back west, multicast into every core on the way.
void routeStatistics(Builder &b, int x, int y, int s);

/// The part core `s` of a segment of `segment` plays in summing
/// statistics: the first, a middle or the last, on either pair of colors.
inline int statisticsPart(int s, int segment) {
  return (s == 0 ? 0 : (s + 1 == segment ? 2 : 1)) + 3 * (s % 2);
}

/// Core `s`'s operations summing `count` f32 statistics at element `at` of
/// buffer `stats` over a segment of `segment` cores (routeStatistics), or
/// taking their maximum (`combine` fmax): afterwards every core holds the
/// result.
void sumStatistics(std::vector<Op> &body, int s, int segment, int stats,
                   int64_t count, Op::Kind combine = Op::Kind::fadd,
                   int64_t at = 0);

/// The operations of the kernels fused with a norm (fusedOperations), over
/// the `n` elements of `block` once the norm is done: as the other row
/// kernels' programs run their FLOPs, and as their maximum with themselves,
/// which leaves the values to the executor (it computes the fused kernels).
void fusedOps(std::vector<Op> &ops, const KernelShape &k, Dsd block, int64_t n,
              ElementType type);

/// The operations of a map's algorithm (wafer::mapAlgorithm) over `n`
/// elements of a 16-bit or f32 `type`, each operand where `dsd` places it
/// (`destination`: the operand is written): an operation that reads and
/// writes only the map's inputs runs at `type`'s width, any other in f32.
void mapOps(
    std::vector<Op> &ops, const wafer::MapAlgorithm &algorithm,
    llvm::function_ref<Dsd(const wafer::MapOperand &, bool destination)> dsd,
    int64_t n, ElementType type);

/// One element of `buffer`, at `at` (plus `cursor`'s value), the same for
/// every element of an operation: a stride-0 DSD.
inline Dsd scalar(int buffer, int64_t at, int cursor = -1) {
  return Dsd::memory(buffer, at, cursor, /*stride=*/0);
}

/// The body of a norm's task: its operations, and loops over the core's
/// `tokens` rows of `features` with a cursor on the row and one on the
/// token, each advancing a row at a time.
class RowTask {
public:
  RowTask(CoreProgram &program, int64_t tokens, int64_t features)
      : rowCursor(program.addCursor({features, tokens * features})),
        tokenCursor(program.addCursor({1, tokens})), tokens(tokens) {}

  void vector(Op::Kind kind, Dsd dst, Dsd a, Dsd c, int64_t n, ElementType t) {
    ops.push_back(Op::vector(kind, dst, a, c, n, t));
  }
  void fmac(Dsd dst, Dsd a, Dsd c, Dsd m, int64_t n, ElementType t) {
    ops.push_back(Op::fmacOp(dst, a, c, m, n, t));
  }
  /// Runs the operations `rowOps` adds once a token, the cursors on its row
  /// and its statistics.
  void eachToken(const std::function<void()> &rowOps) {
    size_t loop = ops.size();
    ops.push_back(Op::loopOp(0, tokens));
    rowOps();
    ops.push_back(Op::advanceOp(rowCursor));
    ops.push_back(Op::advanceOp(tokenCursor));
    ops[loop].target = static_cast<int>(ops.size() - loop - 1);
  }

  const int rowCursor, tokenCursor;
  std::vector<Op> ops;

private:
  int64_t tokens;
};

/// Where a software exponential's constants sit among a program's
/// (appendExponentialConstants): the clamp, the rounding pair, -1 and 2^f's
/// Taylor coefficients, highest degree first.
struct ExponentialConstants {
  int buffer = -1;
  int64_t floor = 0, round = 0, minusRound = 0, minusOne = 0, taylor = 0;
};

/// Appends an exponential's constants to `values`, -1 at `minusOne`; the
/// caller sets the buffer once it declares them.
ExponentialConstants appendExponentialConstants(std::vector<float> &values,
                                                int64_t minusOne);

/// The f32 work rows of an exponential: the fraction (and the argument's
/// product), the power of two, and the polynomial, which ends as the result.
struct ExponentialRows {
  Dsd fraction, power, polynomial;
};

/// exp(argument), or exp(-argument) when the scalar `multiplier` holds
/// -log2 e rather than log2 e, into `rows.polynomial`, over `n` elements,
/// in software (RowOperations.h, kExponentialOperations): t = y log2 e
/// clamped at -125 (so that 2^n stays a normal f32), n = round(t) by adding
/// and subtracting 1.5 2^23, f = t - n, 2^f by its Taylor polynomial of
/// degree 6 (Horner), and n added to the polynomial's exponent bits.
void exponential(RowTask &task, Dsd argument, Dsd multiplier, int64_t n,
                 const ExponentialRows &rows, const ExponentialConstants &c);

/// 1 / `v` into `reciprocal` over `n` elements, `v` positive: the square
/// of the reciprocal square root, from the estimate of the bits by three
/// Newton steps r (3/2 - v r^2 / 2) (RowOperations.h,
/// kReciprocalSquareRootOperations, and a product); `work` a row of as
/// many, `threeHalves` and `minusHalf` constants.
void reciprocalOf(RowTask &task, Dsd reciprocal, Dsd v, Dsd work, int64_t n,
                  Dsd threeHalves, Dsd minusHalf);

/// The operations `body` adds, run `times` times (a loop in the task's
/// code).
void repeated(RowTask &task, int64_t times, const std::function<void()> &body);

// The weight kernels' and the token sum's programs (WeightPrograms.cpp).

/// A product against a stream, block by block (the weight matmul, resident
/// or streamed, and the weight gradient): a core holds `sums.streamed` rows
/// of `sums.perColumn` inputs and sums `block` output columns at a time.
/// Each wavelet of the stream starts a data task that, for each element it
/// carries, adds one row of inputs times the element to one column's sums;
/// when a block's columns are done, its sums pass along the chain (or
/// leave the core, alone with more blocks to come). A block's elements fill
/// whole wavelets (wafer::streamPacking). Where `chooses` (`k` a router),
/// the chain's last core keeps each block's sums as logits and, after the
/// last block, runs the router's choice over its tokens (routerChoice). A
/// weight matmul whose sums are reduce-scattered (`scatters`,
/// wafer::reducesScattered) chains each block both ways along the segment
/// instead, each core keeping its own part of the block's outputs, then
/// running `k`'s epilogue on it (KernelShape::bias, epilogue).
void streamedProduct(Builder &b, const KernelShape &k,
                     const SumBlockShape &sums, ElementType type,
                     bool chainAlongRows, bool chooses, bool scatters);

/// A weight gradient whose weight is resident: the gradient stays where
/// its weight is, a core holding a block of dW's rows by columns. Every
/// token's inputs stream down the columns and are stored first; then each
/// wavelet of the output gradient, streaming along the rows, starts a data
/// task that, for each element it carries, adds the token's inputs times
/// the element to one column of the block.
void residentWeightGrad(Builder &b, const KernelShape &k, const Layout &layout,
                        int64_t microBatch, ElementType type);

/// A sum over the tokens, per feature, block by block of the core's
/// features (`out.sums`, blocked as the layout's `sum_block` says): each core
/// adds its tokens' rows of a block, one row an operation, into f32 sums;
/// the block's sums then pass down each column of token groups
/// (chainOps), the last core's leaving the rectangle, or leave the core,
/// alone in its column with more blocks to come; alone with one block, a
/// core keeps its sums. The program keeps a core's elements block by
/// block, each block's tokens one after another (the last block padded),
/// so that one cursor walks them.
void tokenSum(Builder &b, const KernelShape &k, const Layout &layout,
              int64_t microBatch);

// The row kernels' programs: norms, their gradients, the loss, its
// gradient, maps and the stand-in for the others (RowPrograms.cpp).

/// A norm (RowFunction::layerNorm or rmsNorm), each core on its tokens'
/// rows of its features: one row at a time, the row's sum (a layer norm's)
/// and the sum of its squares; the segment sums them (sumStatistics);
/// then, over its tokens, the mean and variance or the mean square, and
/// the reciprocal square root (Newton's method from the estimate of the
/// bits); one multiply-add a row normalizes it; the gain (and a layer
/// norm's shift) of the core's features, repeated along the rows, scale
/// and shift the whole block. The buffers are declared in NormBuffer's
/// order.
void normKernel(Builder &b, const KernelShape &k, const Layout &layout,
                int64_t microBatch, double epsilon);

/// A norm's gradient (RowFunction::layerNormGrad or rmsNormGrad), each core
/// on its tokens' rows of its features, with g = dy gain and xhat the
/// normalized input: per token, xhat in place of x (one multiply-add by
/// the saved rstd, onto a layer norm's shift -mean rstd); dy xhat into the
/// gain's gradient and (a layer norm's) dy into the shift's; g in place of
/// dy; the row sums of g (a layer norm's) and of g xhat. The segment sums
/// them (sumStatistics); per token they become the coefficients
/// -mean(g xhat) and (a layer norm's) -mean(g) rstd, and two multiply-adds
/// a row make dx = (g - xhat mean(g xhat)) rstd - mean(g) rstd in place of
/// g. Last, the gain (and shift) gradients pass down the column of token
/// groups, each core adding its own, and leave at its foot; alone in its
/// column, a core keeps them. The buffers are declared in NormGradBuffer's
/// order.
void normGradKernel(Builder &b, const KernelShape &k, const Layout &layout,
                    int64_t microBatch);

/// The loss's gradient, scale (exp(logit - lse) - onehot(label)), each
/// core on its tokens' rows of its logits, one row at a time into f32 work
/// rows: the logit less the token's saved log-sum-exp; the exponential in
/// software (exponential()); the product by the scale, back into the row.
/// Then the scale is taken from the label's element, whose place the task
/// reads from the labels buffer (the spare element's when another core
/// holds the label). Nothing passes between cores. The buffers are
/// declared in LossGradBuffer's order.
void lossGradKernel(Builder &b, const KernelShape &k, const Layout &layout,
                    int64_t microBatch, double lossScale);

/// The loss, scale sum over tokens (lse - logit at the label), each core on
/// its tokens' rows of its slice of the vocabulary, one chunk of the
/// vocabulary a run. Per row, the maximum of its logits; the segment takes
/// the maximum of them (sumStatistics, as a maximum); per row, the
/// exponentials of the logits less it (exponential()) and their sum, which
/// the segment sums; the label's logit, taken from the core's loss (its
/// place read from the labels buffer, the spare element's 0 when another
/// core holds it). Over the tokens, the chunk's statistics merge into the
/// running ones: m = max(M, Mc), S = S exp(M - m) + Sc exp(Mc - m), M = m.
/// The last chunk then takes ln S by Newton's method for e^y = S from the
/// estimate the bits give (ln 2 (bits 2^-23 - 127)), y += S exp(-y) - 1
/// three times; lse = M + ln S; the core's loss adds its tokens' lse by
/// their weights and is scaled. The buffers are declared in LossBuffer's
/// order; the runner carries the running statistics and the core's loss
/// from one chunk's run to the next.
void crossEntropyKernel(Builder &b, const KernelShape &k, const Layout &layout,
                        int64_t microBatch,
                        const KernelProgramOptions &options);

/// An elementwise map (RowFunction::map), each core on its tokens' rows of
/// its features, one row at a time: the operations of the map's algorithm
/// (wafer::mapAlgorithm) over the row, its work rows and its constants,
/// the result in place of the first input; then the kernels fused with it,
/// over the block. Nothing passes between cores. The buffers are declared
/// in MapBuffer's order.
void mapKernel(Builder &b, const KernelShape &k, const Layout &layout,
               int64_t microBatch);

/// Vector operations over a core's tokens and features, as many as the
/// kernel's FLOPs per element ask for (two to an operation); a reduction
/// then sums each token's statistics along the segment and sends the sums
/// back.
void rowKernel(Builder &b, const KernelShape &k, const Layout &layout,
               int64_t microBatch);

// The embedding's lookup and gradient (EmbeddingPrograms.cpp).

/// The embedding lookup (docs/runtime.md, "Embeddings on the mesh"): the
/// table streams down each feature group's columns, each row of the
/// group's features in whole wavelets. A core takes its tokens' distinct
/// ids in increasing order: it passes over the rows before an id's and
/// takes the id's row into its first token's row, each length set from its
/// lists (Op::lengthFrom), then passes over the rest. It then copies each
/// token's row from its id's first token's, multiplies the block by the
/// scale, and, with fused learned positions, takes their rows alike from a
/// second stream (each token's place in its sequence its id) and adds
/// them; then the other kernels fused with it. Without values the lists
/// say nothing is taken and the whole stream is passed over: as many
/// wavelets in all. The buffers are declared in GatherBuffer's order.
void gatherKernel(Builder &b, const KernelShape &k, const Layout &layout,
                  int64_t microBatch, double scale);

/// The embedding gradient (docs/runtime.md, "Embeddings on the mesh"):
/// each core adds its tokens' rows of the output gradient, times the
/// scale, into f32 sums, one for each of their distinct ids; then the
/// gradient of the table's rows passes down each column of token groups,
/// f32 a wavelet, started by the first core as zeros, each core adding its
/// sums to its ids' rows as they pass (lengths set from its lists, as the
/// lookup's), the last core's leaving the rectangle. The buffers are
/// declared in ScatterAddBuffer's order.
void scatterAddKernel(Builder &b, const KernelShape &k, const Layout &layout,
                      int64_t microBatch, double scale);

// Attention's passes (AttentionPrograms.cpp).

/// Attention's forward pass with values, on one block of query groups by
/// key groups, for `pairs` (sequence, head) pairs one after another. Each
/// pair's keys (transposed) and values stream down the block's columns
/// into memory, its queries along the rows, which a core takes a chunk at
/// a time (the layout's `sum_block`: AttentionSizes). Per
/// chunk, query by query, the scores against its keys
/// (AttentionTask::scores: ALiBi's bias as the key's position times the
/// slope, since the query's own term is the same along its row and the
/// softmax takes no notice of it; the mask places kMaskedScore on the
/// future keys and the padding ones), and their maxima, which the segment
/// takes the maximum of (sumStatistics, as a maximum). Then the
/// exponentials of the scores less it, their sum, and the values weighted
/// by them, key by key; the segment sums those (sumStatistics), every core
/// divides by the sum, and the segment's last core sends the chunk's
/// outputs out east. The buffers are declared in AttentionBuffer's order.
void attentionForward(Builder &b, const KernelShape &k, const Layout &layout,
                      int64_t pairs, const AttentionSoftmax &softmax);

/// Attention's forward pass key block by key block (the layout's
/// `key_block`), for a core that cannot hold its keys and values: its
/// queries a chunk at a time (`sum_block`) held while every block of keys
/// (transposed) and values streams down the column, the flash way. Per
/// block, query by query, the scores and their running maximum, the
/// partial output and sum rescaled to it when it moves (a one-element
/// exponential), the exponentials, their sum and the values they weigh.
/// After the last block, the segment takes the maximum of the maxima,
/// each core rescales its partials to it, the segment sums them, every
/// core divides by the sum and the segment's last core sends the chunk's
/// outputs out east. The buffers are declared in AttentionBuffer's order,
/// sized for the blocks.
void attentionForwardByKeys(Builder &b, const KernelShape &k,
                            const Layout &layout, int64_t pairs,
                            const AttentionSoftmax &softmax);

/// Attention's backward pass with values, on one block of query groups by
/// key groups, for `pairs` (sequence, head) pairs one after another, the
/// flash way: the probabilities are recomputed, never stored beyond the
/// core's chunk of queries. Each pair's keys (transposed, then as rows) and
/// values (transposed) stream down the block's columns into memory; its
/// queries, then their output gradients, a chunk at a time, along the
/// rows. Per chunk, a core takes its scores and maxima as the forward pass
/// does (the segment's maximum, the exponentials and their sums, the
/// segment's sums, the reciprocal), the probabilities P; then, query by
/// query, dP = dO V^T over its keys, the sum of P dP (the segment sums it),
/// and dV += P^T dO key by key; then dS = scale P (dP - sum), dK += dS^T Q
/// and the partial dQ = dS K key by key. The segment sums dQ and its last
/// core sends it out east. After the pair's chunks, each column of query
/// groups sums dK and dV down a chain (chainOps), the last sending them out
/// south. The buffers are declared in AttentionGradBuffer's order.
void attentionBackward(Builder &b, const KernelShape &k, const Layout &layout,
                       int64_t pairs, const AttentionSoftmax &softmax);

/// Attention's backward pass key block by key block (the layout's
/// `key_block`), for a core that cannot hold its keys' f32 gradients: the
/// keys and values stream down the block's columns a block at a time, the
/// queries and their output gradients along the rows a chunk at a time
/// (`sum_block`), and nothing is kept for every key. Three sweeps per
/// pair, each recomputing the scores (the forward pass's statistics are
/// not kept): the statistics, key block by key block, query by query the
/// running maximum with the sum of exponentials and the sum of their
/// products with dP rescaled to it, then the segment's maximum, each core's
/// sums rescaled to it and summed along the segment, the reciprocal, and
/// D = sum(P dP); the key and value gradients, key block by key block: P,
/// dP, dV += P^T dO, dS = scale P (dP - D), dK += dS^T Q for every query,
/// then the block's dK and dV down the column's chain (chainOps) and out
/// south; the query gradients, chunk by chunk: dQ += dS K over every key
/// block, summed along the segment and sent out east by its last core.
/// A chunk's mask offsets are the queries' first block's, stepped a block
/// at a time and clamped to the window. The buffers are declared in
/// AttentionGradBuffer's order, sized for the blocks.
void attentionBackwardByKeys(Builder &b, const KernelShape &k,
                             const Layout &layout, int64_t pairs,
                             const AttentionSoftmax &softmax);

} // namespace cgpt::sim::mesh::programs

#endif // CGPT_LIB_SIM_MESH_PROGRAMBUILDER_H
