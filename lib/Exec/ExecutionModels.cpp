//===- ExecutionModels.cpp - every dataflow kernel, executed --------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The functional executor's half of each kernel: how each dataflow kernel
// executes with real numbers (exec::ExecutableKernelOpInterface), by the
// arithmetic of Kernels.cpp, family by family in the order of lib/Kernels,
// whose files hold the compiler's half (each transformer op's lowering).
// Kept apart so that the compiler (cgpt-opt) links no executor: cgpt-run,
// the Python package and the tests register these models.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Exec/ExecutionModels.h"

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"
#include "cgpt/Exec/Dropout.h"
#include "cgpt/Exec/ExecutableKernel.h"
#include "cgpt/Exec/KernelFrame.h"
#include "cgpt/Exec/Kernels.h"
#include "cgpt/Exec/MixtureOfExperts.h"

using namespace mlir;
using namespace cgpt;
using namespace cgpt::dataflow;
using namespace cgpt::exec;

namespace {

/// Which results of a kernel stay f32 when streams are stored in bf16.
enum class F32Results {
  none,
  /// All but the first: row statistics next to a normalized stream.
  statistics,
  all,
};

/// The execution of dataflow kernel `OpTy` by `Execute(op, frame, tile)`.
template <typename OpTy, auto Execute, F32Results KeptF32 = F32Results::none>
struct ExecutionModel : ExecutableKernelOpInterface::ExternalModel<
                            ExecutionModel<OpTy, Execute, KeptF32>, OpTy> {
  LogicalResult execute(Operation *op, KernelFrame &frame,
                        ArrayRef<int64_t> tile) const {
    return Execute(llvm::cast<OpTy>(op), frame, tile);
  }
  bool keepsF32Result(Operation *, unsigned index) const {
    return KeptF32 == F32Results::all ||
           (KeptF32 == F32Results::statistics && index != 0);
  }
};

/// Attaches the execution of `OpTy` whenever the dataflow dialect loads.
template <typename OpTy, auto Execute, F32Results KeptF32 = F32Results::none>
void attachExecution(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, DataflowDialect *) {
    OpTy::template attachInterface<ExecutionModel<OpTy, Execute, KeptF32>>(
        *context);
  });
}

/// The shape of stream `value`, the micro-batch first.
ArrayRef<int64_t> streamShape(Value value) {
  return cast<StreamType>(value.getType()).getShape();
}

/// `scale` when the kernel has one, else 1.
float scaleOr1(std::optional<llvm::APFloat> scale) {
  return scale ? static_cast<float>(scale->convertToDouble()) : 1.0f;
}

//===----------------------------------------------------------------------===//
// Products, elementwise maps and batch sums
//===----------------------------------------------------------------------===//

LogicalResult executeMatmul(MatmulOp mm, KernelFrame &frame,
                            ArrayRef<int64_t> tile) {
  MatmulOptions mo;
  mo.transposeLhs = mm.getTransposeLhs();
  mo.transposeRhs = mm.getTransposeRhs();
  mo.reduceBatch = mm.getReduceBatch();
  mo.scale = scaleOr1(mm.getScale());
  const Tensor *bias = mm.getBias() ? &frame[mm.getBias()] : nullptr;
  frame.set(mm.getResult(),
            matmul(frame[mm.getLhs()], frame[mm.getRhs()], bias, mo, tile));
  return success();
}

LogicalResult executeMap(MapOp mapOp, KernelFrame &frame,
                         ArrayRef<int64_t> tile) {
  llvm::SmallVector<const Tensor *, 2> inputs;
  for (Value input : mapOp.getInputs())
    inputs.push_back(&frame[input]);
  frame.set(mapOp.getResult(), map(mapOp.getKind(), inputs, tile));
  return success();
}

LogicalResult executeSumBatch(SumBatchOp s, KernelFrame &frame,
                              ArrayRef<int64_t> tile) {
  frame.set(s.getResult(), sumBatch(frame[s.getInput()], tile));
  return success();
}

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

LogicalResult executeDropout(DropoutOp op, KernelFrame &frame,
                             ArrayRef<int64_t>) {
  frame.set(op.getResult(),
            dropout(frame[op.getInput()], op.getRate().convertToDouble(),
                    op.getSite(), frame.getDropoutStream()));
  return success();
}

//===----------------------------------------------------------------------===//
// Embeddings and positions
//===----------------------------------------------------------------------===//

LogicalResult executeGather(GatherOp g, KernelFrame &frame,
                            ArrayRef<int64_t> tile) {
  frame.set(g.getResult(), gather(frame[g.getTable()], frame.idsOf(g.getIds()),
                                  scaleOr1(g.getScale()), tile));
  return success();
}

LogicalResult executeScatterAdd(ScatterAddOp s, KernelFrame &frame,
                                ArrayRef<int64_t> tile) {
  frame.set(s.getResult(),
            scatterAdd(frame.idsOf(s.getIds()), frame[s.getGrad()],
                       streamShape(s.getResult())[0], scaleOr1(s.getScale()),
                       tile));
  return success();
}

LogicalResult executeAddPositions(AddPositionsOp a, KernelFrame &frame,
                                  ArrayRef<int64_t> tile) {
  frame.set(a.getResult(),
            addPositions(frame[a.getInput()], frame[a.getTable()], tile));
  return success();
}

LogicalResult executePositionGrad(PositionGradOp p, KernelFrame &frame,
                                  ArrayRef<int64_t> tile) {
  frame.set(p.getResult(), positionGrad(frame[p.getGrad()],
                                        streamShape(p.getResult())[0], tile));
  return success();
}

LogicalResult executeRotaryAngles(RotaryAnglesOp r, KernelFrame &frame,
                                  ArrayRef<int64_t> tile) {
  frame.set(r.getResult(),
            rotaryAngles(frame.getSeqLen(), static_cast<int64_t>(r.getDim()),
                         r.getBase().convertToDouble()));
  return success();
}

LogicalResult executeRotary(RotaryOp r, KernelFrame &frame,
                            ArrayRef<int64_t> tile) {
  frame.set(r.getResult(), rotary(frame[r.getInput()], frame[r.getAngles()],
                                  r.getInverse(), tile));
  return success();
}

//===----------------------------------------------------------------------===//
// Layer normalization
//===----------------------------------------------------------------------===//

LogicalResult executeLayerNorm(LayerNormOp ln, KernelFrame &frame,
                               ArrayRef<int64_t> tile) {
  LayerNormResult r =
      layerNorm(frame[ln.getInput()], frame[ln.getGamma()], frame[ln.getBeta()],
                ln.getEpsilon().convertToDouble(), tile);
  frame.set(ln.getResult(), std::move(r.result));
  frame.set(ln.getMean(), std::move(r.mean));
  frame.set(ln.getRstd(), std::move(r.rstd));
  return success();
}

LogicalResult executeLayerNormGrad(LayerNormGradOp g, KernelFrame &frame,
                                   ArrayRef<int64_t> tile) {
  LayerNormGrad r =
      layerNormGrad(frame[g.getGrad()], frame[g.getInput()], frame[g.getMean()],
                    frame[g.getRstd()], frame[g.getGamma()], tile);
  frame.set(g.getInputGrad(), std::move(r.input));
  frame.set(g.getGammaGrad(), std::move(r.gamma));
  frame.set(g.getBetaGrad(), std::move(r.beta));
  return success();
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

LogicalResult executeSplitHeads(SplitHeadsOp s, KernelFrame &frame,
                                ArrayRef<int64_t> tile) {
  Tensor q, k, v;
  int64_t heads = static_cast<int64_t>(s.getNumHeads());
  splitHeads(frame[s.getQkv()], heads,
             static_cast<int64_t>(s.getNumKvHeads().value_or(heads)),
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
  frame.set(u.getResult(),
            unmergeHeads(frame[u.getInput()], streamShape(u.getResult())[1]));
  return success();
}

LogicalResult executeSoftmax(SoftmaxOp s, KernelFrame &frame,
                             ArrayRef<int64_t> tile) {
  frame.set(s.getResult(),
            softmax(frame[s.getScores()],
                    static_cast<float>(s.getScale().convertToDouble()),
                    s.getCausal(), tile, s.getAlibi()));
  return success();
}

LogicalResult executeRepeatHeads(RepeatHeadsOp r, KernelFrame &frame,
                                 ArrayRef<int64_t>) {
  frame.set(r.getResult(),
            repeatHeads(frame[r.getInput()], streamShape(r.getResult())[1]));
  return success();
}

LogicalResult executeSumHeadGroups(SumHeadGroupsOp op, KernelFrame &frame,
                                   ArrayRef<int64_t>) {
  frame.set(op.getResult(), sumHeadGroups(frame[op.getInput()],
                                          streamShape(op.getResult())[1]));
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

//===----------------------------------------------------------------------===//
// The loss
//===----------------------------------------------------------------------===//

LogicalResult executeCrossEntropy(CrossEntropyOp ce, KernelFrame &frame,
                                  ArrayRef<int64_t> tile) {
  CrossEntropyResult r =
      crossEntropy(frame[ce.getLogits()], frame.idsOf(ce.getLabels()),
                   ce.getScale().convertToDouble(), tile);
  frame.set(ce.getLoss(), std::move(r.loss));
  frame.set(ce.getLse(), std::move(r.lse));
  return success();
}

LogicalResult executeCrossEntropyGrad(CrossEntropyGradOp g, KernelFrame &frame,
                                      ArrayRef<int64_t> tile) {
  frame.set(g.getResult(),
            crossEntropyGrad(frame[g.getLogits()], frame[g.getLse()],
                             frame.idsOf(g.getLabels()),
                             static_cast<float>(g.getScale().convertToDouble()),
                             tile));
  return success();
}

//===----------------------------------------------------------------------===//
// Mixtures of experts
//===----------------------------------------------------------------------===//

LogicalResult executeRoute(RouteOp op, KernelFrame &frame, ArrayRef<int64_t>) {
  std::optional<double> null;
  if (std::optional<APFloat> logit = op.getNullExpert())
    null = logit->convertToDouble();
  RouteResult r =
      route(frame[op.getInput()], frame[op.getRouter()], op.getTopK(), null,
            !op.getRouterF32() && frame.storesBF16());
  frame.set(op.getWeights(), std::move(r.weights));
  frame.set(op.getExperts(), std::move(r.experts));
  frame.set(op.getProbs(), std::move(r.probs));
  return success();
}

LogicalResult executeBalanceLoss(BalanceLossOp op, KernelFrame &frame,
                                 ArrayRef<int64_t>) {
  frame.set(op.getLoss(),
            balanceLoss(frame[op.getProbs()], frame[op.getExperts()],
                        op.getScale().convertToDouble()));
  return success();
}

LogicalResult executeRouteGrad(RouteGradOp op, KernelFrame &frame,
                               ArrayRef<int64_t>) {
  frame.set(op.getResult(),
            routeGrad(frame[op.getProbs()], frame[op.getExperts()],
                      frame[op.getWeights()], frame[op.getWeightsGrad()],
                      op.getBalanceScale().convertToDouble()));
  return success();
}

/// Choices per token: the routed rows of `routed` over the tokens of `of`.
int64_t choicesPerToken(Value routed, Value of) {
  return streamShape(routed)[1] / streamShape(of)[1];
}

LogicalResult executeDispatch(DispatchOp op, KernelFrame &frame,
                              ArrayRef<int64_t>) {
  frame.set(op.getResult(),
            dispatch(frame[op.getInput()],
                     choicesPerToken(op.getResult(), op.getInput())));
  return success();
}

LogicalResult executeCombine(CombineOp op, KernelFrame &frame,
                             ArrayRef<int64_t>) {
  const Tensor *weights = op.getWeights() ? &frame[op.getWeights()] : nullptr;
  frame.set(op.getResult(),
            combine(frame[op.getRouted()], weights,
                    choicesPerToken(op.getRouted(), op.getResult())));
  return success();
}

LogicalResult executeCombineGrad(CombineGradOp op, KernelFrame &frame,
                                 ArrayRef<int64_t>) {
  CombineGrad r = combineGrad(frame[op.getRouted()], frame[op.getWeights()],
                              frame[op.getGrad()]);
  frame.set(op.getRoutedGrad(), std::move(r.routed));
  frame.set(op.getWeightsGrad(), std::move(r.weights));
  return success();
}

LogicalResult executeExpertMatmul(ExpertMatmulOp op, KernelFrame &frame,
                                  ArrayRef<int64_t>) {
  const Tensor *bias = op.getBias() ? &frame[op.getBias()] : nullptr;
  frame.set(op.getResult(),
            expertMatmul(frame[op.getLhs()], frame[op.getRhs()],
                         frame[op.getExperts()], bias, op.getTransposeRhs()));
  return success();
}

LogicalResult executeExpertWeightGrad(ExpertWeightGradOp op, KernelFrame &frame,
                                      ArrayRef<int64_t>) {
  frame.set(op.getResult(),
            expertWeightGrad(frame[op.getLhs()], frame[op.getGrad()],
                             frame[op.getExperts()], op.getRoutedExperts()));
  return success();
}

LogicalResult executeExpertBiasGrad(ExpertBiasGradOp op, KernelFrame &frame,
                                    ArrayRef<int64_t>) {
  frame.set(op.getResult(),
            expertBiasGrad(frame[op.getGrad()], frame[op.getExperts()],
                           streamShape(op.getResult())[0]));
  return success();
}

//===----------------------------------------------------------------------===//
// RMS normalization
//===----------------------------------------------------------------------===//

LogicalResult executeRMSNorm(RMSNormOp op, KernelFrame &frame,
                             ArrayRef<int64_t> tile) {
  RMSNormResult r = rmsNorm(frame[op.getInput()], frame[op.getGamma()],
                            op.getEpsilon().convertToDouble(), tile);
  frame.set(op.getResult(), std::move(r.result));
  frame.set(op.getRstd(), std::move(r.rstd));
  return success();
}

LogicalResult executeRMSNormGrad(RMSNormGradOp op, KernelFrame &frame,
                                 ArrayRef<int64_t> tile) {
  RMSNormGrad r = rmsNormGrad(frame[op.getGrad()], frame[op.getInput()],
                              frame[op.getRstd()], frame[op.getGamma()], tile);
  frame.set(op.getInputGrad(), std::move(r.input));
  frame.set(op.getGammaGrad(), std::move(r.gamma));
  return success();
}

} // namespace

void exec::registerExecutionModels(DialectRegistry &registry) {
  attachExecution<MatmulOp, executeMatmul>(registry);
  attachExecution<MapOp, executeMap>(registry);
  attachExecution<SumBatchOp, executeSumBatch>(registry);
  attachExecution<DropoutOp, executeDropout>(registry);
  attachExecution<GatherOp, executeGather>(registry);
  attachExecution<ScatterAddOp, executeScatterAdd>(registry);
  attachExecution<AddPositionsOp, executeAddPositions>(registry);
  attachExecution<PositionGradOp, executePositionGrad>(registry);
  attachExecution<RotaryAnglesOp, executeRotaryAngles, F32Results::all>(
      registry);
  attachExecution<RotaryOp, executeRotary>(registry);
  attachExecution<LayerNormOp, executeLayerNorm, F32Results::statistics>(
      registry);
  attachExecution<LayerNormGradOp, executeLayerNormGrad>(registry);
  attachExecution<SplitHeadsOp, executeSplitHeads>(registry);
  attachExecution<JoinHeadsOp, executeJoinHeads>(registry);
  attachExecution<MergeHeadsOp, executeMergeHeads>(registry);
  attachExecution<UnmergeHeadsOp, executeUnmergeHeads>(registry);
  attachExecution<SoftmaxOp, executeSoftmax>(registry);
  attachExecution<SoftmaxGradOp, executeSoftmaxGrad>(registry);
  attachExecution<RepeatHeadsOp, executeRepeatHeads>(registry);
  attachExecution<SumHeadGroupsOp, executeSumHeadGroups>(registry);
  attachExecution<CrossEntropyOp, executeCrossEntropy, F32Results::all>(
      registry);
  attachExecution<CrossEntropyGradOp, executeCrossEntropyGrad>(registry);
  attachExecution<RouteOp, executeRoute, F32Results::all>(registry);
  attachExecution<BalanceLossOp, executeBalanceLoss, F32Results::all>(registry);
  attachExecution<RouteGradOp, executeRouteGrad>(registry);
  attachExecution<DispatchOp, executeDispatch>(registry);
  attachExecution<CombineOp, executeCombine>(registry);
  attachExecution<CombineGradOp, executeCombineGrad, F32Results::statistics>(
      registry);
  attachExecution<ExpertMatmulOp, executeExpertMatmul>(registry);
  attachExecution<ExpertWeightGradOp, executeExpertWeightGrad>(registry);
  attachExecution<ExpertBiasGradOp, executeExpertBiasGrad>(registry);
  attachExecution<RMSNormOp, executeRMSNorm, F32Results::statistics>(registry);
  attachExecution<RMSNormGradOp, executeRMSNormGrad>(registry);
}
