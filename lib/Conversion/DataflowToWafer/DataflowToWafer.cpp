//===- DataflowToWafer.cpp - tiled kernels to regions of the mesh ---------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Conversion/DataflowToWafer/DataflowToWafer.h"

#include "cgpt/Dialect/Dataflow/Analysis/StepCosts.h"
#include "cgpt/Target/WaferTargetModel.h"

#include "llvm/ADT/MapVector.h"

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

/// What a kernel holds for the whole micro-batch, per sequence; what it
/// holds once per pass; and, for a matmul against a streamed weight, the
/// weight's bytes (the kernel keeps the smaller of the two stationary).
struct Residency {
  int64_t stationary = 0;
  int64_t accumulator = 0;
  std::optional<int64_t> weightBytes;
};

Residency residencyOf(Operation *kernel) {
  Residency r;
  if (auto matmul = dyn_cast<MatmulOp>(kernel)) {
    auto result = tensorOf(matmul.getResult());
    if (matmul.getReduceBatch()) {
      // A weight gradient: the f32 sum over every token of the pass.
      r.accumulator = result.getNumElements() * kAccumulatorBytes;
    } else if (tensorOf(matmul.getRhs()).getRank() == 2) {
      // Weight streaming: the activations stay while the weight passes.
      r.stationary = bytesPerSequence(tensorOf(matmul.getLhs()));
      r.weightBytes = staticBytes(matmul.getRhs());
    } else {
      // Attention: every query meets every key and value.
      r.stationary = bytesPerSequence(tensorOf(matmul.getRhs()));
    }
  } else if (auto gather = dyn_cast<GatherOp>(kernel)) {
    r.stationary = bytesPerSequence(tensorOf(gather.getIds()));
  } else if (isa<ScatterAddOp, PositionGradOp, SumBatchOp>(kernel)) {
    r.accumulator =
        tensorOf(kernel->getResult(0)).getNumElements() * kAccumulatorBytes;
  }
  return r;
}

/// The number of tiles of a kernel per sequence and the share of their
/// work that is not padding.
std::pair<int64_t, double> tilesOf(ArrayRef<int64_t> space,
                                   ArrayRef<int64_t> tile) {
  int64_t tiles = 1;
  double useful = 1, padded = 1;
  for (auto [extent, size] : llvm::zip(space, tile)) {
    int64_t count = (extent + size - 1) / size;
    tiles *= count;
    useful *= static_cast<double>(extent);
    padded *= static_cast<double>(count * size);
  }
  return {tiles, useful / padded};
}

/// "matmul" from "dataflow.matmul".
StringRef mnemonic(Operation *op) {
  return op->getName().getStringRef().split('.').second;
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
    FailureOr<target::WaferTargetModel> target =
        target::WaferTargetModel::load(*targetName, program.getContext());
    if (failed(target))
      return failure();
    StepCosts costs = computeStepCosts(program);
    OptimizerStepOp optimizer = program.getOptimizerStep();

    OpBuilder builder(program.getContext());
    Location loc = program.getLoc();
    OwningOpRef<DeviceOp> device = builder.create<DeviceOp>(
        loc, program.getSymName(), *targetName, target->getMeshWidth(),
        target->getMeshHeight(), target->getCoreSramBytes(),
        program.getGlobalBatch(), program.getNumCsx(), program.getSeqLen(),
        program.getMicroBatch(), /*micro_batch=*/0, /*grad_accum_steps=*/0,
        costs.keptBytesPerSequence, optimizer.getParameters(),
        costs.flopsPerSequence, /*plan=*/StringAttr());
    builder.setInsertionPointToEnd(&device->getBody().emplaceBlock());

    int64_t order = 0;
    for (auto stage : program.getLoop().getBodyBlock().getOps<StageOp>())
      if (failed(lowerStage(stage, order++, builder)))
        return failure();

    rewriter.setInsertionPoint(program);
    rewriter.insert(device.release());
    rewriter.eraseOp(program);
    return success();
  }

private:
  LogicalResult lowerStage(StageOp stage, int64_t order,
                           OpBuilder &builder) const;
};

LogicalResult ProgramLowering::lowerStage(StageOp stage, int64_t order,
                                          OpBuilder &builder) const {
  Location loc = stage.getLoc();
  std::string name = (stage.getName() + "." +
                      stringifyPhase(stage.getPhase()))
                         .str();
  auto waferStage = builder.create<wafer::StageOp>(
      loc, name, order, stringifyPhase(stage.getPhase()),
      stage.getLayerAttr() ? builder.getI64IntegerAttr(*stage.getLayer())
                           : IntegerAttr());
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&waferStage.getBody().emplaceBlock());

  // Regions first, in kernel order: placement keeps neighbours adjacent.
  llvm::MapVector<Operation *, StringAttr> regions;
  for (Operation &op : stage.getBody().front()) {
    auto kernel = dyn_cast<KernelOpInterface>(op);
    if (!kernel)
      continue;
    TileAttr tile = kernel.getTileOrNull();
    if (!tile)
      return op.emitOpError() << "has no tile; run dataflow-tile first";
    std::string symbol =
        (mnemonic(&op) + "." + std::to_string(regions.size())).str();
    auto [tiles, efficiency] = tilesOf(kernel.getTilingSpace(), tile.getSizes());
    Residency residency = residencyOf(&op);
    builder.create<wafer::RegionOp>(
        op.getLoc(), symbol, op.getName().getStringRef(),
        /*placement=*/wafer::RectAttr(), kernel.getExecutedFlopsPerSequence(),
        tile.getSizes(), tiles, APFloat(efficiency),
        tileWorkingSetBytes(kernel, tile.getSizes()),
        tileInputBytes(kernel, tile.getSizes()), residency.stationary,
        residency.accumulator,
        residency.weightBytes ? builder.getI64IntegerAttr(*residency.weightBytes)
                              : IntegerAttr(),
        /*sram_bytes=*/IntegerAttr());
    regions[&op] = builder.getStringAttr(symbol);
  }

  for (Operation &op : stage.getBody().front()) {
    if (auto in = dyn_cast<WeightInOp>(op)) {
      // The first kernel that reads the weight takes it in; the others in
      // the stage get it by multicast.
      for (Operation *user : in->getUsers())
        if (regions.count(user)) {
          builder.create<wafer::IngressOp>(in.getLoc(), in.getName(),
                                           regions[user].getValue(),
                                           in.getBytes(), DenseI64ArrayAttr());
          break;
        }
    } else if (auto out = dyn_cast<GradOutOp>(op)) {
      Operation *producer = out.getGrad().getDefiningOp();
      if (regions.count(producer))
        builder.create<wafer::EgressOp>(out.getLoc(),
                                        regions[producer].getValue(),
                                        out.getName(), out.getBytes(),
                                        DenseI64ArrayAttr());
    } else if (regions.count(&op)) {
      // One flow per pair of kernels a stream connects.
      for (Value result : op.getResults()) {
        llvm::SmallPtrSet<Operation *, 4> seen;
        for (Operation *user : result.getUsers())
          if (regions.count(user) && seen.insert(user).second)
            builder.create<wafer::FlowOp>(
                op.getLoc(), regions[&op].getValue(), regions[user].getValue(),
                bytesPerSequence(tensorOf(result)), IntegerAttr(),
                DenseI64ArrayAttr());
      }
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
