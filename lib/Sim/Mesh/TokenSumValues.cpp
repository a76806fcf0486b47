//===- TokenSumValues.cpp - a placed token sum run with real values -------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/TokenSumValues.h"

using cgpt::wafer::KernelKind;
using cgpt::wafer::KernelShape;
using cgpt::wafer::Layout;

namespace cgpt::sim::mesh {
namespace {

// The buffers the token sum's program declares, in order.
constexpr int kDataBuffer = 0, kSumsBuffer = 1;

} // namespace

std::string tokenSumRefusal(const KernelShape &k, const Layout &layout,
                            const wafer::Rect &rect) {
  if (k.kind != KernelKind::token_sum)
    return "it is not a token sum";
  if (k.experts > 1)
    return "it is routed: its experts' rows are chosen as it runs";
  if (k.chunks > 1)
    return "it runs in " + std::to_string(k.chunks) + " chunks";
  return segmentsRefusal(layout, rect);
}

std::optional<TokenSumRun>
runTokenSum(const KernelShape &k, const Layout &layout, int64_t microBatch,
            const target::WaferTargetModel &target, const wafer::Rect &rect,
            llvm::ArrayRef<float> input, std::string &error) {
  error = tokenSumRefusal(k, layout, rect);
  if (!error.empty())
    return std::nullopt;
  int64_t tokens = microBatch * k.rows, features = k.columns;
  if (static_cast<int64_t>(input.size()) != tokens * features) {
    error = "the input has " + std::to_string(input.size()) +
            " elements; the kernel takes " + std::to_string(tokens) + " x " +
            std::to_string(features);
    return std::nullopt;
  }
  KernelProgram built = buildKernelProgram(k, layout, microBatch, target, rect,
                                           {/*allTokenGroups=*/true});
  MeshProgram &mesh = built.mesh;
  int64_t tb = built.tokens, cb = built.features, nb = built.blockColumns;

  TokenSumRun outcome;
  std::vector<float> &result = outcome.values;
  result.assign(static_cast<size_t>(features), 0.0f);
  // Sum `i` of block `block` of feature group `feature`, added into the
  // result: sums past the group's features, or past all of them, are the
  // padding of the last block or group.
  auto place = [&](int64_t feature, int64_t block, int64_t i, float value) {
    int64_t c = block * nb + i;
    if (int64_t n = feature * cb + c; c < cb && n < features)
      result[n] += value;
  };
  // A core keeps its elements block by block, each block's tokens one
  // after another.
  auto load = [&](int core, std::vector<std::vector<float>> &memory) {
    int token = built.tokenGroup[core];
    if (token < 0)
      return;
    int64_t feature = built.placeInSegment(core);
    for (int64_t block = 0; block < built.blocks; ++block)
      for (int64_t t = 0; t < tb; ++t)
        for (int64_t i = 0; i < nb; ++i) {
          int64_t row = token * tb + t, c = block * nb + i;
          int64_t column = feature * cb + c;
          memory[kDataBuffer][(block * tb + t) * nb + i] =
              row < tokens && c < cb && column < features
                  ? input[row * features + column]
                  : 0.0f;
        }
  };
  // Alone in its column with one block, a core keeps its sums: they are
  // read from its memory.
  bool chained = built.rows > 1 || built.blocks > 1;
  auto store = [&](int core, const std::vector<std::vector<float>> &memory) {
    if (chained || built.tokenGroup[core] < 0)
      return;
    for (int64_t i = 0; i < nb; ++i)
      place(built.placeInSegment(core), 0, i, memory[kSumsBuffer][i]);
  };

  std::optional<MeshResult> run =
      simulateWithValues(mesh, target, CoreMemoryAccess{load, store}, error);
  if (!run)
    return std::nullopt;
  outcome.cycles = run->cycles;
  // What leaves the bottom of each column of token groups, block by
  // block: its feature group's sums, one f32 a wavelet.
  forEachDrained(mesh, *run, [&](int core, int64_t w, float value) {
    place(built.placeInSegment(core), w / nb, w % nb, value);
  });
  return outcome;
}

} // namespace cgpt::sim::mesh
