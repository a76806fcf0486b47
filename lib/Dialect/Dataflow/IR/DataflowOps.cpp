//===- DataflowOps.cpp - dataflow verifiers, FLOPs and tiling spaces ------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "KernelChecks.h"

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"
#include "cgpt/Dialect/Dataflow/IR/RowOperations.h"
#include "cgpt/Support/BatchChecks.h"
#include "cgpt/Support/Format.h"
#include "cgpt/Support/Shapes.h"
#include "cgpt/Support/StepRegion.h"

using namespace mlir;
using namespace cgpt::dataflow;
using namespace cgpt::dataflow::checks;
using cgpt::formatShape;
using cgpt::perSequence;
using cgpt::productPerSequence;
using cgpt::shapesAgree;

LogicalResult cgpt::dataflow::verifyKernel(Operation *op) {
  auto kernel = cast<KernelOpInterface>(op);
  TileAttr tile = kernel.getTileOrNull();
  if (!tile)
    return success();
  SmallVector<int64_t> space = kernel.getTilingSpace();
  ArrayRef<int64_t> sizes = tile.getSizes();
  if (sizes.size() != space.size())
    return op->emitOpError()
           << "tile " << formatShape(sizes) << " has rank " << sizes.size()
           << " but the tiling space " << formatShape(space) << " has rank "
           << space.size();
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] < 1 || sizes[i] > space[i])
      return op->emitOpError()
             << "tile " << formatShape(sizes) << " does not fit the tiling "
             << "space " << formatShape(space) << ": dimension " << i
             << " must be between 1 and " << space[i];
  return success();
}

int64_t cgpt::dataflow::kernelStorageBytes(Operation *kernel) {
  auto floatBytes = [](Type type) -> int64_t {
    auto stream = dyn_cast<StreamType>(type);
    return stream && isa<FloatType>(stream.getElementType())
               ? elementBytes(stream.getElementType())
               : 0;
  };
  for (Type type : kernel->getOperandTypes())
    if (int64_t bytes = floatBytes(type))
      return bytes;
  for (Type type : kernel->getResultTypes())
    if (int64_t bytes = floatBytes(type))
      return bytes;
  return kAccumulatorBytes;
}

int64_t cgpt::dataflow::tileWorkingSetBytes(KernelOpInterface kernel,
                                            ArrayRef<int64_t> tile) {
  Operation *op = kernel.getOperation();
  int64_t bytes = kernelStorageBytes(op);
  // A product's [M, N, K] tile: its operands' blocks and the f32 sums.
  if (tile.size() == 3)
    return (tile[0] * tile[2] + tile[2] * tile[1]) * bytes +
           tile[0] * tile[1] * kAccumulatorBytes;
  int64_t streams = std::max<int64_t>(
      1, static_cast<int64_t>(op->getNumOperands() + op->getNumResults()));
  return tile[0] * tile[1] * streams * bytes;
}

int64_t cgpt::dataflow::tileInputBytes(KernelOpInterface kernel,
                                       ArrayRef<int64_t> tile) {
  Operation *op = kernel.getOperation();
  int64_t bytes = kernelStorageBytes(op);
  if (tile.size() == 3)
    return (tile[0] * tile[2] + tile[2] * tile[1]) * bytes;
  return tile[0] * tile[1] *
         std::max<int64_t>(1, static_cast<int64_t>(op->getNumOperands())) *
         bytes;
}

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

MicroBatchLoopOp ProgramOp::getLoop() {
  auto loops = getBody().front().getOps<MicroBatchLoopOp>();
  return loops.empty() ? MicroBatchLoopOp() : *loops.begin();
}

OptimizerStepOp ProgramOp::getOptimizerStep() {
  auto steps = getBody().front().getOps<OptimizerStepOp>();
  return steps.empty() ? OptimizerStepOp() : *steps.begin();
}

LogicalResult ProgramOp::verifyRegions() {
  if (failed(cgpt::verifyBatchFacts(*this, getGlobalBatch(), getNumCsx(),
                                    getSeqLen())))
    return failure();
  Block &body = getBody().front();
  if (body.getOperations().size() != 2 ||
      !isa<MicroBatchLoopOp>(body.front()) ||
      !isa<OptimizerStepOp>(body.back()))
    return emitOpError() << "body must be one dataflow.micro_batch_loop "
                            "followed by one dataflow.optimizer_step";
  for (BlockArgument arg : getLoop().getBodyBlock().getArguments())
    if (cast<StreamType>(arg.getType()).getShape()[1] != getSeqLen())
      return emitOpError() << "micro_batch_loop streams "
                           << cast<StreamType>(arg.getType()).getTensor()
                           << " do not match seq_len " << getSeqLen();
  return success();
}

ParseResult MicroBatchLoopOp::parse(OpAsmParser &parser,
                                    OperationState &result) {
  return cgpt::parseStepRegion(parser, result);
}

void MicroBatchLoopOp::print(OpAsmPrinter &printer) {
  cgpt::printStepRegion(printer, *this, getBody());
}

void MicroBatchLoopOp::getAsmBlockArgumentNames(Region &region,
                                                OpAsmSetValueNameFn setName) {
  cgpt::nameStepArguments(region, setName);
}

LogicalResult MicroBatchLoopOp::verify() {
  Block &body = getBodyBlock();
  if (body.getNumArguments() != 2)
    return emitOpError() << "body must take (tokens, labels), got "
                         << body.getNumArguments() << " arguments";
  for (BlockArgument arg : body.getArguments()) {
    auto stream = dyn_cast<StreamType>(arg.getType());
    if (!stream || stream.getShape().size() != 2 ||
        !stream.getElementType().isSignlessInteger())
      return emitOpError() << "body argument #" << arg.getArgNumber()
                           << " must be a [batch, seq] stream of token ids, "
                              "got "
                           << arg.getType();
  }
  return cgpt::verifyBatchPlan(*this, getMicroBatch(), getGradAccumSteps());
}

void StageOp::build(OpBuilder &builder, OperationState &state,
                    TypeRange resultTypes, StringRef name, Phase phase,
                    std::optional<int64_t> layer) {
  state.addTypes(resultTypes);
  state.addAttribute(getNameAttrName(state.name), builder.getStringAttr(name));
  state.addAttribute(getPhaseAttrName(state.name),
                     PhaseAttr::get(builder.getContext(), phase));
  if (layer)
    state.addAttribute(getLayerAttrName(state.name),
                       builder.getI64IntegerAttr(*layer));
  state.addRegion();
}

LogicalResult StageOp::verify() {
  if (getName().empty())
    return emitOpError() << "stage name must not be empty";
  auto yield = cast<YieldOp>(getBody().front().getTerminator());
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError() << "yields " << yield.getValues().size()
                         << " values whose types differ from its "
                         << getNumResults() << " results";
  return success();
}

//===----------------------------------------------------------------------===//
// Streams and buffers
//===----------------------------------------------------------------------===//

/// Checks the `bytes` of a weight or gradient stream against its type.
static LogicalResult verifyStreamBytes(Operation *op, StringRef name,
                                       RankedTensorType type, int64_t bytes) {
  if (name.empty())
    return op->emitOpError() << "weight name must not be empty";
  if (!type.hasStaticShape())
    return op->emitOpError()
           << "weight '" << name << "' must have a static shape, got "
           << formatShape(type.getShape());
  int64_t expected =
      type.getNumElements() * elementBytes(type.getElementType());
  if (bytes != expected)
    return op->emitOpError() << "weight '" << name << "' of type " << type
                             << " is " << expected << " bytes, not " << bytes;
  return success();
}

LogicalResult WeightInOp::verify() {
  return verifyStreamBytes(*this, getName(),
                           cast<StreamType>(getType()).getTensor(), getBytes());
}

LogicalResult GradOutOp::verify() {
  return verifyStreamBytes(*this, getName(),
                           cast<StreamType>(getGrad().getType()).getTensor(),
                           getBytes());
}

LogicalResult StashOp::verify() {
  if (tensorOf(getInput()) != tensorOf(getBuffer()))
    return emitOpError() << "buffer holds " << tensorOf(getBuffer())
                         << " but the stream carries " << tensorOf(getInput());
  return success();
}

LogicalResult FetchOp::verify() {
  if (tensorOf(getResult()) != tensorOf(getBuffer()))
    return emitOpError() << "stream carries " << tensorOf(getResult())
                         << " but the buffer holds " << tensorOf(getBuffer());
  return success();
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

namespace {
/// The matrix-multiply problem a MatmulOp states.
struct MatmulShape {
  SmallVector<int64_t> batch;
  int64_t m, n, k, rhsK;
};
} // namespace

static MatmulShape matmulShape(MatmulOp op) {
  ArrayRef<int64_t> lhs = shapeOf(op.getLhs()), rhs = shapeOf(op.getRhs());
  MatmulShape shape;
  shape.batch.assign(lhs.begin(), lhs.end() - 2);
  int64_t lhsRows = lhs[lhs.size() - 2], lhsCols = lhs.back();
  int64_t rhsRows = rhs[rhs.size() - 2], rhsCols = rhs.back();
  shape.m = op.getTransposeLhs() ? lhsCols : lhsRows;
  shape.k = op.getTransposeLhs() ? lhsRows : lhsCols;
  shape.rhsK = op.getTransposeRhs() ? rhsCols : rhsRows;
  shape.n = op.getTransposeRhs() ? rhsRows : rhsCols;
  return shape;
}

LogicalResult MatmulOp::verify() {
  ArrayRef<int64_t> lhs = shapeOf(getLhs()), rhs = shapeOf(getRhs());
  if (lhs.size() < 2 || rhs.size() < 2)
    return emitOpError() << "operands must have rank 2 or more, got "
                         << formatShape(lhs) << " and " << formatShape(rhs);
  MatmulShape shape = matmulShape(*this);
  if (!cgpt::dimsAgree(shape.k, shape.rhsK))
    return emitOpError() << "contracts " << shape.k << " columns of lhs "
                         << formatShape(lhs) << " with " << shape.rhsK
                         << " rows of rhs " << formatShape(rhs);
  ArrayRef<int64_t> rhsBatch = rhs.drop_back(2);
  if (!rhsBatch.empty() && !shapesAgree(rhsBatch, shape.batch))
    return emitOpError() << "rhs batch dimensions " << formatShape(rhsBatch)
                         << " differ from lhs batch dimensions "
                         << formatShape(shape.batch);
  SmallVector<int64_t> expected;
  if (getReduceBatch()) {
    if (shape.batch.empty())
      return emitOpError() << "reduce_batch needs batch dimensions to sum";
  } else {
    expected = shape.batch;
  }
  expected.append({shape.m, shape.n});
  if (failed(expectShape(*this, "result", getResult(), expected,
                         "lhs " + formatShape(lhs) + " and rhs " +
                             formatShape(rhs))))
    return failure();
  if (getBias() && failed(expectShape(*this, "bias", getBias(), {shape.n},
                                      "the result's columns")))
    return failure();
  SmallVector<Value> values = {getLhs(), getRhs(), getResult()};
  if (getBias())
    values.push_back(getBias());
  return expectSameElementType(*this, values);
}

KernelKind MatmulOp::getKernelKind() {
  if (getReduceBatch())
    return KernelKind::weight_grad;
  if (getStreamedWeight())
    return KernelKind::weight_matmul;
  return KernelKind::attention;
}

/// The operand with one tensor for the whole micro-batch: a weight, where
/// activations have a dynamic batch dimension.
Value MatmulOp::getStreamedWeight() {
  if (getReduceBatch())
    return {};
  for (Value operand : {getRhs(), getLhs()})
    if (cast<StreamType>(operand.getType()).getTensor().hasStaticShape())
      return operand;
  return {};
}

Value MatmulOp::getAccumulatedGradient() {
  return getReduceBatch() ? getResult() : Value();
}

int64_t MatmulOp::getFlopsPerSequence() {
  MatmulShape shape = matmulShape(*this);
  int64_t batch = productPerSequence(shape.batch);
  int64_t m = perSequence(shape.m), n = perSequence(shape.n),
          k = perSequence(shape.k);
  return 2 * batch * m * n * k + (getBias() ? batch * m * n : 0);
}

SmallVector<int64_t> MatmulOp::getTilingSpace() {
  MatmulShape shape = matmulShape(*this);
  int64_t batch = productPerSequence(shape.batch);
  int64_t m = perSequence(shape.m), n = perSequence(shape.n),
          k = perSequence(shape.k);
  if (getReduceBatch())
    return {m, n, batch * k};
  return {batch * m, n, k};
}

//===----------------------------------------------------------------------===//
// Elementwise maps
//===----------------------------------------------------------------------===//

/// Inputs each map kind takes.
unsigned cgpt::dataflow::mapArity(MapKind kind) {
  switch (kind) {
  case MapKind::gelu:
  case MapKind::gelu_tanh:
  case MapKind::relu:
  case MapKind::silu:
    return 1;
  default:
    return 2;
  }
}

/// FLOPs per element: Appendix F counts 20 for GELU; a derivative counts
/// twice its function, as Appendix F's backward counts twice the forward.
int64_t cgpt::dataflow::mapFlopsPerElement(MapKind kind) {
  switch (kind) {
  case MapKind::add:
  case MapKind::mul:
  case MapKind::relu:
    return 1;
  case MapKind::gelu:
  case MapKind::gelu_tanh:
    return 20;
  case MapKind::silu:
    return 4;
  case MapKind::relu_grad:
    return 2;
  case MapKind::gelu_grad:
  case MapKind::gelu_tanh_grad:
    return 40;
  case MapKind::silu_grad:
    return 8;
  }
  return 1;
}

LogicalResult MapOp::verify() {
  unsigned arity = mapArity(getKind());
  if (getInputs().size() != arity)
    return emitOpError() << stringifyMapKind(getKind()) << " takes " << arity
                         << " inputs, got " << getInputs().size();
  for (Value input : getInputs())
    if (tensorOf(input) != tensorOf(getResult()))
      return emitOpError() << "input " << tensorOf(input)
                           << " differs from the result "
                           << tensorOf(getResult())
                           << "; elementwise maps keep the shape and type";
  return success();
}

int64_t MapOp::getFlopsPerSequence() {
  return mapFlopsPerElement(getKind()) * elementsPerSequence(getResult());
}

SmallVector<int64_t> MapOp::getTilingSpace() { return rowSpace(getResult()); }

/// The integer operations a core runs to drop one element: the counter
/// add, the seven of the 32-bit hash (exec::dropoutBits), the compare and
/// the select-and-scale.
constexpr int64_t kDropoutOperationsPerElement = 10;

LogicalResult DropoutOp::verify() {
  double rate = getRate().convertToDouble();
  if (!(rate >= 0.0 && rate < 1.0))
    return emitOpError() << "dropout rate must be in [0, 1), got "
                         << formatExactDouble(rate);
  if (getSite() < 0)
    return emitOpError() << "site must be non-negative, got " << getSite();
  if (tensorOf(getInput()) != tensorOf(getResult()))
    return emitOpError() << "input " << tensorOf(getInput())
                         << " differs from the result " << tensorOf(getResult())
                         << "; dropout keeps the shape and type";
  return success();
}

int64_t DropoutOp::getFlopsPerSequence() { return 0; }

int64_t DropoutOp::getExecutedFlopsPerSequence() {
  return 2 * kDropoutOperationsPerElement * elementsPerSequence(getResult());
}

SmallVector<int64_t> DropoutOp::getTilingSpace() {
  return rowSpace(getResult());
}

//===----------------------------------------------------------------------===//
// Embeddings and positions
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::verify() {
  if (failed(expectRank(*this, "table", getTable(), 2)) ||
      failed(expectIds(*this, "ids", getIds())))
    return failure();
  ArrayRef<int64_t> ids = shapeOf(getIds()), table = shapeOf(getTable());
  if (failed(expectShape(
          *this, "result", getResult(), {ids[0], ids[1], table[1]},
          "ids " + formatShape(ids) + " and table " + formatShape(table))))
    return failure();
  return expectSameElementType(*this, {getTable(), getResult()});
}

KernelKind GatherOp::getKernelKind() { return KernelKind::embedding; }

Value GatherOp::getStreamedWeight() { return getTable(); }

int64_t GatherOp::getFlopsPerSequence() {
  ArrayRef<int64_t> table = shapeOf(getTable());
  return 2 * perSequence(shapeOf(getIds())[1]) * table[0] * table[1];
}

int64_t GatherOp::getExecutedFlopsPerSequence() {
  return elementsPerSequence(getResult());
}

SmallVector<int64_t> GatherOp::getTilingSpace() {
  return {perSequence(shapeOf(getIds())[1]), shapeOf(getTable())[1]};
}

LogicalResult ScatterAddOp::verify() {
  if (failed(expectIds(*this, "ids", getIds())) ||
      failed(expectRank(*this, "result", getResult(), 2)))
    return failure();
  ArrayRef<int64_t> ids = shapeOf(getIds()), result = shapeOf(getResult());
  if (failed(expectShape(*this, "grad", getGrad(), {ids[0], ids[1], result[1]},
                         "ids " + formatShape(ids) + " and result " +
                             formatShape(result))))
    return failure();
  if (!tensorOf(getResult()).hasStaticShape())
    return emitOpError() << "result must be a static [vocab, d_model] "
                            "gradient";
  return expectSameElementType(*this, {getGrad(), getResult()});
}

KernelKind ScatterAddOp::getKernelKind() { return KernelKind::embedding; }

Value ScatterAddOp::getAccumulatedGradient() { return getResult(); }

int64_t ScatterAddOp::getFlopsPerSequence() {
  ArrayRef<int64_t> result = shapeOf(getResult());
  return 2 * perSequence(shapeOf(getIds())[1]) * result[0] * result[1];
}

int64_t ScatterAddOp::getExecutedFlopsPerSequence() {
  return elementsPerSequence(getGrad());
}

SmallVector<int64_t> ScatterAddOp::getTilingSpace() {
  return {perSequence(shapeOf(getIds())[1]), shapeOf(getResult())[1]};
}

/// Checks a [positions, d_model] table against a [batch, seq, d_model]
/// stream: as wide, and at least as many positions as the sequence.
static LogicalResult verifyPositionTable(Operation *op, StringRef name,
                                         Value table, Value stream) {
  if (failed(expectRank(op, name, table, 2)) ||
      failed(expectRank(op, "stream", stream, 3)))
    return failure();
  ArrayRef<int64_t> rows = shapeOf(table), tokens = shapeOf(stream);
  if (rows[1] != tokens[2] || rows[0] < tokens[1])
    return op->emitOpError()
           << name << " has shape " << formatShape(rows)
           << " but a stream of shape " << formatShape(tokens)
           << " needs at least " << tokens[1] << " rows of " << tokens[2];
  return expectSameElementType(op, {table, stream});
}

LogicalResult AddPositionsOp::verify() {
  if (tensorOf(getInput()) != tensorOf(getResult()))
    return emitOpError() << "result must have the input's type "
                         << tensorOf(getInput());
  return verifyPositionTable(*this, "table", getTable(), getInput());
}

int64_t AddPositionsOp::getFlopsPerSequence() {
  return 2 * elementsPerSequence(getInput());
}

int64_t AddPositionsOp::getExecutedFlopsPerSequence() {
  return elementsPerSequence(getInput());
}

SmallVector<int64_t> AddPositionsOp::getTilingSpace() {
  return rowSpace(getInput());
}

LogicalResult PositionGradOp::verify() {
  return verifyPositionTable(*this, "result", getResult(), getGrad());
}

KernelKind PositionGradOp::getKernelKind() { return KernelKind::embedding; }

Value PositionGradOp::getAccumulatedGradient() { return getResult(); }

int64_t PositionGradOp::getFlopsPerSequence() {
  return 2 * elementsPerSequence(getGrad());
}

int64_t PositionGradOp::getExecutedFlopsPerSequence() {
  return elementsPerSequence(getGrad());
}

SmallVector<int64_t> PositionGradOp::getTilingSpace() {
  return rowSpace(getGrad());
}

LogicalResult SumBatchOp::verify() {
  return expectShape(*this, "result", getResult(), {shapeOf(getInput()).back()},
                     "input " + formatShape(shapeOf(getInput())));
}

KernelKind SumBatchOp::getKernelKind() { return KernelKind::token_sum; }

Value SumBatchOp::getAccumulatedGradient() { return getResult(); }

int64_t SumBatchOp::getFlopsPerSequence() {
  return elementsPerSequence(getInput());
}

SmallVector<int64_t> SumBatchOp::getTilingSpace() {
  return rowSpace(getInput());
}

//===----------------------------------------------------------------------===//
// Rotary positions and heads
//===----------------------------------------------------------------------===//

LogicalResult RotaryAnglesOp::verify() {
  int64_t dim = getDim();
  if (dim <= 0 || dim % 2 != 0)
    return emitOpError() << "dim must be positive and even, got " << dim;
  if (!(getBase().convertToDouble() > 1))
    return emitOpError() << "base must be greater than 1, got "
                         << cgpt::formatExactDouble(
                                getBase().convertToDouble());
  ArrayRef<int64_t> shape = shapeOf(getResult());
  if (shape.size() != 3 || ShapedType::isDynamic(shape[0]) ||
      shape[1] != dim / 2 || shape[2] != 2)
    return emitOpError() << "result has shape " << formatShape(shape)
                         << " but dim " << dim << " requires [seq, " << dim / 2
                         << ", 2]";
  return expectF32(*this, "result", getResult());
}

int64_t RotaryAnglesOp::getFlopsPerSequence() {
  return elementsPerSequence(getResult());
}

SmallVector<int64_t> RotaryAnglesOp::getTilingSpace() {
  ArrayRef<int64_t> shape = shapeOf(getResult());
  return {shape[0], 2 * shape[1]};
}

LogicalResult RotaryOp::verify() {
  if (failed(expectRank(*this, "input", getInput(), 4)) ||
      failed(expectRank(*this, "angles", getAngles(), 3)) ||
      failed(expectF32(*this, "angles", getAngles())))
    return failure();
  if (tensorOf(getInput()) != tensorOf(getResult()))
    return emitOpError() << "result must have the input's type "
                         << tensorOf(getInput());
  ArrayRef<int64_t> input = shapeOf(getInput()), angles = shapeOf(getAngles());
  if (2 * angles[1] > input[3] || angles[0] < input[2])
    return emitOpError() << "angles " << formatShape(angles)
                         << " must cover the sequence and at most the "
                         << "head size of input " << formatShape(input);
  return success();
}

int64_t RotaryOp::getFlopsPerSequence() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  return 3 * input[1] * input[2] * 2 * shapeOf(getAngles())[1];
}

SmallVector<int64_t> RotaryOp::getTilingSpace() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  return {input[1] * input[2], input[3]};
}

/// Checks a [batch, seq, parts * heads * head] stream against
/// [batch, heads, seq, head] heads.
static LogicalResult verifyHeads(Operation *op, Value flat, ValueRange heads,
                                 int64_t parts) {
  if (failed(expectRank(op, "flat stream", flat, 3)))
    return failure();
  for (Value head : heads)
    if (failed(expectRank(op, "head stream", head, 4)))
      return failure();
  ArrayRef<int64_t> flatShape = shapeOf(flat), head = shapeOf(heads.front());
  SmallVector<int64_t> expected = {flatShape[0], flatShape[1],
                                   parts * head[1] * head[3]};
  if (failed(expectShape(op, "flat stream", flat, expected,
                         std::to_string(parts) + " part(s) of heads " +
                             formatShape(head))))
    return failure();
  for (Value other : heads)
    if (failed(expectShape(op, "head stream", other,
                           {flatShape[0], head[1], flatShape[1], head[3]},
                           "a flat stream " + formatShape(flatShape))))
      return failure();
  SmallVector<Value> values = {flat};
  values.append(heads.begin(), heads.end());
  return expectSameElementType(op, values);
}

/// Checks queries [b, H, s, hs], keys and values [b, KV, s, hs] against
/// their fused stream [b, s, (H + 2 KV) hs].
static LogicalResult verifyQkvHeads(Operation *op, Value flat, Value query,
                                    Value key, Value value) {
  if (failed(expectRank(op, "flat stream", flat, 3)))
    return failure();
  for (Value head : {query, key, value})
    if (failed(expectRank(op, "head stream", head, 4)))
      return failure();
  ArrayRef<int64_t> flatShape = shapeOf(flat), q = shapeOf(query),
                    k = shapeOf(key);
  if (q[1] % k[1] != 0)
    return op->emitOpError() << "key/value heads " << k[1]
                             << " do not divide query heads " << q[1];
  std::string why = "queries " + formatShape(q) + " and keys " + formatShape(k);
  if (failed(expectShape(op, "flat stream", flat,
                         {q[0], q[2], (q[1] + 2 * k[1]) * q[3]}, why)) ||
      failed(expectShape(op, "head stream", query,
                         {flatShape[0], q[1], flatShape[1], q[3]}, why)))
    return failure();
  for (Value other : {key, value})
    if (failed(expectShape(op, "head stream", other,
                           {flatShape[0], k[1], flatShape[1], q[3]}, why)))
      return failure();
  return expectSameElementType(op, {flat, query, key, value});
}

LogicalResult SplitHeadsOp::verify() {
  int64_t heads = getNumHeadsAttr().getInt();
  int64_t headSize = getHeadSizeAttr().getInt();
  int64_t kvHeads = static_cast<int64_t>(getNumKvHeads().value_or(heads));
  if (heads <= 0 || headSize <= 0 || kvHeads <= 0)
    return emitOpError()
           << "num_heads, num_kv_heads and head_size must be positive";
  if (shapeOf(getQuery()).size() == 4 &&
      (shapeOf(getQuery())[1] != heads || shapeOf(getQuery())[3] != headSize))
    return emitOpError() << "heads " << formatShape(shapeOf(getQuery()))
                         << " do not match " << heads << " heads of "
                         << headSize;
  if (shapeOf(getKey()).size() == 4 && shapeOf(getKey())[1] != kvHeads)
    return emitOpError() << "keys " << formatShape(shapeOf(getKey()))
                         << " do not match " << kvHeads << " key/value heads";
  return verifyQkvHeads(*this, getQkv(), getQuery(), getKey(), getValue());
}

int64_t SplitHeadsOp::getFlopsPerSequence() { return 0; }

SmallVector<int64_t> SplitHeadsOp::getTilingSpace() {
  return rowSpace(getQkv());
}

LogicalResult JoinHeadsOp::verify() {
  return verifyQkvHeads(*this, getResult(), getQuery(), getKey(), getValue());
}

int64_t JoinHeadsOp::getFlopsPerSequence() { return 0; }

SmallVector<int64_t> JoinHeadsOp::getTilingSpace() {
  return rowSpace(getResult());
}

LogicalResult MergeHeadsOp::verify() {
  return verifyHeads(*this, getResult(), getInput(), 1);
}

int64_t MergeHeadsOp::getFlopsPerSequence() { return 0; }

SmallVector<int64_t> MergeHeadsOp::getTilingSpace() {
  return rowSpace(getResult());
}

LogicalResult UnmergeHeadsOp::verify() {
  return verifyHeads(*this, getInput(), getResult(), 1);
}

int64_t UnmergeHeadsOp::getFlopsPerSequence() { return 0; }

SmallVector<int64_t> UnmergeHeadsOp::getTilingSpace() {
  return rowSpace(getInput());
}

//===----------------------------------------------------------------------===//
// Row reductions
//===----------------------------------------------------------------------===//

/// Checks [.., d] row statistics: one f32 per row of `input`.
static LogicalResult verifyRowStats(Operation *op, Value input,
                                    ValueRange stats) {
  SmallVector<int64_t> rows(shapeOf(input).drop_back());
  for (Value stat : stats)
    if (failed(expectShape(op, "row statistic", stat, rows,
                           "input " + formatShape(shapeOf(input)))) ||
        failed(expectF32(op, "row statistic", stat)))
      return failure();
  return success();
}

/// Checks [d] layer-norm parameters against the input's rows.
static LogicalResult verifyNormParams(Operation *op, Value input,
                                      ValueRange params) {
  int64_t width = shapeOf(input).back();
  for (Value param : params)
    if (failed(expectShape(op, "parameter", param, {width},
                           "rows of " + std::to_string(width))))
      return failure();
  SmallVector<Value> values = {input};
  values.append(params.begin(), params.end());
  return expectSameElementType(op, values);
}

LogicalResult LayerNormOp::verify() {
  if (tensorOf(getInput()) != tensorOf(getResult()))
    return emitOpError() << "result must have the input's type "
                         << tensorOf(getInput());
  if (!(getEpsilon().convertToDouble() > 0))
    return emitOpError() << "epsilon must be positive";
  if (failed(verifyNormParams(*this, getInput(), {getGamma(), getBeta()})))
    return failure();
  return verifyRowStats(*this, getInput(), {getMean(), getRstd()});
}

KernelKind LayerNormOp::getKernelKind() { return KernelKind::reduction; }

int64_t LayerNormOp::getFlopsPerSequence() {
  return 7 * elementsPerSequence(getInput());
}

/// FLOPs a row kernel's mesh program (a norm's, its gradient's, the loss
/// gradient's, a softmax's) executes over `input`, two to a vector
/// operation.
static int64_t rowExecutedFlops(Value input, RowOperations operations) {
  int64_t elements = elementsPerSequence(input);
  int64_t rows = elements / std::max<int64_t>(1, rowSpace(input).back());
  return 2 * (operations.perElement * elements + operations.perRow * rows);
}

int64_t LayerNormOp::getExecutedFlopsPerSequence() {
  return rowExecutedFlops(getInput(), kLayerNormOperations);
}

SmallVector<int64_t> LayerNormOp::getTilingSpace() {
  return rowSpace(getInput());
}

LogicalResult LayerNormGradOp::verify() {
  if (tensorOf(getGrad()) != tensorOf(getInput()) ||
      tensorOf(getInputGrad()) != tensorOf(getInput()))
    return emitOpError() << "grad, input and input_grad must share the type "
                         << tensorOf(getInput());
  if (failed(verifyNormParams(*this, getInput(),
                              {getGamma(), getGammaGrad(), getBetaGrad()})))
    return failure();
  return verifyRowStats(*this, getInput(), {getMean(), getRstd()});
}

KernelKind LayerNormGradOp::getKernelKind() { return KernelKind::reduction; }

int64_t LayerNormGradOp::getFlopsPerSequence() {
  return 14 * elementsPerSequence(getInput());
}

int64_t LayerNormGradOp::getExecutedFlopsPerSequence() {
  return rowExecutedFlops(getInput(), kLayerNormGradOperations);
}

SmallVector<int64_t> LayerNormGradOp::getTilingSpace() {
  return rowSpace(getInput());
}

LogicalResult RMSNormOp::verify() {
  if (tensorOf(getInput()) != tensorOf(getResult()))
    return emitOpError() << "result must have the input's type "
                         << tensorOf(getInput());
  if (!(getEpsilon().convertToDouble() > 0))
    return emitOpError() << "epsilon must be positive";
  if (failed(verifyNormParams(*this, getInput(), {getGamma()})))
    return failure();
  return verifyRowStats(*this, getInput(), {getRstd()});
}

KernelKind RMSNormOp::getKernelKind() { return KernelKind::reduction; }

int64_t RMSNormOp::getFlopsPerSequence() {
  return 4 * elementsPerSequence(getInput());
}

int64_t RMSNormOp::getExecutedFlopsPerSequence() {
  return rowExecutedFlops(getInput(), kRMSNormOperations);
}

SmallVector<int64_t> RMSNormOp::getTilingSpace() {
  return rowSpace(getInput());
}

LogicalResult RMSNormGradOp::verify() {
  if (tensorOf(getGrad()) != tensorOf(getInput()) ||
      tensorOf(getInputGrad()) != tensorOf(getInput()))
    return emitOpError() << "grad, input and input_grad must share the type "
                         << tensorOf(getInput());
  if (failed(verifyNormParams(*this, getInput(), {getGamma(), getGammaGrad()})))
    return failure();
  return verifyRowStats(*this, getInput(), {getRstd()});
}

KernelKind RMSNormGradOp::getKernelKind() { return KernelKind::reduction; }

int64_t RMSNormGradOp::getFlopsPerSequence() {
  return 8 * elementsPerSequence(getInput());
}

int64_t RMSNormGradOp::getExecutedFlopsPerSequence() {
  return rowExecutedFlops(getInput(), kRMSNormGradOperations);
}

SmallVector<int64_t> RMSNormGradOp::getTilingSpace() {
  return rowSpace(getInput());
}

/// Checks attention probabilities: [.., queries, keys] with square causal
/// masks, a positive scale and head size.
static LogicalResult verifyScores(Operation *op, Value scores, double scale,
                                  int64_t headSize, bool causal) {
  ArrayRef<int64_t> shape = shapeOf(scores);
  if (shape.size() < 2)
    return op->emitOpError()
           << "scores must have rank 2 or more, got " << formatShape(shape);
  if (causal && shape[shape.size() - 2] != shape.back())
    return op->emitOpError()
           << "a causal mask needs square scores, got " << formatShape(shape);
  if (!(scale > 0) || headSize <= 0)
    return op->emitOpError() << "scale and head_size must be positive";
  return success();
}

LogicalResult SoftmaxOp::verify() {
  if (tensorOf(getScores()) != tensorOf(getResult()))
    return emitOpError() << "result must have the scores' type "
                         << tensorOf(getScores());
  return verifyScores(*this, getScores(), getScale().convertToDouble(),
                      getHeadSize(), getCausal());
}

KernelKind SoftmaxOp::getKernelKind() { return KernelKind::attention; }

int64_t SoftmaxOp::getFlopsPerSequence() {
  int64_t perScore =
      4 * static_cast<int64_t>(getHeadSize()) + (getAlibi() ? 1 : 0);
  return perScore * elementsPerSequence(getScores());
}

int64_t SoftmaxOp::getExecutedFlopsPerSequence() {
  RowOperations operations = kSoftmaxOperations;
  if (getAlibi())
    operations.perElement += kAlibiOperations;
  return rowExecutedFlops(getScores(), operations);
}

SmallVector<int64_t> SoftmaxOp::getTilingSpace() {
  return rowSpace(getScores());
}

/// Checks a head-group stream pair: `few` [b, KV, s, hs] heads, `many`
/// [b, H, s, hs], KV dividing H.
static LogicalResult verifyHeadGroups(Operation *op, Value few, Value many) {
  if (failed(expectRank(op, "input", op->getOperand(0), 4)) ||
      failed(expectRank(op, "result", op->getResult(0), 4)))
    return failure();
  ArrayRef<int64_t> f = shapeOf(few), m = shapeOf(many);
  if (f[1] <= 0 || m[1] % f[1] != 0)
    return op->emitOpError() << "key/value heads " << f[1]
                             << " do not divide query heads " << m[1];
  if (failed(expectShape(op, "head stream", few, {m[0], f[1], m[2], m[3]},
                         "heads " + formatShape(m))))
    return failure();
  return expectSameElementType(op, {few, many});
}

LogicalResult RepeatHeadsOp::verify() {
  return verifyHeadGroups(*this, getInput(), getResult());
}

int64_t RepeatHeadsOp::getFlopsPerSequence() { return 0; }

SmallVector<int64_t> RepeatHeadsOp::getTilingSpace() {
  return rowSpace(getResult());
}

LogicalResult SumHeadGroupsOp::verify() {
  return verifyHeadGroups(*this, getResult(), getInput());
}

int64_t SumHeadGroupsOp::getFlopsPerSequence() {
  return elementsPerSequence(getInput()) - elementsPerSequence(getResult());
}

SmallVector<int64_t> SumHeadGroupsOp::getTilingSpace() {
  return rowSpace(getResult());
}

LogicalResult SoftmaxGradOp::verify() {
  if (tensorOf(getProbs()) != tensorOf(getGrad()) ||
      tensorOf(getProbs()) != tensorOf(getResult()))
    return emitOpError() << "probs, grad and result must share the type "
                         << tensorOf(getProbs());
  return verifyScores(*this, getProbs(), getScale().convertToDouble(),
                      getHeadSize(), /*causal=*/false);
}

KernelKind SoftmaxGradOp::getKernelKind() { return KernelKind::attention; }

int64_t SoftmaxGradOp::getFlopsPerSequence() {
  return 8 * getHeadSize() * elementsPerSequence(getProbs());
}

int64_t SoftmaxGradOp::getExecutedFlopsPerSequence() {
  return rowExecutedFlops(getProbs(), kSoftmaxGradOperations);
}

SmallVector<int64_t> SoftmaxGradOp::getTilingSpace() {
  return rowSpace(getProbs());
}

/// Checks logits [b, s, v] against labels [b, s] and their f32 row lse.
static LogicalResult verifyLogits(Operation *op, Value logits, Value labels,
                                  Value lse) {
  if (failed(expectRank(op, "logits", logits, 3)) ||
      failed(expectIds(op, "labels", labels)))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(logits);
  if (failed(expectShape(op, "labels", labels, {shape[0], shape[1]},
                         "logits " + formatShape(shape))))
    return failure();
  return verifyRowStats(op, logits, lse);
}

LogicalResult CrossEntropyOp::verify() {
  if (!shapeOf(getLoss()).empty() || !elementTypeOf(getLoss()).isF32())
    return emitOpError() << "loss must be a scalar f32 stream, got "
                         << tensorOf(getLoss());
  return verifyLogits(*this, getLogits(), getLabels(), getLse());
}

KernelKind CrossEntropyOp::getKernelKind() { return KernelKind::reduction; }

int64_t CrossEntropyOp::getFlopsPerSequence() {
  return 4 * elementsPerSequence(getLogits());
}

int64_t CrossEntropyOp::getExecutedFlopsPerSequence() {
  return rowExecutedFlops(getLogits(), kCrossEntropyOperations);
}

SmallVector<int64_t> CrossEntropyOp::getTilingSpace() {
  return rowSpace(getLogits());
}

LogicalResult CrossEntropyGradOp::verify() {
  if (tensorOf(getLogits()) != tensorOf(getResult()))
    return emitOpError() << "result must have the logits' type "
                         << tensorOf(getLogits());
  return verifyLogits(*this, getLogits(), getLabels(), getLse());
}

KernelKind CrossEntropyGradOp::getKernelKind() { return KernelKind::reduction; }

int64_t CrossEntropyGradOp::getFlopsPerSequence() {
  return 3 * elementsPerSequence(getLogits());
}

int64_t CrossEntropyGradOp::getExecutedFlopsPerSequence() {
  return rowExecutedFlops(getLogits(), kCrossEntropyGradOperations);
}

SmallVector<int64_t> CrossEntropyGradOp::getTilingSpace() {
  return rowSpace(getLogits());
}

#define GET_OP_CLASSES
#include "cgpt/Dialect/Dataflow/IR/DataflowOps.cpp.inc"
