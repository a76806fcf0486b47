//===- MixtureOfExperts.h - routed-expert kernels' arithmetic ---*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The functional execution of the mixture-of-experts kernels (see their
// ops in the dataflow dialect). Expert indices travel as exact small
// integers in float tensors; routed rows are `[batch, seq * k, width]`,
// row `t * k + j` the token `t`'s `j`-th choice.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_EXEC_MIXTUREOFEXPERTS_H
#define CGPT_EXEC_MIXTUREOFEXPERTS_H

#include "cgpt/Exec/Kernels.h"

#include <optional>

namespace cgpt::exec {

struct RouteResult {
  /// [b, s, k] f32, the chosen experts' weights.
  Tensor weights;
  /// [b, s, k], the chosen experts, largest probability first.
  Tensor experts;
  /// [b, s, E] f32, the router's softmax.
  Tensor probs;
};
/// The router of `input` [b, s, d] by `router` [d, E]: `top_k` choices,
/// ties to the lower index; `nullExpert` the fixed logit of a null expert
/// that joins the weights' normalization; `roundLogits` rounds the logits
/// to bfloat16 before the softmax (a router that is not f32).
RouteResult route(const Tensor &input, const Tensor &router, int64_t topK,
                  std::optional<double> nullExpert, bool roundLogits);
/// The router's softmax and choice (as `route`) from its logits [b, s, E],
/// the product of its input and its weight, summed in f32.
RouteResult routeFromLogits(Tensor logits, int64_t topK,
                            std::optional<double> nullExpert, bool roundLogits);

/// `scale * E * sum_b sum_e f[b, e] * P[b, e]`, a [] tensor.
Tensor balanceLoss(const Tensor &probs, const Tensor &experts, double scale);

/// The logits' gradient, [b, s, E], from the weights' and the balance
/// loss of `balanceScale`.
Tensor routeGrad(const Tensor &probs, const Tensor &experts,
                 const Tensor &weights, const Tensor &weightsGrad,
                 double balanceScale);

/// Each token's row repeated for its `k` choices.
Tensor dispatch(const Tensor &input, int64_t k);
/// Each token's `k` routed rows summed, weighted by `weights` (1 if null).
Tensor combine(const Tensor &routed, const Tensor *weights, int64_t k);
struct CombineGrad {
  Tensor routed, weights;
};
CombineGrad combineGrad(const Tensor &routed, const Tensor &weights,
                        const Tensor &grad);

/// Each routed row of `lhs` [b, s k, K] times its expert's `rhs` [E, K, N]
/// ([E, N, K] transposed), plus its expert's `bias` [E, N].
Tensor expertMatmul(const Tensor &lhs, const Tensor &rhs, const Tensor &experts,
                    const Tensor *bias, bool transposeRhs);
/// [E, K, N]: each expert's sum of lhs[r]^T grad[r] over its rows.
Tensor expertWeightGrad(const Tensor &lhs, const Tensor &grad,
                        const Tensor &experts, int64_t numExperts);
/// [E, N]: each expert's sum of grad[r] over its rows.
Tensor expertBiasGrad(const Tensor &grad, const Tensor &experts,
                      int64_t numExperts);

} // namespace cgpt::exec

#endif // CGPT_EXEC_MIXTUREOFEXPERTS_H
