//===- Kernels.h - the dataflow kernels, executed tile by tile --*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The arithmetic of every dataflow kernel, executed the way a region of
// cores executes it: one tile of the kernel's tiling space at a time, with
// partial tiles at the edges and reductions accumulated tile by tile in
// f32. A wrong tile size or a wrong edge changes the result, which is what
// the PyTorch reference check relies on. The semantics are the ops'
// descriptions in docs/Dialects/DataflowDialect.md.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_EXEC_KERNELS_H
#define CGPT_EXEC_KERNELS_H

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <initializer_list>
#include <vector>

namespace cgpt::exec {

/// A dense row-major f32 tensor.
struct Tensor {
  llvm::SmallVector<int64_t, 4> shape;
  std::vector<float> data;

  Tensor() = default;
  /// A zero tensor of `shape`.
  explicit Tensor(llvm::ArrayRef<int64_t> shape);
  explicit Tensor(std::initializer_list<int64_t> shape)
      : Tensor(llvm::ArrayRef<int64_t>(shape)) {}

  int64_t numel() const { return static_cast<int64_t>(data.size()); }
  /// The extent of dimension `i`, counted from the end when negative.
  int64_t dim(int i) const {
    return shape[i < 0 ? static_cast<int>(shape.size()) + i : i];
  }
};

/// Token ids or labels: [batch, seq] int32.
struct IdTensor {
  llvm::SmallVector<int64_t, 2> shape;
  std::vector<int32_t> data;
};

//===----------------------------------------------------------------------===//
// Tiling: how kernels walk their tiling space
//===----------------------------------------------------------------------===//

/// Calls `body(begin, end)` for each tile of `extent` cut into `tile`.
template <typename Body>
inline void forEachTile(int64_t extent, int64_t tile, Body body) {
  for (int64_t begin = 0; begin < extent; begin += tile)
    body(begin, std::min(begin + tile, extent));
}

/// Calls `body(rowBegin, rowEnd, colBegin, colEnd)` for every tile of a
/// row space: `rows` rows of `cols` columns, cut per sequence of
/// `rowsPerSequence` rows into `tile` = [rows, columns] tiles.
template <typename Body>
inline void forEachRowTile(int64_t rows, int64_t rowsPerSequence, int64_t cols,
                           llvm::ArrayRef<int64_t> tile, Body body) {
  for (int64_t first = 0; first < rows; first += rowsPerSequence)
    forEachTile(rowsPerSequence, tile[0], [&](int64_t r0, int64_t r1) {
      forEachTile(cols, tile[1], [&](int64_t c0, int64_t c1) {
        body(first + r0, first + r1, c0, c1);
      });
    });
}

/// Sums `value(r, c)` over each row's columns, tile by tile: each column
/// tile's partial sum is added to the row's total.
template <typename ValueFn>
inline void sumRows(int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                    float *totals, ValueFn value) {
  for (int64_t r = r0; r < r1; ++r) {
    float part = 0.0f;
    for (int64_t c = c0; c < c1; ++c)
      part += value(r, c);
    totals[r] += part;
  }
}

/// Rounds to the nearest bfloat16, ties to even, as the wafer stores it.
float roundToBF16(float value);
void roundToBF16(llvm::MutableArrayRef<float> values);

/// `scale * op(lhs) @ op(rhs) (+ bias)` over the last two dimensions;
/// `tile` is the kernel's [M, N, K] tile.
struct MatmulOptions {
  bool transposeLhs = false, transposeRhs = false, reduceBatch = false;
  float scale = 1.0f;
};
Tensor matmul(const Tensor &lhs, const Tensor &rhs, const Tensor *bias,
              const MatmulOptions &options, llvm::ArrayRef<int64_t> tile);

Tensor map(dataflow::MapKind kind, llvm::ArrayRef<const Tensor *> inputs,
           llvm::ArrayRef<int64_t> tile);

Tensor gather(const Tensor &table, const IdTensor &ids, float scale,
              llvm::ArrayRef<int64_t> tile);
Tensor scatterAdd(const IdTensor &ids, const Tensor &grad, int64_t vocab,
                  float scale, llvm::ArrayRef<int64_t> tile);
Tensor addPositions(const Tensor &input, const Tensor &table,
                    llvm::ArrayRef<int64_t> tile);
Tensor positionGrad(const Tensor &grad, int64_t positions,
                    llvm::ArrayRef<int64_t> tile);
Tensor sumBatch(const Tensor &input, llvm::ArrayRef<int64_t> tile);

Tensor rotaryAngles(int64_t seq, int64_t dim, double base);
Tensor rotary(const Tensor &input, const Tensor &angles, bool inverse,
              llvm::ArrayRef<int64_t> tile);

/// [b, s, (h + 2 g) d] to queries [b, h, s, d] and keys and values
/// [b, g, s, d], and back.
void splitHeads(const Tensor &qkv, int64_t heads, int64_t kvHeads,
                int64_t headSize, Tensor &query, Tensor &key, Tensor &value);
Tensor joinHeads(const Tensor &query, const Tensor &key, const Tensor &value);
/// [b, h, s, d] to [b, s, h d], and back.
Tensor mergeHeads(const Tensor &input);
Tensor unmergeHeads(const Tensor &input, int64_t heads);
/// Grouped-query attention: [b, g, s, d] key or value heads to [b, h, s, d],
/// query head i reading group head i / (h / g); and the gradient back, each
/// group head summing its query heads' in head order.
Tensor repeatHeads(const Tensor &input, int64_t heads);
Tensor sumHeadGroups(const Tensor &input, int64_t kvHeads);

struct LayerNormResult {
  Tensor result, mean, rstd;
};
LayerNormResult layerNorm(const Tensor &input, const Tensor &gamma,
                          const Tensor &beta, double epsilon,
                          llvm::ArrayRef<int64_t> tile);
struct LayerNormGrad {
  Tensor input, gamma, beta;
};
LayerNormGrad layerNormGrad(const Tensor &grad, const Tensor &input,
                            const Tensor &mean, const Tensor &rstd,
                            const Tensor &gamma, llvm::ArrayRef<int64_t> tile);

/// RMS norm: x rstd gamma, rstd = 1 / sqrt(mean(x^2) + epsilon) per row;
/// and its gradient, dx = rstd (g - x-hat mean(g x-hat)), g = dy gamma,
/// d-gamma summed over the rows of dy x-hat.
struct RMSNormResult {
  Tensor result, rstd;
};
RMSNormResult rmsNorm(const Tensor &input, const Tensor &gamma, double epsilon,
                      llvm::ArrayRef<int64_t> tile);
struct RMSNormGrad {
  Tensor input, gamma;
};
RMSNormGrad rmsNormGrad(const Tensor &grad, const Tensor &input,
                        const Tensor &rstd, const Tensor &gamma,
                        llvm::ArrayRef<int64_t> tile);

/// The ALiBi slope of each of `heads` heads (Press et al.): 2^(-8 (h+1) / n)
/// for `heads` a power of two n, else those of the power of two below with
/// every other slope of the one above filling the rest.
std::vector<double> alibiSlopes(int64_t heads);
/// Softmax over the last dimension of `scale * scores`, causal if asked;
/// with `alibi`, scores [b, h, s, s] get head h's slope times (key - query).
Tensor softmax(const Tensor &scores, float scale, bool causal,
               llvm::ArrayRef<int64_t> tile, bool alibi = false);
Tensor softmaxGrad(const Tensor &probs, const Tensor &grad, float scale,
                   llvm::ArrayRef<int64_t> tile);

struct CrossEntropyResult {
  Tensor loss, lse;
};
CrossEntropyResult crossEntropy(const Tensor &logits, const IdTensor &labels,
                                double scale, llvm::ArrayRef<int64_t> tile);
Tensor crossEntropyGrad(const Tensor &logits, const Tensor &lse,
                        const IdTensor &labels, float scale,
                        llvm::ArrayRef<int64_t> tile);

} // namespace cgpt::exec

#endif // CGPT_EXEC_KERNELS_H
