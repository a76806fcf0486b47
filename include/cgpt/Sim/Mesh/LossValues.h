//===- LossValues.h - the loss and its gradient with values -----*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Runs the mesh programs of the loss and its gradient (KernelPrograms.h)
// with numbers in their buffers: each core's SRAM holds its token group's
// rows of its slice of the vocabulary's logits and, per token, the place
// of the label's logit among its rows (or of its spare element, when
// another core holds the label); the gradient's cores also hold their
// tokens' saved log-sum-exp. A kernel run in chunks of the vocabulary runs
// chunk by chunk, each on its slice; the loss's cores keep their running
// statistics and their part of the loss from one chunk to the next. The
// results are read from every core, so a wrong layout, a wrong exponential
// or a wrong logarithm gives a wrong number.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SIM_MESH_LOSSVALUES_H
#define CGPT_SIM_MESH_LOSSVALUES_H

#include "cgpt/Sim/Mesh/KernelPrograms.h"

#include "llvm/ADT/ArrayRef.h"

#include <optional>
#include <string>
#include <vector>

namespace cgpt::sim::mesh {

/// Why `kernel`, laid out as `layout` on `rect`, cannot run with values as
/// the loss; empty when it can.
std::string crossEntropyRefusal(const wafer::KernelShape &kernel,
                                const wafer::Layout &layout,
                                const wafer::Rect &rect);

/// The loss's results, and the cycles its runs on the mesh took.
struct CrossEntropyRun {
  /// scale sum over tokens (lse - the label's logit): the sum of every
  /// core's part, which each scaled.
  float loss = 0;
  /// [T] per token, read from the first core of its segment.
  std::vector<float> logSumExp;
  int64_t cycles = 0;
  /// Runs of the program: one, or one a chunk.
  int64_t runs = 0;
};

/// The operands of the loss: [T, V] row-major f32 `logits` (T = microBatch
/// x rows tokens, V = columns, the vocabulary) and the labels [T], each in
/// [0, V).
struct CrossEntropyOperands {
  llvm::ArrayRef<float> logits;
  llvm::ArrayRef<int32_t> labels;
  double scale = 1;
};

/// Runs the loss `kernel` for `microBatch` sequences, laid out as `layout`
/// on `rect`, with values. Returns nothing and sets `error` for a kernel
/// crossEntropyRefusal refuses, operands of the wrong size, a label
/// outside the vocabulary, or a program that fails to load or run.
std::optional<CrossEntropyRun>
runCrossEntropy(const wafer::KernelShape &kernel, const wafer::Layout &layout,
                int64_t microBatch, const target::WaferTargetModel &target,
                const wafer::Rect &rect, const CrossEntropyOperands &operands,
                std::string &error);

/// Why `kernel`, laid out as `layout` on `rect`, cannot run with values as
/// the loss's gradient; empty when it can.
std::string lossGradRefusal(const wafer::KernelShape &kernel,
                            const wafer::Layout &layout,
                            const wafer::Rect &rect);

/// The loss gradient's result, and the cycles its runs on the mesh took.
struct LossGradRun {
  /// [T, V] row-major.
  std::vector<float> gradient;
  int64_t cycles = 0;
  /// Runs of the program: one, or one a chunk.
  int64_t runs = 0;
};

/// The operands of the loss's gradient: [T, V] row-major f32 `logits`
/// (T = microBatch x rows tokens, V = columns, the vocabulary), the saved
/// log-sum-exp [T] and the labels [T], each in [0, V).
struct LossGradOperands {
  llvm::ArrayRef<float> logits, logSumExp;
  llvm::ArrayRef<int32_t> labels;
  double scale = 1;
};

/// Runs the loss gradient `kernel` for `microBatch` sequences, laid out as
/// `layout` on `rect`, with values: scale (exp(logits - lse) -
/// onehot(labels)). Returns nothing and sets `error` for a kernel
/// lossGradRefusal refuses, operands of the wrong size, a label outside
/// the vocabulary, or a program that fails to load or run.
std::optional<LossGradRun>
runLossGrad(const wafer::KernelShape &kernel, const wafer::Layout &layout,
            int64_t microBatch, const target::WaferTargetModel &target,
            const wafer::Rect &rect, const LossGradOperands &operands,
            std::string &error);

} // namespace cgpt::sim::mesh

#endif // CGPT_SIM_MESH_LOSSVALUES_H
