//===- Kernels.cpp - the dataflow kernels, executed tile by tile ----------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Every kernel walks its tiling space the way dataflow-tile cut it: per
// sequence, one tile at a time, the last tile of a dimension partial when
// the tile does not divide it. A reduction that crosses tiles sums each
// tile's partial result first and then adds the partials, in tile order,
// as the cores holding the tiles would.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Exec/Kernels.h"

#include "mlir/IR/BuiltinTypeInterfaces.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace cgpt;
using namespace cgpt::exec;
using llvm::ArrayRef;

Tensor::Tensor(ArrayRef<int64_t> shape)
    : shape(shape.begin(), shape.end()),
      data(mlir::ShapedType::getNumElements(shape), 0.0f) {}

float exec::roundToBF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7f800000u) == 0x7f800000u) // Inf and NaN stay as they are.
    return value;
  bits += 0x7fffu + ((bits >> 16) & 1u);
  bits &= 0xffff0000u;
  std::memcpy(&value, &bits, sizeof bits);
  return value;
}

void exec::roundToBF16(llvm::MutableArrayRef<float> values) {
  for (float &value : values)
    value = roundToBF16(value);
}

//===----------------------------------------------------------------------===//
// Matrix multiply
//===----------------------------------------------------------------------===//

namespace {
/// One operand of a product as a logical matrix: element (r, c) at
/// `data[rowOffset[r] + colOffset[c]]`. The tables fold batch dimensions
/// into rows or columns without a division per element.
struct MatrixView {
  const float *data;
  std::vector<int64_t> rowOffset, colOffset;
};

/// Offsets of the `folded * extent` logical indices that run over `folded`
/// copies of `extent` elements `stride` apart, the copies `copyStride`
/// apart.
std::vector<int64_t> foldedOffsets(int64_t folded, int64_t extent,
                                   int64_t stride, int64_t copyStride) {
  std::vector<int64_t> offsets(folded * extent);
  for (int64_t copy = 0; copy < folded; ++copy)
    for (int64_t i = 0; i < extent; ++i)
      offsets[copy * extent + i] = copy * copyStride + i * stride;
  return offsets;
}

/// Four floats that the compiler keeps in one SIMD register.
typedef float Vec4 __attribute__((vector_size(16)));

Vec4 load4(const float *p) {
  Vec4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

/// Adds the [rows, cols] product of the [rows, inner] block at `a` (rows
/// `lda` apart) and the [inner, cols] block at `b` (rows `ldb` apart) to
/// `part` ([rows, cols], dense). Blocks of 4 rows x 8 columns stay in
/// registers across the inner loop. Every output sums its products in
/// inner order from zero, blocked or not, so the blocking does not change
/// the result.
void multiplyTile(const float *__restrict a, int64_t lda,
                  const float *__restrict b, int64_t ldb,
                  float *__restrict part, int64_t rows, int64_t inner,
                  int64_t cols) {
  constexpr int64_t kRows = 4, kCols = 8;
  int64_t blockedRows = rows - rows % kRows, blockedCols = cols - cols % kCols;
  for (int64_t i = 0; i < blockedRows; i += kRows)
    for (int64_t j = 0; j < blockedCols; j += kCols) {
      Vec4 acc[kRows][2] = {};
      for (int64_t k = 0; k < inner; ++k) {
        Vec4 low = load4(b + k * ldb + j), high = load4(b + k * ldb + j + 4);
        for (int64_t r = 0; r < kRows; ++r) {
          float scale = a[(i + r) * lda + k];
          acc[r][0] += scale * low;
          acc[r][1] += scale * high;
        }
      }
      for (int64_t r = 0; r < kRows; ++r)
        for (int64_t c = 0; c < kCols; ++c)
          part[(i + r) * cols + j + c] += acc[r][c / 4][c % 4];
    }
  // The edges: rows below the blocks, and columns right of them.
  for (int64_t i = 0; i < rows; ++i) {
    int64_t first = i < blockedRows ? blockedCols : 0;
    for (int64_t k = 0; k < inner; ++k)
      for (int64_t c = first; c < cols; ++c)
        part[i * cols + c] += a[i * lda + k] * b[k * ldb + c];
  }
}

/// A logical matrix as dense row-major data: `view` itself when its
/// elements already lie that way, else a copy in `scratch`.
const float *denseMatrix(const MatrixView &view, std::vector<float> &scratch) {
  int64_t rows = view.rowOffset.size(), cols = view.colOffset.size();
  bool dense = true;
  for (int64_t c = 0; c < cols && dense; ++c)
    dense = view.colOffset[c] == c;
  for (int64_t r = 0; r < rows && dense; ++r)
    dense = view.rowOffset[r] == r * cols;
  if (dense)
    return view.data;
  scratch.resize(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      scratch[r * cols + c] = view.data[view.rowOffset[r] + view.colOffset[c]];
  return scratch.data();
}

/// `out[m, n] = scale * sum_k a(m, k) b(k, n) + bias[n]` for an M x N x K
/// product, tile by tile: each K tile's partial product is added to the
/// output tile's sum in K order, as the partial sums of the cores holding
/// the K tiles would be.
void multiplyTiled(int64_t m, int64_t n, int64_t k, const MatrixView &aView,
                   const MatrixView &bView, const float *bias, float scale,
                   float *out, ArrayRef<int64_t> tile) {
  std::vector<float> aScratch, bScratch;
  const float *a = denseMatrix(aView, aScratch);
  const float *b = denseMatrix(bView, bScratch);
  std::vector<float> acc(tile[0] * tile[1]), part(tile[0] * tile[1]);
  forEachTile(m, tile[0], [&](int64_t m0, int64_t m1) {
    forEachTile(n, tile[1], [&](int64_t n0, int64_t n1) {
      int64_t rows = m1 - m0, cols = n1 - n0;
      std::fill(acc.begin(), acc.begin() + rows * cols, 0.0f);
      forEachTile(k, tile[2], [&](int64_t k0, int64_t k1) {
        std::fill(part.begin(), part.begin() + rows * cols, 0.0f);
        multiplyTile(a + m0 * k + k0, k, b + k0 * n + n0, n, part.data(), rows,
                     k1 - k0, cols);
        for (int64_t e = 0; e < rows * cols; ++e)
          acc[e] += part[e];
      });
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
          out[(m0 + i) * n + n0 + j] =
              scale * acc[i * cols + j] + (bias ? bias[n0 + j] : 0.0f);
    });
  });
}
} // namespace

Tensor exec::matmul(const Tensor &lhs, const Tensor &rhs, const Tensor *bias,
                    const MatmulOptions &options, ArrayRef<int64_t> tile) {
  int64_t lhsRows = lhs.dim(-2), lhsCols = lhs.dim(-1);
  int64_t rhsRows = rhs.dim(-2), rhsCols = rhs.dim(-1);
  int64_t m = options.transposeLhs ? lhsCols : lhsRows;
  int64_t k = options.transposeLhs ? lhsRows : lhsCols;
  int64_t n = options.transposeRhs ? rhsRows : rhsCols;
  int64_t batch = lhs.numel() / (lhsRows * lhsCols);
  bool broadcast = rhs.shape.size() == 2;
  // Strides of op(lhs) = [m, k] and op(rhs) = [k, n] within one matrix.
  int64_t aRow = options.transposeLhs ? 1 : lhsCols,
          aCol = options.transposeLhs ? lhsCols : 1;
  int64_t bRow = options.transposeRhs ? 1 : rhsCols,
          bCol = options.transposeRhs ? rhsCols : 1;
  int64_t aMatrix = lhsRows * lhsCols, bMatrix = rhsRows * rhsCols;
  const float *biasData = bias ? bias->data.data() : nullptr;

  if (options.reduceBatch) {
    // The batch folds into K: one [M, N] product over batch * K.
    MatrixView a{lhs.data.data(), foldedOffsets(1, m, aRow, 0),
                 foldedOffsets(batch, k, aCol, aMatrix)};
    MatrixView b{rhs.data.data(), foldedOffsets(batch, k, bRow, bMatrix),
                 foldedOffsets(1, n, bCol, 0)};
    Tensor result({m, n});
    multiplyTiled(m, n, batch * k, a, b, biasData, options.scale,
                  result.data.data(), tile);
    return result;
  }

  llvm::SmallVector<int64_t, 4> shape(lhs.shape.begin(), lhs.shape.end() - 2);
  shape.append({m, n});
  Tensor result(shape);
  MatrixView b{rhs.data.data(), foldedOffsets(1, k, bRow, 0),
               foldedOffsets(1, n, bCol, 0)};
  if (broadcast) {
    // A weight shared by the batch: the batch folds into M.
    MatrixView a{lhs.data.data(), foldedOffsets(batch, m, aRow, aMatrix),
                 foldedOffsets(1, k, aCol, 0)};
    multiplyTiled(batch * m, n, k, a, b, biasData, options.scale,
                  result.data.data(), tile);
    return result;
  }
  MatrixView a{lhs.data.data(), foldedOffsets(1, m, aRow, 0),
               foldedOffsets(1, k, aCol, 0)};
  for (int64_t index = 0; index < batch; ++index) {
    a.data = lhs.data.data() + index * aMatrix;
    b.data = rhs.data.data() + index * bMatrix;
    multiplyTiled(m, n, k, a, b, biasData, options.scale,
                  result.data.data() + index * m * n, tile);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Elementwise maps
//===----------------------------------------------------------------------===//

static double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / M_SQRT2)); }
static double geluDerivative(double x) {
  double cdf = 0.5 * (1.0 + std::erf(x / M_SQRT2));
  double pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
  return cdf + x * pdf;
}
static constexpr double kTanhGeluScale = 0.7978845608028654; // sqrt(2 / pi)
static double geluTanh(double x) {
  return 0.5 * x *
         (1.0 + std::tanh(kTanhGeluScale * (x + 0.044715 * x * x * x)));
}
static double geluTanhDerivative(double x) {
  double inner = kTanhGeluScale * (x + 0.044715 * x * x * x);
  double t = std::tanh(inner);
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * kTanhGeluScale *
                               (1.0 + 3.0 * 0.044715 * x * x);
}
static double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

static float applyMap(dataflow::MapKind kind, float x, float y) {
  using dataflow::MapKind;
  switch (kind) {
  case MapKind::add:
    return x + y;
  case MapKind::mul:
    return x * y;
  case MapKind::gelu:
    return static_cast<float>(gelu(x));
  case MapKind::gelu_tanh:
    return static_cast<float>(geluTanh(x));
  case MapKind::relu:
    return x > 0.0f ? x : 0.0f;
  case MapKind::silu:
    return static_cast<float>(x * sigmoid(x));
  case MapKind::gelu_grad:
    return static_cast<float>(y * geluDerivative(x));
  case MapKind::gelu_tanh_grad:
    return static_cast<float>(y * geluTanhDerivative(x));
  case MapKind::relu_grad:
    return x > 0.0f ? y : 0.0f;
  case MapKind::silu_grad: {
    double s = sigmoid(x);
    return static_cast<float>(y * s * (1.0 + x * (1.0 - s)));
  }
  }
  return 0.0f;
}

Tensor exec::map(dataflow::MapKind kind, ArrayRef<const Tensor *> inputs,
                 ArrayRef<int64_t> tile) {
  const Tensor &x = *inputs[0];
  const float *y = inputs.size() > 1 ? inputs[1]->data.data() : nullptr;
  Tensor result(x.shape);
  int64_t cols = x.dim(-1), rows = x.numel() / cols;
  forEachRowTile(rows, rows / x.dim(0), cols, tile,
                 [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                   for (int64_t r = r0; r < r1; ++r)
                     for (int64_t c = c0; c < c1; ++c) {
                       int64_t e = r * cols + c;
                       result.data[e] =
                           applyMap(kind, x.data[e], y ? y[e] : 0.0f);
                     }
                 });
  return result;
}

//===----------------------------------------------------------------------===//
// Embeddings, positions and batch sums
//===----------------------------------------------------------------------===//

Tensor exec::gather(const Tensor &table, const IdTensor &ids, float scale,
                    ArrayRef<int64_t> tile) {
  int64_t width = table.dim(1), seq = ids.shape[1];
  Tensor result({ids.shape[0], seq, width});
  forEachRowTile(ids.shape[0] * seq, seq, width, tile,
                 [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                   for (int64_t r = r0; r < r1; ++r) {
                     const float *row = &table.data[ids.data[r] * width];
                     for (int64_t c = c0; c < c1; ++c)
                       result.data[r * width + c] = scale * row[c];
                   }
                 });
  return result;
}

Tensor exec::scatterAdd(const IdTensor &ids, const Tensor &grad, int64_t vocab,
                        float scale, ArrayRef<int64_t> tile) {
  int64_t width = grad.dim(-1), seq = ids.shape[1];
  Tensor result({vocab, width});
  forEachRowTile(ids.shape[0] * seq, seq, width, tile,
                 [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                   for (int64_t r = r0; r < r1; ++r) {
                     float *row = &result.data[ids.data[r] * width];
                     for (int64_t c = c0; c < c1; ++c)
                       row[c] += scale * grad.data[r * width + c];
                   }
                 });
  return result;
}

Tensor exec::addPositions(const Tensor &input, const Tensor &table,
                          ArrayRef<int64_t> tile) {
  int64_t seq = input.dim(1), width = input.dim(2);
  Tensor result(input.shape);
  forEachRowTile(input.dim(0) * seq, seq, width, tile,
                 [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                   for (int64_t r = r0; r < r1; ++r)
                     for (int64_t c = c0; c < c1; ++c)
                       result.data[r * width + c] =
                           input.data[r * width + c] +
                           table.data[(r % seq) * width + c];
                 });
  return result;
}

Tensor exec::positionGrad(const Tensor &grad, int64_t positions,
                          ArrayRef<int64_t> tile) {
  int64_t seq = grad.dim(1), width = grad.dim(2);
  Tensor result({positions, width});
  forEachRowTile(grad.dim(0) * seq, seq, width, tile,
                 [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                   for (int64_t r = r0; r < r1; ++r)
                     for (int64_t c = c0; c < c1; ++c)
                       result.data[(r % seq) * width + c] +=
                           grad.data[r * width + c];
                 });
  return result;
}

Tensor exec::sumBatch(const Tensor &input, ArrayRef<int64_t> tile) {
  int64_t cols = input.dim(-1), rows = input.numel() / cols;
  Tensor result({cols});
  std::vector<float> part(cols);
  forEachRowTile(rows, rows / input.dim(0), cols, tile,
                 [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                   std::fill(part.begin() + c0, part.begin() + c1, 0.0f);
                   for (int64_t r = r0; r < r1; ++r)
                     for (int64_t c = c0; c < c1; ++c)
                       part[c] += input.data[r * cols + c];
                   for (int64_t c = c0; c < c1; ++c)
                     result.data[c] += part[c];
                 });
  return result;
}

//===----------------------------------------------------------------------===//
// Rotary position embedding
//===----------------------------------------------------------------------===//

Tensor exec::rotaryAngles(int64_t seq, int64_t dim, double base) {
  int64_t pairs = dim / 2;
  Tensor result({seq, pairs, 2});
  for (int64_t s = 0; s < seq; ++s)
    for (int64_t i = 0; i < pairs; ++i) {
      double angle = s * std::pow(base, -2.0 * i / dim);
      result.data[(s * pairs + i) * 2] = static_cast<float>(std::cos(angle));
      result.data[(s * pairs + i) * 2 + 1] =
          static_cast<float>(std::sin(angle));
    }
  return result;
}

Tensor exec::rotary(const Tensor &input, const Tensor &angles, bool inverse,
                    ArrayRef<int64_t> tile) {
  int64_t seq = input.dim(-2), width = input.dim(-1), pairs = angles.dim(1);
  int64_t rows = input.numel() / width;
  Tensor result = input;
  float sign = inverse ? -1.0f : 1.0f;
  forEachRowTile(rows, rows / input.dim(0), width, tile,
                 [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                   for (int64_t r = r0; r < r1; ++r) {
                     const float *angle = &angles.data[(r % seq) * pairs * 2];
                     // A pair that straddles two column tiles is rotated
                     // by both, from the input, to the same values.
                     for (int64_t c = c0 & ~int64_t(1); c < c1 && c / 2 < pairs;
                          c += 2) {
                       float cos = angle[c], sin = sign * angle[c + 1];
                       float x0 = input.data[r * width + c];
                       float x1 = input.data[r * width + c + 1];
                       result.data[r * width + c] = x0 * cos - x1 * sin;
                       result.data[r * width + c + 1] = x0 * sin + x1 * cos;
                     }
                   }
                 });
  return result;
}

//===----------------------------------------------------------------------===//
// Heads
//===----------------------------------------------------------------------===//

/// Calls `copy(part, headIndex, rowIndex)` for every head row of the
/// queries (part 0), keys (1) and values (2), with the index of that row in
/// its head tensor [b, n, s, d] and in the fused rows [b, s, (h + 2 g) d]:
/// the walk splitting and joining share.
template <typename Copy>
static void forEachHeadRow(const int64_t (&counts)[3], int64_t batch,
                           int64_t seq, int64_t headSize, Copy copy) {
  int64_t rowWidth = (counts[0] + counts[1] + counts[2]) * headSize;
  for (int64_t p = 0, offset = 0; p < 3; offset += counts[p] * headSize, ++p)
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < counts[p]; ++h)
        for (int64_t s = 0; s < seq; ++s)
          copy(p, ((b * counts[p] + h) * seq + s) * headSize,
               (b * seq + s) * rowWidth + offset + h * headSize);
}

void exec::splitHeads(const Tensor &qkv, int64_t heads, int64_t kvHeads,
                      int64_t headSize, Tensor &query, Tensor &key,
                      Tensor &value) {
  int64_t batch = qkv.dim(0), seq = qkv.dim(1);
  query = Tensor({batch, heads, seq, headSize});
  key = Tensor({batch, kvHeads, seq, headSize});
  value = Tensor({batch, kvHeads, seq, headSize});
  Tensor *parts[] = {&query, &key, &value};
  forEachHeadRow({heads, kvHeads, kvHeads}, batch, seq, headSize,
                 [&](int64_t p, int64_t head, int64_t row) {
                   std::memcpy(&parts[p]->data[head], &qkv.data[row],
                               headSize * sizeof(float));
                 });
}

Tensor exec::joinHeads(const Tensor &query, const Tensor &key,
                       const Tensor &value) {
  int64_t batch = query.dim(0), heads = query.dim(1), seq = query.dim(2),
          headSize = query.dim(3), kvHeads = key.dim(1);
  Tensor result({batch, seq, (heads + 2 * kvHeads) * headSize});
  const Tensor *parts[] = {&query, &key, &value};
  forEachHeadRow({heads, kvHeads, kvHeads}, batch, seq, headSize,
                 [&](int64_t p, int64_t head, int64_t row) {
                   std::memcpy(&result.data[row], &parts[p]->data[head],
                               headSize * sizeof(float));
                 });
  return result;
}

Tensor exec::mergeHeads(const Tensor &input) {
  int64_t batch = input.dim(0), heads = input.dim(1), seq = input.dim(2),
          headSize = input.dim(3);
  Tensor result({batch, seq, heads * headSize});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t s = 0; s < seq; ++s)
        std::memcpy(&result.data[((b * seq + s) * heads + h) * headSize],
                    &input.data[((b * heads + h) * seq + s) * headSize],
                    headSize * sizeof(float));
  return result;
}

Tensor exec::unmergeHeads(const Tensor &input, int64_t heads) {
  int64_t batch = input.dim(0), seq = input.dim(1),
          headSize = input.dim(2) / heads;
  Tensor result({batch, heads, seq, headSize});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t s = 0; s < seq; ++s)
        std::memcpy(&result.data[((b * heads + h) * seq + s) * headSize],
                    &input.data[((b * seq + s) * heads + h) * headSize],
                    headSize * sizeof(float));
  return result;
}

Tensor exec::repeatHeads(const Tensor &input, int64_t heads) {
  int64_t batch = input.dim(0), kvHeads = input.dim(1);
  int64_t headElements = input.dim(2) * input.dim(3), group = heads / kvHeads;
  Tensor result({batch, heads, input.dim(2), input.dim(3)});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      std::copy_n(&input.data[(b * kvHeads + h / group) * headElements],
                  headElements, &result.data[(b * heads + h) * headElements]);
  return result;
}

Tensor exec::sumHeadGroups(const Tensor &input, int64_t kvHeads) {
  int64_t batch = input.dim(0), heads = input.dim(1);
  int64_t headElements = input.dim(2) * input.dim(3), group = heads / kvHeads;
  Tensor result({batch, kvHeads, input.dim(2), input.dim(3)});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      const float *from = &input.data[(b * heads + h) * headElements];
      float *to = &result.data[(b * kvHeads + h / group) * headElements];
      for (int64_t i = 0; i < headElements; ++i)
        to[i] += from[i];
    }
  return result;
}

//===----------------------------------------------------------------------===//
// Layer norm
//===----------------------------------------------------------------------===//

LayerNormResult exec::layerNorm(const Tensor &input, const Tensor &gamma,
                                const Tensor &beta, double epsilon,
                                ArrayRef<int64_t> tile) {
  int64_t cols = input.dim(-1), rows = input.numel() / cols;
  int64_t rowsPerSequence = rows / input.dim(0);
  llvm::SmallVector<int64_t, 4> rowShape(input.shape.begin(),
                                         input.shape.end() - 1);
  LayerNormResult out{Tensor(input.shape), Tensor(rowShape), Tensor(rowShape)};
  const float *x = input.data.data();
  float *mean = out.mean.data.data(), *rstd = out.rstd.data.data();
  float inverseCols = 1.0f / static_cast<float>(cols);
  // Three sweeps over the tiles: the mean, the variance about it, then
  // the normalized rows.
  forEachRowTile(rows, rowsPerSequence, cols, tile,
                 [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                   sumRows(r0, r1, c0, c1, mean, [&](int64_t r, int64_t c) {
                     return x[r * cols + c];
                   });
                 });
  for (int64_t r = 0; r < rows; ++r)
    mean[r] *= inverseCols;
  forEachRowTile(rows, rowsPerSequence, cols, tile,
                 [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                   sumRows(r0, r1, c0, c1, rstd, [&](int64_t r, int64_t c) {
                     float d = x[r * cols + c] - mean[r];
                     return d * d;
                   });
                 });
  for (int64_t r = 0; r < rows; ++r)
    rstd[r] =
        1.0f / std::sqrt(rstd[r] * inverseCols + static_cast<float>(epsilon));
  forEachRowTile(rows, rowsPerSequence, cols, tile,
                 [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                   for (int64_t r = r0; r < r1; ++r)
                     for (int64_t c = c0; c < c1; ++c)
                       out.result.data[r * cols + c] =
                           (x[r * cols + c] - mean[r]) * rstd[r] *
                               gamma.data[c] +
                           beta.data[c];
                 });
  return out;
}

LayerNormGrad exec::layerNormGrad(const Tensor &grad, const Tensor &input,
                                  const Tensor &mean, const Tensor &rstd,
                                  const Tensor &gamma, ArrayRef<int64_t> tile) {
  int64_t cols = input.dim(-1), rows = input.numel() / cols;
  int64_t rowsPerSequence = rows / input.dim(0);
  LayerNormGrad out{Tensor(input.shape), Tensor({cols}), Tensor({cols})};
  const float *x = input.data.data(), *dy = grad.data.data();
  auto xhat = [&](int64_t r, int64_t c) {
    return (x[r * cols + c] - mean.data[r]) * rstd.data[r];
  };
  // Row sums of g = dy * gamma and of g * xhat, then dx; dgamma and dbeta
  // sum over rows, one partial per row tile.
  std::vector<float> sumG(rows), sumGX(rows), partGamma(cols), partBeta(cols);
  forEachRowTile(
      rows, rowsPerSequence, cols, tile,
      [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
        sumRows(r0, r1, c0, c1, sumG.data(), [&](int64_t r, int64_t c) {
          return dy[r * cols + c] * gamma.data[c];
        });
        sumRows(r0, r1, c0, c1, sumGX.data(), [&](int64_t r, int64_t c) {
          return dy[r * cols + c] * gamma.data[c] * xhat(r, c);
        });
      });
  float inverseCols = 1.0f / static_cast<float>(cols);
  forEachRowTile(
      rows, rowsPerSequence, cols, tile,
      [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
        std::fill(partGamma.begin() + c0, partGamma.begin() + c1, 0.0f);
        std::fill(partBeta.begin() + c0, partBeta.begin() + c1, 0.0f);
        for (int64_t r = r0; r < r1; ++r) {
          float meanG = sumG[r] * inverseCols, meanGX = sumGX[r] * inverseCols;
          for (int64_t c = c0; c < c1; ++c) {
            float g = dy[r * cols + c] * gamma.data[c], xh = xhat(r, c);
            out.input.data[r * cols + c] =
                rstd.data[r] * (g - meanG - xh * meanGX);
            partGamma[c] += dy[r * cols + c] * xh;
            partBeta[c] += dy[r * cols + c];
          }
        }
        for (int64_t c = c0; c < c1; ++c) {
          out.gamma.data[c] += partGamma[c];
          out.beta.data[c] += partBeta[c];
        }
      });
  return out;
}

//===----------------------------------------------------------------------===//
// RMS norm
//===----------------------------------------------------------------------===//

RMSNormResult exec::rmsNorm(const Tensor &input, const Tensor &gamma,
                            double epsilon, ArrayRef<int64_t> tile) {
  int64_t cols = input.dim(-1), rows = input.numel() / cols;
  int64_t rowsPerSequence = rows / input.dim(0);
  RMSNormResult out{Tensor(input.shape),
                    Tensor(ArrayRef<int64_t>(input.shape).drop_back())};
  const float *x = input.data.data();
  // Two sweeps over the tiles: the sums of squares, then the scaled rows.
  forEachRowTile(rows, rowsPerSequence, cols, tile,
                 [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                   sumRows(r0, r1, c0, c1, out.rstd.data.data(),
                           [&](int64_t r, int64_t c) {
                             return x[r * cols + c] * x[r * cols + c];
                           });
                 });
  float inverseCols = 1.0f / static_cast<float>(cols);
  for (float &value : out.rstd.data)
    value = 1.0f / std::sqrt(value * inverseCols + static_cast<float>(epsilon));
  forEachRowTile(rows, rowsPerSequence, cols, tile,
                 [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                   for (int64_t r = r0; r < r1; ++r)
                     for (int64_t c = c0; c < c1; ++c)
                       out.result.data[r * cols + c] =
                           x[r * cols + c] * out.rstd.data[r] * gamma.data[c];
                 });
  return out;
}

RMSNormGrad exec::rmsNormGrad(const Tensor &grad, const Tensor &input,
                              const Tensor &rstd, const Tensor &gamma,
                              ArrayRef<int64_t> tile) {
  int64_t cols = input.dim(-1), rows = input.numel() / cols;
  int64_t rowsPerSequence = rows / input.dim(0);
  RMSNormGrad out{Tensor(input.shape), Tensor({cols})};
  const float *x = input.data.data(), *dy = grad.data.data();
  auto xhat = [&](int64_t r, int64_t c) {
    return x[r * cols + c] * rstd.data[r];
  };
  // Row sums of g * xhat, then dx; dgamma sums over rows, one partial per
  // row tile.
  std::vector<float> sumGX(rows), partGamma(cols);
  forEachRowTile(rows, rowsPerSequence, cols, tile,
                 [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                   sumRows(
                       r0, r1, c0, c1, sumGX.data(), [&](int64_t r, int64_t c) {
                         return dy[r * cols + c] * gamma.data[c] * xhat(r, c);
                       });
                 });
  float inverseCols = 1.0f / static_cast<float>(cols);
  forEachRowTile(
      rows, rowsPerSequence, cols, tile,
      [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
        std::fill(partGamma.begin() + c0, partGamma.begin() + c1, 0.0f);
        for (int64_t r = r0; r < r1; ++r) {
          float meanGX = sumGX[r] * inverseCols;
          for (int64_t c = c0; c < c1; ++c) {
            float g = dy[r * cols + c] * gamma.data[c], xh = xhat(r, c);
            out.input.data[r * cols + c] = rstd.data[r] * (g - xh * meanGX);
            partGamma[c] += dy[r * cols + c] * xh;
          }
        }
        for (int64_t c = c0; c < c1; ++c)
          out.gamma.data[c] += partGamma[c];
      });
  return out;
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

std::vector<double> exec::alibiSlopes(int64_t heads) {
  int64_t power = 1;
  while (power * 2 <= heads)
    power *= 2;
  std::vector<double> slopes;
  for (int64_t h = 0; h < power; ++h)
    slopes.push_back(std::pow(2.0, -8.0 * static_cast<double>(h + 1) /
                                       static_cast<double>(power)));
  // The rest: every other slope of twice the power of two.
  for (int64_t h = 0; static_cast<int64_t>(slopes.size()) < heads; ++h)
    slopes.push_back(std::pow(2.0, -8.0 * static_cast<double>(2 * h + 1) /
                                       static_cast<double>(2 * power)));
  return slopes;
}

Tensor exec::softmax(const Tensor &scores, float scale, bool causal,
                     ArrayRef<int64_t> tile, bool alibi) {
  int64_t cols = scores.dim(-1), seq = scores.dim(-2);
  int64_t rows = scores.numel() / cols;
  Tensor result(scores.shape);
  const float *x = scores.data.data();
  std::vector<double> slopes =
      alibi ? alibiSlopes(scores.dim(1)) : std::vector<double>();
  // The scaled score, plus head h's ALiBi bias m_h (key - query).
  auto logit = [&](int64_t r, int64_t c) {
    float value = scale * x[r * cols + c];
    if (alibi)
      value += static_cast<float>(slopes[(r / seq) % scores.dim(1)]) *
               static_cast<float>(c - r % seq);
    return value;
  };
  auto visible = [&](int64_t r, int64_t c) { return !causal || c <= r % seq; };
  std::vector<float> rowMax(rows, -INFINITY), rowSum(rows);
  forEachRowTile(rows, rows / scores.dim(0), cols, tile,
                 [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                   for (int64_t r = r0; r < r1; ++r)
                     for (int64_t c = c0; c < c1; ++c)
                       if (visible(r, c))
                         rowMax[r] = std::max(rowMax[r], logit(r, c));
                 });
  forEachRowTile(
      rows, rows / scores.dim(0), cols, tile,
      [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
        sumRows(r0, r1, c0, c1, rowSum.data(), [&](int64_t r, int64_t c) {
          float e = visible(r, c) ? std::exp(logit(r, c) - rowMax[r]) : 0.0f;
          result.data[r * cols + c] = e;
          return e;
        });
      });
  forEachRowTile(rows, rows / scores.dim(0), cols, tile,
                 [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                   for (int64_t r = r0; r < r1; ++r)
                     for (int64_t c = c0; c < c1; ++c)
                       result.data[r * cols + c] /= rowSum[r];
                 });
  return result;
}

Tensor exec::softmaxGrad(const Tensor &probs, const Tensor &grad, float scale,
                         ArrayRef<int64_t> tile) {
  int64_t cols = probs.dim(-1), rows = probs.numel() / cols;
  Tensor result(probs.shape);
  const float *p = probs.data.data(), *dp = grad.data.data();
  std::vector<float> dot(rows);
  forEachRowTile(rows, rows / probs.dim(0), cols, tile,
                 [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                   sumRows(r0, r1, c0, c1, dot.data(),
                           [&](int64_t r, int64_t c) {
                             return p[r * cols + c] * dp[r * cols + c];
                           });
                 });
  forEachRowTile(rows, rows / probs.dim(0), cols, tile,
                 [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                   for (int64_t r = r0; r < r1; ++r)
                     for (int64_t c = c0; c < c1; ++c) {
                       int64_t e = r * cols + c;
                       result.data[e] = scale * p[e] * (dp[e] - dot[r]);
                     }
                 });
  return result;
}

//===----------------------------------------------------------------------===//
// Cross-entropy
//===----------------------------------------------------------------------===//

CrossEntropyResult exec::crossEntropy(const Tensor &logits,
                                      const IdTensor &labels, double scale,
                                      ArrayRef<int64_t> tile) {
  int64_t vocab = logits.dim(-1), seq = labels.shape[1];
  int64_t rows = logits.numel() / vocab;
  CrossEntropyResult out{Tensor(ArrayRef<int64_t>{}),
                         Tensor({labels.shape[0], seq})};
  const float *x = logits.data.data();
  std::vector<float> rowMax(rows, -INFINITY), rowSum(rows);
  forEachRowTile(rows, seq, vocab, tile,
                 [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                   for (int64_t r = r0; r < r1; ++r)
                     for (int64_t c = c0; c < c1; ++c)
                       rowMax[r] = std::max(rowMax[r], x[r * vocab + c]);
                 });
  forEachRowTile(rows, seq, vocab, tile,
                 [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                   sumRows(r0, r1, c0, c1, rowSum.data(),
                           [&](int64_t r, int64_t c) {
                             return std::exp(x[r * vocab + c] - rowMax[r]);
                           });
                 });
  // Each row tile's loss is a partial the host adds up.
  float loss = 0.0f;
  forEachRowTile(rows, seq, 1, tile,
                 [&](int64_t r0, int64_t r1, int64_t, int64_t) {
                   float part = 0.0f;
                   for (int64_t r = r0; r < r1; ++r) {
                     float lse = rowMax[r] + std::log(rowSum[r]);
                     out.lse.data[r] = lse;
                     part += lse - x[r * vocab + labels.data[r]];
                   }
                   loss += part;
                 });
  out.loss.data[0] = static_cast<float>(scale * loss);
  return out;
}

Tensor exec::crossEntropyGrad(const Tensor &logits, const Tensor &lse,
                              const IdTensor &labels, float scale,
                              ArrayRef<int64_t> tile) {
  int64_t vocab = logits.dim(-1), rows = logits.numel() / vocab;
  Tensor result(logits.shape);
  forEachRowTile(rows, labels.shape[1], vocab, tile,
                 [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                   for (int64_t r = r0; r < r1; ++r)
                     for (int64_t c = c0; c < c1; ++c) {
                       float p =
                           std::exp(logits.data[r * vocab + c] - lse.data[r]);
                       result.data[r * vocab + c] =
                           scale * (p - (c == labels.data[r] ? 1.0f : 0.0f));
                     }
                 });
  return result;
}
