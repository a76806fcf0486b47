//===- LossValues.cpp - the placed loss and its gradient with values ------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/LossValues.h"

#include <algorithm>
#include <limits>
#include <optional>

using cgpt::wafer::KernelShape;
using cgpt::wafer::Layout;
using cgpt::wafer::RowFunction;

namespace cgpt::sim::mesh {
namespace {

/// What the loss and its gradient refuse alike: chunks that divide the
/// tokens, and a layout whose segments do not fit.
std::string vocabularyRefusal(const KernelShape &k, const Layout &layout,
                              const wafer::Rect &rect) {
  if (k.chunks > 1 && wafer::vocabularyChunk(k).columns == k.columns)
    return "its chunks divide the tokens, not the vocabulary";
  return segmentsRefusal(layout, rect);
}

/// Sets `error` and returns false unless the operands have the kernel's
/// sizes and every label is in the vocabulary. The gradient reads the
/// log-sum-exp the loss saved; the loss, which makes them, reads none.
bool checkLossOperands(int64_t tokens, int64_t vocabulary,
                       llvm::ArrayRef<float> logits,
                       std::optional<llvm::ArrayRef<float>> logSumExp,
                       llvm::ArrayRef<int32_t> labels, std::string &error) {
  if (static_cast<int64_t>(logits.size()) != tokens * vocabulary ||
      (logSumExp && static_cast<int64_t>(logSumExp->size()) != tokens) ||
      static_cast<int64_t>(labels.size()) != tokens) {
    error = "the operands have " + std::to_string(logits.size()) +
            (logSumExp ? ", " + std::to_string(logSumExp->size()) : "") +
            " and " + std::to_string(labels.size()) +
            " elements; the kernel takes " + std::to_string(tokens) + " x " +
            std::to_string(vocabulary) +
            (logSumExp ? ", " + std::to_string(tokens) : "") + " and " +
            std::to_string(tokens);
    return false;
  }
  for (int32_t label : labels)
    if (label < 0 || label >= vocabulary) {
      error = "label " + std::to_string(label) +
              " is outside the vocabulary of " + std::to_string(vocabulary);
      return false;
    }
  return true;
}

/// The place of `row`'s label among the core's rows (token `t`'s of `cb`
/// logits from `slice`, the chunk's logits ending at `end`), or of its
/// spare element.
float labelPlace(int32_t label, int64_t slice, int64_t end, int64_t t,
                 int64_t tb, int64_t cb) {
  int64_t at = label - slice;
  return static_cast<float>(at >= 0 && at < cb && slice + at < end ? t * cb + at
                                                                   : tb * cb);
}

} // namespace

std::string crossEntropyRefusal(const KernelShape &k, const Layout &layout,
                                const wafer::Rect &rect) {
  if (k.function != RowFunction::crossEntropy)
    return "it is not the loss";
  return vocabularyRefusal(k, layout, rect);
}

std::optional<CrossEntropyRun>
runCrossEntropy(const KernelShape &k, const Layout &layout, int64_t microBatch,
                const target::WaferTargetModel &target, const wafer::Rect &rect,
                const CrossEntropyOperands &operands, std::string &error) {
  error = crossEntropyRefusal(k, layout, rect);
  if (!error.empty())
    return std::nullopt;
  int64_t tokens = microBatch * k.rows, vocabulary = k.columns;
  if (!checkLossOperands(tokens, vocabulary, operands.logits, std::nullopt,
                         operands.labels, error))
    return std::nullopt;

  KernelShape chunk = wafer::vocabularyChunk(k);
  CrossEntropyRun outcome;
  outcome.logSumExp.assign(static_cast<size_t>(tokens), 0.0f);
  // What each core keeps from one chunk's run to the next: its running
  // statistics and its part of the loss.
  std::vector<std::vector<float>> running, coreLoss;
  double loss = 0;
  for (int64_t first = 0; first < vocabulary; first += chunk.columns) {
    KernelShape piece = chunk;
    piece.columns = std::min(vocabulary, first + chunk.columns) - first;
    KernelProgramOptions options;
    options.allTokenGroups = true;
    options.lossScale = operands.scale;
    options.finalChunk = first + chunk.columns >= vocabulary;
    KernelProgram built =
        buildKernelProgram(piece, layout, microBatch, target, rect, options);
    int64_t tb = built.tokens, cb = built.features;
    size_t cores = built.mesh.programOf.size();
    if (running.empty()) {
      // Before the first chunk: no maximum yet, and nothing summed.
      std::vector<float> start(static_cast<size_t>(2 * tb), 0.0f);
      std::fill(start.begin(), start.begin() + tb,
                std::numeric_limits<float>::lowest());
      running.assign(cores, start);
      coreLoss.assign(cores, {0.0f});
    }
    auto load = [&](int core, std::vector<std::vector<float>> &memory) {
      int64_t slice = first + built.placeInSegment(core) * cb;
      // Logits past the vocabulary never win a token's maximum nor add to
      // its sum; padding tokens weigh 0 in the core's loss.
      std::fill(memory[kCrossEntropyLogits].begin(),
                memory[kCrossEntropyLogits].end() - 1,
                std::numeric_limits<float>::lowest());
      // Padding tokens take their label from the spare element too.
      std::fill(memory[kCrossEntropyLabels].begin(),
                memory[kCrossEntropyLabels].end(), static_cast<float>(tb * cb));
      memory[kCrossEntropyRunning] = running[core];
      memory[kCrossEntropyLoss] = coreLoss[core];
      bool leads = built.placeInSegment(core) == 0;
      int64_t end = first + piece.columns;
      forEachElement(built, core, tokens, piece.columns,
                     [&](int64_t t, int64_t c, int64_t row, int64_t column) {
                       memory[kCrossEntropyLogits][t * cb + c] =
                           operands.logits[row * vocabulary + first + column];
                       if (c != 0)
                         return;
                       memory[kCrossEntropyLabels][t] = labelPlace(
                           operands.labels[row], slice, end, t, tb, cb);
                       memory[kCrossEntropyWeights][t] = leads ? 1.0f : 0.0f;
                     });
    };
    auto store = [&](int core, const std::vector<std::vector<float>> &memory) {
      running[core] = memory[kCrossEntropyRunning];
      coreLoss[core] = memory[kCrossEntropyLoss];
      if (!options.finalChunk)
        return;
      loss += memory[kCrossEntropyLoss][0];
      if (built.placeInSegment(core) != 0)
        return;
      forEachElement(built, core, tokens, piece.columns,
                     [&](int64_t t, int64_t c, int64_t row, int64_t) {
                       if (c == 0)
                         outcome.logSumExp[row] =
                             memory[kCrossEntropyLogSumExp][t];
                     });
    };
    std::optional<MeshResult> run = simulateWithValues(
        built.mesh, target, CoreMemoryAccess{load, store}, error);
    if (!run)
      return std::nullopt;
    outcome.cycles += run->cycles;
    ++outcome.runs;
  }
  outcome.loss = static_cast<float>(loss);
  return outcome;
}

std::string lossGradRefusal(const KernelShape &k, const Layout &layout,
                            const wafer::Rect &rect) {
  if (k.function != RowFunction::crossEntropyGrad)
    return "it is not the loss's gradient";
  return vocabularyRefusal(k, layout, rect);
}

std::optional<LossGradRun>
runLossGrad(const KernelShape &k, const Layout &layout, int64_t microBatch,
            const target::WaferTargetModel &target, const wafer::Rect &rect,
            const LossGradOperands &operands, std::string &error) {
  error = lossGradRefusal(k, layout, rect);
  if (!error.empty())
    return std::nullopt;
  int64_t tokens = microBatch * k.rows, vocabulary = k.columns;
  if (!checkLossOperands(tokens, vocabulary, operands.logits,
                         operands.logSumExp, operands.labels, error))
    return std::nullopt;

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
                       memory[kLossLabels][t] =
                           labelPlace(operands.labels[row], slice,
                                      first + piece.columns, t, tb, cb);
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
