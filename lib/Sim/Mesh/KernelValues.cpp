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

// The buffers streamedProduct declares, in order.
constexpr int kInputsBuffer = 0, kSumsBuffer = 1;

/// A row-major matrix's element, zero past its edges: the padding of the
/// last group or block.
float at(llvm::ArrayRef<float> matrix, int64_t rows, int64_t columns,
         int64_t row, int64_t column) {
  if (row >= rows || column >= columns)
    return 0.0f;
  return matrix[row * columns + column];
}

} // namespace

std::optional<std::vector<float>>
runWeightKernel(const KernelShape &k, const Layout &layout, int64_t microBatch,
                const target::WaferTargetModel &target, const wafer::Rect &rect,
                llvm::ArrayRef<float> held, llvm::ArrayRef<float> streamed,
                std::string &error) {
  bool matmul = k.kind == KernelKind::weight_matmul;
  if (!matmul && k.kind != KernelKind::weight_grad) {
    error = "only a weight matmul or a weight gradient carries values on the "
            "mesh";
    return std::nullopt;
  }
  if (layout.weights == Edge::resident || k.chunks > 1 || k.repeats > 1) {
    error = "a kernel with resident weights, or run in chunks or repeats, "
            "does not carry values on the mesh";
    return std::nullopt;
  }
  // Tokens, the features that stay with them, and the output columns.
  int64_t tokens = microBatch * (matmul ? k.rows : k.contracted);
  int64_t features = matmul ? k.contracted : k.rows;
  int64_t outputs = k.columns;
  if (static_cast<int64_t>(held.size()) != tokens * features ||
      static_cast<int64_t>(streamed.size()) !=
          (matmul ? features : tokens) * outputs) {
    error = "the operands have " + std::to_string(held.size()) + " and " +
            std::to_string(streamed.size()) + " elements; the kernel takes " +
            std::to_string(tokens * features) + " and " +
            std::to_string((matmul ? features : tokens) * outputs);
    return std::nullopt;
  }
  KernelProgram built = buildKernelProgram(k, layout, microBatch, target, rect,
                                           {/*allTokenGroups=*/true});
  // A segment holds all of a token group's feature groups.
  if (built.segment < layout.featureGroups) {
    error = "its " + std::to_string(layout.featureGroups) +
            " feature groups do not fit along its rectangle's " +
            std::to_string(rect.w) + " columns";
    return std::nullopt;
  }

  MeshProgram &mesh = built.mesh;
  const wafer::SumBlockShape &sums = built.sums;
  int64_t perColumn = sums.perColumn, rowsIn = sums.streamed;
  int64_t blockColumns = built.blockColumns;
  ElementType type = k.elementBytes <= 2 ? ElementType::bf16 : ElementType::f32;
  int64_t packed =
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
  // The token groups that do not fold onto whole segments of the
  // rectangle run in further passes of the same program, each on the
  // token groups after the last pass's.
  int64_t perPass = static_cast<int64_t>(built.rows) * built.segmentColumns;
  int64_t firstGroup = 0;
  // A core's feature group is its place in its segment.
  auto featureOf = [&](int core) {
    return static_cast<int>(core % mesh.width % built.segment);
  };
  auto tokenGroupOf = [&](int core) -> int {
    int64_t group = built.tokenGroup[core];
    if (group < 0 || firstGroup + group >= layout.tokenGroups)
      return -1;
    return static_cast<int>(firstGroup + group);
  };
  // The stream entering at core (x, y): block by block, column by column,
  // the rows of the core's feature group (matmul) or token group.
  auto inject = [&](Injector &in) {
    int core = mesh.index(in.x, in.y);
    int group = matmul ? featureOf(core) : tokenGroupOf(core);
    std::vector<float> elements;
    elements.reserve(in.count * packed);
    for (int64_t block = 0; block < built.blocks; ++block)
      for (int64_t j = 0; j < blockColumns; ++j)
        for (int64_t r = 0; r < rowsIn; ++r)
          elements.push_back(group < 0 ? 0.0f
                                       : at(streamed, matmul ? features : tokens,
                                            outputs, group * rowsIn + r,
                                            block * blockColumns + j));
    in.payload.clear();
    for (size_t e = 0; e < elements.size(); e += packed)
      in.payload.push_back(
          {elements[e], packed > 1 ? elements[e + 1] : 0.0f});
  };

  std::vector<float> result(static_cast<size_t>(matmul ? tokens * outputs
                                                       : features * outputs),
                            0.0f);
  // A sum of column `column` of group (token, feature), its `index`-th
  // element, into the result. A weight gradient's partial sums of separate
  // columns of segments (or passes) add up here, on the host: the program
  // chains its token groups only down a column.
  auto place = [&](int token, int feature, int64_t column, int64_t index,
                   float value) {
    if ((matmul && token < 0) || column >= outputs)
      return;
    int64_t row = matmul ? token * perColumn + index
                         : feature * perColumn + index;
    if (row < (matmul ? tokens : features))
      result[row * outputs + column] += value;
  };
  auto load = [&](int core, std::vector<std::vector<float>> &memory) {
    int token = tokenGroupOf(core), feature = featureOf(core);
    if (token < 0)
      return;
    for (int64_t r = 0; r < rowsIn; ++r)
      for (int64_t c = 0; c < perColumn; ++c)
        memory[kInputsBuffer][r * perColumn + c] =
            heldValue(token, feature, r, c);
  };
  // Alone in its chain with one block, a core keeps its sums: they are
  // read from its memory.
  bool chained = (matmul ? built.segment : built.rows) > 1 || built.blocks > 1;
  auto store = [&](int core, const std::vector<std::vector<float>> &memory) {
    if (chained)
      return;
    for (int64_t j = 0; j < blockColumns; ++j)
      for (int64_t i = 0; i < perColumn; ++i)
        place(tokenGroupOf(core), featureOf(core), j, i,
              memory[kSumsBuffer][j * perColumn + i]);
  };

  MeshConfig config = meshConfig(target);
  config.values = true;
  for (; firstGroup < layout.tokenGroups; firstGroup += perPass) {
    for (Injector &in : mesh.injectors)
      if (in.color == kStreamColor)
        inject(in);
    std::optional<MeshResult> run =
        simulate(mesh, config, error, CoreMemoryAccess{load, store});
    if (!run)
      return std::nullopt;
    // What leaves a chain's end, block by block: its columns' sums, one
    // f32 a wavelet.
    int record = 0;
    for (const Drain &drain : mesh.drains) {
      if (!drain.record)
        continue;
      const std::vector<Wavelet> &out = run->drained[record++];
      int core = mesh.index(drain.x, drain.y);
      int64_t perBlock = blockColumns * perColumn;
      for (size_t w = 0; w < out.size(); ++w) {
        int64_t block = static_cast<int64_t>(w) / perBlock;
        int64_t within = static_cast<int64_t>(w) % perBlock;
        place(tokenGroupOf(core), featureOf(core),
              block * blockColumns + within / perColumn, within % perColumn,
              out[w].lo);
      }
    }
  }
  return result;
}

} // namespace cgpt::sim::mesh
