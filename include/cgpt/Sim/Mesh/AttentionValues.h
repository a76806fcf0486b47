//===- AttentionValues.h - attention's forward pass with values -*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Runs attention's forward pass on the mesh with numbers in its buffers and
// wavelets, as its region was placed: the (sequence, head) pairs shared out
// among the rectangle's blocks of query groups by key groups
// (wafer::attentionPass), each block's pairs one after another in one
// program (attentionForward in AttentionPrograms.cpp). The keys and values
// stream down a block's columns, the queries along its rows; the segment
// of key groups takes each query's maximum score and sums the
// exponentials and weighted values, so a wrong route, mask or statistic
// gives a wrong number. The outputs are what leaves the east end of each
// query group's segment. The backward pass runs alike on its own program
// (attentionBackward), the probabilities recomputed: the query gradients
// leave east, the key and value gradients, summed down each column of
// query groups, leave south.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SIM_MESH_ATTENTIONVALUES_H
#define CGPT_SIM_MESH_ATTENTIONVALUES_H

#include "cgpt/Sim/Mesh/KernelPrograms.h"

#include "llvm/ADT/ArrayRef.h"

#include <optional>
#include <string>
#include <vector>

namespace cgpt::sim::mesh {

/// Why the attention `kernel`, laid out as `layout` on `rect`, cannot run
/// its forward pass with values (another kind; query groups that do not
/// all fit down the rectangle); empty when it can.
std::string attentionRefusal(const wafer::KernelShape &kernel,
                             const wafer::Layout &layout,
                             const wafer::Rect &rect);

/// The operands of attention's forward pass: `query`, `key` and `value`,
/// each [pairs, S, D] row-major f32 (pairs = microBatch x heads, a
/// sequence's heads one after another; S the sequence, D the head's size),
/// and the softmax's scale, mask and biases.
struct AttentionOperands {
  llvm::ArrayRef<float> query, key, value;
  AttentionSoftmax softmax;
};

/// Attention's output, and the cycles of its run on the mesh.
struct AttentionRun {
  /// [pairs, S, D] row-major.
  std::vector<float> output;
  /// The blocks run side by side: the cycles of the slowest, and the
  /// blocks simulated.
  int64_t cycles = 0, runs = 0;
  /// The queries a core took at once, as many as its buffers hold.
  int64_t queriesAtOnce = 0;
};

/// Runs the forward pass of attention `kernel` (its region's shape: rows
/// heads x S, columns S, contracted D) for `microBatch` sequences, laid out
/// as `layout` on `rect`, with values. Returns nothing and sets `error`
/// for a kernel attentionRefusal refuses, operands of the wrong size, or a
/// program that fails to load or run.
std::optional<AttentionRun>
runAttention(const wafer::KernelShape &kernel, const wafer::Layout &layout,
             int64_t microBatch, const target::WaferTargetModel &target,
             const wafer::Rect &rect, const AttentionOperands &operands,
             std::string &error);

/// The operands of attention's backward pass: those of its forward pass
/// and the output's gradient, [pairs, S, D] row-major f32.
struct AttentionGradOperands {
  llvm::ArrayRef<float> query, key, value, outputGrad;
  AttentionSoftmax softmax;
};

/// The gradients of attention's queries, keys and values, and the cycles
/// of their run on the mesh.
struct AttentionGradRun {
  /// [pairs, S, D] row-major each.
  std::vector<float> query, key, value;
  /// The blocks run side by side: the cycles of the slowest, and the
  /// blocks simulated.
  int64_t cycles = 0, runs = 0;
  /// The queries a core took at once, as many as its buffers hold.
  int64_t queriesAtOnce = 0;
};

/// Runs the backward pass of attention `kernel` as runAttention runs its
/// forward pass (the probabilities recomputed on the cores), returning
/// the gradients; refuses and fails alike.
std::optional<AttentionGradRun>
runAttentionGrad(const wafer::KernelShape &kernel, const wafer::Layout &layout,
                 int64_t microBatch, const target::WaferTargetModel &target,
                 const wafer::Rect &rect, const AttentionGradOperands &operands,
                 std::string &error);

} // namespace cgpt::sim::mesh

#endif // CGPT_SIM_MESH_ATTENTIONVALUES_H
