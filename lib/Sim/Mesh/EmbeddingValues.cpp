//===- EmbeddingValues.cpp - placed embeddings with values ----------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/EmbeddingValues.h"

#include <algorithm>

using cgpt::wafer::KernelShape;
using cgpt::wafer::Layout;
using cgpt::wafer::RowFunction;

namespace cgpt::sim::mesh {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The largest count an f32 list holds exactly (2^24).
constexpr int64_t kExactCount = int64_t(1) << 24;

/// A core's lists, as GatherBuffer and ScatterAddBuffer name them, for its
/// `tb` tokens of `cb` features (id -1 for the padding of the last group):
/// per distinct id in increasing order, the stream's elements before its
/// row (`rowElements` a row; one more entry for those after the last), the
/// row's elements to take and the offset of its first token's row; per
/// token, the offset of its id's first token's row (its own for padding)
/// and of its id's sums.
struct IdLists {
  std::vector<float> skips, takes, targets, sources, slots;
};

IdLists idLists(llvm::ArrayRef<int64_t> ids, int64_t cb, int64_t rowElements,
                int64_t tableRows) {
  auto tb = static_cast<int64_t>(ids.size());
  std::vector<std::pair<int64_t, int64_t>> byId;
  for (int64_t t = 0; t < tb; ++t)
    if (ids[t] >= 0)
      byId.push_back({ids[t], t});
  std::sort(byId.begin(), byId.end());
  IdLists lists;
  lists.skips.assign(tb + 1, 0.0f);
  lists.takes.assign(tb, 0.0f);
  lists.targets.assign(tb, 0.0f);
  lists.sources.resize(tb);
  lists.slots.assign(tb, 0.0f);
  for (int64_t t = 0; t < tb; ++t)
    lists.sources[t] = static_cast<float>(t * cb);
  int64_t distinct = -1, last = -1;
  for (auto [id, t] : byId) {
    if (id != last) {
      ++distinct;
      lists.skips[distinct] = static_cast<float>((id - last - 1) * rowElements);
      lists.takes[distinct] = static_cast<float>(cb);
      lists.targets[distinct] = static_cast<float>(t * cb);
      last = id;
    }
    lists.sources[t] = lists.targets[distinct];
    lists.slots[t] = static_cast<float>(distinct * cb);
  }
  lists.skips[tb] = static_cast<float>((tableRows - 1 - last) * rowElements);
  return lists;
}

/// Core `core`'s tokens' ids in `built` (-1 past the `tokens` there are).
std::vector<int64_t> idsOfCore(const KernelProgram &built, int core,
                               llvm::ArrayRef<int32_t> ids) {
  std::vector<int64_t> mine(built.tokens, -1);
  int group = built.tokenGroup[core];
  for (int64_t t = 0; t < built.tokens; ++t)
    if (int64_t row = group * built.tokens + t;
        row < static_cast<int64_t>(ids.size()))
      mine[t] = ids[row];
  return mine;
}

/// Checks the sizes of an embedding's operands and its ids: empty when
/// they are what `k` takes.
std::string operandsError(const KernelShape &k, int64_t microBatch,
                          llvm::ArrayRef<int32_t> ids, int64_t rowsSize,
                          int64_t rows, const char *what) {
  int64_t tokens = microBatch * k.rows,
          tableRows = wafer::embeddingTableRows(k);
  if (static_cast<int64_t>(ids.size()) != tokens ||
      rowsSize != rows * k.columns)
    return "the ids and the " + std::string(what) + " have " +
           std::to_string(ids.size()) + " and " + std::to_string(rowsSize) +
           " elements; the kernel takes " + std::to_string(tokens) + " and " +
           std::to_string(rows) + " x " + std::to_string(k.columns);
  for (int32_t id : ids)
    if (id < 0 || id >= tableRows)
      return "token id " + std::to_string(id) + " is outside the table's " +
             std::to_string(tableRows) + " rows";
  return "";
}

} // namespace

std::string embeddingRefusal(const KernelShape &k, const Layout &layout,
                             const wafer::Rect &rect) {
  if (k.function != RowFunction::gather &&
      k.function != RowFunction::scatterAdd)
    return "it is not an embedding's lookup or gradient";
  if (k.chunks > 1)
    return "it runs in " + std::to_string(k.chunks) + " chunks";
  if (wafer::embeddingTableRows(k) * ceilDiv(k.columns, layout.featureGroups) *
          2 >=
      kExactCount)
    return "its table's stream is longer than an f32 list counts exactly";
  return segmentsRefusal(layout, rect);
}

std::optional<EmbeddingRun>
runGather(const KernelShape &k, const Layout &layout, int64_t microBatch,
          const target::WaferTargetModel &target, const wafer::Rect &rect,
          llvm::ArrayRef<float> table, llvm::ArrayRef<int32_t> ids,
          double scale, llvm::ArrayRef<float> positions, std::string &error) {
  error = k.function == RowFunction::gather ? embeddingRefusal(k, layout, rect)
                                            : "it is not an embedding lookup";
  int64_t tableRows = wafer::embeddingTableRows(k);
  if (error.empty())
    error =
        operandsError(k, microBatch, ids, static_cast<int64_t>(table.size()),
                      tableRows, "table");
  int64_t tokens = microBatch * k.rows, features = k.columns;
  if (error.empty() &&
      static_cast<int64_t>(positions.size()) < k.positionRows * features)
    error = "the positions' table has " + std::to_string(positions.size()) +
            " elements; the kernel adds " + std::to_string(k.positionRows) +
            " x " + std::to_string(features);
  if (!error.empty())
    return std::nullopt;
  KernelProgramOptions options;
  options.allTokenGroups = true;
  options.tableScale = scale;
  KernelProgram built =
      buildKernelProgram(k, layout, microBatch, target, rect, options);
  int64_t cb = built.features;
  int64_t epw = perWavelet(elementTypeOf(k.elementBytes));
  int64_t rowElements = ceilDiv(cb, epw) * epw;
  // Each column's streams: its feature group's slice of every row of the
  // table (and of the positions' rows on theirs), padded to whole
  // wavelets.
  for (Injector &in : built.mesh.injectors) {
    bool ofPositions = in.color != kStreamColor;
    llvm::ArrayRef<float> from = ofPositions ? positions : table;
    int64_t rows = ofPositions ? k.positionRows : tableRows;
    int64_t feature = built.placeInSegment(built.mesh.index(in.x, in.y));
    std::vector<float> elements(rows * rowElements, 0.0f);
    for (int64_t v = 0; v < rows; ++v)
      for (int64_t c = 0; c < cb; ++c)
        if (int64_t column = feature * cb + c; column < features)
          elements[v * rowElements + c] = from[v * features + column];
    in.payload = wavelets(elements, epw);
  }
  // A token's place in its sequence: its row of the positions' table.
  std::vector<int32_t> places;
  for (int64_t t = 0; t < tokens && k.positionRows > 0; ++t)
    places.push_back(static_cast<int32_t>(t % k.rows));
  EmbeddingRun outcome;
  outcome.values.assign(tokens * features, 0.0f);
  auto load = [&](int core, std::vector<std::vector<float>> &memory) {
    if (built.tokenGroup[core] < 0)
      return;
    auto place = [&](const GatherTableBuffers &table,
                     llvm::ArrayRef<int32_t> of, int64_t rows) {
      IdLists lists =
          idLists(idsOfCore(built, core, of), cb, rowElements, rows);
      memory[table.skips] = std::move(lists.skips);
      memory[table.takes] = std::move(lists.takes);
      memory[table.targets] = std::move(lists.targets);
      memory[table.sources] = std::move(lists.sources);
    };
    place(kGatherTokenTable, ids, tableRows);
    if (k.positionRows > 0)
      place(kGatherPositionTable, places, k.positionRows);
  };
  auto store = [&](int core, const std::vector<std::vector<float>> &memory) {
    storeBlock(built, core, tokens, features, memory[kGatherRows],
               outcome.values);
  };
  std::optional<MeshResult> run = simulateWithValues(
      built.mesh, target, CoreMemoryAccess{load, store}, error);
  if (!run)
    return std::nullopt;
  outcome.cycles = run->cycles;
  return outcome;
}

std::optional<EmbeddingRun>
runScatterAdd(const KernelShape &k, const Layout &layout, int64_t microBatch,
              const target::WaferTargetModel &target, const wafer::Rect &rect,
              llvm::ArrayRef<int32_t> ids, llvm::ArrayRef<float> gradient,
              double scale, std::string &error) {
  error = k.function == RowFunction::scatterAdd
              ? embeddingRefusal(k, layout, rect)
              : "it is not an embedding gradient";
  int64_t tokens = microBatch * k.rows, features = k.columns;
  if (error.empty())
    error =
        operandsError(k, microBatch, ids, static_cast<int64_t>(gradient.size()),
                      tokens, "gradient");
  if (!error.empty())
    return std::nullopt;
  int64_t tableRows = wafer::embeddingTableRows(k);
  KernelProgramOptions options;
  options.allTokenGroups = true;
  options.tableScale = scale;
  KernelProgram built =
      buildKernelProgram(k, layout, microBatch, target, rect, options);
  int64_t cb = built.features;
  auto load = [&](int core, std::vector<std::vector<float>> &memory) {
    if (built.tokenGroup[core] < 0)
      return;
    loadBlock(built, core, tokens, features, gradient,
              memory[kScatterGradient]);
    // The f32 stream carries a row of the gradient in `cb` wavelets.
    IdLists lists = idLists(idsOfCore(built, core, ids), cb, cb, tableRows);
    memory[kScatterSlots] = std::move(lists.slots);
    memory[kScatterSkips] = std::move(lists.skips);
    memory[kScatterTakes] = std::move(lists.takes);
  };
  std::optional<MeshResult> run =
      simulateWithValues(built.mesh, target, CoreMemoryAccess{load, {}}, error);
  if (!run)
    return std::nullopt;
  EmbeddingRun outcome;
  outcome.cycles = run->cycles;
  outcome.values.assign(tableRows * features, 0.0f);
  // What leaves the bottom of each column of token groups: its feature
  // group's slice of every row of the gradient. Columns of segments side
  // by side each leave their token groups' sums, added here as the
  // servers add what reaches them.
  forEachDrained(built.mesh, *run, [&](int core, int64_t w, float value) {
    int64_t v = w / cb, column = built.placeInSegment(core) * cb + w % cb;
    if (v < tableRows && column < features)
      outcome.values[v * features + column] += value;
  });
  return outcome;
}

} // namespace cgpt::sim::mesh
