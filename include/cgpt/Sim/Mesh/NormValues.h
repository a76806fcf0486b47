//===- NormValues.h - norms and their gradients with values -----*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Runs a norm's mesh program (KernelPrograms.h: a layer norm or an RMS
// norm) with numbers in its buffers and wavelets: each core's SRAM holds
// its token group's rows of its feature group and those features' gain
// (and a layer norm's shift); the segment sums each token's statistics
// along its row of cores and multicasts them back, and every core
// normalizes its block in place. The normalized rows are read from every
// core, the per-token statistics from the first core of each segment.
// Every token group runs, so a wrong route, chain or multicast gives a
// wrong number.
//
// A norm's gradient runs alike on the norm's input and output gradient,
// the saved statistics and the gain: the input gradient is read from every
// core, the gain's (and shift's) gradients from what leaves the foot of
// each column of token groups (or, with one row of them, from the cores),
// the sums of separate columns of segments added on the host, as a token
// sum's are.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SIM_MESH_NORMVALUES_H
#define CGPT_SIM_MESH_NORMVALUES_H

#include "cgpt/Sim/Mesh/KernelPrograms.h"

#include "llvm/ADT/ArrayRef.h"

#include <optional>
#include <string>
#include <vector>

namespace cgpt::sim::mesh {

/// Why `kernel`, laid out as `layout` on `rect`, cannot run with values as
/// a norm (another kernel, a layout that does not fit the rectangle);
/// empty when it can.
std::string normRefusal(const wafer::KernelShape &kernel,
                        const wafer::Layout &layout, const wafer::Rect &rect);

/// A norm's results, and the cycles its run on the mesh took.
struct NormRun {
  /// [T, N] row-major; [T] each, `mean` a layer norm's only.
  std::vector<float> result, mean, rstd;
  int64_t cycles = 0;
};

/// Runs the norm `kernel` for `microBatch` sequences, laid out as `layout`
/// on `rect`, with values: `input` is [T, N] row-major f32 (T = microBatch
/// x rows tokens, N = columns features), `gain` [N], and `shift` [N] for a
/// layer norm, empty for an RMS norm. Returns nothing and sets `error` for
/// a kernel normRefusal refuses, operands of the wrong size, or a program
/// that fails to load or run.
std::optional<NormRun>
runNorm(const wafer::KernelShape &kernel, const wafer::Layout &layout,
        int64_t microBatch, const target::WaferTargetModel &target,
        const wafer::Rect &rect, llvm::ArrayRef<float> input,
        llvm::ArrayRef<float> gain, llvm::ArrayRef<float> shift, double epsilon,
        std::string &error);

/// Why `kernel`, laid out as `layout` on `rect`, cannot run with values as
/// a norm's gradient; empty when it can.
std::string normGradRefusal(const wafer::KernelShape &kernel,
                            const wafer::Layout &layout,
                            const wafer::Rect &rect);

/// A norm gradient's results, and the cycles its run on the mesh took.
struct NormGradRun {
  /// [T, N] row-major; [N] each, `shift` a layer norm's only.
  std::vector<float> input, gain, shift;
  int64_t cycles = 0;
};

/// The operands of a norm's gradient: [T, N] row-major f32 `outputGrad`
/// and `input` (T = microBatch x rows tokens, N = columns features), the
/// saved statistics, [T] each (`mean` a layer norm's, empty for an RMS
/// norm), and the gain [N].
struct NormGradOperands {
  llvm::ArrayRef<float> outputGrad, input, mean, rstd, gain;
};

/// Runs the norm gradient `kernel` for `microBatch` sequences, laid out as
/// `layout` on `rect`, with values. Returns nothing and sets `error` for a
/// kernel normGradRefusal refuses, operands of the wrong size, or a
/// program that fails to load or run.
std::optional<NormGradRun>
runNormGrad(const wafer::KernelShape &kernel, const wafer::Layout &layout,
            int64_t microBatch, const target::WaferTargetModel &target,
            const wafer::Rect &rect, const NormGradOperands &operands,
            std::string &error);

} // namespace cgpt::sim::mesh

#endif // CGPT_SIM_MESH_NORMVALUES_H
