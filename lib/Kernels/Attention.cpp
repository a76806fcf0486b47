//===- Attention.cpp - self-attention -------------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Causal multi-head self-attention: projections, heads, scores, softmax and
// their gradients.
//
//===----------------------------------------------------------------------===//

#include "KernelModels.h"

using namespace mlir;
using namespace cgpt;
using namespace cgpt::dataflow;
using namespace cgpt::kernels;

namespace {

/// 1/sqrt(head_size), or muP's 1/head_size, times the logits' alpha.
static double attentionScale(transformer::AttentionOp op) {
  double headSize = static_cast<double>(op.getHeadSize());
  double alpha =
      op.getLogitsAlpha() ? op.getLogitsAlpha()->convertToDouble() : 1.0;
  return alpha * (op.getScaling() == transformer::ScoreScaling::inv_head_size
                      ? 1.0 / headSize
                      : 1.0 / std::sqrt(headSize));
}

struct AttentionLowering {
  // Saved: x, q, k, v (q and k rotated; k and v of the key/value heads),
  // merged heads. The probabilities, seq^2 a head and sequence, are not:
  // the backward recomputes them from q and k, as flash attention does.
  static SavedActivations forward(transformer::AttentionOp op,
                                  StepLowering &s) {
    OpBuilder &b = s.b();
    Value x = s.lookup(op.getInput());
    ArrayRef<int64_t> xs = StepLowering::shapeOf(x);
    int64_t batch = xs[0], seq = xs[1];
    int64_t heads = static_cast<int64_t>(op.getNumHeads());
    int64_t kvHeads = op.getKvHeads();
    int64_t headSize = static_cast<int64_t>(op.getHeadSize());
    Value wqkv = s.weight(op.getQkvWeight());
    Value bqkv = s.optionalWeight(op.getQkvBias());
    Value qkv = s.matmul(StepLowering::streamLike(
                             x, {batch, seq, (heads + 2 * kvHeads) * headSize}),
                         x, wqkv, bqkv);
    auto headType = StepLowering::streamLike(x, {batch, heads, seq, headSize});
    auto kvType = StepLowering::streamLike(x, {batch, kvHeads, seq, headSize});
    auto split = s.kernel<SplitHeadsOp>(
        headType, kvType, kvType, qkv, b.getI64IntegerAttr(heads),
        op.getNumKvHeadsAttr(), b.getI64IntegerAttr(headSize));
    Value q = split.getQuery(), k = split.getKey(), v = split.getValue();
    if (op.getRotary()) {
      Value angles = s.lookup(op.getRotary());
      q = s.kernel<RotaryOp>(headType, q, angles, UnitAttr());
      k = s.kernel<RotaryOp>(kvType, k, angles, UnitAttr());
    }
    // Shared key/value heads are repeated first, so that attention's
    // products and softmax follow each other and fuse into one region.
    Value keys = repeatHeads(k, headType, s);
    Value values = repeatHeads(v, headType, s);
    Value probs = dropProbabilities(op, probabilities(op, q, keys, s), s);
    Value attended = s.matmul(headType, probs, values);
    Value merged = s.kernel<MergeHeadsOp>(
        StepLowering::streamLike(x, {batch, seq, heads * headSize}), attended);
    Value wo = s.weight(op.getOutWeight());
    Value bo = s.optionalWeight(op.getOutBias());
    s.define(op.getResult(), s.matmul(x.getType(), merged, wo, bo));
    return {x, q, k, v, merged};
  }

  static LogicalResult backward(transformer::AttentionOp op,
                                ArrayRef<Value> saved, StepLowering &s) {
    OpBuilder &b = s.b();
    Value x = saved[0], q = saved[1], k = saved[2], v = saved[3],
          merged = saved[4];
    FailureOr<Value> dyOr = s.grad(op.getResult());
    if (failed(dyOr))
      return failure();
    Value dy = *dyOr;

    // Output projection: dWo = merged^T dy, then dmerged = dy Wo^T (the
    // weight gradient first, so that merged is dead before dmerged lives).
    Value wo = s.weight(op.getOutWeight());
    s.gradOut(op.getOutWeight(),
              s.matmul(wo.getType(), merged, dy, Value(), true, false, true));
    s.gradOutBias(op.getOutBias(), dy);
    Value dMerged = s.matmul(merged.getType(), dy, wo, Value(), false, true);

    // Attention: dP = dO V^T, dV = P^T dO, dS = softmax'(P, dP),
    // dQ = dS K, dK = dS^T Q; with shared key/value heads, K and V are
    // repeated again and the gradients of a group summed. With dropout, P
    // is dropped again with its mask for dV, and dP goes back through it.
    Type headType = q.getType();
    Value dAttended = s.kernel<UnmergeHeadsOp>(headType, dMerged);
    Value keys = repeatHeads(k, headType, s);
    Value values = repeatHeads(v, headType, s);
    Operation *beforeProbs = s.lastOp();
    Value probs = probabilities(op, q, keys, s);
    Value dropped = dropProbabilities(op, probs, s);
    s.markRecomputedSince(beforeProbs);
    Value dDropped =
        s.matmul(probs.getType(), dAttended, values, Value(), false, true);
    Value dv = sumHeadGroups(
        s.matmul(headType, dropped, dAttended, Value(), true), v.getType(), s);
    Value dProbs = dropProbabilities(op, dDropped, s);
    // The ALiBi bias is a constant: the gradient of the scores is the same.
    Value dScores = s.kernel<SoftmaxGradOp>(
        probs.getType(), probs, dProbs, b.getF64FloatAttr(attentionScale(op)),
        b.getI64IntegerAttr(op.getHeadSize()));
    Value dq = s.matmul(headType, dScores, keys);
    Value dk = sumHeadGroups(s.matmul(headType, dScores, q, Value(), true),
                             k.getType(), s);
    if (op.getRotary()) {
      Value angles = s.lookup(op.getRotary());
      dq = s.kernel<RotaryOp>(headType, dq, angles, b.getUnitAttr());
      dk = s.kernel<RotaryOp>(k.getType(), dk, angles, b.getUnitAttr());
    }

    // Input projection: dWqkv = x^T dqkv, then dx = dqkv Wqkv^T.
    Value wqkv = s.weight(op.getQkvWeight());
    ArrayRef<int64_t> xs = StepLowering::shapeOf(x);
    int64_t qkvWidth =
        (static_cast<int64_t>(op.getNumHeads()) + 2 * op.getKvHeads()) *
        static_cast<int64_t>(op.getHeadSize());
    Value dQkv = s.kernel<JoinHeadsOp>(
        StepLowering::streamLike(x, {xs[0], xs[1], qkvWidth}), dq, dk, dv);
    s.gradOut(op.getQkvWeight(),
              s.matmul(wqkv.getType(), x, dQkv, Value(), true, false, true));
    s.gradOutBias(op.getQkvBias(), dQkv);
    s.addGrad(op.getInput(),
              s.matmul(x.getType(), dQkv, wqkv, Value(), false, true));
    return success();
  }

private:
  /// softmax(scale q k^T), causal (with ALiBi's bias when the op has it);
  /// `keys` has a head for every query head.
  static Value probabilities(transformer::AttentionOp op, Value q, Value keys,
                             StepLowering &s) {
    OpBuilder &b = s.b();
    ArrayRef<int64_t> qs = StepLowering::shapeOf(q);
    auto scoreType = StepLowering::streamLike(q, {qs[0], qs[1], qs[2], qs[2]});
    Value scores = s.matmul(scoreType, q, keys, Value(), false,
                            /*transposeRhs=*/true);
    return s.kernel<SoftmaxOp>(
        scoreType, scores, b.getF64FloatAttr(attentionScale(op)),
        b.getUnitAttr(), b.getI64IntegerAttr(op.getHeadSize()),
        op.getAlibiAttr());
  }
  /// `probs` (or their gradient) through the op's dropout, if it has one.
  static Value dropProbabilities(transformer::AttentionOp op, Value probs,
                                 StepLowering &s) {
    if (!op.getDropout())
      return probs;
    return s.dropout(probs, op.getDropoutAttr(), op.getDropoutSiteAttr());
  }
  /// Key or value heads `kv` repeated for every query head of `headType`;
  /// `kv` itself when each query head has its own.
  static Value repeatHeads(Value kv, Type headType, StepLowering &s) {
    if (kv.getType() == headType)
      return kv;
    return s.kernel<RepeatHeadsOp>(headType, kv);
  }
  /// The gradient of `repeatHeads`: each group's query heads summed.
  static Value sumHeadGroups(Value grad, Type kvType, StepLowering &s) {
    if (grad.getType() == kvType)
      return grad;
    return s.kernel<SumHeadGroupsOp>(kvType, grad);
  }
};

} // namespace

void kernels::registerAttentionModels(DialectRegistry &registry) {
  attachLowering<transformer::AttentionOp, AttentionLowering>(registry);
}
