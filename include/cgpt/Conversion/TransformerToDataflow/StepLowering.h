//===- StepLowering.h - lowering one training step to kernels ---*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The state a transformer op's lowering (DataflowLoweringOpInterface) works
// with while convert-transformer-to-dataflow lowers one training step: the
// builder, the streams each transformer value became, the gradients found
// so far and the stage being filled. An op's `lowerForward` emits its
// forward kernels and returns the activations its backward reads;
// `lowerBackward` emits its hand-derived gradient kernels.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_CONVERSION_TRANSFORMERTODATAFLOW_STEPLOWERING_H
#define CGPT_CONVERSION_TRANSFORMERTODATAFLOW_STEPLOWERING_H

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"
#include "cgpt/Dialect/Transformer/IR/Transformer.h"

#include "mlir/IR/IRMapping.h"

namespace cgpt {

/// Activations an op's backward reads, in the order its forward returned
/// them.
using SavedActivations = llvm::SmallVector<mlir::Value>;

/// What the families share while one step is lowered: the builder at the
/// end of the micro-batch loop body, the map from transformer values to
/// streams, the gradients found so far, and the stage boundaries.
class StepLowering {
public:
  StepLowering(transformer::TrainStepOp step, mlir::Block *loopBody)
      : step(step), builder(step.getContext()), loc(step.getLoc()),
        body(loopBody) {
    builder.setInsertionPointToEnd(body);
  }

  mlir::OpBuilder &b() { return builder; }
  /// The block the step's kernels are built in.
  mlir::Block &getBody() { return *body; }
  mlir::Location getLoc() const { return loc; }
  transformer::TrainStepOp getStep() { return step; }

  static dataflow::StreamType streamOf(mlir::Type tensorType) {
    return dataflow::StreamType::get(
        tensorType.getContext(),
        llvm::cast<mlir::RankedTensorType>(tensorType));
  }
  /// A stream of `shape` in the element type of `like`.
  static dataflow::StreamType streamLike(mlir::Value like,
                                         llvm::ArrayRef<int64_t> shape) {
    auto stream = llvm::cast<dataflow::StreamType>(like.getType());
    return dataflow::StreamType::get(
        like.getContext(),
        mlir::RankedTensorType::get(shape, stream.getElementType()));
  }
  static dataflow::StreamType f32Stream(mlir::MLIRContext *ctx,
                                        llvm::ArrayRef<int64_t> shape) {
    return dataflow::StreamType::get(
        ctx, mlir::RankedTensorType::get(shape, mlir::Float32Type::get(ctx)));
  }
  static llvm::ArrayRef<int64_t> shapeOf(mlir::Value stream) {
    return llvm::cast<dataflow::StreamType>(stream.getType()).getShape();
  }

  /// Creates kernel `OpTy` from its own operands and attributes; its tile
  /// and recompute mark are left for later.
  template <typename OpTy, typename... Args> OpTy kernel(Args &&...args) {
    return builder.create<OpTy>(loc, std::forward<Args>(args)...,
                                dataflow::TileAttr(), mlir::UnitAttr());
  }
  /// `scale * op(lhs) @ op(rhs) (+ bias)`, see dataflow.matmul.
  mlir::Value matmul(mlir::Type type, mlir::Value lhs, mlir::Value rhs,
                     mlir::Value bias = {}, bool transposeLhs = false,
                     bool transposeRhs = false, bool reduceBatch = false,
                     mlir::FloatAttr scale = {}) {
    auto flag = [&](bool set) {
      return set ? builder.getUnitAttr() : mlir::UnitAttr();
    };
    return kernel<dataflow::MatmulOp>(type, lhs, rhs, bias, flag(transposeLhs),
                                      flag(transposeRhs), flag(reduceBatch),
                                      scale);
  }
  mlir::Value map(dataflow::MapKind kind, mlir::ValueRange inputs) {
    return kernel<dataflow::MapOp>(
        inputs.front().getType(),
        dataflow::MapKindAttr::get(builder.getContext(), kind), inputs);
  }
  /// `input` dropped at `rate` with the mask of dropout site `site`.
  mlir::Value dropout(mlir::Value input, mlir::FloatAttr rate,
                      mlir::IntegerAttr site) {
    return kernel<dataflow::DropoutOp>(input.getType(), input, rate, site);
  }

  /// The stream a transformer value has been lowered to.
  mlir::Value lookup(mlir::Value value) { return env.lookup(value); }
  void define(mlir::Value value, mlir::Value stream) { env.map(value, stream); }

  /// The weight `weight` (a transformer.weight result) streamed into the
  /// current stage: once per stage, however many kernels read it.
  mlir::Value weight(mlir::Value weight) {
    auto it = stageWeights.find(weight);
    if (it != stageWeights.end())
      return it->second;
    auto op = weight.getDefiningOp<transformer::WeightOp>();
    auto type = llvm::cast<mlir::RankedTensorType>(op.getType());
    mlir::Value stream = builder.create<dataflow::WeightInOp>(
        loc, streamOf(type), op.getName(),
        type.getNumElements() * dataflow::elementBytes(type.getElementType()));
    stageWeights[weight] = stream;
    return stream;
  }
  /// `weight(w)` for an optional weight.
  mlir::Value optionalWeight(mlir::Value w) {
    return w ? weight(w) : mlir::Value();
  }
  /// Streams `grad`, the gradient of transformer weight `weight`, out.
  void gradOut(mlir::Value weight, mlir::Value grad) {
    auto op = weight.getDefiningOp<transformer::WeightOp>();
    auto type = llvm::cast<dataflow::StreamType>(grad.getType()).getTensor();
    builder.create<dataflow::GradOutOp>(
        loc, op.getName(), grad,
        type.getNumElements() * dataflow::elementBytes(type.getElementType()));
  }

  /// Streams the gradient of `bias`, an optional weight added to every
  /// row, out: the rows of `grad` summed.
  void gradOutBias(mlir::Value bias, mlir::Value grad);

  /// Adds `contribution` to the gradient of transformer value `value`.
  void addGrad(mlir::Value value, mlir::Value contribution) {
    auto [it, inserted] = grads.try_emplace(value, contribution);
    if (!inserted)
      it->second = map(dataflow::MapKind::add, {it->second, contribution});
  }
  /// The gradient of transformer value `value`, all contributions summed.
  mlir::FailureOr<mlir::Value> grad(mlir::Value value) {
    auto it = grads.find(value);
    if (it == grads.end())
      return step.emitOpError()
             << "has a value the loss does not depend on; every op of a "
                "training step must feed the loss";
    return it->second;
  }

  /// Starts a stage: kernels created from now on belong to it.
  void beginStage(llvm::StringRef name, dataflow::Phase phase,
                  std::optional<int64_t> layer) {
    runs.push_back({name.str(), phase, layer, lastOp()});
    stageWeights.clear();
  }
  /// True while the backward stage of a layer reruns its forward kernels
  /// (recompute): what only the first forward pass must do, such as adding
  /// to the loss, is then not done again.
  bool isRecomputing() const {
    return !runs.empty() && runs.back().phase == dataflow::Phase::backward;
  }
  /// Marks every kernel created after `after` (the body's last op then, or
  /// null for an empty body) as recomputing a forward activation.
  void markRecomputedSince(mlir::Operation *after) {
    auto first = after ? std::next(after->getIterator()) : body->begin();
    for (mlir::Operation &op : llvm::make_range(first, body->end()))
      if (llvm::isa<dataflow::KernelOpInterface>(op))
        op.setAttr("recompute", builder.getUnitAttr());
  }
  /// Erases the kernels marked recomputed after `after` up to `last` whose
  /// results nothing reads (the layer's output, rebuilt with the rest of
  /// its forward pass but needed by no backward kernel), and the weight
  /// streams only they read. Called once the stage's backward kernels
  /// exist.
  void eraseUnreadRecomputation(mlir::Operation *after, mlir::Operation *last);
  /// The body's last op, or null when it is empty. (An op list's size() is
  /// linear; marking places with ops keeps lowering linear in layers.)
  mlir::Operation *lastOp() const {
    return body->empty() ? nullptr : &body->back();
  }

  /// Moves each stage's kernels into a dataflow.stage, yielding the values
  /// later stages read.
  void outlineStages();

private:
  struct StageRun {
    std::string name;
    dataflow::Phase phase;
    std::optional<int64_t> layer;
    /// The op before the stage's first one (null: the body's start).
    mlir::Operation *after;
  };

  transformer::TrainStepOp step;
  mlir::OpBuilder builder;
  mlir::Location loc;
  mlir::Block *body;
  mlir::IRMapping env;
  llvm::DenseMap<mlir::Value, mlir::Value> stageWeights;
  llvm::DenseMap<mlir::Value, mlir::Value> grads;
  llvm::SmallVector<StageRun> runs;
};

} // namespace cgpt

#endif // CGPT_CONVERSION_TRANSFORMERTODATAFLOW_STEPLOWERING_H
