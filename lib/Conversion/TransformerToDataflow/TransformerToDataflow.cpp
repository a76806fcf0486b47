//===- TransformerToDataflow.cpp - training step to kernels ---------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// A training step is lowered as one unit, because the backward kernels of
// every op run in reverse order across ops and layers. Each transformer op
// has its own lowering family below (`<Op>Lowering`): `forward` emits the
// op's forward kernels and returns the activations its backward reads;
// `backward` emits the hand-derived gradient kernels. The step pattern
// runs the families forward, then backward, and groups the kernels into
// stages.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Conversion/TransformerToDataflow/TransformerToDataflow.h"

#include "cgpt/Dialect/Transformer/IR/Transformer.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

namespace cgpt {
#define GEN_PASS_DEF_CONVERTTRANSFORMERTODATAFLOW
#include "cgpt/Conversion/Passes.h.inc"
} // namespace cgpt

using namespace mlir;
using namespace cgpt;
using namespace cgpt::dataflow;
namespace tf = cgpt::transformer;

namespace {

//===----------------------------------------------------------------------===//
// Lowering state
//===----------------------------------------------------------------------===//

/// What the families share while one step is lowered: the builder at the
/// end of the micro-batch loop body, the map from transformer values to
/// streams, the gradients found so far, and the stage boundaries.
class StepLowering {
public:
  StepLowering(tf::TrainStepOp step, Block *loopBody)
      : step(step), builder(step.getContext()), loc(step.getLoc()),
        body(loopBody) {
    builder.setInsertionPointToEnd(body);
  }

  OpBuilder &b() { return builder; }
  Location getLoc() const { return loc; }
  tf::TrainStepOp getStep() { return step; }

  static StreamType streamOf(Type tensorType) {
    return StreamType::get(tensorType.getContext(),
                           cast<RankedTensorType>(tensorType));
  }
  /// A stream of `shape` in the element type of `like`.
  static StreamType streamLike(Value like, ArrayRef<int64_t> shape) {
    auto stream = cast<StreamType>(like.getType());
    return StreamType::get(
        like.getContext(),
        RankedTensorType::get(shape, stream.getElementType()));
  }
  static StreamType f32Stream(MLIRContext *ctx, ArrayRef<int64_t> shape) {
    return StreamType::get(ctx,
                           RankedTensorType::get(shape, Float32Type::get(ctx)));
  }
  static ArrayRef<int64_t> shapeOf(Value stream) {
    return cast<StreamType>(stream.getType()).getShape();
  }

  /// Creates kernel `OpTy` from its own operands and attributes; its tile
  /// and recompute mark are left for later.
  template <typename OpTy, typename... Args>
  OpTy kernel(Args &&...args) {
    return builder.create<OpTy>(loc, std::forward<Args>(args)..., TileAttr(),
                                UnitAttr());
  }
  /// `scale * op(lhs) @ op(rhs) (+ bias)`, see dataflow.matmul.
  Value matmul(Type type, Value lhs, Value rhs, Value bias = {},
               bool transposeLhs = false, bool transposeRhs = false,
               bool reduceBatch = false, FloatAttr scale = {}) {
    auto flag = [&](bool set) {
      return set ? builder.getUnitAttr() : UnitAttr();
    };
    return kernel<MatmulOp>(type, lhs, rhs, bias, flag(transposeLhs),
                            flag(transposeRhs), flag(reduceBatch), scale);
  }
  Value map(MapKind kind, ValueRange inputs) {
    return kernel<MapOp>(inputs.front().getType(),
                         MapKindAttr::get(builder.getContext(), kind), inputs);
  }

  /// The stream a transformer value has been lowered to.
  Value lookup(Value value) { return env.lookup(value); }
  void define(Value value, Value stream) { env.map(value, stream); }

  /// The weight `weight` (a transformer.weight result) streamed into the
  /// current stage: once per stage, however many kernels read it.
  Value weight(Value weight) {
    auto it = stageWeights.find(weight);
    if (it != stageWeights.end())
      return it->second;
    auto op = weight.getDefiningOp<tf::WeightOp>();
    auto type = cast<RankedTensorType>(op.getType());
    Value stream = builder.create<WeightInOp>(
        loc, streamOf(type), op.getName(),
        type.getNumElements() * elementBytes(type.getElementType()));
    stageWeights[weight] = stream;
    return stream;
  }
  /// `weight(w)` for an optional weight.
  Value optionalWeight(Value w) { return w ? weight(w) : Value(); }
  /// Streams `grad`, the gradient of transformer weight `weight`, out.
  void gradOut(Value weight, Value grad) {
    auto op = weight.getDefiningOp<tf::WeightOp>();
    auto type = cast<StreamType>(grad.getType()).getTensor();
    builder.create<GradOutOp>(
        loc, op.getName(), grad,
        type.getNumElements() * elementBytes(type.getElementType()));
  }

  /// Adds `contribution` to the gradient of transformer value `value`.
  void addGrad(Value value, Value contribution) {
    auto [it, inserted] = grads.try_emplace(value, contribution);
    if (!inserted)
      it->second = map(MapKind::add, {it->second, contribution});
  }
  /// The gradient of transformer value `value`, all contributions summed.
  FailureOr<Value> grad(Value value) {
    auto it = grads.find(value);
    if (it == grads.end())
      return step.emitOpError()
             << "has a value the loss does not depend on; every op of a "
                "training step must feed the loss";
    return it->second;
  }

  /// Starts a stage: kernels created from now on belong to it.
  void beginStage(StringRef name, Phase phase, std::optional<int64_t> layer) {
    runs.push_back({name.str(), phase, layer, lastOp()});
    stageWeights.clear();
  }
  /// Marks every kernel created after `after` (the body's last op then, or
  /// null for an empty body) as recomputing a forward activation.
  void markRecomputedSince(Operation *after) {
    auto first = after ? std::next(after->getIterator()) : body->begin();
    for (Operation &op : llvm::make_range(first, body->end()))
      if (isa<KernelOpInterface>(op))
        op.setAttr("recompute", builder.getUnitAttr());
  }
  /// The body's last op, or null when it is empty. (An op list's size() is
  /// linear; marking places with ops keeps lowering linear in layers.)
  Operation *lastOp() const { return body->empty() ? nullptr : &body->back(); }

  /// Moves each stage's kernels into a dataflow.stage, yielding the values
  /// later stages read.
  void outlineStages();

private:
  struct StageRun {
    std::string name;
    Phase phase;
    std::optional<int64_t> layer;
    /// The op before the stage's first one (null: the body's start).
    Operation *after;
  };

  tf::TrainStepOp step;
  OpBuilder builder;
  Location loc;
  Block *body;
  IRMapping env;
  DenseMap<Value, Value> stageWeights;
  DenseMap<Value, Value> grads;
  SmallVector<StageRun> runs;
};

void StepLowering::outlineStages() {
  SmallVector<Operation *> ops =
      llvm::to_vector(llvm::make_pointer_range(body->getOperations()));
  DenseMap<Operation *, size_t> position;
  for (auto [index, op] : llvm::enumerate(ops))
    position[op] = index;
  auto startOf = [&](const StageRun &run) -> size_t {
    return run.after ? position.lookup(run.after) + 1 : 0;
  };
  for (size_t r = 0; r < runs.size(); ++r) {
    size_t start = startOf(runs[r]);
    size_t end = r + 1 < runs.size() ? startOf(runs[r + 1]) : ops.size();
    if (start == end)
      continue;
    ArrayRef<Operation *> members(ops.begin() + start, ops.begin() + end);
    llvm::SmallPtrSet<Operation *, 32> inStage(members.begin(), members.end());
    SmallVector<Value> escaping;
    for (Operation *op : members)
      for (Value result : op->getResults())
        if (llvm::any_of(result.getUsers(), [&](Operation *user) {
              return !inStage.contains(user);
            }))
          escaping.push_back(result);

    builder.setInsertionPoint(members.front());
    auto stage = builder.create<StageOp>(loc, ValueRange(escaping).getTypes(),
                                         runs[r].name, runs[r].phase,
                                         runs[r].layer);
    Block *block = new Block();
    stage.getBody().push_back(block);
    for (Operation *op : members)
      op->moveBefore(block, block->end());
    builder.setInsertionPointToEnd(block);
    builder.create<YieldOp>(loc, escaping);
    for (auto [i, value] : llvm::enumerate(escaping))
      value.replaceUsesWithIf(stage.getResult(i), [&](OpOperand &use) {
        return !stage->isAncestor(use.getOwner());
      });
  }
}

//===----------------------------------------------------------------------===//
// Lowering families, one per transformer op
//===----------------------------------------------------------------------===//

/// Activations a family's backward reads, in the order its forward
/// returned them.
using Saved = SmallVector<Value>;

struct TokenEmbeddingLowering {
  static Saved forward(tf::TokenEmbeddingOp op, StepLowering &s) {
    s.define(op.getResult(),
             s.kernel<GatherOp>(StepLowering::streamOf(op.getType()),
                                s.weight(op.getTable()),
                                s.lookup(op.getTokens()), op.getScaleAttr()));
    return {};
  }
  static LogicalResult backward(tf::TokenEmbeddingOp op, ArrayRef<Value>,
                                StepLowering &s) {
    FailureOr<Value> dx = s.grad(op.getResult());
    if (failed(dx))
      return failure();
    s.gradOut(op.getTable(),
              s.kernel<ScatterAddOp>(
                  StepLowering::streamOf(op.getTable().getType()),
                  s.lookup(op.getTokens()), *dx, op.getScaleAttr()));
    return success();
  }
};

struct PositionEmbeddingLowering {
  static Saved forward(tf::PositionEmbeddingOp op, StepLowering &s) {
    Value x = s.lookup(op.getInput());
    s.define(op.getResult(), s.kernel<AddPositionsOp>(
                                 x.getType(), x, s.weight(op.getTable())));
    return {};
  }
  static LogicalResult backward(tf::PositionEmbeddingOp op, ArrayRef<Value>,
                                StepLowering &s) {
    FailureOr<Value> dy = s.grad(op.getResult());
    if (failed(dy))
      return failure();
    s.addGrad(op.getInput(), *dy);
    s.gradOut(op.getTable(),
              s.kernel<PositionGradOp>(
                  StepLowering::streamOf(op.getTable().getType()), *dy));
    return success();
  }
};

struct RotaryEmbeddingLowering {
  static Saved forward(tf::RotaryEmbeddingOp op, StepLowering &s) {
    s.define(op.getResult(),
             s.kernel<RotaryAnglesOp>(StepLowering::streamOf(op.getType()),
                                      op.getDimAttr(), op.getBaseAttr()));
    return {};
  }
  static LogicalResult backward(tf::RotaryEmbeddingOp, ArrayRef<Value>,
                                StepLowering &) {
    return success(); // The angles are constants: no gradient.
  }
};

struct LayerNormLowering {
  // Saved: the input and its row statistics.
  static Saved forward(tf::LayerNormOp op, StepLowering &s) {
    Value x = s.lookup(op.getInput());
    SmallVector<int64_t> rows(StepLowering::shapeOf(x).drop_back());
    auto stats = StepLowering::f32Stream(op.getContext(), rows);
    // Weights stream in one statement at a time: the IR order must not
    // depend on the compiler's order of argument evaluation.
    Value gamma = s.weight(op.getGamma());
    Value beta = s.weight(op.getBeta());
    auto norm = s.kernel<LayerNormOp>(TypeRange{x.getType(), stats, stats}, x,
                                      gamma, beta, op.getEpsilonAttr());
    s.define(op.getResult(), norm.getResult());
    return {x, norm.getMean(), norm.getRstd()};
  }
  static LogicalResult backward(tf::LayerNormOp op, ArrayRef<Value> saved,
                                StepLowering &s) {
    FailureOr<Value> dy = s.grad(op.getResult());
    if (failed(dy))
      return failure();
    Value gamma = s.weight(op.getGamma());
    auto grad = s.kernel<LayerNormGradOp>(
        TypeRange{saved[0].getType(), gamma.getType(), gamma.getType()}, *dy,
        saved[0], saved[1], saved[2], gamma);
    s.addGrad(op.getInput(), grad.getInputGrad());
    s.gradOut(op.getGamma(), grad.getGammaGrad());
    s.gradOut(op.getBeta(), grad.getBetaGrad());
    return success();
  }
};

/// 1/sqrt(head_size), or muP's 1/head_size.
static double attentionScale(tf::AttentionOp op) {
  double headSize = static_cast<double>(op.getHeadSize());
  return op.getScaling() == tf::ScoreScaling::inv_head_size
             ? 1.0 / headSize
             : 1.0 / std::sqrt(headSize);
}

/// Streams the gradient of an optional bias out: its rows summed.
static void biasGradOut(Value bias, Value grad, StepLowering &s) {
  if (bias)
    s.gradOut(bias, s.kernel<SumBatchOp>(
                        StepLowering::streamOf(bias.getType()), grad));
}

struct AttentionLowering {
  // Saved: x, q, k, v (q and k rotated), probabilities, merged heads.
  static Saved forward(tf::AttentionOp op, StepLowering &s) {
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
    biasGradOut(op.getOutBias(), dy, s);

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
    biasGradOut(op.getQkvBias(), dQkv, s);
    return success();
  }
};

/// The activation and its derivative as elementwise map kinds.
static std::pair<MapKind, MapKind> activationMaps(tf::Activation activation) {
  switch (activation) {
  case tf::Activation::gelu:
    return {MapKind::gelu, MapKind::gelu_grad};
  case tf::Activation::gelu_tanh:
    return {MapKind::gelu_tanh, MapKind::gelu_tanh_grad};
  case tf::Activation::relu:
    return {MapKind::relu, MapKind::relu_grad};
  case tf::Activation::silu:
    return {MapKind::silu, MapKind::silu_grad};
  }
  return {MapKind::gelu, MapKind::gelu_grad};
}

struct FeedForwardLowering {
  // Saved: x, pre-activation h, activation a.
  static Saved forward(tf::FeedForwardOp op, StepLowering &s) {
    Value x = s.lookup(op.getInput());
    Value up = s.weight(op.getUpWeight());
    ArrayRef<int64_t> xs = StepLowering::shapeOf(x);
    auto hidden = StepLowering::streamLike(
        x, {xs[0], xs[1], StepLowering::shapeOf(up)[1]});
    Value h = s.matmul(hidden, x, up, s.optionalWeight(op.getUpBias()));
    Value a = s.map(activationMaps(op.getActivation()).first, h);
    Value down = s.weight(op.getDownWeight());
    Value downBias = s.optionalWeight(op.getDownBias());
    s.define(op.getResult(), s.matmul(x.getType(), a, down, downBias));
    return {x, h, a};
  }

  static LogicalResult backward(tf::FeedForwardOp op, ArrayRef<Value> saved,
                                StepLowering &s) {
    Value x = saved[0], h = saved[1], a = saved[2];
    FailureOr<Value> dy = s.grad(op.getResult());
    if (failed(dy))
      return failure();
    Value down = s.weight(op.getDownWeight());
    Value da = s.matmul(a.getType(), *dy, down, Value(), false, true);
    s.gradOut(op.getDownWeight(),
              s.matmul(down.getType(), a, *dy, Value(), true, false, true));
    biasGradOut(op.getDownBias(), *dy, s);
    Value dh = s.map(activationMaps(op.getActivation()).second, {h, da});
    Value up = s.weight(op.getUpWeight());
    s.addGrad(op.getInput(),
              s.matmul(x.getType(), dh, up, Value(), false, true));
    s.gradOut(op.getUpWeight(),
              s.matmul(up.getType(), x, dh, Value(), true, false, true));
    biasGradOut(op.getUpBias(), dh, s);
    return success();
  }
};

struct ResidualAddLowering {
  static Saved forward(tf::ResidualAddOp op, StepLowering &s) {
    s.define(op.getResult(),
             s.map(MapKind::add, {s.lookup(op.getResidual()),
                                  s.lookup(op.getUpdate())}));
    return {};
  }
  static LogicalResult backward(tf::ResidualAddOp op, ArrayRef<Value>,
                                StepLowering &s) {
    FailureOr<Value> dy = s.grad(op.getResult());
    if (failed(dy))
      return failure();
    s.addGrad(op.getResidual(), *dy);
    s.addGrad(op.getUpdate(), *dy);
    return success();
  }
};

struct OutputHeadLowering {
  // Saved: the input, for the weight gradient.
  static Saved forward(tf::OutputHeadOp op, StepLowering &s) {
    Value x = s.lookup(op.getInput());
    Value w = s.weight(op.getWeight());
    Value bias = s.optionalWeight(op.getBias());
    s.define(op.getResult(),
             s.matmul(StepLowering::streamOf(op.getType()), x, w, bias, false,
                      /*transposeRhs=*/true, false, op.getScaleAttr()));
    return {x};
  }
  static LogicalResult backward(tf::OutputHeadOp op, ArrayRef<Value> saved,
                                StepLowering &s) {
    Value x = saved[0];
    FailureOr<Value> dLogits = s.grad(op.getResult());
    if (failed(dLogits))
      return failure();
    Value w = s.weight(op.getWeight());
    s.addGrad(op.getInput(), s.matmul(x.getType(), *dLogits, w, Value(), false,
                                      false, false, op.getScaleAttr()));
    s.gradOut(op.getWeight(), s.matmul(w.getType(), *dLogits, x, Value(), true,
                                       false, true, op.getScaleAttr()));
    biasGradOut(op.getBias(), *dLogits, s);
    return success();
  }
};

struct CrossEntropyLowering {
  /// The factor that makes the losses of all micro-batches and systems add
  /// up to the step's loss: the loss weight over the tokens (or sequences)
  /// of the global batch.
  static double scale(tf::CrossEntropyOp op, StepLowering &s) {
    tf::TrainStepOp step = s.getStep();
    double count = static_cast<double>(step.getGlobalBatch());
    if (op.getScaling() == tf::LossScaling::num_tokens)
      count *= static_cast<double>(step.getSeqLen());
    return op.getWeight().convertToDouble() / count;
  }

  // Saved: the logits and their row log-sum-exp.
  static Saved forward(tf::CrossEntropyOp op, StepLowering &s) {
    Value logits = s.lookup(op.getLogits());
    ArrayRef<int64_t> shape = StepLowering::shapeOf(logits);
    auto ce = s.kernel<CrossEntropyOp>(
        StepLowering::f32Stream(op.getContext(), {}),
        StepLowering::f32Stream(op.getContext(), {shape[0], shape[1]}),
        logits, s.lookup(op.getLabels()),
        s.b().getF64FloatAttr(scale(op, s)));
    s.define(op.getResult(), ce.getLoss());
    s.b().create<LossOutOp>(s.getLoc(), ce.getLoss());
    return {logits, ce.getLse()};
  }
  static LogicalResult backward(tf::CrossEntropyOp op, ArrayRef<Value> saved,
                                StepLowering &s) {
    // The loss seeds the backward pass: dloss = 1, folded into `scale`.
    s.addGrad(op.getLogits(),
              s.kernel<CrossEntropyGradOp>(
                  saved[0].getType(), saved[0], saved[1],
                  s.lookup(op.getLabels()),
                  s.b().getF64FloatAttr(scale(op, s))));
    return success();
  }
};

/// Dispatches `op` to its family's forward.
FailureOr<Saved> lowerForward(Operation *op, StepLowering &s) {
  return TypeSwitch<Operation *, FailureOr<Saved>>(op)
      .Case([&](tf::TokenEmbeddingOp o) {
        return TokenEmbeddingLowering::forward(o, s);
      })
      .Case([&](tf::PositionEmbeddingOp o) {
        return PositionEmbeddingLowering::forward(o, s);
      })
      .Case([&](tf::RotaryEmbeddingOp o) {
        return RotaryEmbeddingLowering::forward(o, s);
      })
      .Case([&](tf::LayerNormOp o) { return LayerNormLowering::forward(o, s); })
      .Case([&](tf::AttentionOp o) { return AttentionLowering::forward(o, s); })
      .Case([&](tf::FeedForwardOp o) {
        return FeedForwardLowering::forward(o, s);
      })
      .Case([&](tf::ResidualAddOp o) {
        return ResidualAddLowering::forward(o, s);
      })
      .Case([&](tf::OutputHeadOp o) {
        return OutputHeadLowering::forward(o, s);
      })
      .Case([&](tf::CrossEntropyOp o) {
        return CrossEntropyLowering::forward(o, s);
      })
      .Default([&](Operation *other) -> FailureOr<Saved> {
        return other->emitOpError() << "has no dataflow lowering";
      });
}

/// Dispatches `op` to its family's backward.
LogicalResult lowerBackward(Operation *op, ArrayRef<Value> saved,
                            StepLowering &s) {
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](tf::TokenEmbeddingOp o) {
        return TokenEmbeddingLowering::backward(o, saved, s);
      })
      .Case([&](tf::PositionEmbeddingOp o) {
        return PositionEmbeddingLowering::backward(o, saved, s);
      })
      .Case([&](tf::RotaryEmbeddingOp o) {
        return RotaryEmbeddingLowering::backward(o, saved, s);
      })
      .Case([&](tf::LayerNormOp o) {
        return LayerNormLowering::backward(o, saved, s);
      })
      .Case([&](tf::AttentionOp o) {
        return AttentionLowering::backward(o, saved, s);
      })
      .Case([&](tf::FeedForwardOp o) {
        return FeedForwardLowering::backward(o, saved, s);
      })
      .Case([&](tf::ResidualAddOp o) {
        return ResidualAddLowering::backward(o, saved, s);
      })
      .Case([&](tf::OutputHeadOp o) {
        return OutputHeadLowering::backward(o, saved, s);
      })
      .Case([&](tf::CrossEntropyOp o) {
        return CrossEntropyLowering::backward(o, saved, s);
      })
      .Default([](Operation *other) {
        return other->emitOpError() << "has no dataflow lowering";
      });
}

//===----------------------------------------------------------------------===//
// Stages of a step
//===----------------------------------------------------------------------===//

/// The step's ops, grouped as the wafer runs them.
struct StepStructure {
  SmallVector<Operation *> embed;
  /// Decoder layers in order: their index and ops.
  SmallVector<std::pair<int64_t, SmallVector<Operation *>>> layers;
  SmallVector<Operation *> head;
};

/// The decoder layer an op belongs to: the layer of the weights it reads.
std::optional<int64_t> layerOf(Operation *op) {
  for (Value operand : op->getOperands())
    if (auto weight = operand.getDefiningOp<tf::WeightOp>())
      if (IntegerAttr layer = weight.getLayerAttr())
        return layer.getInt();
  return std::nullopt;
}

FailureOr<StepStructure> groupIntoStages(tf::TrainStepOp step) {
  StepStructure structure;
  bool seenLayer = false;
  for (Operation &op : step.getBodyBlock()) {
    if (isa<tf::WeightOp, tf::YieldOp>(op))
      continue;
    if (isa<tf::TokenEmbeddingOp, tf::PositionEmbeddingOp,
            tf::RotaryEmbeddingOp>(op)) {
      if (seenLayer)
        return op.emitOpError()
               << "comes after a decoder layer; embeddings must come first";
      structure.embed.push_back(&op);
      continue;
    }
    std::optional<int64_t> layer = layerOf(&op);
    // Residual adds read no weights: they close the layer before them.
    if (isa<tf::ResidualAddOp>(op) && !structure.head.empty())
      return op.emitOpError() << "follows the output head";
    if (isa<tf::ResidualAddOp>(op) && !structure.layers.empty()) {
      structure.layers.back().second.push_back(&op);
      continue;
    }
    if (layer) {
      if (!structure.head.empty())
        return op.emitOpError() << "reads layer " << *layer
                                << " weights after the output head";
      if (structure.layers.empty() || structure.layers.back().first != *layer) {
        for (auto &[seen, ops] : structure.layers)
          if (seen == *layer)
            return op.emitOpError()
                   << "reads layer " << *layer
                   << " weights after another layer's ops; a layer's ops "
                      "must be contiguous";
        structure.layers.push_back({*layer, {}});
      }
      structure.layers.back().second.push_back(&op);
      seenLayer = true;
      continue;
    }
    structure.head.push_back(&op);
  }
  if (structure.embed.empty() || structure.layers.empty() ||
      structure.head.empty())
    return step.emitOpError() << "needs embeddings, at least one decoder "
                                 "layer and an output head to be lowered";
  return structure;
}

/// The residual stream entering a layer: the first value its ops read
/// that none of them produced and that is not a weight.
Value layerInput(ArrayRef<Operation *> ops) {
  llvm::SmallPtrSet<Operation *, 16> inLayer(ops.begin(), ops.end());
  for (Operation *op : ops)
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && !isa<tf::WeightOp, tf::RotaryEmbeddingOp>(def) &&
          !inLayer.contains(def))
        return operand;
    }
  return Value();
}

//===----------------------------------------------------------------------===//
// The step pattern
//===----------------------------------------------------------------------===//

class TrainStepLowering : public OpConversionPattern<tf::TrainStepOp> {
public:
  TrainStepLowering(MLIRContext *context, Recompute recompute)
      : OpConversionPattern(context), recompute(recompute) {}

  LogicalResult
  matchAndRewrite(tf::TrainStepOp step, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<StepStructure> structure = groupIntoStages(step);
    if (failed(structure))
      return failure();

    // Build the program detached, then hand it to the rewriter whole.
    MLIRContext *ctx = step.getContext();
    OpBuilder builder(ctx);
    OwningOpRef<ProgramOp> program = builder.create<ProgramOp>(
        step.getLoc(), step.getSymName(), step.getGlobalBatch(),
        step.getNumCsx(), step.getSeqLen(), step.getMicroBatch(), recompute,
        /*target=*/StringAttr());
    builder.setInsertionPointToEnd(&program->getBody().emplaceBlock());
    auto loop = builder.create<MicroBatchLoopOp>(step.getLoc(), 0, 0);
    Block *loopBody = builder.createBlock(
        &loop.getBody(), {},
        {StepLowering::streamOf(step.getTokens().getType()),
         StepLowering::streamOf(step.getLabels().getType())},
        {step.getLoc(), step.getLoc()});

    StepLowering s(step, loopBody);
    s.define(step.getTokens(), loopBody->getArgument(0));
    s.define(step.getLabels(), loopBody->getArgument(1));
    if (failed(lower(*structure, s)))
      return failure();
    s.outlineStages();

    int64_t parameters = 0;
    for (auto weight : step.getBodyBlock().getOps<tf::WeightOp>())
      parameters += weight.getNumElements();
    builder.setInsertionPointToEnd(&program->getBody().front());
    builder.create<OptimizerStepOp>(
        step.getLoc(), step.getOptimizer(), step.getSchedule(),
        step.getMaxGradientNorm(), step.getMupAttr(), parameters);

    rewriter.setInsertionPoint(step);
    rewriter.insert(program.release());
    rewriter.eraseOp(step);
    return success();
  }

private:
  LogicalResult lower(const StepStructure &structure, StepLowering &s) const;

  Recompute recompute;
};

LogicalResult TrainStepLowering::lower(const StepStructure &structure,
                                       StepLowering &s) const {
  DenseMap<Operation *, Saved> saved;
  auto forward = [&](ArrayRef<Operation *> ops) -> LogicalResult {
    for (Operation *op : ops) {
      FailureOr<Saved> kept = lowerForward(op, s);
      if (failed(kept))
        return failure();
      saved[op] = std::move(*kept);
    }
    return success();
  };
  auto backward = [&](ArrayRef<Operation *> ops) -> LogicalResult {
    for (Operation *op : llvm::reverse(ops))
      if (failed(lowerBackward(op, saved[op], s)))
        return failure();
    return success();
  };
  auto stash = [&](Value stream) -> Value {
    auto type = cast<StreamType>(stream.getType());
    return s.b().create<StashOp>(
        s.getLoc(), BufferType::get(type.getContext(), type.getTensor()),
        stream);
  };
  auto fetch = [&](Value buffer) -> Value {
    auto type = cast<BufferType>(buffer.getType());
    return s.b().create<FetchOp>(
        s.getLoc(), StreamType::get(type.getContext(), type.getTensor()),
        buffer);
  };

  s.beginStage("embed", Phase::forward, std::nullopt);
  if (failed(forward(structure.embed)))
    return failure();

  // Per layer, the buffers its backward stage fetches: every saved
  // activation (recompute none) or the layer input alone (recompute layer).
  SmallVector<SmallVector<Value>> kept(structure.layers.size());
  // With recompute none: per layer, the activations its buffers hold.
  SmallVector<SmallVector<Value>> keptActivations;
  for (auto [index, layer] : llvm::enumerate(structure.layers)) {
    auto &[number, ops] = layer;
    s.beginStage("h." + std::to_string(number), Phase::forward, number);
    if (recompute == Recompute::layer)
      kept[index].push_back(stash(s.lookup(layerInput(ops))));
    if (failed(forward(ops)))
      return failure();
    if (recompute == Recompute::none) {
      // One buffer per activation, however many ops read it back.
      llvm::SetVector<Value> activations;
      for (Operation *op : ops)
        activations.insert(saved[op].begin(), saved[op].end());
      for (Value value : activations)
        kept[index].push_back(stash(value));
      keptActivations.push_back(activations.takeVector());
    }
  }

  s.beginStage("head", Phase::loss, std::nullopt);
  if (failed(forward(structure.head)) || failed(backward(structure.head)))
    return failure();

  for (auto [index, layer] : llvm::enumerate(llvm::reverse(structure.layers))) {
    auto &[number, ops] = layer;
    ArrayRef<Value> buffers = kept[structure.layers.size() - 1 - index];
    s.beginStage("h." + std::to_string(number), Phase::backward, number);
    if (recompute == Recompute::layer) {
      // Rerun the layer's forward kernels from its kept input.
      s.define(layerInput(ops), fetch(buffers.front()));
      Operation *before = s.lastOp();
      if (failed(forward(ops)))
        return failure();
      s.markRecomputedSince(before);
    } else {
      // Fetch each kept activation once; the ops read it from there.
      DenseMap<Value, Value> fetched;
      ArrayRef<Value> activations =
          keptActivations[structure.layers.size() - 1 - index];
      for (auto [activation, buffer] : llvm::zip(activations, buffers))
        fetched[activation] = fetch(buffer);
      for (Operation *op : ops)
        for (Value &value : saved[op])
          value = fetched.lookup(value);
    }
    if (failed(backward(ops)))
      return failure();
  }

  s.beginStage("embed", Phase::backward, std::nullopt);
  return backward(structure.embed);
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct ConvertTransformerToDataflow
    : cgpt::impl::ConvertTransformerToDataflowBase<
          ConvertTransformerToDataflow> {
  using ConvertTransformerToDataflowBase::ConvertTransformerToDataflowBase;

  void runOnOperation() override {
    // Report a step that cannot be staged once, by its own error, rather
    // than also as an op the conversion failed to legalize.
    bool stageable = true;
    getOperation().walk([&](tf::TrainStepOp step) {
      stageable &= succeeded(groupIntoStages(step));
    });
    if (!stageable)
      return signalPassFailure();

    ConversionTarget target(getContext());
    target.addLegalDialect<DataflowDialect>();
    target.addIllegalDialect<tf::TransformerDialect>();
    RewritePatternSet patterns(&getContext());
    populateTransformerToDataflowConversionPatterns(patterns, recompute);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void cgpt::populateTransformerToDataflowConversionPatterns(
    RewritePatternSet &patterns, Recompute recompute) {
  patterns.add<TrainStepLowering>(patterns.getContext(), recompute);
}
