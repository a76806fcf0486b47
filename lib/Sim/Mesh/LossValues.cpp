//===- LossValues.cpp - the placed loss gradient with values --------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/LossValues.h"

#include <algorithm>

using cgpt::wafer::KernelShape;
using cgpt::wafer::Layout;
using cgpt::wafer::RowFunction;

namespace cgpt::sim::mesh {

std::string lossGradRefusal(const KernelShape &k, const Layout &layout,
                            const wafer::Rect &rect) {
  if (k.function != RowFunction::crossEntropyGrad)
    return "it is not the loss's gradient";
  if (k.chunks > 1 && wafer::vocabularyChunk(k).columns == k.columns)
    return "its chunks divide the tokens, not the vocabulary";
  return segmentsRefusal(layout, rect);
}

std::optional<LossGradRun>
runLossGrad(const KernelShape &k, const Layout &layout, int64_t microBatch,
            const target::WaferTargetModel &target, const wafer::Rect &rect,
            const LossGradOperands &operands, std::string &error) {
  error = lossGradRefusal(k, layout, rect);
  if (!error.empty())
    return std::nullopt;
  int64_t tokens = microBatch * k.rows, vocabulary = k.columns;
  if (static_cast<int64_t>(operands.logits.size()) != tokens * vocabulary ||
      static_cast<int64_t>(operands.logSumExp.size()) != tokens ||
      static_cast<int64_t>(operands.labels.size()) != tokens) {
    error = "the operands have " + std::to_string(operands.logits.size()) +
            ", " + std::to_string(operands.logSumExp.size()) + " and " +
            std::to_string(operands.labels.size()) +
            " elements; the kernel takes " + std::to_string(tokens) + " x " +
            std::to_string(vocabulary) + ", " + std::to_string(tokens) +
            " and " + std::to_string(tokens);
    return std::nullopt;
  }
  for (int32_t label : operands.labels)
    if (label < 0 || label >= vocabulary) {
      error = "label " + std::to_string(label) +
              " is outside the vocabulary of " + std::to_string(vocabulary);
      return std::nullopt;
    }

  KernelProgramOptions options;
  options.allTokenGroups = true;
  options.lossScale = operands.scale;
  KernelShape chunk = wafer::vocabularyChunk(k);
  LossGradRun outcome;
  outcome.gradient.assign(static_cast<size_t>(tokens * vocabulary), 0.0f);
  for (int64_t first = 0; first < vocabulary; first += chunk.columns) {
    KernelShape piece = chunk;
    piece.columns = std::min(vocabulary, first + chunk.columns) - first;
    KernelProgram built =
        buildKernelProgram(piece, layout, microBatch, target, rect, options);
    int64_t tb = built.tokens, cb = built.features;
    auto load = [&](int core, std::vector<std::vector<float>> &memory) {
      int64_t slice = first + built.placeInSegment(core) * cb;
      // Padding tokens take the scale from the spare element too.
      std::fill(memory[kLossLabels].begin(), memory[kLossLabels].end(),
                static_cast<float>(tb * cb));
      forEachElement(built, core, tokens, piece.columns,
                     [&](int64_t t, int64_t c, int64_t row, int64_t column) {
                       memory[kLossLogits][t * cb + c] =
                           operands.logits[row * vocabulary + first + column];
                       if (c != 0)
                         return;
                       memory[kLossLogSumExp][t] = operands.logSumExp[row];
                       // The label's place among the core's rows, or its spare
                       // element's.
                       int64_t label = operands.labels[row] - slice;
                       memory[kLossLabels][t] = static_cast<float>(
                           label >= 0 && label < cb &&
                                   slice + label < first + piece.columns
                               ? t * cb + label
                               : tb * cb);
                     });
    };
    auto store = [&](int core, const std::vector<std::vector<float>> &memory) {
      forEachElement(built, core, tokens, piece.columns,
                     [&](int64_t t, int64_t c, int64_t row, int64_t column) {
                       outcome.gradient[row * vocabulary + first + column] =
                           memory[kLossLogits][t * cb + c];
                     });
    };
    std::optional<MeshResult> run = simulateWithValues(
        built.mesh, target, CoreMemoryAccess{load, store}, error);
    if (!run)
      return std::nullopt;
    outcome.cycles += run->cycles;
    ++outcome.runs;
  }
  return outcome;
}

} // namespace cgpt::sim::mesh
