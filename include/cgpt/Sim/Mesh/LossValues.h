//===- LossValues.h - the loss gradient with values -------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Runs the loss gradient's mesh program (KernelPrograms.h) with numbers in
// its buffers: each core's SRAM holds its token group's rows of its slice
// of the vocabulary's logits, its tokens' saved log-sum-exp and, per
// token, the place of the label's logit among its rows (or of its spare
// element, when another core holds the label). A kernel run in chunks of
// the vocabulary runs chunk by chunk, each on its slice. The gradient is
// read from every core, so a wrong layout or a wrong exponential gives a
// wrong number.
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
