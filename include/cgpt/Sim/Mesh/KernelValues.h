//===- KernelValues.h - a placed weight kernel run with real values -*- C++
//-*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Runs a weight kernel's mesh program (KernelPrograms.h) with numbers in
// its wavelets and buffers: each core's SRAM holds its share of the
// operand that stays, the other streams in through the program's
// injectors in the order the program consumes it, and the result is read
// from what leaves the chains (or, without a chain, from the cores' sums;
// a resident weight's gradient, from the blocks its cores keep).
// Every token group of the layout runs, so the result is the whole
// product: a wrong route, chain, block or cursor gives a wrong number,
// which is what the tests against a plain product check. A weight
// gradient's chain runs through every column of segments, so what leaves
// its end is the whole sum (docs/runtime.md).
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SIM_MESH_KERNELVALUES_H
#define CGPT_SIM_MESH_KERNELVALUES_H

#include "cgpt/Sim/Mesh/KernelPrograms.h"

#include "llvm/ADT/ArrayRef.h"

#include <optional>
#include <string>
#include <vector>

namespace cgpt::sim::mesh {

/// Why `kernel`, laid out as `layout` on `rect`, cannot run with values
/// (another kind, a layout that does not fit the rectangle); empty when it
/// can.
std::string weightKernelRefusal(const wafer::KernelShape &kernel,
                                const wafer::Layout &layout,
                                const wafer::Rect &rect);

/// Why the router `kernel` (KernelShape::choices), laid out as `layout`,
/// cannot make its choice on the mesh with values: resident weights or
/// chunks (no core holds a token's every logit), or logits that round to
/// 16 bits (the engine's memory keeps f32); empty when it can.
std::string routerChoiceRefusal(const wafer::KernelShape &kernel,
                                const wafer::Layout &layout);

/// Whether `kernel`, laid out as `layout`, runs its epilogue (a scale, a
/// bias or maps) on its cores: where its sums are reduce-scattered
/// (wafer::reducesScattered).
bool epilogueRuns(const wafer::KernelShape &kernel,
                  const wafer::Layout &layout);

/// Why `kernel`, run in vocabulary chunks (wafer::vocabularyChunk), cannot
/// run its epilogue chunk by chunk, or "": chunks of its outputs or of its
/// tokens each hold whole sums, chunks of its features do not.
std::string chunkedEpilogueRefusal(const wafer::KernelShape &kernel);

/// A router's choice as the chain's last cores made it, row-major by
/// token: the probabilities [T, E], the chosen experts' weights and their
/// indices [T, k], largest first.
struct RouterChoice {
  std::vector<float> probabilities, weights, experts;
};

/// The operands of a weight matmul's epilogue (KernelShape::bias and
/// epilogue), row-major f32: the bias [N] (empty without one), and for
/// each map of the epilogue its other input [T, N] (empty for a map of
/// one input).
struct EpilogueOperands {
  llvm::ArrayRef<float> bias;
  std::vector<llvm::ArrayRef<float>> held;
};

/// A weight kernel's result, and the cycles its runs on the mesh took.
struct WeightKernelRun {
  /// The result; for a weight matmul with an epilogue, the product scaled
  /// and biased, empty where the first map wrote its result in its place.
  std::vector<float> values;
  /// Each map of the epilogue's result [T, N], where the cores still hold
  /// it: the last map's, and one whose successor keeps it (else empty).
  std::vector<std::vector<float>> mapped;
  /// A router's choice, where it ran on the mesh (wafer::choosesOnChain).
  std::optional<RouterChoice> choice;
  int64_t cycles = 0;
  /// Runs of the program: one, or one a chunk.
  int64_t runs = 0;
};

/// Runs the weight kernel `kernel` (weights streamed from the north or
/// resident) for `microBatch` sequences, laid out as `layout` on `rect`,
/// with values; all operands and the result are row-major f32.
///  - weight_matmul: `held` is the input X [T, K] (T = microBatch x rows
///    tokens, K = contracted), `streamed` the weight W [K, N]; returns
///    Y = X W, [T, N].
///  - weight_grad: `held` is the input X [T, R] (T = microBatch x
///    contracted, R = rows), `streamed` the output gradient dY [T, N];
///    returns dW = X^T dY, [R, N].
/// A kernel run in chunks runs chunk by chunk, each on its slices of the
/// operands; one run again (`repeats`) computes the same values, once. A
/// router's product (KernelShape::choices) also returns its choice where
/// the program makes it and the engine can hold its values (not where its
/// logits round to 16 bits: the engine's memory keeps f32).
/// A weight matmul whose sums are reduce-scattered (wafer::reducesScattered)
/// runs its epilogue on its cores, the bias (streamed as one more row of
/// the weight, against inputs of ones) and the maps' other inputs
/// `epilogue`'s, chunk by chunk on their slices when it runs in chunks, and
/// returns each map's result it still holds.
/// Returns nothing and sets `error` for a kernel weightKernelRefusal
/// refuses, operands of the wrong size, an epilogue elsewhere or in chunks
/// chunkedEpilogueRefusal refuses, or a program that fails to load or
/// run.
std::optional<WeightKernelRun>
runWeightKernel(const wafer::KernelShape &kernel, const wafer::Layout &layout,
                int64_t microBatch, const target::WaferTargetModel &target,
                const wafer::Rect &rect, llvm::ArrayRef<float> held,
                llvm::ArrayRef<float> streamed, std::string &error,
                const EpilogueOperands &epilogue = {});

} // namespace cgpt::sim::mesh

#endif // CGPT_SIM_MESH_KERNELVALUES_H
