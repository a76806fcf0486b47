//===- DataflowToWafer.cpp - tiled kernels to regions of the mesh ---------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Conversion/DataflowToWafer/DataflowToWafer.h"

#include "cgpt/Dialect/Dataflow/Analysis/StepCosts.h"
#include "cgpt/Support/BatchChecks.h"
#include "cgpt/Target/WaferTargetModel.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <set>

namespace cgpt {
#define GEN_PASS_DEF_CONVERTDATAFLOWTOWAFER
#include "cgpt/Conversion/Passes.h.inc"
} // namespace cgpt

using namespace mlir;
using namespace cgpt;
using namespace cgpt::dataflow;
using cgpt::wafer::DeviceOp;

namespace {

RankedTensorType tensorOf(Value stream) {
  return cast<StreamType>(stream.getType()).getTensor();
}

/// Bytes of a statically shaped stream's tensor (a weight or a gradient).
int64_t staticBytes(Value stream) {
  RankedTensorType type = tensorOf(stream);
  return type.getNumElements() * elementBytes(type.getElementType());
}

/// Whether `value` is a stream with one slice per sequence (an activation),
/// not a weight, a gradient or a statistic of the whole micro-batch.
bool isPerSequence(Value value) {
  auto stream = dyn_cast<StreamType>(value.getType());
  return stream && !stream.getTensor().hasStaticShape();
}

/// The bytes of the static tensor a kernel sums over the pass (a weight
/// gradient, f32), and those of the weight it streams in or the gradient it
/// streams out.
struct Residency {
  int64_t accumulator = 0;
  std::optional<int64_t> weightBytes;
};

Residency residencyOf(KernelOpInterface kernel) {
  Residency r;
  if (Value gradient = kernel.getAccumulatedGradient()) {
    r.accumulator = tensorOf(gradient).getNumElements() * kAccumulatorBytes;
    r.weightBytes = staticBytes(gradient);
  } else if (Value weight = kernel.getStreamedWeight()) {
    r.weightBytes = staticBytes(weight);
  }
  return r;
}

/// [rows, columns, contracted] per sequence: a matmul's tiling space, or a
/// row kernel's [rows, columns] with nothing contracted.
SmallVector<int64_t> shapeOf(KernelOpInterface kernel) {
  SmallVector<int64_t> space = kernel.getTilingSpace();
  space.resize(3, 1);
  return space;
}

/// "matmul" from "dataflow.matmul".
StringRef mnemonic(Operation *op) {
  return op->getName().getStringRef().split('.').second;
}

/// One region being built: the kernels it runs, in order.
struct RegionDraft {
  wafer::KernelKind kind;
  SmallVector<Operation *> kernels;
  std::string symbol;
};

/// Groups the kernels of `body` into regions: elementwise work joins the
/// region just before it when it consumes that region's result; attention's
/// products and softmax join one fused region while they follow each other.
SmallVector<RegionDraft> groupKernels(Block &body) {
  SmallVector<RegionDraft> drafts;
  llvm::DenseMap<Operation *, size_t> regionOf;
  for (Operation &op : body) {
    auto kernel = dyn_cast<KernelOpInterface>(op);
    if (!kernel)
      continue;
    wafer::KernelKind kind = kernel.getKernelKind();
    bool joins = false;
    if (!drafts.empty()) {
      RegionDraft &last = drafts.back();
      bool readsLast = llvm::any_of(op.getOperands(), [&](Value operand) {
        Operation *producer = operand.getDefiningOp();
        auto it = producer ? regionOf.find(producer) : regionOf.end();
        return it != regionOf.end() && it->second == drafts.size() - 1;
      });
      joins = (kind == wafer::KernelKind::elementwise && readsLast) ||
              (kind == wafer::KernelKind::attention &&
               last.kind == wafer::KernelKind::attention);
    }
    if (!joins)
      drafts.push_back({kind, {}, ""});
    drafts.back().kernels.push_back(&op);
    regionOf[&op] = drafts.size() - 1;
  }
  for (auto [index, draft] : llvm::enumerate(drafts))
    draft.symbol =
        (mnemonic(draft.kernels.front()) + "." + std::to_string(index)).str();
  return drafts;
}

/// A weight matmul's epilogue (wafer.region's `bias`, `scale` and
/// `epilogue`): its own scale and bias (an expert matmul's, each expert's
/// bias), then the first kernels fused after it while they are maps that
/// each take the running value once and hold any other input from outside
/// the region.
struct Epilogue {
  bool bias = false;
  FloatAttr scale;
  SmallVector<Attribute> maps;

  Epilogue(const RegionDraft &draft, MLIRContext *context) {
    if (draft.kind != wafer::KernelKind::weight_matmul)
      return;
    Value running;
    if (auto product = dyn_cast<MatmulOp>(draft.kernels.front())) {
      bias = static_cast<bool>(product.getBias());
      scale = product.getScaleAttr();
      running = product.getResult();
    } else if (auto experts = dyn_cast<ExpertMatmulOp>(draft.kernels.front())) {
      bias = static_cast<bool>(experts.getBias());
      running = experts.getResult();
    } else {
      return;
    }
    for (Operation *op : llvm::drop_begin(draft.kernels)) {
      auto map = dyn_cast<MapOp>(op);
      if (!map || llvm::count(map.getInputs(), running) != 1 ||
          llvm::any_of(map.getInputs(), [&](Value input) {
            Operation *producer = input.getDefiningOp();
            return input != running && producer &&
                   llvm::is_contained(draft.kernels, producer);
          }))
        return;
      auto at = llvm::find(map.getInputs(), running);
      maps.push_back(wafer::EpilogueMapAttr::get(
          context, map.getKind(), at - map.getInputs().begin(),
          /*kept=*/!running.hasOneUse()));
      running = map.getResult();
    }
  }
};

/// The loss turn-around runs over the vocabulary in chunks as wide as the
/// hidden size, so that its per-token logits are never larger than the
/// hidden state: the logits product runs once per chunk to find each
/// token's log-sum-exp, and again with the softmax gradient, the input
/// gradient and the embedding gradient, chunk by chunk (docs/wafer.md).
struct VocabularyChunks {
  int64_t vocabulary = 0;
  int64_t chunks = 1;
  /// The product whose result the loss reads.
  Operation *logits = nullptr;

  explicit VocabularyChunks(Block &body) {
    for (auto matmul : body.getOps<MatmulOp>()) {
      if (!llvm::any_of(matmul->getUsers(), [](Operation *user) {
            return isa<CrossEntropyOp>(user);
          }))
        continue;
      RankedTensorType result = tensorOf(matmul.getResult());
      vocabulary = result.getShape().back();
      int64_t hidden = std::max<int64_t>(1, matmul.getTilingSpace()[2]);
      chunks = std::max<int64_t>(1, llvm::divideCeil(vocabulary, hidden));
      logits = matmul;
      return;
    }
  }
  /// Whether `value` is a per-sequence stream as wide as the vocabulary.
  bool isVocabularyWide(Value value) const {
    return logits && isPerSequence(value) &&
           tensorOf(value).getShape().back() == vocabulary;
  }
  /// Bytes per sequence `value` holds while live: one chunk's worth when it
  /// is as wide as the vocabulary.
  int64_t liveBytes(Value value) const {
    int64_t bytes = bytesPerSequence(tensorOf(value));
    return isVocabularyWide(value) ? llvm::divideCeil(bytes, chunks) : bytes;
  }
  /// Whether `kernel` reads or writes a vocabulary-wide stream.
  bool touches(Operation *kernel) const {
    auto wide = [&](Value value) { return isVocabularyWide(value); };
    return llvm::any_of(kernel->getOperands(), wide) ||
           llvm::any_of(kernel->getResults(), wide);
  }
};

/// Bytes per sequence of activations live while each region runs: every
/// per-sequence stream defined at or before one of its kernels and used at
/// or after it. A stream made and read only inside one region never exists
/// whole and does not count: attention's scores and probabilities, or a
/// product whose every element the fused elementwise work takes as the
/// chain of sums delivers it. `draftOf` is the region of each kernel.
SmallVector<int64_t>
liveBytes(Block &body, ArrayRef<RegionDraft> drafts,
          const llvm::DenseMap<Operation *, size_t> &draftOf,
          const VocabularyChunks &vocabulary) {
  llvm::DenseMap<Operation *, int64_t> position;
  int64_t end = 0;
  for (Operation &op : body)
    position[&op] = end++;
  auto sameRegion = [&](Operation *a, Operation *b) {
    auto first = draftOf.find(a), second = draftOf.find(b);
    return first != draftOf.end() && second != draftOf.end() &&
           first->second == second->second;
  };

  // (first, last, bytes) of every per-sequence value the stage touches.
  SmallVector<std::tuple<int64_t, int64_t, int64_t>> intervals;
  llvm::SmallPtrSet<Value, 32> seen;
  auto consider = [&](Value value) {
    if (!isPerSequence(value) || !seen.insert(value).second)
      return;
    Operation *producer = value.getDefiningOp();
    bool inside = producer && position.count(producer);
    int64_t first = inside ? position[producer] : 0;
    int64_t last = first;
    bool regionOwn = inside;
    for (Operation *user : value.getUsers()) {
      Operation *local = body.findAncestorOpInBlock(*user);
      if (!local)
        continue;
      last = std::max(last, isa<YieldOp>(local) ? end : position[local]);
      regionOwn &= local == user && sameRegion(producer, local);
    }
    if (!regionOwn)
      intervals.push_back({first, last, vocabulary.liveBytes(value)});
  };
  for (Operation &op : body) {
    for (Value operand : op.getOperands())
      consider(operand);
    for (Value result : op.getResults())
      consider(result);
  }

  // A region's kernels run together, each taking its operands' elements as
  // they arrive: a stream live anywhere in its span is live while it runs
  // (a fused matmul's input and the residual sum it delivers coexist).
  SmallVector<int64_t> live;
  for (const RegionDraft &draft : drafts) {
    int64_t begin = end, finish = 0;
    for (Operation *kernel : draft.kernels) {
      begin = std::min(begin, position[kernel]);
      finish = std::max(finish, position[kernel]);
    }
    int64_t bytes = 0;
    for (auto [first, last, size] : intervals)
      if (first <= finish && begin <= last)
        bytes += size;
    live.push_back(bytes);
  }
  return live;
}

class ProgramLowering : public OpConversionPattern<ProgramOp> {
public:
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ProgramOp program, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<StringRef> targetName = program.getTarget();
    if (!targetName)
      return program.emitOpError()
             << "is not tiled for a target; run dataflow-tile first";
    // Loaded here so that a target that cannot be read is reported once,
    // at the program, before any wafer op refers to it.
    FailureOr<const target::WaferTargetModel *> target =
        target::WaferTargetModel::loadShared(*targetName, program.getContext());
    if (failed(target))
      return failure();
    StepCosts costs = computeStepCosts(program);
    if (costs.overflowed)
      return program.emitOpError()
             << "executes more FLOPs per sequence than a 64-bit count holds "
                "(2^63); a shorter sequence or fewer layers brings it under";
    OptimizerStepOp optimizer = program.getOptimizerStep();

    OpBuilder builder(program.getContext());
    Location loc = program.getLoc();
    OwningOpRef<DeviceOp> device = builder.create<DeviceOp>(
        loc, program.getSymName(), *targetName, program.getGlobalBatch(),
        program.getNumCsx(), program.getSeqLen(), program.getMicroBatch(),
        /*micro_batch=*/0, /*grad_accum_steps=*/0, costs.keptBytesPerSequence,
        optimizer.getParameters(), costs.flopsPerSequence,
        optimizer.getMaxGradientNorm(),
        /*checkpoint=*/wafer::CheckpointAttr(),
        /*placer=*/StringAttr(), /*execution=*/wafer::ExecutionModeAttr(),
        /*plan=*/StringAttr(), /*explored=*/ArrayAttr());
    builder.setInsertionPointToEnd(&device->getBody().emplaceBlock());

    int64_t order = 0;
    for (auto stage : program.getLoop().getBodyBlock().getOps<StageOp>())
      if (failed(lowerStage(stage, order++, program.getSeqLen(), builder)))
        return failure();

    rewriter.setInsertionPoint(program);
    rewriter.insert(device.release());
    rewriter.eraseOp(program);
    return success();
  }

private:
  LogicalResult lowerStage(StageOp stage, int64_t order, int64_t sequenceLength,
                           OpBuilder &builder) const;
};

LogicalResult ProgramLowering::lowerStage(StageOp stage, int64_t order,
                                          int64_t sequenceLength,
                                          OpBuilder &builder) const {
  Location loc = stage.getLoc();
  std::string name =
      (stage.getName() + "." + stringifyPhase(stage.getPhase())).str();
  Block &body = stage.getBody().front();
  int64_t checkpointBytes = 0;
  for (auto stash : body.getOps<StashOp>())
    checkpointBytes +=
        bytesPerSequence(stash.getBuffer().getType().getTensor());
  auto waferStage = builder.create<wafer::StageOp>(
      loc, name, order, stringifyPhase(stage.getPhase()),
      stage.getLayerAttr() ? builder.getI64IntegerAttr(*stage.getLayer())
                           : IntegerAttr(),
      /*slot=*/IntegerAttr(), checkpointBytes);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&waferStage.getBody().emplaceBlock());

  for (Operation &op : body)
    if (auto kernel = dyn_cast<KernelOpInterface>(op);
        kernel && !kernel.getTileOrNull())
      return op.emitOpError() << "has no tile; run dataflow-tile first";

  SmallVector<RegionDraft> drafts = groupKernels(body);
  // Which region runs each kernel: for what is live, what regions read and
  // the weight and gradient streams.
  llvm::DenseMap<Operation *, size_t> draftOf;
  for (auto [index, draft] : llvm::enumerate(drafts))
    for (Operation *kernel : draft.kernels)
      draftOf[kernel] = index;
  VocabularyChunks vocabulary(body);
  SmallVector<int64_t> live = liveBytes(body, drafts, draftOf, vocabulary);
  llvm::DenseMap<Operation *, StringAttr> regionOf;
  for (auto [index, draft, liveBytes] : llvm::enumerate(drafts, live)) {
    Operation *principal = draft.kernels.front();
    auto kernel = cast<KernelOpInterface>(principal);
    int64_t flops = 0, accumulator = 0;
    std::optional<int64_t> weightBytes;
    SmallVector<StringRef> fused;
    for (Operation *op : draft.kernels) {
      auto member = cast<KernelOpInterface>(op);
      flops += member.getExecutedFlopsPerSequence();
      Residency residency = residencyOf(member);
      accumulator += residency.accumulator;
      if (residency.weightBytes)
        weightBytes = weightBytes.value_or(0) + *residency.weightBytes;
      if (op != principal)
        fused.push_back(op->getName().getStringRef());
    }
    // Sizes the wafer verifiers bound; past them a figure would be
    // meaningless, so the cause is named here rather than a bare limit.
    if (flops > kMaxFlopsPerSequence)
      return principal->emitOpError()
             << "executes " << flops << " FLOPs per sequence (with what is "
             << "fused into it) at a sequence of " << sequenceLength
             << " tokens, over the " << kMaxFlopsPerSequence
             << " cgpt models per kernel; "
             << (llvm::any_of(
                     draft.kernels,
                     [&](Operation *op) { return vocabulary.touches(op); })
                     ? "a smaller vocabulary (vocab_size) or a shorter "
                       "sequence (max_sequence_length, or --sequence-length)"
                     : "a shorter sequence (max_sequence_length, or "
                       "--sequence-length) or a narrower model")
             << " brings it under";
    // The same for the bytes it streams in or sums (an embedding table and
    // its gradient grow with the vocabulary).
    for (auto [what, bytes] : {std::pair{"streams in", weightBytes.value_or(0)},
                               std::pair{"sums a gradient of", accumulator}})
      if (bytes > kMaxPerSequence)
        return principal->emitOpError()
               << what << " " << bytes << " B, over the " << kMaxPerSequence
               << " B cgpt models per kernel; "
               << (llvm::any_of(draft.kernels,
                                [&](Operation *op) {
                                  return vocabulary.touches(op) ||
                                         isa<GatherOp, ScatterAddOp>(op);
                                })
                       ? "a smaller vocabulary (vocab_size)"
                       : "a narrower model")
               << " brings it under";
    // The stored element: of the first stream operand, or of the result for
    // a kernel that reads none (rotary_angles makes its table).
    Value stored = principal->getNumOperands() &&
                           isa<StreamType>(principal->getOperand(0).getType())
                       ? principal->getOperand(0)
                       : principal->getResult(0);
    Type element = tensorOf(stored).getElementType();
    bool chunked = llvm::any_of(
        draft.kernels, [&](Operation *op) { return vocabulary.touches(op); });
    bool repeated = llvm::is_contained(draft.kernels, vocabulary.logits);
    // The earlier regions of the stage whose results it reads.
    std::set<size_t> producers;
    for (Operation *op : draft.kernels)
      for (Value operand : op->getOperands())
        if (Operation *producer = operand.getDefiningOp())
          if (auto it = draftOf.find(producer);
              it != draftOf.end() && it->second != index)
            producers.insert(it->second);
    // The per-sequence activations it reads from outside itself and those
    // it makes for later kernels: what it works on.
    int64_t operandBytes = 0;
    llvm::SmallPtrSet<Value, 8> counted;
    auto count = [&](Value value) {
      if (isPerSequence(value) && counted.insert(value).second)
        operandBytes += vocabulary.liveBytes(value);
    };
    for (Operation *op : draft.kernels) {
      for (Value operand : op->getOperands())
        if (Operation *producer = operand.getDefiningOp();
            !producer || !llvm::is_contained(draft.kernels, producer))
          count(operand);
      for (Value result : op->getResults())
        if (llvm::any_of(result.getUsers(), [&](Operation *user) {
              return !llvm::is_contained(draft.kernels, user);
            }))
          count(result);
    }
    SmallVector<Attribute> reads;
    for (size_t producer : producers)
      reads.push_back(FlatSymbolRefAttr::get(
          builder.getStringAttr(drafts[producer].symbol)));
    // The router's choice runs after its product, on the region's cores.
    auto router = dyn_cast<RouteOp>(principal);
    Epilogue epilogue(draft, builder.getContext());
    builder.create<wafer::RegionOp>(
        principal->getLoc(), draft.symbol, draft.kind,
        principal->getName().getStringRef(), builder.getStrArrayAttr(fused),
        isa<MapOp>(principal) ? cast<MapOp>(principal).getKindAttr()
                              : MapKindAttr(),
        /*placement=*/wafer::RectAttr(), /*layout=*/wafer::LayoutAttr(),
        /*wave=*/IntegerAttr(), flops, shapeOf(kernel), elementBytes(element),
        liveBytes, operandBytes, accumulator,
        weightBytes ? builder.getI64IntegerAttr(*weightBytes) : IntegerAttr(),
        chunked ? vocabulary.chunks : 1, repeated ? 2 : 1,
        kernel.getRoutedExperts(), /*expert_rows=*/IntegerAttr(),
        router ? router.getTopKAttr() : IntegerAttr(),
        router ? router.getNullExpertAttr() : FloatAttr(),
        router && router.getRouterF32(), epilogue.bias, epilogue.scale,
        builder.getArrayAttr(epilogue.maps), builder.getArrayAttr(reads),
        /*colors=*/DenseI64ArrayAttr(), /*sram_bytes=*/IntegerAttr());
    for (Operation *op : draft.kernels)
      regionOf[op] = builder.getStringAttr(draft.symbol);
  }

  for (Operation &op : body) {
    if (auto in = dyn_cast<WeightInOp>(op)) {
      // The first kernel that reads the weight takes it in; later readers
      // in the stage get it again by multicast from the same entry. (A
      // use list runs newest first, not in program order; every kernel is
      // in the stage's body.)
      Operation *first = nullptr;
      for (Operation *user : in->getUsers())
        if (regionOf.count(user) && (!first || user->isBeforeInBlock(first)))
          first = user;
      if (first)
        builder.create<wafer::IngressOp>(in.getLoc(), in.getName(),
                                         regionOf[first].getValue(),
                                         in.getBytes(), DenseI64ArrayAttr());
    } else if (auto out = dyn_cast<GradOutOp>(op)) {
      Operation *producer = out.getGrad().getDefiningOp();
      if (regionOf.count(producer))
        builder.create<wafer::EgressOp>(
            out.getLoc(), regionOf[producer].getValue(), out.getName(),
            out.getBytes(), DenseI64ArrayAttr());
    }
  }
  return success();
}

struct ConvertDataflowToWafer
    : cgpt::impl::ConvertDataflowToWaferBase<ConvertDataflowToWafer> {
  void runOnOperation() override {
    ConversionTarget target(getContext());
    target.addLegalDialect<wafer::WaferDialect>();
    target.addIllegalOp<ProgramOp>();
    RewritePatternSet patterns(&getContext());
    populateDataflowToWaferConversionPatterns(patterns);
    // A program the pattern refuses has had its cause said; the driver's
    // "failed to legalize" after it would be a second error for one cause.
    bool causeSaid = false;
    ScopedDiagnosticHandler oneErrorPerCause(
        &getContext(), [&](Diagnostic &diag) -> LogicalResult {
          if (diag.getSeverity() != DiagnosticSeverity::Error)
            return failure();
          if (causeSaid &&
              StringRef(diag.str()).starts_with("failed to legalize operation"))
            return success();
          causeSaid = true;
          return failure();
        });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void cgpt::populateDataflowToWaferConversionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ProgramLowering>(patterns.getContext());
}
