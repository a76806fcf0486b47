//===- NormOperations.h - what a norm's mesh program runs -------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The vector operations the mesh programs of the norms and their gradients
// run, an element and a row (docs/runtime.md, "Norms on the mesh"): the
// executed FLOPs the dataflow ops report, two to an operation, and the
// measure of what else a region fused with a norm executes.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_DATAFLOW_IR_NORMOPERATIONS_H
#define CGPT_DIALECT_DATAFLOW_IR_NORMOPERATIONS_H

#include <cstdint>

namespace cgpt::dataflow {

struct NormOperations {
  int64_t perElement = 0, perRow = 0;
};

/// A reciprocal square root: the estimate (two integer passes) and three
/// Newton steps of four operations.
constexpr int64_t kReciprocalSquareRootOperations = 2 + 3 * 4;

/// Per element: the row's sum, the square, the sum of squares, the
/// normalizing multiply-add, the gain and the shift. Per row: the mean; the
/// variance (the mean square plus epsilon, the mean's square, their
/// difference); the reciprocal square root; the shift, -mean * rstd (a
/// product and its negation).
constexpr NormOperations kLayerNormOperations{
    6, 1 + 3 + kReciprocalSquareRootOperations + 2};

/// Per element: the square, the sum of squares, the normalizing product and
/// the gain. Per row: the mean square plus epsilon and the reciprocal square
/// root.
constexpr NormOperations kRMSNormOperations{
    4, 1 + kReciprocalSquareRootOperations};

/// Per element: the normalized row; the gain's gradient (a product and a
/// sum) and the shift's (a sum); the gain's product; the row's two sums (the
/// second of a product); the input gradient's two multiply-adds. Per row:
/// the shift, -mean * rstd (a product and its negation), and the
/// coefficients (a multiply-add, and a multiply-add and a product).
constexpr NormOperations kLayerNormGradOperations{10, 2 + 3};

/// As the layer norm's, without the shift, its gradient, the row's sum and
/// the second coefficient.
constexpr NormOperations kRMSNormGradOperations{8, 1};

} // namespace cgpt::dataflow

#endif // CGPT_DIALECT_DATAFLOW_IR_NORMOPERATIONS_H
