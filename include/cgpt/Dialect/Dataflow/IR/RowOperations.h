//===- RowOperations.h - what a row kernel's mesh program runs -*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The vector operations the mesh programs of the norms, their gradients,
// the loss and its gradient run, an element and a row (docs/runtime.md,
// "Norms on the mesh", "The loss on the mesh", "The loss gradient on the
// mesh"): the executed FLOPs the
// dataflow ops report, two to an operation, and the measure of what else a
// region fused with one of them executes.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_DATAFLOW_IR_ROWOPERATIONS_H
#define CGPT_DIALECT_DATAFLOW_IR_ROWOPERATIONS_H

#include <array>
#include <cmath>
#include <cstdint>

namespace cgpt::dataflow {

struct RowOperations {
  int64_t perElement = 0, perRow = 0;
};

/// An exponential, 2^(y log2 e), in software: the product by log2 e, the
/// clamp that keeps 2^n a normal f32, n = round(t) (adding and subtracting
/// 1.5 2^23), the fraction f = t - n, 2^f by its Taylor polynomial of
/// degree 6 in Horner's form (a multiply-add, then a product and a sum a
/// degree), and 2^n scaled in by adding n to the exponent's bits (two
/// integer passes).
constexpr int64_t kExponentialDegree = 6;
constexpr int64_t kExponentialOperations =
    1 + 1 + 2 + 1 + (1 + 2 * (kExponentialDegree - 1)) + 2;

/// 2^f's Taylor coefficients, (ln 2)^i / i!, highest degree first, as
/// Horner's form takes them.
inline std::array<double, kExponentialDegree + 1> exponentialTaylor() {
  std::array<double, kExponentialDegree + 1> taylor{};
  double coefficient = 1;
  for (int64_t i = 0; i <= kExponentialDegree; ++i) {
    taylor[kExponentialDegree - i] = coefficient;
    coefficient *= M_LN2 / static_cast<double>(i + 1);
  }
  return taylor;
}

/// A reciprocal square root: the estimate (two integer passes) and three
/// Newton steps of four operations.
constexpr int64_t kReciprocalSquareRootOperations = 2 + 3 * 4;

/// Per element: the row's sum, the square, the sum of squares, the
/// normalizing multiply-add, the gain and the shift. Per row: the mean; the
/// variance (the mean square plus epsilon, the mean's square, their
/// difference); the reciprocal square root; the shift, -mean * rstd (a
/// product and its negation).
constexpr RowOperations kLayerNormOperations{
    6, 1 + 3 + kReciprocalSquareRootOperations + 2};

/// Per element: the square, the sum of squares, the normalizing product and
/// the gain. Per row: the mean square plus epsilon and the reciprocal square
/// root.
constexpr RowOperations kRMSNormOperations{4,
                                           1 + kReciprocalSquareRootOperations};

/// Per element: the normalized row; the gain's gradient (a product and a
/// sum) and the shift's (a sum); the gain's product; the row's two sums (the
/// second of a product); the input gradient's two multiply-adds. Per row:
/// the shift, -mean * rstd (a product and its negation), and the
/// coefficients (a multiply-add, and a multiply-add and a product).
constexpr RowOperations kLayerNormGradOperations{10, 2 + 3};

/// As the layer norm's, without the shift, its gradient, the row's sum and
/// the second coefficient.
constexpr RowOperations kRMSNormGradOperations{8, 1};

/// Per score: the row's maximum, the scaled score less it (a
/// multiply-add), the exponential, and two more: its sum and the product by
/// the sum's reciprocal. Per row: that reciprocal, the square of the sum's
/// reciprocal square root (the reciprocal square root and a product).
constexpr RowOperations kSoftmaxOperations{1 + 1 + kExponentialOperations + 2,
                                           kReciprocalSquareRootOperations + 1};
/// An ALiBi bias adds one multiply-add a score: the slope times the key's
/// place (the query's, a row's constant, goes with the maximum).
constexpr int64_t kAlibiOperations = 1;

/// Per score: the product of the probability and its gradient, its sum
/// over the row, the gradient less that sum, and the products by the
/// probability and by the scale.
constexpr RowOperations kSoftmaxGradOperations{5, 0};

/// A natural logarithm, ln S for the S of a log-sum-exp, in software:
/// the estimate from S's bits, ln 2 (bits 2^-23 - 127) (the bits'
/// conversion and a multiply-add), then three of Newton's steps for
/// e^y = S, y += S exp(-y) - 1 (the exponential, a product and two sums).
constexpr int64_t kLogarithmSteps = 3;
constexpr int64_t kLogarithmOperations =
    2 + kLogarithmSteps * (kExponentialOperations + 3);

/// Per logit: the row's maximum, the logit less it, the exponential and its
/// sum. Per row and chunk of the vocabulary: the maximum's start, the
/// label's logit, and the merge into the running statistics (the larger
/// maximum, two differences and their exponentials, two products, a sum
/// and a move); per row once: the logarithm, the log-sum-exp (a sum) and
/// its weighted sum into the loss (a product and a sum). The FLOPs count a
/// kernel of one chunk; each further chunk runs its rows' merge again
/// (docs/runtime.md, "The loss on the mesh").
constexpr int64_t kCrossEntropyMergeOperations =
    1 + 2 * (1 + kExponentialOperations) + 2 + 1 + 1;
constexpr RowOperations kCrossEntropyOperations{
    3 + kExponentialOperations,
    2 + kCrossEntropyMergeOperations + kLogarithmOperations + 1 + 2};

/// Per element: the logit less its row's log-sum-exp, the exponential and
/// the product by the loss's scale. Per row: the scale taken from the
/// label's element.
constexpr RowOperations kCrossEntropyGradOperations{
    1 + kExponentialOperations + 1, 1};

} // namespace cgpt::dataflow

#endif // CGPT_DIALECT_DATAFLOW_IR_ROWOPERATIONS_H
