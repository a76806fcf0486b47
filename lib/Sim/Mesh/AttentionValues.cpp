//===- AttentionValues.cpp - attention's passes with values ---------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/AttentionValues.h"

#include "cgpt/Exec/Kernels.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using cgpt::wafer::KernelKind;
using cgpt::wafer::KernelShape;
using cgpt::wafer::Layout;

namespace cgpt::sim::mesh {
namespace {

/// The offset of the mask window (kAttentionMaskAt) of the query at
/// `query` against `keys` keys from `firstKey` on, of a sequence of `seq`:
/// the window leaves unmasked the keys up to the last one the query sees,
/// the query's own (causal) or the sequence's last, and masks the rest.
float maskOffset(int64_t query, int64_t firstKey, int64_t keys, int64_t seq,
                 bool causal) {
  int64_t lastSeen = std::min(causal ? query : seq - 1, seq - 1) - firstKey;
  return static_cast<float>(std::clamp<int64_t>(keys - 1 - lastSeen, 0, keys));
}

/// The mask offset of the query at `query` against the first block of
/// `blockKeys` of a core's keys from `firstKey` to `lastKey`, unclamped:
/// each later block's is `blockKeys` more, clamped to [0, blockKeys]
/// (attentionBackwardByKeys), so that no key past the core's last is seen.
float firstBlockOffset(int64_t query, int64_t firstKey, int64_t lastKey,
                       int64_t blockKeys, int64_t seq, bool causal) {
  int64_t lastSeen =
      std::min({causal ? query : seq - 1, seq - 1, lastKey}) - firstKey;
  return static_cast<float>(blockKeys - 1 - lastSeen);
}

/// What the two passes share: the blocks of the region's placement, each
/// taking its share of the (sequence, head) pairs one after another, the
/// operands' sizes, and each block's program built, fed and run.
class AttentionBlocks {
public:
  AttentionBlocks(const KernelShape &k, const Layout &layout,
                  int64_t microBatch, const wafer::Rect &rect)
      : pass(wafer::attentionPass(k, layout, rect, microBatch)), seq(k.columns),
        headSize(k.contracted),
        heads(std::max<int64_t>(1, k.rows / std::max<int64_t>(1, seq))),
        pairs(microBatch * heads),
        perWavelet(mesh::perWavelet(elementTypeOf(k.elementBytes))) {}

  /// Sets `error` unless every one of `operands` is [pairs, S, D].
  bool checkSizes(llvm::ArrayRef<llvm::ArrayRef<float>> operands,
                  std::string &error) const {
    bool right = llvm::all_of(operands, [&](llvm::ArrayRef<float> operand) {
      return static_cast<int64_t>(operand.size()) == pairs * seq * headSize;
    });
    if (right)
      return true;
    error = "the operands have ";
    for (auto [i, operand] : llvm::enumerate(operands))
      error += (i == 0                     ? ""
                : i + 1 == operands.size() ? " and "
                                           : ", ") +
               std::to_string(operand.size());
    error += " elements; the kernel takes " + std::to_string(pairs) + " x " +
             std::to_string(seq) + " x " + std::to_string(headSize) + " each";
    return false;
  }

  /// A pair's element, zero past the sequence: the last group's padding.
  float element(llvm::ArrayRef<float> operand, int64_t pair, int64_t position,
                int64_t d) const {
    return position < seq ? operand[(pair * seq + position) * headSize + d]
                          : 0.0f;
  }
  /// The place of a pair's element in a [pairs, S, D] result.
  int64_t place(int64_t pair, int64_t position, int64_t d) const {
    return (pair * seq + position) * headSize + d;
  }

  /// The chunks of queries `built`'s cores take (the last padded), and
  /// the rows a pair's chunks stream.
  static int64_t chunksOf(const KernelProgram &built) {
    return llvm::divideCeilSigned(built.tokens, built.tokensAtOnce);
  }
  static int64_t rowsPerPair(const KernelProgram &built) {
    return chunksOf(built) * built.tokensAtOnce;
  }

  /// Appends the rows of chunk `chunk` of the queries of `built`'s core
  /// `core` (its query group's), of `operand` for `pair`, each padded to
  /// whole wavelets, to `elements`; the padding rows of the last chunk
  /// are zeros.
  void appendRows(std::vector<float> &elements, llvm::ArrayRef<float> operand,
                  int64_t pair, const KernelProgram &built, int core,
                  int64_t chunk) const {
    int64_t rowElements =
        llvm::divideCeilSigned(headSize, perWavelet) * perWavelet;
    int64_t group = built.tokenGroup[core], queries = built.tokens;
    for (int64_t i = chunk * built.tokensAtOnce;
         i < (chunk + 1) * built.tokensAtOnce; ++i)
      for (int64_t d = 0; d < rowElements; ++d)
        elements.push_back(group >= 0 && i < queries && d < headSize
                               ? element(operand, pair, group * queries + i, d)
                               : 0.0f);
  }
  /// Appends `keys` keys of `operand` for `pair` from position `first` on
  /// to `elements`, transposed (a row a head dimension) or not; those from
  /// `end` on are zeros (the padding of a core's last block of keys).
  void appendKeys(std::vector<float> &elements, llvm::ArrayRef<float> operand,
                  int64_t pair, int64_t first, int64_t keys, int64_t end,
                  bool transposed) const {
    auto at = [&](int64_t key, int64_t d) {
      return first + key < end ? element(operand, pair, first + key, d) : 0.0f;
    };
    for (int64_t a = 0; a < (transposed ? headSize : keys); ++a)
      for (int64_t b = 0; b < (transposed ? keys : headSize); ++b)
        elements.push_back(transposed ? at(b, a) : at(a, b));
  }
  /// Pads `elements` with zeros to whole wavelets.
  void padToWavelets(std::vector<float> &elements) const {
    elements.resize(llvm::divideCeil(elements.size(), perWavelet) * perWavelet,
                    0.0f);
  }

  /// Reads, from what left the east end of each segment of `built`'s run
  /// for pairs from `first` on, its query group's rows into `result`: a
  /// row of the head's size a query, chunk by chunk (the padding rows
  /// left out), pair by pair.
  void readQueryRows(const KernelProgram &built, const MeshResult &ran,
                     int64_t first, std::vector<float> &result) const {
    int64_t queries = built.tokens, rows = rowsPerPair(built);
    forEachDrained(
        built.mesh, ran,
        [&](int core, int64_t w, float value) {
          int64_t group = built.tokenGroup[core], row = w / headSize % rows;
          int64_t position = group * queries + row;
          if (group >= 0 && row < queries && position < seq)
            result[place(first + w / (rows * headSize), position,
                         w % headSize)] = value;
        },
        east);
  }

  /// Runs every block with `softmax` (its backward pass with `gradient`):
  /// `inject(built, in, first, count)` returns the elements of injector
  /// `in` for pairs [first, first + count): the queries' stream along the
  /// rows (kStreamColor), or the keys' down the columns; `read(built, run,
  /// first)` reads what a block's run gave. Returns the cycles of the
  /// slowest block.
  std::optional<int64_t>
  run(const AttentionSoftmax &softmax, bool gradient,
      const target::WaferTargetModel &target, const wafer::Rect &rect,
      llvm::function_ref<std::vector<float>(const KernelProgram &,
                                            const Injector &, int64_t, int64_t)>
          inject,
      llvm::function_ref<void(const KernelProgram &, const MeshResult &,
                              int64_t)>
          read,
      std::string &error) {
    std::vector<double> slopes = softmax.alibi
                                     ? exec::alibiSlopes(heads)
                                     : std::vector<double>(heads, 0.0);
    KernelProgramOptions options;
    options.attentionSoftmax = softmax;
    KernelShape pair = pass.pair;
    pair.function = gradient ? wafer::RowFunction::attentionGrad
                             : wafer::RowFunction::attention;
    int offsetsBuffer =
        gradient ? int{kAttentionGradMaskOffsets} : int{kAttentionMaskOffsets};
    int positionsBuffer = gradient ? int{kAttentionGradKeyPositions}
                                   : int{kAttentionKeyPositions};
    int slopesBuffer =
        gradient ? int{kAttentionGradSlopes} : int{kAttentionSlopes};
    int64_t cycles = 0;
    for (int64_t first = 0; first < pairs; first += pass.pairsPerBlock) {
      int64_t count = std::min(pass.pairsPerBlock, pairs - first);
      KernelProgram built =
          buildKernelProgram(pair, pass.block, count, target, rect, options);
      int64_t queries = built.tokens, keys = built.features;
      for (Injector &in : built.mesh.injectors)
        in.payload = wavelets(inject(built, in, first, count), perWavelet);
      // Key blocks: the clamped offsets of a chunk, then the first
      // block's; the current block's positions, then the first's.
      bool keyBlocks = pass.block.keyBlock > 0;
      int64_t blockKeys = built.keysAtOnce;
      auto load = [&](int core, std::vector<std::vector<float>> &memory) {
        int64_t group = std::max(0, built.tokenGroup[core]);
        int64_t firstKey = built.placeInSegment(core) * keys;
        for (int64_t i = 0; i < rowsPerPair(built); ++i) {
          int64_t query = group * queries + i;
          if (keyBlocks)
            memory[offsetsBuffer][built.tokensAtOnce + i] =
                firstBlockOffset(query, firstKey, firstKey + keys - 1,
                                 blockKeys, seq, softmax.causal);
          else
            memory[offsetsBuffer][i] =
                maskOffset(query, firstKey, keys, seq, softmax.causal);
        }
        for (int64_t j = 0; j < (keyBlocks ? blockKeys : keys); ++j)
          memory[positionsBuffer][j + (keyBlocks ? blockKeys : 0)] =
              static_cast<float>(firstKey + j);
        for (int64_t p = 0; p < count; ++p)
          memory[slopesBuffer][p] =
              static_cast<float>(slopes[(first + p) % heads]);
      };
      std::optional<MeshResult> ran = simulateWithValues(
          built.mesh, target, CoreMemoryAccess{load, nullptr}, error);
      if (!ran)
        return std::nullopt;
      cycles = std::max(cycles, ran->cycles);
      ++runs;
      queriesAtOnce = built.tokensAtOnce;
      read(built, *ran, first);
    }
    return cycles;
  }

  wafer::AttentionPass pass;
  int64_t seq, headSize, heads, pairs, perWavelet;
  int64_t runs = 0, queriesAtOnce = 0;
};

} // namespace

std::string attentionRefusal(const KernelShape &k, const Layout &layout,
                             const wafer::Rect &rect) {
  if (k.kind != KernelKind::attention)
    return "it is not attention";
  if (std::min(layout.tokenGroups, k.columns) > rect.h)
    return "its " + std::to_string(layout.tokenGroups) +
           " query groups do not fit down its " + std::to_string(rect.h) +
           " rows";
  return "";
}

std::optional<AttentionRun>
runAttention(const KernelShape &k, const Layout &layout, int64_t microBatch,
             const target::WaferTargetModel &target, const wafer::Rect &rect,
             const AttentionOperands &operands, std::string &error) {
  error = attentionRefusal(k, layout, rect);
  if (!error.empty())
    return std::nullopt;
  AttentionBlocks blocks(k, layout, microBatch, rect);
  if (!blocks.checkSizes({operands.query, operands.key, operands.value}, error))
    return std::nullopt;
  AttentionRun outcome;
  outcome.output.assign(
      static_cast<size_t>(blocks.pairs * blocks.seq * blocks.headSize), 0.0f);
  // Along a row its query group's queries, chunk by chunk; down a column
  // its key group's keys (transposed) and values; pair by pair.
  auto inject = [&](const KernelProgram &built, const Injector &in,
                    int64_t first, int64_t count) {
    int core = built.mesh.index(in.x, in.y);
    std::vector<float> elements;
    for (int64_t p = first; p < first + count; ++p) {
      if (in.color == kStreamColor) {
        for (int64_t chunk = 0; chunk < AttentionBlocks::chunksOf(built);
             ++chunk)
          blocks.appendRows(elements, operands.query, p, built, core, chunk);
        continue;
      }
      // Keys then values, in whole wavelets together; with key blocks
      // (attentionForwardByKeys), every block's for every chunk.
      int64_t keys = built.features, blockKeys = built.keysAtOnce;
      int64_t first = built.placeInSegment(core) * keys;
      int64_t keyChunks = llvm::divideCeilSigned(keys, blockKeys);
      int64_t chunks =
          blocks.pass.block.keyBlock > 0 ? AttentionBlocks::chunksOf(built) : 1;
      for (int64_t chunk = 0; chunk < chunks; ++chunk)
        for (int64_t j = 0; j < keyChunks; ++j) {
          int64_t from = first + j * blockKeys;
          blocks.appendKeys(elements, operands.key, p, from, blockKeys,
                            first + keys, /*transposed=*/true);
          blocks.appendKeys(elements, operands.value, p, from, blockKeys,
                            first + keys, /*transposed=*/false);
          blocks.padToWavelets(elements);
        }
    }
    return elements;
  };
  auto read = [&](const KernelProgram &built, const MeshResult &ran,
                  int64_t first) {
    blocks.readQueryRows(built, ran, first, outcome.output);
  };
  std::optional<int64_t> cycles =
      blocks.run(operands.softmax, false, target, rect, inject, read, error);
  if (!cycles)
    return std::nullopt;
  outcome.cycles = *cycles;
  outcome.runs = blocks.runs;
  outcome.queriesAtOnce = blocks.queriesAtOnce;
  return outcome;
}

std::optional<AttentionGradRun>
runAttentionGrad(const KernelShape &k, const Layout &layout, int64_t microBatch,
                 const target::WaferTargetModel &target,
                 const wafer::Rect &rect, const AttentionGradOperands &operands,
                 std::string &error) {
  error = attentionRefusal(k, layout, rect);
  if (!error.empty())
    return std::nullopt;
  AttentionBlocks blocks(k, layout, microBatch, rect);
  if (!blocks.checkSizes(
          {operands.query, operands.key, operands.value, operands.outputGrad},
          error))
    return std::nullopt;
  AttentionGradRun outcome;
  for (std::vector<float> *gradient :
       {&outcome.query, &outcome.key, &outcome.value})
    gradient->assign(
        static_cast<size_t>(blocks.pairs * blocks.seq * blocks.headSize), 0.0f);
  // Along a row its query group's queries, then their output gradients,
  // chunk by chunk; down a column its key group's keys transposed, keys
  // and values transposed; pair by pair. With key blocks
  // (attentionBackwardByKeys), the chunks once for every block in each of
  // the first two sweeps, then once; the blocks' keys transposed and
  // values transposed in each of the first two, then every block's three
  // for every chunk.
  bool keyBlocks = blocks.pass.block.keyBlock > 0;
  auto inject = [&](const KernelProgram &built, const Injector &in,
                    int64_t first, int64_t count) {
    int core = built.mesh.index(in.x, in.y);
    int64_t chunks = AttentionBlocks::chunksOf(built);
    int64_t keys = built.features, blockKeys = built.keysAtOnce;
    int64_t keyChunks = llvm::divideCeilSigned(keys, blockKeys);
    int64_t firstKey = built.placeInSegment(core) * keys;
    std::vector<float> elements;
    auto queryChunks = [&](int64_t p) {
      for (int64_t chunk = 0; chunk < chunks; ++chunk)
        for (llvm::ArrayRef<float> rows : {operands.query, operands.outputGrad})
          blocks.appendRows(elements, rows, p, built, core, chunk);
    };
    auto keyBlock = [&](int64_t p, int64_t j, bool withKeys) {
      int64_t from = firstKey + j * blockKeys, end = firstKey + keys;
      for (auto [operand, transposed] :
           {std::pair{operands.key, true}, std::pair{operands.key, false},
            std::pair{operands.value, true}}) {
        if (!withKeys && !transposed)
          continue;
        blocks.appendKeys(elements, operand, p, from, blockKeys, end,
                          transposed);
        blocks.padToWavelets(elements);
      }
    };
    for (int64_t p = first; p < first + count; ++p) {
      if (in.color == kStreamColor) {
        for (int64_t sweep = 0; keyBlocks && sweep < 2 * keyChunks; ++sweep)
          queryChunks(p);
        queryChunks(p);
      } else if (!keyBlocks) {
        keyBlock(p, 0, /*withKeys=*/true);
      } else {
        for (int64_t j = 0; j < 2 * keyChunks; ++j)
          keyBlock(p, j % keyChunks, /*withKeys=*/false);
        for (int64_t chunk = 0; chunk < chunks; ++chunk)
          for (int64_t j = 0; j < keyChunks; ++j)
            keyBlock(p, j, /*withKeys=*/true);
      }
    }
    return elements;
  };
  // East, each segment's query gradients, as the forward pass's outputs;
  // south, each column's key then value gradients, a row of the head's
  // size a key, block by block (one block without key blocks), pair by
  // pair.
  auto read = [&](const KernelProgram &built, const MeshResult &ran,
                  int64_t first) {
    blocks.readQueryRows(built, ran, first, outcome.query);
    int64_t keys = built.features, blockKeys = built.keysAtOnce;
    int64_t d = blocks.headSize, perBlock = 2 * blockKeys * d;
    int64_t perPair = llvm::divideCeilSigned(keys, blockKeys) * perBlock;
    forEachDrained(
        built.mesh, ran,
        [&](int core, int64_t w, float value) {
          int64_t within = w % perPair % perBlock;
          int64_t key =
              w % perPair / perBlock * blockKeys + within % (blockKeys * d) / d;
          int64_t position = built.placeInSegment(core) * keys + key;
          std::vector<float> &gradient =
              within < blockKeys * d ? outcome.key : outcome.value;
          if (key < keys && position < blocks.seq)
            gradient[blocks.place(first + w / perPair, position, w % d)] =
                value;
        },
        south);
  };
  std::optional<int64_t> cycles =
      blocks.run(operands.softmax, true, target, rect, inject, read, error);
  if (!cycles)
    return std::nullopt;
  outcome.cycles = *cycles;
  outcome.runs = blocks.runs;
  outcome.queriesAtOnce = blocks.queriesAtOnce;
  return outcome;
}

} // namespace cgpt::sim::mesh
