//===- NormValues.cpp - a placed layer or RMS norm run with values --------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/NormValues.h"

using cgpt::wafer::KernelShape;
using cgpt::wafer::Layout;
using cgpt::wafer::RowFunction;

namespace cgpt::sim::mesh {

std::string normRefusal(const KernelShape &k, const Layout &layout,
                        const wafer::Rect &rect) {
  if (k.function != RowFunction::layerNorm &&
      k.function != RowFunction::rmsNorm)
    return "it is not a layer or RMS norm";
  return segmentsRefusal(layout, rect);
}

std::optional<NormRun>
runNorm(const KernelShape &k, const Layout &layout, int64_t microBatch,
        const target::WaferTargetModel &target, const wafer::Rect &rect,
        llvm::ArrayRef<float> input, llvm::ArrayRef<float> gain,
        llvm::ArrayRef<float> shift, double epsilon, std::string &error) {
  error = normRefusal(k, layout, rect);
  if (!error.empty())
    return std::nullopt;
  bool centered = k.function == RowFunction::layerNorm;
  int64_t tokens = microBatch * k.rows, features = k.columns;
  int64_t shiftSize = centered ? features : 0;
  if (static_cast<int64_t>(input.size()) != tokens * features ||
      static_cast<int64_t>(gain.size()) != features ||
      static_cast<int64_t>(shift.size()) != shiftSize) {
    error = "the operands have " + std::to_string(input.size()) + ", " +
            std::to_string(gain.size()) + " and " +
            std::to_string(shift.size()) + " elements; the kernel takes " +
            std::to_string(tokens) + " x " + std::to_string(features) + ", " +
            std::to_string(features) + " and " + std::to_string(shiftSize);
    return std::nullopt;
  }
  KernelProgramOptions options;
  options.allTokenGroups = true;
  options.epsilon = epsilon;
  KernelProgram built =
      buildKernelProgram(k, layout, microBatch, target, rect, options);
  int64_t tb = built.tokens, cb = built.features;
  // Where a token's statistics lie in the per-token buffer.
  int64_t rstdAt = centered ? tb : 0;

  NormRun outcome;
  outcome.result.assign(static_cast<size_t>(tokens * features), 0.0f);
  outcome.mean.assign(static_cast<size_t>(centered ? tokens : 0), 0.0f);
  outcome.rstd.assign(static_cast<size_t>(tokens), 0.0f);
  // Calls `fn(t, c, row, column)` for each of core `core`'s elements that
  // hold a token and a feature (the others are the padding of the last
  // group).
  auto forEachElement = [&](int core, auto fn) {
    int token = built.tokenGroup[core];
    if (token < 0)
      return;
    int64_t feature = built.placeInSegment(core);
    for (int64_t t = 0; t < tb; ++t)
      for (int64_t c = 0; c < cb; ++c)
        if (int64_t row = token * tb + t, column = feature * cb + c;
            row < tokens && column < features)
          fn(t, c, row, column);
  };
  auto load = [&](int core, std::vector<std::vector<float>> &memory) {
    forEachElement(
        core, [&](int64_t t, int64_t c, int64_t row, int64_t column) {
          memory[kNormData][t * cb + c] = input[row * features + column];
        });
    int64_t first = built.placeInSegment(core) * cb;
    for (int64_t c = 0; c < cb && first + c < features; ++c) {
      memory[kNormGain][c] = gain[first + c];
      if (centered)
        memory[kNormShift][c] = shift[first + c];
    }
  };
  auto store = [&](int core, const std::vector<std::vector<float>> &memory) {
    forEachElement(core, [&](int64_t t, int64_t c, int64_t row,
                             int64_t column) {
      outcome.result[row * features + column] = memory[kNormData][t * cb + c];
      if (column != 0)
        return;
      if (centered)
        outcome.mean[row] = memory[kNormPerToken][t];
      outcome.rstd[row] = memory[kNormPerToken][rstdAt + t];
    });
  };
  std::optional<MeshResult> run = simulateWithValues(
      built.mesh, target, CoreMemoryAccess{load, store}, error);
  if (!run)
    return std::nullopt;
  outcome.cycles = run->cycles;
  return outcome;
}

} // namespace cgpt::sim::mesh
