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
using namespace cgpt::exec;
using namespace cgpt::kernels;
namespace tf = cgpt::transformer;

namespace {

/// 1/sqrt(head_size), or muP's 1/head_size.
static double attentionScale(tf::AttentionOp op) {
  double headSize = static_cast<double>(op.getHeadSize());
  return op.getScaling() == tf::ScoreScaling::inv_head_size
             ? 1.0 / headSize
             : 1.0 / std::sqrt(headSize);
}

struct AttentionLowering {
  // Saved: x, q, k, v (q and k rotated), probabilities, merged heads.
  static SavedActivations forward(tf::AttentionOp op, StepLowering &s) {
    OpBuilder &b = s.b();
    Value x = s.lookup(op.getInput());
    ArrayRef<int64_t> xs = StepLowering::shapeOf(x);
    int64_t batch = xs[0], seq = xs[1];
    int64_t heads = static_cast<int64_t>(op.getNumHeads());
    int64_t headSize = static_cast<int64_t>(op.getHeadSize());
    Value wqkv = s.weight(op.getQkvWeight());
    Value bqkv = s.optionalWeight(op.getQkvBias());
    Value qkv = s.matmul(
        StepLowering::streamLike(x, {batch, seq, 3 * heads * headSize}), x,
        wqkv, bqkv);
    auto headType = StepLowering::streamLike(x, {batch, heads, seq, headSize});
    auto split = s.kernel<SplitHeadsOp>(headType, headType, headType, qkv,
                                        b.getI64IntegerAttr(heads),
                                        b.getI64IntegerAttr(headSize));
    Value q = split.getQuery(), k = split.getKey(), v = split.getValue();
    if (op.getRotary()) {
      Value angles = s.lookup(op.getRotary());
      q = s.kernel<RotaryOp>(headType, q, angles, UnitAttr());
      k = s.kernel<RotaryOp>(headType, k, angles, UnitAttr());
    }
    auto scoreType = StepLowering::streamLike(x, {batch, heads, seq, seq});
    Value scores = s.matmul(scoreType, q, k, Value(), false,
                            /*transposeRhs=*/true);
    Value probs = s.kernel<SoftmaxOp>(
        scoreType, scores, b.getF64FloatAttr(attentionScale(op)),
        b.getUnitAttr(), b.getI64IntegerAttr(headSize));
    Value attended = s.matmul(headType, probs, v);
    Value merged = s.kernel<MergeHeadsOp>(
        StepLowering::streamLike(x, {batch, seq, heads * headSize}), attended);
    Value wo = s.weight(op.getOutWeight());
    Value bo = s.optionalWeight(op.getOutBias());
    s.define(op.getResult(), s.matmul(x.getType(), merged, wo, bo));
    return {x, q, k, v, probs, merged};
  }

  static LogicalResult backward(tf::AttentionOp op, ArrayRef<Value> saved,
                                StepLowering &s) {
    OpBuilder &b = s.b();
    Value x = saved[0], q = saved[1], k = saved[2], v = saved[3],
          probs = saved[4], merged = saved[5];
    FailureOr<Value> dyOr = s.grad(op.getResult());
    if (failed(dyOr))
      return failure();
    Value dy = *dyOr;

    // Output projection: dmerged = dy Wo^T, dWo = merged^T dy.
    Value wo = s.weight(op.getOutWeight());
    Value dMerged = s.matmul(merged.getType(), dy, wo, Value(), false, true);
    s.gradOut(op.getOutWeight(),
              s.matmul(wo.getType(), merged, dy, Value(), true, false, true));
    s.gradOutBias(op.getOutBias(), dy);

    // Attention: dP = dO V^T, dV = P^T dO, dS = softmax'(P, dP),
    // dQ = dS K, dK = dS^T Q.
    Value dAttended = s.kernel<UnmergeHeadsOp>(q.getType(), dMerged);
    Value dProbs =
        s.matmul(probs.getType(), dAttended, v, Value(), false, true);
    Value dv = s.matmul(v.getType(), probs, dAttended, Value(), true);
    Value dScores = s.kernel<SoftmaxGradOp>(
        probs.getType(), probs, dProbs, b.getF64FloatAttr(attentionScale(op)),
        b.getI64IntegerAttr(op.getHeadSize()));
    Value dq = s.matmul(q.getType(), dScores, k);
    Value dk = s.matmul(k.getType(), dScores, q, Value(), true);
    if (op.getRotary()) {
      Value angles = s.lookup(op.getRotary());
      dq = s.kernel<RotaryOp>(q.getType(), dq, angles, b.getUnitAttr());
      dk = s.kernel<RotaryOp>(k.getType(), dk, angles, b.getUnitAttr());
    }

    // Input projection: dx = dqkv Wqkv^T, dWqkv = x^T dqkv.
    Value wqkv = s.weight(op.getQkvWeight());
    ArrayRef<int64_t> xs = StepLowering::shapeOf(x);
    Value dQkv = s.kernel<JoinHeadsOp>(
        StepLowering::streamLike(
            x, {xs[0], xs[1],
                static_cast<int64_t>(3 * op.getNumHeads() * op.getHeadSize())}),
        dq, dk, dv);
    s.addGrad(op.getInput(),
              s.matmul(x.getType(), dQkv, wqkv, Value(), false, true));
    s.gradOut(op.getQkvWeight(),
              s.matmul(wqkv.getType(), x, dQkv, Value(), true, false, true));
    s.gradOutBias(op.getQkvBias(), dQkv);
    return success();
  }
};

LogicalResult executeSplitHeads(SplitHeadsOp s, KernelFrame &frame,
                                ArrayRef<int64_t> tile) {
  Tensor q, k, v;
  splitHeads(frame[s.getQkv()], static_cast<int64_t>(s.getNumHeads()),
             static_cast<int64_t>(s.getHeadSize()), q, k, v);
  frame.set(s.getQuery(), std::move(q));
  frame.set(s.getKey(), std::move(k));
  frame.set(s.getValue(), std::move(v));
  return success();
}

LogicalResult executeJoinHeads(JoinHeadsOp j, KernelFrame &frame,
                               ArrayRef<int64_t> tile) {
  frame.set(j.getResult(), joinHeads(frame[j.getQuery()], frame[j.getKey()],
                                     frame[j.getValue()]));
  return success();
}

LogicalResult executeMergeHeads(MergeHeadsOp m, KernelFrame &frame,
                                ArrayRef<int64_t> tile) {
  frame.set(m.getResult(), mergeHeads(frame[m.getInput()]));
  return success();
}

LogicalResult executeUnmergeHeads(UnmergeHeadsOp u, KernelFrame &frame,
                                  ArrayRef<int64_t> tile) {
  auto type = cast<StreamType>(u.getResult().getType());
  frame.set(u.getResult(),
            unmergeHeads(frame[u.getInput()], type.getShape()[1]));
  return success();
}

LogicalResult executeSoftmax(SoftmaxOp s, KernelFrame &frame,
                             ArrayRef<int64_t> tile) {
  frame.set(s.getResult(),
            softmax(frame[s.getScores()],
                    static_cast<float>(s.getScale().convertToDouble()),
                    s.getCausal(), tile));
  return success();
}

LogicalResult executeSoftmaxGrad(SoftmaxGradOp s, KernelFrame &frame,
                                 ArrayRef<int64_t> tile) {
  frame.set(s.getResult(),
            softmaxGrad(frame[s.getProbs()], frame[s.getGrad()],
                        static_cast<float>(s.getScale().convertToDouble()),
                        tile));
  return success();
}

} // namespace

void kernels::registerAttentionModels(DialectRegistry &registry) {
  attachLowering<tf::AttentionOp, AttentionLowering>(registry);
  attachExecution<SplitHeadsOp, executeSplitHeads>(registry);
  attachExecution<JoinHeadsOp, executeJoinHeads>(registry);
  attachExecution<MergeHeadsOp, executeMergeHeads>(registry);
  attachExecution<UnmergeHeadsOp, executeUnmergeHeads>(registry);
  attachExecution<SoftmaxOp, executeSoftmax>(registry);
  attachExecution<SoftmaxGradOp, executeSoftmaxGrad>(registry);
}
