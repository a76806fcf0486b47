//===- TransformerToDataflow.cpp - training step to kernels ---------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// A training step is lowered as one unit, because the backward kernels of
// every op run in reverse order across ops and layers. Each transformer op
// lowers itself through DataflowLoweringOpInterface (its models live with
// its kernels in lib/Kernels): `lowerForward` emits the op's forward
// kernels and returns the activations its backward reads; `lowerBackward`
// emits the hand-derived gradient kernels. The step pattern runs the ops
// forward, then backward, and groups the kernels into stages.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Conversion/TransformerToDataflow/TransformerToDataflow.h"

#include "cgpt/Conversion/TransformerToDataflow/LateRebuild.h"
#include "cgpt/Conversion/TransformerToDataflow/LoweringInterface.h"

#include "llvm/ADT/SetVector.h"

namespace cgpt {
#define GEN_PASS_DEF_CONVERTTRANSFORMERTODATAFLOW
#include "cgpt/Conversion/Passes.h.inc"
} // namespace cgpt

using namespace mlir;
using namespace cgpt;
using namespace cgpt::dataflow;

#include "cgpt/Conversion/TransformerToDataflow/LoweringInterface.cpp.inc"

namespace {

/// Runs `op`'s forward lowering.
FailureOr<SavedActivations> lowerForward(Operation *op, StepLowering &s) {
  auto lowering = dyn_cast<DataflowLoweringOpInterface>(op);
  if (!lowering)
    return op->emitOpError()
           << "has no dataflow lowering (DataflowLoweringOpInterface); "
              "cgpt::registerKernelModels attaches those of cgpt's ops";
  return lowering.lowerForward(s);
}

/// Runs `op`'s backward lowering; its forward lowering ran before.
LogicalResult lowerBackward(Operation *op, ArrayRef<Value> saved,
                            StepLowering &s) {
  return cast<DataflowLoweringOpInterface>(op).lowerBackward(saved, s);
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
    if (auto weight = operand.getDefiningOp<transformer::WeightOp>())
      if (IntegerAttr layer = weight.getLayerAttr())
        return layer.getInt();
  return std::nullopt;
}

FailureOr<StepStructure> groupIntoStages(transformer::TrainStepOp step) {
  StepStructure structure;
  bool seenLayer = false;
  for (Operation &op : step.getBodyBlock()) {
    if (isa<transformer::WeightOp, transformer::YieldOp>(op))
      continue;
    if (isa<transformer::TokenEmbeddingOp, transformer::PositionEmbeddingOp,
            transformer::RotaryEmbeddingOp>(op)) {
      if (seenLayer)
        return op.emitOpError()
               << "comes after a decoder layer; embeddings must come first";
      structure.embed.push_back(&op);
      continue;
    }
    // Dropout reads no weights: it runs with the op whose result it drops.
    if (auto dropout = dyn_cast<transformer::DropoutOp>(op)) {
      Operation *producer = dropout.getInput().getDefiningOp();
      if (producer && llvm::is_contained(structure.embed, producer)) {
        structure.embed.push_back(&op);
        continue;
      }
      if (structure.head.empty() && !structure.layers.empty()) {
        structure.layers.back().second.push_back(&op);
        continue;
      }
    }
    std::optional<int64_t> layer = layerOf(&op);
    // Residual adds read no weights: they close the layer before them.
    if (isa<transformer::ResidualAddOp>(op) && !structure.head.empty())
      return op.emitOpError() << "follows the output head";
    if (isa<transformer::ResidualAddOp>(op) && !structure.layers.empty()) {
      structure.layers.back().second.push_back(&op);
      continue;
    }
    if (layer) {
      if (!structure.head.empty())
        return op.emitOpError()
               << "reads layer " << *layer << " weights after the output head";
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
      if (def &&
          !isa<transformer::WeightOp, transformer::RotaryEmbeddingOp>(def) &&
          !inLayer.contains(def))
        return operand;
    }
  return Value();
}

//===----------------------------------------------------------------------===//
// The step pattern
//===----------------------------------------------------------------------===//

class TrainStepLowering : public OpConversionPattern<transformer::TrainStepOp> {
public:
  TrainStepLowering(MLIRContext *context, Recompute recompute)
      : OpConversionPattern(context), recompute(recompute) {}

  LogicalResult
  matchAndRewrite(transformer::TrainStepOp step, OpAdaptor,
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
    // The loop's micro-batch is known now when the request fixes it;
    // otherwise wafer-plan-batch chooses it (0 until then).
    int64_t perSystem =
        llvm::divideCeil(step.getGlobalBatch(), step.getNumCsx());
    int64_t micro = 0;
    training::MicroBatchAttr request = step.getMicroBatch();
    if (request.getMode() == training::MicroBatchMode::fixed &&
        perSystem % request.getSize() == 0)
      micro = request.getSize();
    else if (request.getMode() == training::MicroBatchMode::none)
      micro = perSystem;
    auto loop = builder.create<MicroBatchLoopOp>(step.getLoc(), micro,
                                                 micro ? perSystem / micro : 0);
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
    for (auto weight : step.getBodyBlock().getOps<transformer::WeightOp>())
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
  DenseMap<Operation *, SavedActivations> saved;
  auto forward = [&](ArrayRef<Operation *> ops) -> LogicalResult {
    for (Operation *op : ops) {
      FailureOr<SavedActivations> kept = lowerForward(op, s);
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
    if (recompute != Recompute::none)
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
    // The kernels that rebuild the layer's activations, recompute=layer.
    Operation *recomputedAfter = nullptr, *recomputedLast = nullptr;
    if (recompute != Recompute::none) {
      // Rerun the layer's forward kernels from its kept input.
      s.define(layerInput(ops), fetch(buffers.front()));
      recomputedAfter = s.lastOp();
      if (failed(forward(ops)))
        return failure();
      s.markRecomputedSince(recomputedAfter);
      recomputedLast = s.lastOp();
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
    s.eraseUnreadRecomputation(recomputedAfter, recomputedLast);
    if (recompute == Recompute::tensor)
      rebuildLate(s.getBody(), recomputedAfter, s.b());
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
    getOperation().walk([&](transformer::TrainStepOp step) {
      stageable &= succeeded(groupIntoStages(step));
    });
    if (!stageable)
      return signalPassFailure();

    ConversionTarget target(getContext());
    target.addLegalDialect<DataflowDialect>();
    target.addIllegalDialect<transformer::TransformerDialect>();
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
