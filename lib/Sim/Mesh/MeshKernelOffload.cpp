//===- MeshKernelOffload.cpp - weight kernels on the mesh in a step -------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/MeshKernelOffload.h"

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"
#include "cgpt/Exec/MixtureOfExperts.h"
#include "cgpt/Sim/Mesh/AttentionValues.h"
#include "cgpt/Sim/Mesh/CycleLevel.h"
#include "cgpt/Sim/Mesh/EmbeddingValues.h"
#include "cgpt/Sim/Mesh/KernelValues.h"
#include "cgpt/Sim/Mesh/LossValues.h"
#include "cgpt/Sim/Mesh/MapValues.h"
#include "cgpt/Sim/Mesh/NormValues.h"
#include "cgpt/Sim/Mesh/TokenSumValues.h"

using namespace mlir;
using cgpt::exec::Tensor;
using cgpt::wafer::KernelKind;

namespace cgpt::sim::mesh {
namespace {

/// op(t) of each matrix of `t` over its last two dimensions: t itself, or
/// each matrix transposed.
struct MatrixStack {
  const Tensor &tensor;
  bool transposed;
  int64_t storedRows() const { return tensor.dim(-2); }
  int64_t storedColumns() const { return tensor.dim(-1); }
  int64_t rows() const { return transposed ? storedColumns() : storedRows(); }
  int64_t columns() const {
    return transposed ? storedRows() : storedColumns();
  }
  int64_t matrices() const {
    return tensor.numel() / (storedRows() * storedColumns());
  }
  float operator()(int64_t matrix, int64_t row, int64_t column) const {
    int64_t first = matrix * storedRows() * storedColumns();
    return transposed ? tensor.data[first + column * storedColumns() + row]
                      : tensor.data[first + row * storedColumns() + column];
  }
};

/// The routed rows each of `count` experts takes: the flat indices of the
/// rows `experts` (an expert's index a routed row) sends to it.
std::vector<std::vector<int64_t>> rowsByExpert(const Tensor &experts,
                                               int64_t count) {
  std::vector<std::vector<int64_t>> rows(count);
  for (int64_t i = 0; i < experts.numel(); ++i)
    if (auto e = static_cast<int64_t>(experts.data[i]); e >= 0 && e < count)
      rows[e].push_back(i);
  return rows;
}

/// Rows `rows` of the matrix of `width` columns that `tensor` holds as its
/// last dimension, one after another.
std::vector<float> gathered(const Tensor &tensor,
                            llvm::ArrayRef<int64_t> rows) {
  int64_t width = tensor.dim(-1);
  std::vector<float> out;
  out.reserve(rows.size() * width);
  for (int64_t row : rows)
    out.insert(out.end(), tensor.data.begin() + row * width,
               tensor.data.begin() + (row + 1) * width);
  return out;
}

/// The error of a kernel that fails to load or run on the mesh.
LogicalResult failedOnMesh(wafer::RegionOp region, const std::string &error) {
  return region.emitError()
         << "cannot run on the cycle-level mesh with values: " << error;
}

/// Why the maps of `product`'s epilogue (`shape.epilogue`) are not the
/// kernels that follow it in the stage, each taking the value before it as
/// its input `running` (empty when they are, `maps` then holding them).
std::string matchEpilogue(Operation *product, const wafer::KernelShape &shape,
                          llvm::SmallVectorImpl<dataflow::MapOp> &maps) {
  Value running = product->getResult(0);
  Operation *next = product->getNextNode();
  for (const wafer::EpilogueMap &step : shape.epilogue) {
    while (next && !isa<dataflow::KernelOpInterface>(next))
      next = next->getNextNode();
    auto map = dyn_cast_or_null<dataflow::MapOp>(next);
    if (!map || map.getKind() != step.kind ||
        step.running >= static_cast<int>(map.getInputs().size()) ||
        map.getInputs()[step.running] != running)
      return "its epilogue's maps are not the kernels after it, each taking "
             "the one before";
    maps.push_back(map);
    running = map.getResult();
    next = next->getNextNode();
  }
  return "";
}

/// The input of an epilogue's binary map that is not the running value
/// (null for a map of one input): the core holds it beside its part.
Value heldInput(dataflow::MapOp map, const wafer::EpilogueMap &step) {
  return map.getInputs().size() > 1 ? map.getInputs()[1 - step.running]
                                    : Value();
}

} // namespace

FailureOr<MeshKernelOffload> MeshKernelOffload::create(wafer::DeviceOp device) {
  FailureOr<wafer::PlacedStep> step = wafer::PlacedStep::read(device);
  if (failed(step) ||
      failed(checkCycleLevelTarget(device, step->program.getTarget())))
    return failure();
  const target::WaferTargetModel &target = step->program.getTarget();
  if (target.getMeshWidth() > kMaxValuesMeshSide ||
      target.getMeshHeight() > kMaxValuesMeshSide)
    return device.emitOpError()
           << "cannot run kernels cycle by cycle with values: "
              "carrying values, the cycle-level model takes meshes of at "
              "most "
           << kMaxValuesMeshSide << " x " << kMaxValuesMeshSide
           << " cores, and target '" << device.getTarget() << "' has "
           << target.getMeshWidth() << " x " << target.getMeshHeight()
           << " cores; use --target mini or a target file of your own";
  MeshKernelOffload offload;
  offload.target = &step->program.getTarget();
  for (auto [s, stage] : llvm::enumerate(step->program.getStages()))
    for (auto [r, region] : llvm::enumerate(stage.regions)) {
      const wafer::RegionPlacement &where = step->placement.regions[s][r];
      offload.placed[region.op.getOperation()] = {region.shape, where.rect,
                                                  where.layout};
    }
  return offload;
}

FailureOr<bool> MeshKernelOffload::run(Operation *op, wafer::RegionOp region,
                                       exec::KernelFrame &frame,
                                       int64_t sequences) {
  auto it = placed.find(region.getOperation());
  if (it == placed.end())
    return false;
  const Placed &where = it->second;
  if (where.shape.kind == KernelKind::attention)
    return runAttention(op, region, where, frame, sequences);
  if (where.shape.experts > 1)
    return runExperts(op, region, where, frame, sequences);
  if (where.shape.kind == KernelKind::token_sum)
    return runTokenSum(op, region, where, frame, sequences);
  if (wafer::isNormGradient(where.shape.function))
    return runNormGrad(op, region, where, frame, sequences);
  if (where.shape.function == wafer::RowFunction::crossEntropy)
    return runLoss(op, region, where, frame, sequences);
  if (where.shape.function == wafer::RowFunction::crossEntropyGrad)
    return runLossGrad(op, region, where, frame, sequences);
  if (where.shape.function == wafer::RowFunction::map)
    return runMap(op, region, where, frame, sequences);
  if (where.shape.function == wafer::RowFunction::gather ||
      where.shape.function == wafer::RowFunction::scatterAdd)
    return runEmbedding(op, region, where, frame, sequences);
  if (where.shape.function != wafer::RowFunction::other)
    return runNorm(op, region, where, frame, sequences);
  bool matmul = where.shape.kind == KernelKind::weight_matmul;
  if (!matmul && where.shape.kind != KernelKind::weight_grad)
    return false;
  if (auto route = dyn_cast<dataflow::RouteOp>(op))
    return runRoute(route, region, where, frame, sequences);
  auto product = dyn_cast<dataflow::MatmulOp>(op);
  std::string refusal =
      weightKernelRefusal(where.shape, where.layout, where.rect);
  if (!product)
    refusal = "it is not a dataflow.matmul";
  else if (matmul && (product.getReduceBatch() ||
                      frame[product.getRhs()].shape.size() != 2))
    refusal = "its right operand is not one weight";
  else if (!matmul && !product.getReduceBatch())
    refusal = "it does not sum over the batch";
  // The epilogue runs on the cores where the sums are reduce-scattered;
  // elsewhere the host scales and biases the product, and the executor
  // runs the maps fused after it.
  bool epilogueOnMesh =
      refusal.empty() && epilogueRuns(where.shape, where.layout);
  llvm::SmallVector<dataflow::MapOp, 2> maps;
  if (epilogueOnMesh)
    refusal = chunkedEpilogueRefusal(where.shape);
  if (epilogueOnMesh && refusal.empty())
    refusal = matchEpilogue(product, where.shape, maps);
  if (!refusal.empty()) {
    onHost(region, refusal);
    return false;
  }

  // The operands as the program holds and streams them: a matmul's input
  // [tokens, features] and weight [features, outputs]; a gradient's input
  // [tokens, features] and output gradient [tokens, outputs].
  MatrixStack lhs{frame[product.getLhs()], product.getTransposeLhs()};
  MatrixStack rhs{frame[product.getRhs()], product.getTransposeRhs()};
  std::vector<float> held, streamed;
  int64_t outputs = rhs.columns();
  if (matmul) {
    for (int64_t m = 0; m < lhs.matrices(); ++m)
      for (int64_t i = 0; i < lhs.rows(); ++i)
        for (int64_t k = 0; k < lhs.columns(); ++k)
          held.push_back(lhs(m, i, k));
    for (int64_t k = 0; k < rhs.rows(); ++k)
      for (int64_t n = 0; n < outputs; ++n)
        streamed.push_back(rhs(0, k, n));
  } else {
    for (int64_t m = 0; m < lhs.matrices(); ++m)
      for (int64_t t = 0; t < lhs.columns(); ++t)
        for (int64_t r = 0; r < lhs.rows(); ++r)
          held.push_back(lhs(m, r, t));
    for (int64_t m = 0; m < rhs.matrices(); ++m)
      for (int64_t t = 0; t < rhs.rows(); ++t)
        for (int64_t n = 0; n < outputs; ++n)
          streamed.push_back(rhs(m, t, n));
  }

  // The epilogue's bias, and each binary map's other input.
  EpilogueOperands epilogue;
  if (epilogueOnMesh) {
    if (product.getBias())
      epilogue.bias = frame[product.getBias()].data;
    for (auto [map, step] : llvm::zip(maps, where.shape.epilogue)) {
      Value other = heldInput(map, step);
      epilogue.held.push_back(other ? llvm::ArrayRef<float>(frame[other].data)
                                    : llvm::ArrayRef<float>());
    }
  }

  std::string error;
  std::optional<WeightKernelRun> ran =
      runWeightKernel(where.shape, where.layout, sequences, *target, where.rect,
                      held, streamed, error, epilogue);
  if (!ran)
    return failedOnMesh(region, error);
  ++weightKernelRuns;
  meshCycles += ran->cycles;

  llvm::SmallVector<int64_t, 4> shape;
  if (matmul)
    shape.append(lhs.tensor.shape.begin(), lhs.tensor.shape.end() - 2);
  shape.append({lhs.rows(), outputs});
  if (epilogueOnMesh) {
    // The results the cores still hold; the others never left them, and
    // nothing but the next map read them.
    auto stillHeld = [&](std::vector<float> &&values) {
      if (values.empty())
        return Tensor();
      Tensor tensor(shape);
      tensor.data = std::move(values);
      return tensor;
    };
    frame.set(product.getResult(), stillHeld(std::move(ran->values)));
    for (auto [map, mapped] : llvm::zip(maps, ran->mapped))
      frame.set(map.getResult(), stillHeld(std::move(mapped)));
    fusedMapRuns += static_cast<int64_t>(maps.size());
    done.insert(maps.begin(), maps.end());
    return true;
  }
  // scale * product (+ bias), shaped as the executor shapes it.
  Tensor result(shape);
  double scale =
      product.getScale() ? product.getScale()->convertToDouble() : 1.0;
  const Tensor *bias = product.getBias() ? &frame[product.getBias()] : nullptr;
  for (int64_t i = 0; i < result.numel(); ++i)
    result.data[i] = static_cast<float>(scale * ran->values[i]) +
                     (bias ? bias->data[i % outputs] : 0.0f);
  frame.set(product.getResult(), std::move(result));
  return true;
}

namespace {

/// The kernels of an attention pass fused into its region, each reading
/// what the one before made, from the product of queries and keys that
/// begins it: forward, the softmax and the product by the values;
/// backward, where the probabilities are recomputed, the values' gradient
/// P^T dO, the probabilities' dO V^T, the softmax's gradient dS, and the
/// queries' dS K and the keys' dS^T Q.
struct AttentionKernels {
  dataflow::MatmulOp scores;
  dataflow::SoftmaxOp softmax;
  dataflow::MatmulOp weighted;
  dataflow::MatmulOp valueGrad, probabilityGrad, queryGrad, keyGrad;
  dataflow::SoftmaxGradOp scoreGrad;
};

/// Whether `product` is op(A) op(B) as transposed here, unscaled and
/// without a bias or a sum over the batch.
bool isPlainProduct(dataflow::MatmulOp product, bool transposeLhs,
                    bool transposeRhs) {
  return product && product.getTransposeLhs() == transposeLhs &&
         product.getTransposeRhs() == transposeRhs && !product.getBias() &&
         !product.getScale() && !product.getReduceBatch();
}

/// The readers of `value` of type `Op` whose first operand it is.
template <typename Op> llvm::SmallVector<Op, 2> readersOf(Value value) {
  llvm::SmallVector<Op, 2> readers;
  for (OpOperand &use : value.getUses())
    if (auto reader = dyn_cast<Op>(use.getOwner());
        reader && use.getOperandNumber() == 0)
      readers.push_back(reader);
  return readers;
}

/// Finds the pass `scores` begins into `pass`; returns why it is not one
/// the programs compute, or nothing.
std::string matchAttention(dataflow::MatmulOp scores, AttentionKernels &pass) {
  pass.scores = scores;
  if (!isPlainProduct(scores, false, true))
    return "its product of queries and keys is scaled, biased or transposed "
           "otherwise";
  auto softmaxes = readersOf<dataflow::SoftmaxOp>(scores.getResult());
  if (softmaxes.size() != 1 || !scores.getResult().hasOneUse())
    return "its scores feed more than a softmax";
  pass.softmax = softmaxes.front();
  Value probabilities = pass.softmax.getResult();
  auto products = readersOf<dataflow::MatmulOp>(probabilities);
  auto gradients = readersOf<dataflow::SoftmaxGradOp>(probabilities);
  size_t readers = std::distance(probabilities.getUses().begin(),
                                 probabilities.getUses().end());
  if (products.size() == 1 && readers == 1) {
    pass.weighted = products.front();
    return isPlainProduct(pass.weighted, false, false)
               ? ""
               : "its product by the values is transposed, scaled or biased";
  }
  if (products.size() != 1 || gradients.size() != 1 || readers != 2 ||
      !isPlainProduct(products.front(), true, false))
    return "its probabilities feed kernels other than a forward or a "
           "backward pass";
  pass.valueGrad = products.front();
  pass.scoreGrad = gradients.front();
  pass.probabilityGrad =
      pass.scoreGrad.getGrad().getDefiningOp<dataflow::MatmulOp>();
  if (!isPlainProduct(pass.probabilityGrad, false, true) ||
      pass.probabilityGrad.getLhs() != pass.valueGrad.getRhs() ||
      !pass.probabilityGrad.getResult().hasOneUse() ||
      pass.scoreGrad.getScale() != pass.softmax.getScale())
    return "its softmax's gradient is not of dO V^T at the softmax's scale";
  Value scoreGrad = pass.scoreGrad.getResult();
  for (auto product : readersOf<dataflow::MatmulOp>(scoreGrad)) {
    if (isPlainProduct(product, false, false) &&
        product.getRhs() == scores.getRhs())
      pass.queryGrad = product;
    else if (isPlainProduct(product, true, false) &&
             product.getRhs() == scores.getLhs())
      pass.keyGrad = product;
  }
  if (!pass.queryGrad || !pass.keyGrad ||
      std::distance(scoreGrad.getUses().begin(), scoreGrad.getUses().end()) !=
          2)
    return "its scores' gradient feeds more than dS K and dS^T Q";
  return "";
}

/// Whether every op of `ops` is among the kernels fused into `region`
/// after `kernel`, its own: the stage's next as many kernels as the region
/// names, as the executor pairs them.
bool fusedAfter(Operation *kernel, wafer::RegionOp region,
                llvm::ArrayRef<Operation *> ops) {
  llvm::SmallPtrSet<Operation *, 8> fused;
  size_t count = region.getFused().size();
  for (Operation *next = kernel->getNextNode(); next && fused.size() < count;
       next = next->getNextNode())
    if (isa<dataflow::KernelOpInterface>(next))
      fused.insert(next);
  return llvm::all_of(ops, [&](Operation *op) { return fused.contains(op); });
}

} // namespace

FailureOr<bool> MeshKernelOffload::runAttention(Operation *op,
                                                wafer::RegionOp region,
                                                const Placed &where,
                                                exec::KernelFrame &frame,
                                                int64_t sequences) {
  auto scores = dyn_cast<dataflow::MatmulOp>(op);
  if (!scores)
    return false;
  AttentionKernels pass;
  std::string refusal = attentionRefusal(where.shape, where.layout, where.rect);
  if (refusal.empty())
    refusal = matchAttention(scores, pass);
  bool backward = refusal.empty() && pass.scoreGrad;
  llvm::SmallVector<Operation *, 6> after = {pass.softmax, pass.weighted};
  if (backward)
    after = {pass.softmax,   pass.probabilityGrad, pass.valueGrad,
             pass.scoreGrad, pass.queryGrad,       pass.keyGrad};
  if (refusal.empty() && !fusedAfter(op, region, after))
    refusal = "its kernels are not all fused into its region";
  llvm::SmallVector<Value, 4> operands;
  if (refusal.empty()) {
    operands = {scores.getLhs(), scores.getRhs(),
                backward ? pass.probabilityGrad.getRhs()
                         : pass.weighted.getRhs()};
    if (backward)
      operands.push_back(pass.valueGrad.getRhs());
  }
  const auto &shape = frame[scores.getLhs()].shape;
  if (refusal.empty() &&
      (shape.size() != 4 || llvm::any_of(operands, [&](Value operand) {
         return frame[operand].shape != shape;
       })))
    refusal = "its queries, keys and values are not alike [batch, heads, "
              "sequence, head size]";
  if (!refusal.empty()) {
    onHost(region, refusal);
    return false;
  }
  AttentionSoftmax softmax{pass.softmax.getScale().convertToDouble(),
                           pass.softmax.getCausal(), pass.softmax.getAlibi()};
  auto result = [&](std::vector<float> &&data) {
    Tensor tensor(shape);
    tensor.data = std::move(data);
    return tensor;
  };
  // The scores and probabilities (and their gradients) never leave the
  // cores, and nothing but this pass reads them: the frame holds them
  // empty.
  frame.set(scores.getResult(), Tensor());
  frame.set(pass.softmax.getResult(), Tensor());
  std::string error;
  if (!backward) {
    std::optional<AttentionRun> ran = mesh::runAttention(
        where.shape, where.layout, sequences, *target, where.rect,
        {frame[operands[0]].data, frame[operands[1]].data,
         frame[operands[2]].data, softmax},
        error);
    if (!ran)
      return failedOnMesh(region, error);
    ++attentionRuns;
    meshCycles += ran->cycles;
    frame.set(pass.weighted.getResult(), result(std::move(ran->output)));
    done.insert(after.begin(), after.end());
    return true;
  }
  std::optional<AttentionGradRun> ran = mesh::runAttentionGrad(
      where.shape, where.layout, sequences, *target, where.rect,
      {frame[operands[0]].data, frame[operands[1]].data,
       frame[operands[2]].data, frame[operands[3]].data, softmax},
      error);
  if (!ran)
    return failedOnMesh(region, error);
  ++attentionGradRuns;
  meshCycles += ran->cycles;
  frame.set(pass.probabilityGrad.getResult(), Tensor());
  frame.set(pass.scoreGrad.getResult(), Tensor());
  frame.set(pass.valueGrad.getResult(), result(std::move(ran->value)));
  frame.set(pass.queryGrad.getResult(), result(std::move(ran->query)));
  frame.set(pass.keyGrad.getResult(), result(std::move(ran->key)));
  done.insert(after.begin(), after.end());
  return true;
}

FailureOr<bool> MeshKernelOffload::runTokenSum(Operation *op,
                                               wafer::RegionOp region,
                                               const Placed &where,
                                               exec::KernelFrame &frame,
                                               int64_t sequences) {
  auto sum = dyn_cast<dataflow::SumBatchOp>(op);
  std::string refusal = tokenSumRefusal(where.shape, where.layout, where.rect);
  if (!sum && refusal.empty())
    refusal = "it is not a dataflow.sum_batch";
  if (!refusal.empty()) {
    onHost(region, refusal);
    return false;
  }
  // Every leading index of the input is a token: [T, N].
  const Tensor &input = frame[sum.getInput()];
  std::string error;
  std::optional<TokenSumRun> ran =
      mesh::runTokenSum(where.shape, where.layout, sequences, *target,
                        where.rect, input.data, error);
  if (!ran)
    return failedOnMesh(region, error);
  ++tokenSumRuns;
  meshCycles += ran->cycles;
  Tensor result({input.dim(-1)});
  result.data = std::move(ran->values);
  frame.set(sum.getResult(), std::move(result));
  return true;
}

FailureOr<bool> MeshKernelOffload::runNorm(Operation *op,
                                           wafer::RegionOp region,
                                           const Placed &where,
                                           exec::KernelFrame &frame,
                                           int64_t sequences) {
  auto layerNorm = dyn_cast<dataflow::LayerNormOp>(op);
  auto rmsNorm = dyn_cast<dataflow::RMSNormOp>(op);
  // A kernel fused with the norm is the executor's.
  if (!layerNorm && !rmsNorm)
    return false;
  std::string refusal = normRefusal(where.shape, where.layout, where.rect);
  if (!refusal.empty()) {
    onHost(region, refusal);
    return false;
  }
  // Every leading index of the input is a token: [T, N].
  const Tensor &input =
      frame[layerNorm ? layerNorm.getInput() : rmsNorm.getInput()];
  const Tensor &gain =
      frame[layerNorm ? layerNorm.getGamma() : rmsNorm.getGamma()];
  llvm::ArrayRef<float> shift;
  if (layerNorm)
    shift = frame[layerNorm.getBeta()].data;
  double epsilon = (layerNorm ? layerNorm.getEpsilon() : rmsNorm.getEpsilon())
                       .convertToDouble();
  std::string error;
  std::optional<NormRun> ran =
      mesh::runNorm(where.shape, where.layout, sequences, *target, where.rect,
                    input.data, gain.data, shift, epsilon, error);
  if (!ran)
    return failedOnMesh(region, error);
  ++normRuns;
  meshCycles += ran->cycles;
  llvm::SmallVector<int64_t, 4> rowShape(input.shape.begin(),
                                         input.shape.end() - 1);
  Tensor result(input.shape), rstd(rowShape);
  result.data = std::move(ran->result);
  rstd.data = std::move(ran->rstd);
  if (layerNorm) {
    Tensor mean(rowShape);
    mean.data = std::move(ran->mean);
    frame.set(layerNorm.getMean(), std::move(mean));
  }
  frame.set(layerNorm ? layerNorm.getResult() : rmsNorm.getResult(),
            std::move(result));
  frame.set(layerNorm ? layerNorm.getRstd() : rmsNorm.getRstd(),
            std::move(rstd));
  return true;
}

FailureOr<bool> MeshKernelOffload::runNormGrad(Operation *op,
                                               wafer::RegionOp region,
                                               const Placed &where,
                                               exec::KernelFrame &frame,
                                               int64_t sequences) {
  auto layerNorm = dyn_cast<dataflow::LayerNormGradOp>(op);
  auto rmsNorm = dyn_cast<dataflow::RMSNormGradOp>(op);
  // A kernel fused with the gradient (a residual's add) is the executor's.
  if (!layerNorm && !rmsNorm)
    return false;
  std::string refusal = normGradRefusal(where.shape, where.layout, where.rect);
  if (!refusal.empty()) {
    onHost(region, refusal);
    return false;
  }
  // Every leading index of the input is a token: [T, N].
  const Tensor &input =
      frame[layerNorm ? layerNorm.getInput() : rmsNorm.getInput()];
  NormGradOperands operands;
  operands.input = input.data;
  operands.outputGrad =
      frame[layerNorm ? layerNorm.getGrad() : rmsNorm.getGrad()].data;
  if (layerNorm)
    operands.mean = frame[layerNorm.getMean()].data;
  operands.rstd =
      frame[layerNorm ? layerNorm.getRstd() : rmsNorm.getRstd()].data;
  operands.gain =
      frame[layerNorm ? layerNorm.getGamma() : rmsNorm.getGamma()].data;
  std::string error;
  std::optional<NormGradRun> ran =
      mesh::runNormGrad(where.shape, where.layout, sequences, *target,
                        where.rect, operands, error);
  if (!ran)
    return failedOnMesh(region, error);
  ++normGradRuns;
  meshCycles += ran->cycles;
  int64_t features = input.dim(-1);
  Tensor inputGrad(input.shape), gainGrad({features});
  inputGrad.data = std::move(ran->input);
  gainGrad.data = std::move(ran->gain);
  if (layerNorm) {
    Tensor shiftGrad({features});
    shiftGrad.data = std::move(ran->shift);
    frame.set(layerNorm.getBetaGrad(), std::move(shiftGrad));
  }
  frame.set(layerNorm ? layerNorm.getInputGrad() : rmsNorm.getInputGrad(),
            std::move(inputGrad));
  frame.set(layerNorm ? layerNorm.getGammaGrad() : rmsNorm.getGammaGrad(),
            std::move(gainGrad));
  return true;
}

FailureOr<bool> MeshKernelOffload::runLoss(Operation *op,
                                           wafer::RegionOp region,
                                           const Placed &where,
                                           exec::KernelFrame &frame,
                                           int64_t sequences) {
  auto loss = dyn_cast<dataflow::CrossEntropyOp>(op);
  // A kernel fused with the loss is the executor's.
  if (!loss)
    return false;
  std::string refusal =
      crossEntropyRefusal(where.shape, where.layout, where.rect);
  if (!refusal.empty()) {
    onHost(region, refusal);
    return false;
  }
  // Every leading index of the logits is a token: [T, V].
  const exec::IdTensor &labels = frame.idsOf(loss.getLabels());
  CrossEntropyOperands operands;
  operands.logits = frame[loss.getLogits()].data;
  operands.labels = labels.data;
  operands.scale = loss.getScale().convertToDouble();
  std::string error;
  std::optional<CrossEntropyRun> ran =
      mesh::runCrossEntropy(where.shape, where.layout, sequences, *target,
                            where.rect, operands, error);
  if (!ran)
    return failedOnMesh(region, error);
  ++lossRuns;
  meshCycles += ran->cycles;
  Tensor value(llvm::ArrayRef<int64_t>{});
  value.data[0] = ran->loss;
  Tensor logSumExp(labels.shape);
  logSumExp.data = std::move(ran->logSumExp);
  frame.set(loss.getLoss(), std::move(value));
  frame.set(loss.getLse(), std::move(logSumExp));
  return true;
}

FailureOr<bool> MeshKernelOffload::runLossGrad(Operation *op,
                                               wafer::RegionOp region,
                                               const Placed &where,
                                               exec::KernelFrame &frame,
                                               int64_t sequences) {
  auto gradient = dyn_cast<dataflow::CrossEntropyGradOp>(op);
  // A kernel fused with the gradient is the executor's.
  if (!gradient)
    return false;
  std::string refusal = lossGradRefusal(where.shape, where.layout, where.rect);
  if (!refusal.empty()) {
    onHost(region, refusal);
    return false;
  }
  // Every leading index of the logits is a token: [T, V].
  const Tensor &logits = frame[gradient.getLogits()];
  LossGradOperands operands;
  operands.logits = logits.data;
  operands.logSumExp = frame[gradient.getLse()].data;
  operands.labels = frame.idsOf(gradient.getLabels()).data;
  operands.scale = gradient.getScale().convertToDouble();
  std::string error;
  std::optional<LossGradRun> ran =
      mesh::runLossGrad(where.shape, where.layout, sequences, *target,
                        where.rect, operands, error);
  if (!ran)
    return failedOnMesh(region, error);
  ++lossGradRuns;
  meshCycles += ran->cycles;
  Tensor result(logits.shape);
  result.data = std::move(ran->gradient);
  frame.set(gradient.getResult(), std::move(result));
  return true;
}

FailureOr<bool> MeshKernelOffload::runMap(Operation *op, wafer::RegionOp region,
                                          const Placed &where,
                                          exec::KernelFrame &frame,
                                          int64_t sequences) {
  auto map = dyn_cast<dataflow::MapOp>(op);
  // A kernel fused with the map is the executor's.
  if (!map)
    return false;
  std::string refusal = mapRefusal(where.shape, where.layout, where.rect);
  if (!refusal.empty()) {
    onHost(region, refusal);
    return false;
  }
  // Every leading index of the inputs is a token: [T, N].
  const Tensor &first = frame[map.getInputs()[0]];
  llvm::ArrayRef<float> second;
  if (map.getInputs().size() > 1)
    second = frame[map.getInputs()[1]].data;
  std::string error;
  std::optional<MapRun> ran =
      mesh::runMap(where.shape, where.layout, sequences, *target, where.rect,
                   first.data, second, error);
  if (!ran)
    return failedOnMesh(region, error);
  ++mapRuns;
  meshCycles += ran->cycles;
  Tensor result(first.shape);
  result.data = std::move(ran->result);
  frame.set(map.getResult(), std::move(result));
  return true;
}

FailureOr<bool> MeshKernelOffload::runRoute(dataflow::RouteOp route,
                                            wafer::RegionOp region,
                                            const Placed &where,
                                            exec::KernelFrame &frame,
                                            int64_t sequences) {
  std::string refusal =
      weightKernelRefusal(where.shape, where.layout, where.rect);
  if (!refusal.empty()) {
    onHost(region, refusal);
    return false;
  }
  // The input [tokens, d_model] held, the router [d_model, experts]
  // streamed, as a matmul's.
  const Tensor &input = frame[route.getInput()];
  const Tensor &router = frame[route.getRouter()];
  std::string error;
  std::optional<WeightKernelRun> ran =
      runWeightKernel(where.shape, where.layout, sequences, *target, where.rect,
                      input.data, router.data, error);
  if (!ran)
    return failedOnMesh(region, error);
  ++weightKernelRuns;
  meshCycles += ran->cycles;
  int64_t batch = input.dim(0), seq = input.dim(1);
  int64_t experts = router.dim(1), topK = route.getTopK();
  if (ran->choice) {
    ++routerChoices;
    Tensor weights({batch, seq, topK}), chosen({batch, seq, topK}),
        probs({batch, seq, experts});
    weights.data = std::move(ran->choice->weights);
    chosen.data = std::move(ran->choice->experts);
    probs.data = std::move(ran->choice->probabilities);
    frame.set(route.getWeights(), std::move(weights));
    frame.set(route.getExperts(), std::move(chosen));
    frame.set(route.getProbs(), std::move(probs));
    return true;
  }
  Tensor logits({batch, seq, experts});
  logits.data = std::move(ran->values);
  std::optional<double> null;
  if (std::optional<llvm::APFloat> logit = route.getNullExpert())
    null = logit->convertToDouble();
  exec::RouteResult chosen =
      exec::routeFromLogits(std::move(logits), topK, null,
                            !route.getRouterF32() && frame.storesBF16());
  frame.set(route.getWeights(), std::move(chosen.weights));
  frame.set(route.getExperts(), std::move(chosen.experts));
  frame.set(route.getProbs(), std::move(chosen.probs));
  onHost(region, "its softmax and choice of experts: " +
                     routerChoiceRefusal(where.shape, where.layout));
  return true;
}

FailureOr<bool> MeshKernelOffload::runFused(Operation *op,
                                            exec::KernelFrame &frame) {
  if (done.erase(op))
    return true;
  auto it = deferred.find(op);
  if (it == deferred.end())
    return false;
  auto [region, sequences] = it->second;
  deferred.erase(it);
  return runEmbedding(op, region, placed.find(region.getOperation())->second,
                      frame, sequences);
}

FailureOr<bool> MeshKernelOffload::runEmbedding(Operation *op,
                                                wafer::RegionOp region,
                                                const Placed &where,
                                                exec::KernelFrame &frame,
                                                int64_t sequences) {
  auto lookup = dyn_cast<dataflow::GatherOp>(op);
  auto gradient = dyn_cast<dataflow::ScatterAddOp>(op);
  auto positions = dyn_cast<dataflow::PositionGradOp>(op);
  // A lookup with fused learned positions runs at their add, whose table
  // the executor brings in after the lookup; another kernel fused with the
  // embedding is the executor's.
  auto added = dyn_cast<dataflow::AddPositionsOp>(op);
  if (added) {
    lookup = added.getInput().getDefiningOp<dataflow::GatherOp>();
    if (!lookup || where.shape.positionRows == 0)
      return false;
  }
  if (!lookup && !gradient && !positions)
    return false;
  std::string refusal = embeddingRefusal(where.shape, where.layout, where.rect);
  // The program adds the positions to the lookup's rows in place: nothing
  // else may read the rows before.
  bool fusedPositions = lookup && where.shape.positionRows > 0;
  if (fusedPositions && refusal.empty() &&
      !(lookup->hasOneUse() &&
        isa<dataflow::AddPositionsOp>(*lookup->user_begin())))
    refusal = "its rows are read beside the positions' add fused with it";
  int64_t tableRows = wafer::embeddingTableRows(where.shape);
  Value table = lookup ? Value(lookup.getTable()) : op->getResult(0);
  int64_t rows = cast<dataflow::StreamType>(table.getType()).getShape()[0];
  if (refusal.empty() && rows != tableRows)
    refusal = "its table has " + std::to_string(rows) +
              " rows and its region streams " + std::to_string(tableRows);
  if (!refusal.empty()) {
    // Counted once, at the lookup: its positions' add follows it.
    if (!added)
      onHost(region, refusal);
    return false;
  }
  if (fusedPositions && !added) {
    // The rows stay on the cores until the positions' add runs the program
    // (runFused), once the executor has brought in their table.
    frame.set(lookup.getResult(), Tensor());
    deferred[*lookup->user_begin()] = {region, sequences};
    return true;
  }
  std::optional<llvm::APFloat> scale = lookup     ? lookup.getScale()
                                       : gradient ? gradient.getScale()
                                                  : std::nullopt;
  double factor = scale ? scale->convertToDouble() : 1.0;
  // The row of the table each token names: its id, or in the positions'
  // table its place in its sequence.
  exec::IdTensor ids;
  if (positions) {
    const Tensor &rowGradients = frame[positions.getGrad()];
    int64_t seq = rowGradients.dim(1);
    ids.shape = {rowGradients.dim(0), seq};
    for (int64_t r = 0; r < rowGradients.dim(0) * seq; ++r)
      ids.data.push_back(static_cast<int32_t>(r % seq));
  } else {
    ids = frame.idsOf(lookup ? lookup.getIds() : gradient.getIds());
  }
  std::string error;
  std::optional<EmbeddingRun> ran;
  if (lookup)
    ran = runGather(where.shape, where.layout, sequences, *target, where.rect,
                    frame[table].data, ids.data, factor,
                    added ? llvm::ArrayRef<float>(frame[added.getTable()].data)
                          : llvm::ArrayRef<float>(),
                    error);
  else
    ran = runScatterAdd(
        where.shape, where.layout, sequences, *target, where.rect, ids.data,
        frame[gradient ? gradient.getGrad() : positions.getGrad()].data, factor,
        error);
  if (!ran)
    return failedOnMesh(region, error);
  ++(lookup ? embeddingRuns : embeddingGradRuns);
  meshCycles += ran->cycles;
  int64_t width = where.shape.columns;
  Tensor result(
      lookup ? llvm::SmallVector<int64_t, 3>{ids.shape[0], ids.shape[1], width}
             : llvm::SmallVector<int64_t, 3>{tableRows, width});
  result.data = std::move(ran->values);
  frame.set(op->getResult(0), std::move(result));
  return true;
}

FailureOr<bool> MeshKernelOffload::runExperts(Operation *op,
                                              wafer::RegionOp region,
                                              const Placed &where,
                                              exec::KernelFrame &frame,
                                              int64_t sequences) {
  auto matmul = dyn_cast<dataflow::ExpertMatmulOp>(op);
  auto gradient = dyn_cast<dataflow::ExpertWeightGradOp>(op);
  auto biasGradient = dyn_cast<dataflow::ExpertBiasGradOp>(op);
  if (!matmul && !gradient && !biasGradient) {
    onHost(region, "it is not an expert's matmul or gradient");
    return false;
  }
  // Each expert runs the pass the region was planned for, on the rows
  // routed to it: the pass's routed dimension is its rows (a weight
  // gradient's, the tokens it sums over).
  wafer::KernelShape pass = wafer::expertPass(where.shape, sequences);
  int64_t &routed = gradient ? pass.contracted : pass.rows;
  int64_t planned = routed;
  std::string refusal =
      biasGradient ? tokenSumRefusal(pass, where.layout, where.rect)
                   : weightKernelRefusal(pass, where.layout, where.rect);
  int64_t count = cast<dataflow::KernelOpInterface>(op).getRoutedExperts();
  std::vector<std::vector<int64_t>> rows =
      rowsByExpert(frame[matmul     ? matmul.getExperts()
                         : gradient ? gradient.getExperts()
                                    : biasGradient.getExperts()],
                   count);
  for (int64_t e = 0; e < count && refusal.empty(); ++e)
    if (static_cast<int64_t>(rows[e].size()) > planned)
      refusal = "expert " + std::to_string(e) + " takes " +
                std::to_string(rows[e].size()) +
                " routed rows, more than the " + std::to_string(planned) +
                " its pass is planned for";
  // As a matmul's, an expert's epilogue runs where its pass's sums are
  // reduce-scattered; elsewhere the host adds the bias and the executor
  // runs the maps.
  bool epilogueOnMesh =
      refusal.empty() && matmul && epilogueRuns(pass, where.layout);
  llvm::SmallVector<dataflow::MapOp, 2> maps;
  if (epilogueOnMesh)
    refusal = chunkedEpilogueRefusal(pass);
  if (epilogueOnMesh && refusal.empty())
    refusal = matchEpilogue(matmul, where.shape, maps);
  // A map's other input is gathered by the routed rows as the product is.
  for (auto [map, step] : llvm::zip(maps, where.shape.epilogue)) {
    Value held = heldInput(map, step);
    if (!refusal.empty() || !held)
      continue;
    llvm::ArrayRef<int64_t> lhs = frame[matmul.getLhs()].shape;
    llvm::ArrayRef<int64_t> other = frame[held].shape;
    if (other.size() != lhs.size() || other.drop_back() != lhs.drop_back() ||
        other.back() != pass.columns)
      refusal = "its epilogue's map reads an input that is not one row a "
                "routed row, as wide as the product";
  }
  if (!refusal.empty()) {
    onHost(region, refusal);
    return false;
  }

  // A matmul's rows times expert e's weight [K, N] ([N, K] stored with
  // transpose_rhs), into its rows of the result (+ the expert's bias); a
  // weight gradient's rows of X and dY, into expert e's dW [K, N]; a bias
  // gradient's rows of dY, into expert e's sums [N].
  const Tensor &input = frame[matmul     ? matmul.getLhs()
                              : gradient ? gradient.getLhs()
                                         : biasGradient.getGrad()];
  int64_t k = input.dim(-1), n = pass.columns;
  llvm::SmallVector<int64_t, 4> shape{count, k, n};
  if (biasGradient) {
    shape = {count, k};
  } else if (matmul) {
    shape.assign(input.shape.begin(), input.shape.end() - 1);
    shape.push_back(n);
  }
  Tensor result(shape);
  const Tensor *bias =
      matmul && matmul.getBias() ? &frame[matmul.getBias()] : nullptr;
  // With the epilogue on the mesh: each map's result, and which of the
  // product's and the maps' results the cores still hold (the others were
  // overwritten in place and only the next map read them).
  std::vector<Tensor> mapped(maps.size(), Tensor(shape));
  std::vector<bool> held(maps.size() + 1, true);
  for (int64_t e = 0; e < count; ++e) {
    if (rows[e].empty())
      continue;
    routed = static_cast<int64_t>(rows[e].size());
    std::string error;
    if (biasGradient) {
      std::optional<TokenSumRun> ran =
          mesh::runTokenSum(pass, where.layout, /*microBatch=*/1, *target,
                            where.rect, gathered(input, rows[e]), error);
      if (!ran)
        return failedOnMesh(region, error);
      ++tokenSumRuns;
      meshCycles += ran->cycles;
      std::copy(ran->values.begin(), ran->values.end(),
                result.data.begin() + e * k);
      continue;
    }
    std::vector<float> streamed;
    if (matmul) {
      const float *w = frame[matmul.getRhs()].data.data() + e * k * n;
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < n; ++j)
          streamed.push_back(matmul.getTransposeRhs() ? w[j * k + i]
                                                      : w[i * n + j]);
    } else {
      streamed = gathered(frame[gradient.getGrad()], rows[e]);
    }
    // Expert e's bias, and each binary map's other input on its rows.
    EpilogueOperands epilogue;
    std::vector<std::vector<float>> others;
    if (epilogueOnMesh) {
      if (bias)
        epilogue.bias = llvm::ArrayRef<float>(bias->data).slice(e * n, n);
      for (auto [map, step] : llvm::zip(maps, where.shape.epilogue)) {
        Value other = heldInput(map, step);
        others.push_back(other ? gathered(frame[other], rows[e])
                               : std::vector<float>());
      }
      epilogue.held.assign(others.begin(), others.end());
    }
    std::optional<WeightKernelRun> ran = runWeightKernel(
        pass, where.layout, /*microBatch=*/1, *target, where.rect,
        gathered(input, rows[e]), streamed, error, epilogue);
    if (!ran)
      return failedOnMesh(region, error);
    weightKernelRuns += ran->runs;
    meshCycles += ran->cycles;
    if (gradient) {
      std::copy(ran->values.begin(), ran->values.end(),
                result.data.begin() + e * k * n);
      continue;
    }
    // Expert e's rows of a result the cores still hold.
    auto scatter = [&](const std::vector<float> &values, Tensor &into,
                       bool addsBias) {
      for (auto [i, row] : llvm::enumerate(rows[e]))
        for (int64_t j = 0; j < n; ++j)
          into.data[row * n + j] =
              values[i * n + j] +
              (bias && addsBias ? bias->data[e * n + j] : 0.0f);
    };
    held[0] = held[0] && !ran->values.empty();
    if (held[0])
      scatter(ran->values, result, !epilogueOnMesh);
    for (auto [m, values] : llvm::enumerate(ran->mapped)) {
      held[m + 1] = held[m + 1] && !values.empty();
      if (held[m + 1])
        scatter(values, mapped[m], false);
    }
  }
  frame.set(op->getResult(0), held[0] ? std::move(result) : Tensor());
  for (auto [m, map] : llvm::enumerate(maps))
    frame.set(map.getResult(), held[m + 1] ? std::move(mapped[m]) : Tensor());
  fusedMapRuns += static_cast<int64_t>(maps.size());
  done.insert(maps.begin(), maps.end());
  return true;
}

void MeshKernelOffload::onHost(wafer::RegionOp region,
                               const std::string &reason) {
  auto stage = region->getParentOfType<wafer::StageOp>();
  ++hostRuns[stage.getSymName().str() + " @" + region.getSymName().str() +
             ": " + reason];
}

} // namespace cgpt::sim::mesh
