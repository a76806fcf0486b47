//===- Executor.cpp - run a placed training step with real numbers --------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Exec/Executor.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <memory>

using namespace mlir;
using namespace cgpt;
using namespace cgpt::exec;
using TensorRef = std::shared_ptr<const Tensor>;

double exec::learningRate(ArrayAttr schedule, int64_t step) {
  double rate = 0.0;
  for (auto phase : schedule.getAsRange<training::LRPhaseAttr>()) {
    int64_t steps = phase.getSteps();
    double start = phase.getStart().convertToDouble(),
           end = phase.getEnd().convertToDouble();
    if (steps == 0 || step < steps) {
      double progress =
          steps == 0 ? 0.0
                     : static_cast<double>(step) / static_cast<double>(steps);
      switch (phase.getKind()) {
      case training::ScheduleKind::constant:
        return start;
      case training::ScheduleKind::linear:
        return start + (end - start) * progress;
      case training::ScheduleKind::cosine:
        return end + (start - end) * 0.5 * (1.0 + std::cos(M_PI * progress));
      }
    }
    step -= steps;
    rate = phase.getKind() == training::ScheduleKind::constant ? start : end;
  }
  return rate;
}

/// The stage of `device` at schedule position `order`.
static wafer::StageOp findStage(wafer::DeviceOp device, int64_t order) {
  for (auto stage : device.getBody().front().getOps<wafer::StageOp>())
    if (static_cast<int64_t>(stage.getOrder()) == order)
      return stage;
  return {};
}

FailureOr<Trainer> Trainer::create(dataflow::ProgramOp program,
                                   wafer::DeviceOp device,
                                   std::vector<ParameterSpec> specs,
                                   std::vector<Tensor> values,
                                   ExecOptions options) {
  Trainer trainer;
  trainer.program = program;
  trainer.options = options;
  trainer.globalBatch = static_cast<int64_t>(device.getGlobalBatch());
  trainer.numCsx = static_cast<int64_t>(device.getNumCsx());
  trainer.microBatch = static_cast<int64_t>(device.getMicroBatch());
  trainer.seqLen = static_cast<int64_t>(device.getSeqLen());
  if (trainer.microBatch < 1)
    return device.emitError() << "the device has no batch plan; run "
                                 "wafer-plan-batch before executing it";

  // Every kernel runs with its own tile, and must be one a region of the
  // placed stage at the same schedule position executes, in order: the
  // wafer program must have been placed from this program.
  int64_t order = 0;
  for (auto stage :
       program.getLoop().getBodyBlock().getOps<dataflow::StageOp>()) {
    wafer::StageOp placed = findStage(device, order);
    if (!placed)
      return stage.emitError() << "stage '" << stage.getName()
                               << "' has no placed stage at position " << order
                               << " of the wafer schedule";
    SmallVector<StringRef> placedKernels;
    for (auto region : placed.getBody().front().getOps<wafer::RegionOp>()) {
      placedKernels.push_back(region.getKernel());
      for (Attribute fused : region.getFused())
        placedKernels.push_back(cast<StringAttr>(fused).getValue());
    }
    auto next = placedKernels.begin();
    for (Operation &op : stage.getBody().front()) {
      auto kernel = dyn_cast<dataflow::KernelOpInterface>(op);
      if (!kernel)
        continue;
      if (next == placedKernels.end() || *next != op.getName().getStringRef())
        return op.emitError()
               << "kernel '" << op.getName() << "' has no matching region in "
               << "placed stage @" << placed.getSymName()
               << "; the wafer program was placed from another program";
      ++next;
      dataflow::TileAttr tile = kernel.getTileOrNull();
      if (!tile)
        return op.emitError() << "has no tile; run dataflow-tile first";
      trainer.tiles[&op].assign(tile.getSizes().begin(), tile.getSizes().end());
    }
    ++order;
  }

  program.walk([&](Operation *op) {
    if (auto gather = dyn_cast<dataflow::GatherOp>(op))
      trainer.vocab =
          cast<dataflow::StreamType>(gather.getTable().getType()).getShape()[0];
  });
  for (auto [index, spec] : llvm::enumerate(specs))
    trainer.indexOf[spec.name] = index;
  for (const Tensor &value : values) {
    trainer.firstMoments.emplace_back(value.shape);
    trainer.secondMoments.emplace_back(value.shape);
    trainer.gradients.emplace_back(value.shape);
  }
  trainer.specs = std::move(specs);
  trainer.values = std::move(values);
  return trainer;
}

namespace {
/// The values of one micro-batch's run.
class Frame {
public:
  Frame(const IdTensor &tokens, const IdTensor &labels) {
    ids[0] = &tokens;
    ids[1] = &labels;
  }
  const Tensor &operator[](Value value) const { return *tensors.at(value); }
  TensorRef ref(Value value) const { return tensors.at(value); }
  const IdTensor &idsOf(Value value) const {
    return *ids[cast<BlockArgument>(value).getArgNumber()];
  }
  void set(Value value, TensorRef tensor) {
    tensors[value] = std::move(tensor);
  }
  void set(Value value, Tensor tensor) {
    tensors[value] = std::make_shared<const Tensor>(std::move(tensor));
  }

private:
  llvm::DenseMap<Value, TensorRef> tensors;
  const IdTensor *ids[2];
};

double scaleOf(std::optional<APFloat> scale) {
  return scale ? scale->convertToDouble() : 1.0;
}
} // namespace

LogicalResult Trainer::runMicroBatch(const IdTensor &tokens,
                                     const IdTensor &labels, double &loss) {
  Frame frame(tokens, labels);
  for (auto stage :
       program.getLoop().getBodyBlock().getOps<dataflow::StageOp>()) {
    for (Operation &op : stage.getBody().front()) {
      ArrayRef<int64_t> tile;
      if (auto it = tiles.find(&op); it != tiles.end())
        tile = it->second;
      bool kernel = isa<dataflow::KernelOpInterface>(op);
      LogicalResult handled =
          llvm::TypeSwitch<Operation *, LogicalResult>(&op)
              .Case([&](dataflow::WeightInOp in) -> LogicalResult {
                auto it = indexOf.find(in.getName());
                if (it == indexOf.end())
                  return in.emitError() << "weight '" << in.getName()
                                        << "' is not a parameter of the model";
                const Tensor &weight = options.bf16Storage
                                           ? streamed[it->second]
                                           : values[it->second];
                frame.set(in.getResult(), TensorRef(&weight, [](auto *) {}));
                return success();
              })
              .Case([&](dataflow::GradOutOp out) -> LogicalResult {
                auto it = indexOf.find(out.getName());
                if (it == indexOf.end())
                  return out.emitError() << "gradient '" << out.getName()
                                         << "' is not a parameter of the model";
                Tensor &sum = gradients[it->second];
                const Tensor &grad = frame[out.getGrad()];
                for (int64_t i = 0; i < sum.numel(); ++i)
                  sum.data[i] += grad.data[i];
                return success();
              })
              .Case([&](dataflow::LossOutOp out) -> LogicalResult {
                loss += frame[out.getLoss()].data[0];
                return success();
              })
              .Case([&](dataflow::StashOp stash) -> LogicalResult {
                frame.set(stash.getBuffer(), frame.ref(stash.getInput()));
                return success();
              })
              .Case([&](dataflow::FetchOp fetch) -> LogicalResult {
                frame.set(fetch.getResult(), frame.ref(fetch.getBuffer()));
                return success();
              })
              .Case([&](dataflow::YieldOp yield) -> LogicalResult {
                for (auto [result, value] :
                     llvm::zip(stage.getResults(), yield.getValues()))
                  frame.set(result, frame.ref(value));
                return success();
              })
              .Case([&](dataflow::MatmulOp mm) -> LogicalResult {
                MatmulOptions mo;
                mo.transposeLhs = mm.getTransposeLhs();
                mo.transposeRhs = mm.getTransposeRhs();
                mo.reduceBatch = mm.getReduceBatch();
                mo.scale = static_cast<float>(scaleOf(mm.getScale()));
                const Tensor *bias =
                    mm.getBias() ? &frame[mm.getBias()] : nullptr;
                frame.set(mm.getResult(),
                          matmul(frame[mm.getLhs()], frame[mm.getRhs()], bias,
                                 mo, tile));
                return success();
              })
              .Case([&](dataflow::MapOp mapOp) -> LogicalResult {
                llvm::SmallVector<const Tensor *, 2> inputs;
                for (Value input : mapOp.getInputs())
                  inputs.push_back(&frame[input]);
                frame.set(mapOp.getResult(),
                          map(mapOp.getKind(), inputs, tile));
                return success();
              })
              .Case([&](dataflow::GatherOp g) -> LogicalResult {
                frame.set(g.getResult(),
                          gather(frame[g.getTable()], frame.idsOf(g.getIds()),
                                 static_cast<float>(scaleOf(g.getScale())),
                                 tile));
                return success();
              })
              .Case([&](dataflow::ScatterAddOp s) -> LogicalResult {
                auto type = cast<dataflow::StreamType>(s.getResult().getType());
                frame.set(s.getResult(),
                          scatterAdd(frame.idsOf(s.getIds()),
                                     frame[s.getGrad()], type.getShape()[0],
                                     static_cast<float>(scaleOf(s.getScale())),
                                     tile));
                return success();
              })
              .Case([&](dataflow::AddPositionsOp a) -> LogicalResult {
                frame.set(a.getResult(),
                          addPositions(frame[a.getInput()], frame[a.getTable()],
                                       tile));
                return success();
              })
              .Case([&](dataflow::PositionGradOp p) -> LogicalResult {
                auto type = cast<dataflow::StreamType>(p.getResult().getType());
                frame.set(
                    p.getResult(),
                    positionGrad(frame[p.getGrad()], type.getShape()[0], tile));
                return success();
              })
              .Case([&](dataflow::SumBatchOp s) -> LogicalResult {
                frame.set(s.getResult(), sumBatch(frame[s.getInput()], tile));
                return success();
              })
              .Case([&](dataflow::RotaryAnglesOp r) -> LogicalResult {
                frame.set(r.getResult(),
                          rotaryAngles(seqLen, static_cast<int64_t>(r.getDim()),
                                       r.getBase().convertToDouble()));
                return success();
              })
              .Case([&](dataflow::RotaryOp r) -> LogicalResult {
                frame.set(r.getResult(),
                          rotary(frame[r.getInput()], frame[r.getAngles()],
                                 r.getInverse(), tile));
                return success();
              })
              .Case([&](dataflow::SplitHeadsOp s) -> LogicalResult {
                Tensor q, k, v;
                splitHeads(frame[s.getQkv()],
                           static_cast<int64_t>(s.getNumHeads()),
                           static_cast<int64_t>(s.getHeadSize()), q, k, v);
                frame.set(s.getQuery(), std::move(q));
                frame.set(s.getKey(), std::move(k));
                frame.set(s.getValue(), std::move(v));
                return success();
              })
              .Case([&](dataflow::JoinHeadsOp j) -> LogicalResult {
                frame.set(j.getResult(),
                          joinHeads(frame[j.getQuery()], frame[j.getKey()],
                                    frame[j.getValue()]));
                return success();
              })
              .Case([&](dataflow::MergeHeadsOp m) -> LogicalResult {
                frame.set(m.getResult(), mergeHeads(frame[m.getInput()]));
                return success();
              })
              .Case([&](dataflow::UnmergeHeadsOp u) -> LogicalResult {
                auto type = cast<dataflow::StreamType>(u.getResult().getType());
                frame.set(u.getResult(), unmergeHeads(frame[u.getInput()],
                                                      type.getShape()[1]));
                return success();
              })
              .Case([&](dataflow::LayerNormOp ln) -> LogicalResult {
                LayerNormResult r =
                    layerNorm(frame[ln.getInput()], frame[ln.getGamma()],
                              frame[ln.getBeta()],
                              ln.getEpsilon().convertToDouble(), tile);
                frame.set(ln.getResult(), std::move(r.result));
                frame.set(ln.getMean(), std::move(r.mean));
                frame.set(ln.getRstd(), std::move(r.rstd));
                return success();
              })
              .Case([&](dataflow::LayerNormGradOp g) -> LogicalResult {
                LayerNormGrad r = layerNormGrad(
                    frame[g.getGrad()], frame[g.getInput()], frame[g.getMean()],
                    frame[g.getRstd()], frame[g.getGamma()], tile);
                frame.set(g.getInputGrad(), std::move(r.input));
                frame.set(g.getGammaGrad(), std::move(r.gamma));
                frame.set(g.getBetaGrad(), std::move(r.beta));
                return success();
              })
              .Case([&](dataflow::SoftmaxOp s) -> LogicalResult {
                frame.set(
                    s.getResult(),
                    softmax(frame[s.getScores()],
                            static_cast<float>(s.getScale().convertToDouble()),
                            s.getCausal(), tile));
                return success();
              })
              .Case([&](dataflow::SoftmaxGradOp s) -> LogicalResult {
                frame.set(s.getResult(),
                          softmaxGrad(frame[s.getProbs()], frame[s.getGrad()],
                                      static_cast<float>(
                                          s.getScale().convertToDouble()),
                                      tile));
                return success();
              })
              .Case([&](dataflow::CrossEntropyOp ce) -> LogicalResult {
                CrossEntropyResult r = crossEntropy(
                    frame[ce.getLogits()], frame.idsOf(ce.getLabels()),
                    ce.getScale().convertToDouble(), tile);
                frame.set(ce.getLoss(), std::move(r.loss));
                frame.set(ce.getLse(), std::move(r.lse));
                return success();
              })
              .Case([&](dataflow::CrossEntropyGradOp g) -> LogicalResult {
                frame.set(
                    g.getResult(),
                    crossEntropyGrad(
                        frame[g.getLogits()], frame[g.getLse()],
                        frame.idsOf(g.getLabels()),
                        static_cast<float>(g.getScale().convertToDouble()),
                        tile));
                return success();
              })
              .Default([&](Operation *unknown) -> LogicalResult {
                return unknown->emitError()
                       << "the functional executor cannot run '"
                       << unknown->getName() << "'";
              });
      if (failed(handled))
        return failure();
      // Streams are stored in the storage type; row statistics, the loss
      // and rotary angles stay f32 (see each op).
      if (kernel && options.bf16Storage &&
          !isa<dataflow::RotaryAnglesOp, dataflow::CrossEntropyOp>(op))
        for (OpResult result : op.getResults()) {
          if (auto ln = dyn_cast<dataflow::LayerNormOp>(op);
              ln && result != ln.getResult())
            continue;
          auto copy = std::make_shared<Tensor>(frame[result]);
          roundToBF16(copy->data);
          frame.set(result, TensorRef(std::move(copy)));
        }
    }
  }
  return success();
}

/// Sequences of the global batch that system `system` of `systems` takes:
/// the batch split as evenly as it goes, the first ones one more.
static std::pair<int64_t, int64_t> systemShare(int64_t batch, int64_t systems,
                                               int64_t system) {
  int64_t base = batch / systems, extra = batch % systems;
  int64_t begin = system * base + std::min(system, extra);
  return {begin, begin + base + (system < extra ? 1 : 0)};
}

static IdTensor sliceRows(const IdTensor &ids, int64_t begin, int64_t end) {
  IdTensor slice;
  int64_t seq = ids.shape[1];
  slice.shape = {end - begin, seq};
  slice.data.assign(ids.data.begin() + begin * seq,
                    ids.data.begin() + end * seq);
  return slice;
}

FailureOr<Trainer::StepResult> Trainer::step(const Batch &batch) {
  if (options.bf16Storage) {
    streamed = values;
    for (Tensor &weight : streamed)
      roundToBF16(weight.data);
  }
  for (Tensor &sum : gradients)
    std::fill(sum.data.begin(), sum.data.end(), 0.0f);

  StepResult result;
  for (int64_t system = 0; system < numCsx; ++system) {
    auto [begin, end] = systemShare(globalBatch, numCsx, system);
    for (int64_t first = begin; first < end; first += microBatch) {
      int64_t last = std::min(first + microBatch, end);
      if (failed(runMicroBatch(sliceRows(batch.tokens, first, last),
                               sliceRows(batch.labels, first, last),
                               result.loss)))
        return failure();
    }
  }
  applyOptimizer(result);
  return result;
}

void Trainer::applyOptimizer(StepResult &result) {
  dataflow::OptimizerStepOp config = program.getOptimizerStep();
  training::AdamWAttr adamw = config.getOptimizer();
  double squares = 0.0;
  for (const Tensor &grad : gradients)
    for (float g : grad.data)
      squares += static_cast<double>(g) * g;
  result.gradientNorm = std::sqrt(squares);
  // torch.nn.utils.clip_grad_norm_'s rule, as Model Zoo applies it.
  double clip = 1.0;
  double maxNorm = config.getMaxGradientNorm().convertToDouble();
  if (maxNorm > 0.0 && result.gradientNorm + 1e-6 > maxNorm)
    clip = maxNorm / (result.gradientNorm + 1e-6);

  result.learningRate = learningRate(config.getSchedule(), stepCount);
  ++stepCount;
  double beta1 = adamw.getBeta1().convertToDouble(),
         beta2 = adamw.getBeta2().convertToDouble(),
         epsilon = adamw.getEpsilon().convertToDouble();
  double correction1 = 1.0 - std::pow(beta1, stepCount);
  double correction2 = 1.0 - std::pow(beta2, stepCount);
  for (auto [index, spec] : llvm::enumerate(specs)) {
    double rate = result.learningRate * spec.lrScale;
    double decay =
        spec.weightDecay ? adamw.getWeightDecay().convertToDouble() : 0.0;
    float *w = values[index].data.data();
    float *m = firstMoments[index].data.data();
    float *v = secondMoments[index].data.data();
    const float *g = gradients[index].data.data();
    for (int64_t i = 0, e = values[index].numel(); i < e; ++i) {
      float grad = static_cast<float>(g[i] * clip);
      w[i] = static_cast<float>(w[i] * (1.0 - rate * decay));
      m[i] = static_cast<float>(beta1 * m[i] + (1.0 - beta1) * grad);
      v[i] = static_cast<float>(beta2 * v[i] + (1.0 - beta2) * grad * grad);
      double denominator = std::sqrt(v[i]) / std::sqrt(correction2) + epsilon;
      w[i] = static_cast<float>(w[i] - rate / correction1 * m[i] / denominator);
    }
  }
}
