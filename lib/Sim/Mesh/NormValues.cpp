//===- NormValues.cpp - placed norms and their gradients with values ------===//
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
  auto load = [&](int core, std::vector<std::vector<float>> &memory) {
    loadBlock(built, core, tokens, features, input, memory[kNormData]);
    int64_t first = built.placeInSegment(core) * cb;
    for (int64_t c = 0; c < cb && first + c < features; ++c) {
      memory[kNormGain][c] = gain[first + c];
      if (centered)
        memory[kNormShift][c] = shift[first + c];
    }
  };
  auto store = [&](int core, const std::vector<std::vector<float>> &memory) {
    forEachElement(built, core, tokens, features,
                   [&](int64_t t, int64_t c, int64_t row, int64_t column) {
                     outcome.result[row * features + column] =
                         memory[kNormData][t * cb + c];
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

std::string normGradRefusal(const KernelShape &k, const Layout &layout,
                            const wafer::Rect &rect) {
  if (!wafer::isNormGradient(k.function))
    return "it is not a layer or RMS norm's gradient";
  return segmentsRefusal(layout, rect);
}

std::optional<NormGradRun>
runNormGrad(const KernelShape &k, const Layout &layout, int64_t microBatch,
            const target::WaferTargetModel &target, const wafer::Rect &rect,
            const NormGradOperands &operands, std::string &error) {
  error = normGradRefusal(k, layout, rect);
  if (!error.empty())
    return std::nullopt;
  bool centered = k.function == RowFunction::layerNormGrad;
  int64_t tokens = microBatch * k.rows, features = k.columns;
  int64_t meanSize = centered ? tokens : 0;
  auto size = [](llvm::ArrayRef<float> values) {
    return static_cast<int64_t>(values.size());
  };
  if (size(operands.outputGrad) != tokens * features ||
      size(operands.input) != tokens * features ||
      size(operands.mean) != meanSize || size(operands.rstd) != tokens ||
      size(operands.gain) != features) {
    error = "the operands have " + std::to_string(operands.outputGrad.size()) +
            ", " + std::to_string(operands.input.size()) + ", " +
            std::to_string(operands.mean.size()) + ", " +
            std::to_string(operands.rstd.size()) + " and " +
            std::to_string(operands.gain.size()) +
            " elements; the kernel takes " + std::to_string(tokens) + " x " +
            std::to_string(features) + " twice, " + std::to_string(meanSize) +
            ", " + std::to_string(tokens) + " and " + std::to_string(features);
    return std::nullopt;
  }
  KernelProgramOptions options;
  options.allTokenGroups = true;
  KernelProgram built =
      buildKernelProgram(k, layout, microBatch, target, rect, options);
  const MeshProgram &mesh = built.mesh;
  int64_t tb = built.tokens, cb = built.features;
  int64_t rstdAt = centered ? tb : 0;
  bool chained = built.rows > 1;

  NormGradRun outcome;
  outcome.input.assign(static_cast<size_t>(tokens * features), 0.0f);
  outcome.gain.assign(static_cast<size_t>(features), 0.0f);
  outcome.shift.assign(static_cast<size_t>(centered ? features : 0), 0.0f);
  // Sum `i` of feature group `feature`'s gain gradients (then its shift
  // gradients), added into the result: those past the features are the
  // padding of the last group.
  auto place = [&](int64_t feature, int64_t i, float value) {
    std::vector<float> &sums = i < cb ? outcome.gain : outcome.shift;
    if (int64_t n = feature * cb + i % cb; n < features)
      sums[n] += value;
  };
  auto load = [&](int core, std::vector<std::vector<float>> &memory) {
    forEachElement(built, core, tokens, features,
                   [&](int64_t t, int64_t c, int64_t row, int64_t column) {
                     memory[kGradInput][t * cb + c] =
                         operands.input[row * features + column];
                     memory[kGradOutputGradient][t * cb + c] =
                         operands.outputGrad[row * features + column];
                     if (c != 0)
                       return;
                     if (centered)
                       memory[kGradPerToken][t] = operands.mean[row];
                     memory[kGradPerToken][rstdAt + t] = operands.rstd[row];
                   });
    int64_t first = built.placeInSegment(core) * cb;
    for (int64_t c = 0; c < cb && first + c < features; ++c)
      memory[kGradGain][c] = operands.gain[first + c];
  };
  auto store = [&](int core, const std::vector<std::vector<float>> &memory) {
    storeBlock(built, core, tokens, features, memory[kGradOutputGradient],
               outcome.input);
    // Alone in its column, a core keeps its sums.
    if (chained || built.tokenGroup[core] < 0)
      return;
    for (int64_t i = 0; i < (centered ? 2 : 1) * cb; ++i)
      place(built.placeInSegment(core), i, memory[kGradSums][i]);
  };
  std::optional<MeshResult> run =
      simulateWithValues(mesh, target, CoreMemoryAccess{load, store}, error);
  if (!run)
    return std::nullopt;
  outcome.cycles = run->cycles;
  // What leaves the foot of each column of token groups: its feature
  // group's sums, one f32 a wavelet.
  forEachDrained(mesh, *run, [&](int core, int64_t w, float value) {
    place(built.placeInSegment(core), w, value);
  });
  return outcome;
}

} // namespace cgpt::sim::mesh
