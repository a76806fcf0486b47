//===- KernelValues.cpp - a placed weight kernel run with real values -----===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/KernelValues.h"

#include <algorithm>

using cgpt::wafer::Edge;
using cgpt::wafer::KernelKind;
using cgpt::wafer::KernelShape;
using cgpt::wafer::Layout;

namespace cgpt::sim::mesh {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// A row-major matrix's element, zero past its edges: the padding of the
/// last group or block.
float at(llvm::ArrayRef<float> matrix, int64_t rows, int64_t columns,
         int64_t row, int64_t column) {
  if (row >= rows || column >= columns)
    return 0.0f;
  return matrix[row * columns + column];
}

/// Tokens, the features that stay with them, and the output columns of a
/// weight kernel at `microBatch`.
struct Extents {
  int64_t tokens, features, outputs;
};
Extents extentsOf(const KernelShape &k, int64_t microBatch) {
  bool matmul = k.kind == KernelKind::weight_matmul;
  return {microBatch * (matmul ? k.rows : k.contracted),
          matmul ? k.contracted : k.rows, k.columns};
}

/// A kernel in one piece whose weights stream, or, as `extents` say, a
/// resident weight's matmul transposed (runResident).
std::optional<WeightKernelRun>
runWhole(const KernelShape &k, const Layout &layout, int64_t microBatch,
         const target::WaferTargetModel &target, const wafer::Rect &rect,
         Extents extents, llvm::ArrayRef<float> held,
         llvm::ArrayRef<float> streamed, std::string &error,
         const EpilogueOperands &epilogue = {}) {
  bool matmul = k.kind == KernelKind::weight_matmul;
  auto [tokens, features, outputs] = extents;
  KernelProgram built = buildKernelProgram(k, layout, microBatch, target, rect,
                                           {/*allTokenGroups=*/true});

  MeshProgram &mesh = built.mesh;
  const wafer::SumBlockShape &sums = built.sums;
  int64_t perColumn = sums.perColumn, rowsIn = sums.streamed;
  int64_t blockColumns = built.blockColumns;
  ElementType type = elementTypeOf(k.elementBytes);
  int64_t packing =
      wafer::streamPacking(rowsIn * blockColumns, perWavelet(type));

  // The held operand, per core. A weight matmul's core keeps rows (its
  // input features) of its tokens; a weight gradient's, rows (its tokens)
  // of its input features.
  auto heldValue = [&](int token, int feature, int64_t row, int64_t column) {
    return matmul ? at(held, tokens, features, token * perColumn + column,
                       feature * rowsIn + row)
                  : at(held, tokens, features, token * rowsIn + row,
                       feature * perColumn + column);
  };
  auto tokenGroupOf = [&](int core) { return built.tokenGroup[core]; };
  bool scattered = wafer::reducesScattered(k, layout);
  // The stream entering at core (x, y): block by block, column by column,
  // the rows of the core's feature group (matmul) or token group.
  auto inject = [&](Injector &in) {
    int core = mesh.index(in.x, in.y);
    int group = matmul ? built.placeInSegment(core) : tokenGroupOf(core);
    std::vector<float> elements;
    elements.reserve(in.count * packing);
    for (int64_t block = 0; block < built.blocks; ++block)
      for (int64_t j = 0; j < blockColumns; ++j)
        for (int64_t r = 0; r < rowsIn; ++r)
          elements.push_back(
              group < 0 ? 0.0f
                        : at(streamed, matmul ? features : tokens, outputs,
                             group * rowsIn + r, block * blockColumns + j));
    in.payload = wavelets(elements, packing);
  };

  WeightKernelRun outcome;
  std::vector<float> &result = outcome.values;
  result.assign(
      static_cast<size_t>(matmul ? tokens * outputs : features * outputs),
      0.0f);
  // A sum of column `column` of group (token, feature), its `index`-th
  // element, into the result.
  auto placeIn = [&](std::vector<float> &into, int token, int feature,
                     int64_t column, int64_t index, float value) {
    if ((matmul && token < 0) || column >= outputs)
      return;
    int64_t row =
        matmul ? token * perColumn + index : feature * perColumn + index;
    if (row < (matmul ? tokens : features))
      into[row * outputs + column] += value;
  };
  auto place = [&](int token, int feature, int64_t column, int64_t index,
                   float value) {
    placeIn(result, token, feature, column, index, value);
  };
  // A reduce-scattered matmul's epilogue: where its buffers are, and which
  // results the cores still hold at the end (the product's unless the
  // first map wrote over it; a map's unless the next one did).
  EpilogueBuffers epilogueAt;
  std::vector<bool> holds;
  if (scattered) {
    epilogueAt = epilogueBuffers(k);
    holds.push_back(k.epilogue.empty() || k.epilogue.front().kept);
    for (size_t i = 0; i < k.epilogue.size(); ++i)
      holds.push_back(i + 1 == k.epilogue.size() || k.epilogue[i + 1].kept);
    outcome.mapped.resize(k.epilogue.size());
    for (size_t i = 0; i < k.epilogue.size(); ++i)
      if (holds[i + 1])
        outcome.mapped[i].assign(static_cast<size_t>(tokens * outputs), 0.0f);
  }
  auto load = [&](int core, std::vector<std::vector<float>> &memory) {
    int token = tokenGroupOf(core), feature = built.placeInSegment(core);
    if (token < 0)
      return;
    for (int64_t r = 0; r < rowsIn; ++r)
      for (int64_t c = 0; c < perColumn; ++c)
        memory[kProductInputs][r * perColumn + c] =
            heldValue(token, feature, r, c);
    if (!scattered)
      return;
    // The maps' other inputs, [block][column][token], as the outputs are.
    wafer::ScatteredPart own =
        wafer::scatteredPart(feature, built.segment, blockColumns);
    for (int64_t block = 0; block < built.blocks; ++block)
      for (int64_t j = 0; j < own.count; ++j) {
        int64_t column = block * blockColumns + own.first + j;
        int64_t slot = block * own.count + j;
        for (auto [other, buffers] : llvm::zip(epilogue.held, epilogueAt.maps))
          if (buffers.held >= 0)
            for (int64_t i = 0; i < perColumn; ++i)
              memory[buffers.held][slot * perColumn + i] =
                  at(other, tokens, outputs, token * perColumn + i, column);
      }
  };
  // Alone in its chain with one block, a core keeps its sums: they are
  // read from its memory. A router's last core of each segment keeps its
  // logits, [block][column][token], and its choice.
  bool chained =
      (matmul ? built.segment : built.rows * built.segmentColumns) > 1 ||
      built.blocks > 1;
  bool chooses = wafer::choosesOnChain(k, layout);
  if (chooses && routerChoiceRefusal(k, layout).empty())
    outcome.choice = RouterChoice{
        std::vector<float>(static_cast<size_t>(tokens * outputs)),
        std::vector<float>(static_cast<size_t>(tokens * k.choices)),
        std::vector<float>(static_cast<size_t>(tokens * k.choices))};
  auto store = [&](int core, const std::vector<std::vector<float>> &memory) {
    int token = tokenGroupOf(core);
    bool last = built.placeInSegment(core) + 1 == built.segment;
    if (scattered) {
      // Each core's part of every block, [block][column][token]: the
      // product, and the maps' results, where the cores still hold them.
      int feature = built.placeInSegment(core);
      wafer::ScatteredPart own =
          wafer::scatteredPart(feature, built.segment, blockColumns);
      auto read = [&](int buffer, std::vector<float> &into) {
        const std::vector<float> &kept = memory[buffer];
        for (int64_t block = 0; block < built.blocks; ++block)
          for (int64_t j = 0; j < own.count; ++j)
            for (int64_t i = 0; i < perColumn; ++i)
              placeIn(into, token, feature,
                      block * blockColumns + own.first + j, i,
                      kept[(block * own.count + j) * perColumn + i]);
      };
      if (holds.front())
        read(kProductOutputs, result);
      for (size_t i = 0; i < k.epilogue.size(); ++i)
        if (holds[i + 1])
          read(epilogueAt.maps[i].result, outcome.mapped[i]);
      return;
    }
    if (chooses && last && token >= 0) {
      // Without a chain the sums are the logits.
      int at = chained ? static_cast<int>(kRouterLogits) : kProductSums;
      const std::vector<float> &logits = memory[at];
      for (int64_t j = 0; j < built.blocks * blockColumns; ++j)
        for (int64_t i = 0; i < perColumn; ++i)
          place(token, built.placeInSegment(core), j, i,
                logits[j * perColumn + i]);
    } else if (!chained) {
      for (int64_t j = 0; j < blockColumns; ++j)
        for (int64_t i = 0; i < perColumn; ++i)
          place(token, built.placeInSegment(core), j, i,
                memory[kProductSums][j * perColumn + i]);
    }
    if (!outcome.choice || !last || token < 0)
      return;
    // [expert or choice][token] on the core, [token][...] in the result.
    auto gather = [&](int buffer, int64_t width, std::vector<float> &to) {
      for (int64_t j = 0; j < width; ++j)
        for (int64_t i = 0; i < perColumn; ++i)
          if (int64_t row = token * perColumn + i; row < tokens)
            to[row * width + j] = memory[buffer][j * perColumn + i];
    };
    gather(kRouterProbabilities, outputs, outcome.choice->probabilities);
    gather(kRouterWeights, k.choices, outcome.choice->weights);
    gather(kRouterExperts, k.choices, outcome.choice->experts);
  };

  for (Injector &in : mesh.injectors)
    if (in.color == kStreamColor)
      inject(in);
  std::optional<MeshResult> run =
      simulateWithValues(mesh, target, CoreMemoryAccess{load, store}, error);
  if (!run)
    return std::nullopt;
  outcome.cycles = run->cycles;
  outcome.runs = 1;
  if (scattered && !holds.front())
    result.clear();
  // What leaves a chain's end, block by block: its columns' sums, one f32
  // a wavelet.
  int64_t perBlock = blockColumns * perColumn;
  forEachDrained(mesh, *run, [&](int core, int64_t w, float value) {
    int64_t block = w / perBlock, within = w % perBlock;
    place(tokenGroupOf(core), built.placeInSegment(core),
          block * blockColumns + within / perColumn, within % perColumn, value);
  });
  return outcome;
}

/// A matrix of `rows` x `columns`, transposed.
std::vector<float> transposed(llvm::ArrayRef<float> matrix, int64_t rows,
                              int64_t columns) {
  std::vector<float> out(matrix.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < columns; ++c)
      out[c * rows + r] = matrix[r * columns + c];
  return out;
}

/// A resident weight's gradient (residentWeightGrad in WeightPrograms.cpp):
/// each core takes in every token's inputs of its feature group, then the
/// output gradients of its group of output columns, and keeps its block of
/// the gradient, read back from its memory.
std::optional<WeightKernelRun>
runResidentGradient(const KernelShape &k, const Layout &layout,
                    int64_t microBatch, const target::WaferTargetModel &target,
                    const wafer::Rect &rect, llvm::ArrayRef<float> held,
                    llvm::ArrayRef<float> streamed, std::string &error) {
  // The buffers residentWeightGrad declares, in order.
  constexpr int kGradientBuffer = 1;
  auto [tokens, features, outputs] = extentsOf(k, microBatch);
  KernelProgram built = buildKernelProgram(k, layout, microBatch, target, rect,
                                           {/*allTokenGroups=*/true});
  MeshProgram &mesh = built.mesh;
  int64_t kb = ceilDiv(k.rows, layout.featureGroups);
  int64_t nb = ceilDiv(k.columns, layout.tokenGroups);
  int64_t epw = perWavelet(elementTypeOf(k.elementBytes));
  for (Injector &in : mesh.injectors) {
    int core = mesh.index(in.x, in.y);
    std::vector<float> elements;
    if (in.color == kStreamColor) {
      // Along the rows: the output gradients of the row's output columns.
      int group = built.tokenGroup[core];
      for (int64_t t = 0; t < tokens; ++t)
        for (int64_t n = 0; n < nb; ++n)
          elements.push_back(
              group < 0 ? 0.0f
                        : at(streamed, tokens, outputs, t, group * nb + n));
      in.payload = wavelets(elements, wafer::streamPacking(tokens * nb, epw));
    } else {
      // Down the columns: every token's inputs of the column's features.
      int group = built.placeInSegment(core);
      for (int64_t t = 0; t < tokens; ++t)
        for (int64_t r = 0; r < kb; ++r)
          elements.push_back(at(held, tokens, features, t, group * kb + r));
      in.payload = wavelets(elements, epw);
    }
  }

  WeightKernelRun outcome;
  outcome.values.assign(static_cast<size_t>(features * outputs), 0.0f);
  auto store = [&](int core, const std::vector<std::vector<float>> &memory) {
    int group = built.tokenGroup[core], feature = built.featureGroup[core];
    if (group < 0)
      return;
    for (int64_t n = 0; n < nb; ++n)
      for (int64_t r = 0; r < kb; ++r)
        if (int64_t row = feature * kb + r, column = group * nb + n;
            row < features && column < outputs)
          outcome.values[row * outputs + column] =
              memory[kGradientBuffer][n * kb + r];
  };
  std::optional<MeshResult> run =
      simulateWithValues(mesh, target, CoreMemoryAccess{nullptr, store}, error);
  if (!run)
    return std::nullopt;
  outcome.cycles = run->cycles;
  outcome.runs = 1;
  return outcome;
}

/// runWeightKernel for a resident weight. Its matmul is the streamed
/// matmul's program with the roles turned: the core's rows of the weight
/// are held and the tokens' features stream past, so it computes Y^T = W^T
/// X^T with the outputs as its "tokens".
std::optional<WeightKernelRun>
runResident(const KernelShape &k, const Layout &layout, int64_t microBatch,
            const target::WaferTargetModel &target, const wafer::Rect &rect,
            llvm::ArrayRef<float> held, llvm::ArrayRef<float> streamed,
            std::string &error) {
  if (k.kind == KernelKind::weight_grad)
    return runResidentGradient(k, layout, microBatch, target, rect, held,
                               streamed, error);
  auto [tokens, features, outputs] = extentsOf(k, microBatch);
  std::optional<WeightKernelRun> ran =
      runWhole(k, layout, microBatch, target, rect, {outputs, features, tokens},
               transposed(streamed, features, outputs),
               transposed(held, tokens, features), error);
  if (ran)
    ran->values = transposed(ran->values, outputs, tokens);
  return ran;
}

/// runWeightKernel for a kernel in one piece.
std::optional<WeightKernelRun>
runPiece(const KernelShape &k, const Layout &layout, int64_t microBatch,
         const target::WaferTargetModel &target, const wafer::Rect &rect,
         llvm::ArrayRef<float> held, llvm::ArrayRef<float> streamed,
         std::string &error, const EpilogueOperands &epilogue = {}) {
  if (layout.weights == Edge::resident)
    return runResident(k, layout, microBatch, target, rect, held, streamed,
                       error);
  Extents extents = extentsOf(k, microBatch);
  if (!wafer::biasRow(k, layout))
    return runWhole(k, layout, microBatch, target, rect, extents, held,
                    streamed, error, epilogue);
  // The bias streams as one more row of the weight, against an input of
  // ones.
  std::vector<float> ones, withBias(streamed.begin(), streamed.end());
  for (int64_t t = 0; t < extents.tokens; ++t) {
    ones.insert(ones.end(), held.begin() + t * extents.features,
                held.begin() + (t + 1) * extents.features);
    ones.push_back(1.0f);
  }
  withBias.insert(withBias.end(), epilogue.bias.begin(), epilogue.bias.end());
  ++extents.features;
  return runWhole(k, layout, microBatch, target, rect, extents, ones, withBias,
                  error, epilogue);
}

/// runWeightKernel for a kernel run in chunks of its widest dimension
/// (wafer::vocabularyChunk): each chunk runs on the operands' slices, and
/// its result lands in its slice of the whole, summed where the chunks
/// divide the sum.
std::optional<WeightKernelRun>
runChunks(const KernelShape &k, const Layout &layout, int64_t microBatch,
          const target::WaferTargetModel &target, const wafer::Rect &rect,
          llvm::ArrayRef<float> held, llvm::ArrayRef<float> streamed,
          std::string &error, const EpilogueOperands &epilogue) {
  bool matmul = k.kind == KernelKind::weight_matmul;
  KernelShape chunk = wafer::vocabularyChunk(k);
  // The dimension the chunks divide, in the kernel's terms and in the
  // operands' (tokens per sequence, features or outputs).
  int64_t KernelShape::*split =
      chunk.columns != k.columns         ? &KernelShape::columns
      : chunk.contracted != k.contracted ? &KernelShape::contracted
                                         : &KernelShape::rows;
  bool splitsOutputs = split == &KernelShape::columns;
  // A matmul's rows are its tokens per sequence, a gradient's contracted
  // dimension is.
  bool splitsTokens =
      split == (matmul ? &KernelShape::rows : &KernelShape::contracted);
  Extents whole = extentsOf(k, microBatch);
  int64_t perSequence = whole.tokens / microBatch;
  auto range = [](int64_t first, int64_t end) {
    std::vector<int64_t> indices;
    for (int64_t i = first; i < end; ++i)
      indices.push_back(i);
    return indices;
  };

  WeightKernelRun outcome;
  size_t resultSize = static_cast<size_t>(
      (matmul ? whole.tokens : whole.features) * whole.outputs);
  outcome.values.assign(resultSize, 0.0f);
  // With an epilogue, each chunk (of outputs or tokens: whole sums) runs
  // it on its slice of the bias and of the maps' other inputs.
  bool runsEpilogue = epilogueRuns(k, layout);
  if (runsEpilogue)
    outcome.mapped.resize(k.epilogue.size());
  bool valuesKept = true;
  for (int64_t first = 0; first < k.*split; first += chunk.*split) {
    int64_t end = std::min(k.*split, first + chunk.*split);
    KernelShape piece = chunk;
    piece.*split = end - first;
    std::vector<int64_t> tokens = range(0, whole.tokens),
                         features = range(0, whole.features),
                         outputs = range(0, whole.outputs);
    if (splitsOutputs) {
      outputs = range(first, end);
    } else if (splitsTokens) {
      tokens.clear();
      for (int64_t sequence = 0; sequence < microBatch; ++sequence)
        for (int64_t t = first; t < end; ++t)
          tokens.push_back(sequence * perSequence + t);
    } else {
      features = range(first, end);
    }
    std::vector<float> heldPiece, streamedPiece;
    for (int64_t t : tokens)
      for (int64_t f : features)
        heldPiece.push_back(held[t * whole.features + f]);
    for (int64_t row : matmul ? features : tokens)
      for (int64_t o : outputs)
        streamedPiece.push_back(streamed[row * whole.outputs + o]);
    // Rows `tokens` and columns `outputs` of a [tokens, outputs] operand.
    auto slice = [&](llvm::ArrayRef<float> whole2d) {
      std::vector<float> part;
      for (int64_t t : tokens)
        for (int64_t o : outputs)
          part.push_back(whole2d[t * whole.outputs + o]);
      return part;
    };
    std::vector<float> biasPiece;
    std::vector<std::vector<float>> heldInputs;
    EpilogueOperands epiloguePiece;
    if (runsEpilogue) {
      if (!epilogue.bias.empty())
        for (int64_t o : outputs)
          biasPiece.push_back(epilogue.bias[o]);
      epiloguePiece.bias = biasPiece;
      for (llvm::ArrayRef<float> input : epilogue.held)
        heldInputs.push_back(input.empty() ? std::vector<float>{}
                                           : slice(input));
      epiloguePiece.held.assign(heldInputs.begin(), heldInputs.end());
    }
    std::optional<WeightKernelRun> ran =
        runPiece(piece, layout, microBatch, target, rect, heldPiece,
                 streamedPiece, error, epiloguePiece);
    if (!ran)
      return std::nullopt;
    const std::vector<int64_t> &resultRows = matmul ? tokens : features;
    // Each chunk's part lands in its slice of the whole; a chunk of the
    // features adds its part of the sum.
    auto place = [&](std::vector<float> &into, llvm::ArrayRef<float> part) {
      for (size_t r = 0; r < resultRows.size(); ++r)
        for (size_t o = 0; o < outputs.size(); ++o)
          into[resultRows[r] * whole.outputs + outputs[o]] +=
              part[r * outputs.size() + o];
    };
    valuesKept &= !ran->values.empty();
    if (!ran->values.empty())
      place(outcome.values, ran->values);
    for (auto [into, part] : llvm::zip(outcome.mapped, ran->mapped)) {
      if (part.empty())
        continue;
      into.resize(resultSize, 0.0f);
      place(into, part);
    }
    outcome.cycles += ran->cycles;
    outcome.runs += ran->runs;
  }
  // As in one piece: no product where the first map wrote in its place.
  if (!valuesKept)
    outcome.values.clear();
  return outcome;
}

} // namespace

bool epilogueRuns(const KernelShape &k, const Layout &layout) {
  return wafer::reducesScattered(k, layout) &&
         (k.bias || k.scale || !k.epilogue.empty());
}

std::string chunkedEpilogueRefusal(const KernelShape &k) {
  if (k.chunks > 1 && wafer::vocabularyChunk(k).contracted != k.contracted)
    return "its epilogue follows the whole sum, and its " +
           std::to_string(k.chunks) + " chunks divide the sum";
  return "";
}

std::string routerChoiceRefusal(const KernelShape &k, const Layout &layout) {
  if (k.choices == 0)
    return "it is not a router";
  if (layout.weights == Edge::resident)
    return "its weights are resident, each core summing a share of the "
           "experts";
  if (k.chunks > 1)
    return "its experts come in chunks, no core holding all of a token's";
  if (k.roundLogits)
    return "its logits round to 16 bits, which the engine's f32 memory does "
           "not";
  return "";
}

std::string weightKernelRefusal(const KernelShape &k, const Layout &layout,
                                const wafer::Rect &rect) {
  if (k.kind != KernelKind::weight_matmul && k.kind != KernelKind::weight_grad)
    return "only a weight matmul or a weight gradient carries values on the "
           "mesh";
  return segmentsRefusal(layout, rect);
}

std::optional<WeightKernelRun>
runWeightKernel(const KernelShape &k, const Layout &layout, int64_t microBatch,
                const target::WaferTargetModel &target, const wafer::Rect &rect,
                llvm::ArrayRef<float> held, llvm::ArrayRef<float> streamed,
                std::string &error, const EpilogueOperands &epilogue) {
  error = weightKernelRefusal(k, layout, rect);
  if (!error.empty())
    return std::nullopt;
  auto [tokens, features, outputs] = extentsOf(k, microBatch);
  bool matmul = k.kind == KernelKind::weight_matmul;
  if (static_cast<int64_t>(held.size()) != tokens * features ||
      static_cast<int64_t>(streamed.size()) !=
          (matmul ? features : tokens) * outputs) {
    error = "the operands have " + std::to_string(held.size()) + " and " +
            std::to_string(streamed.size()) + " elements; the kernel takes " +
            std::to_string(tokens * features) + " and " +
            std::to_string((matmul ? features : tokens) * outputs);
    return std::nullopt;
  }
  if (epilogueRuns(k, layout)) {
    error = chunkedEpilogueRefusal(k);
    if (!error.empty())
      return std::nullopt;
    // The bias, and each binary map's other input, as the product is.
    bool sized =
        static_cast<int64_t>(epilogue.bias.size()) == (k.bias ? outputs : 0) &&
        epilogue.held.size() == k.epilogue.size();
    for (size_t i = 0; sized && i < k.epilogue.size(); ++i)
      sized =
          static_cast<int64_t>(epilogue.held[i].size()) ==
          (dataflow::mapArity(k.epilogue[i].kind) > 1 ? tokens * outputs : 0);
    if (!sized) {
      error = "its epilogue's operands are not its bias of " +
              std::to_string(outputs) + " elements and a [" +
              std::to_string(tokens) + ", " + std::to_string(outputs) +
              "] input to each binary map";
      return std::nullopt;
    }
  } else if (!epilogue.bias.empty() || !epilogue.held.empty()) {
    error = "it runs no epilogue on the mesh: its sums are not "
            "reduce-scattered";
    return std::nullopt;
  }
  if (k.chunks > 1)
    return runChunks(k, layout, microBatch, target, rect, held, streamed, error,
                     epilogue);
  return runPiece(k, layout, microBatch, target, rect, held, streamed, error,
                  epilogue);
}

} // namespace cgpt::sim::mesh
