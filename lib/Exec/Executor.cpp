//===- Executor.cpp - run a placed training step with real numbers --------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Exec/Executor.h"

#include "cgpt/Exec/ExecutableKernel.h"
#include "cgpt/Support/MicroBatches.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace cgpt;
using namespace cgpt::exec;
using TensorRef = KernelFrame::TensorRef;

#include "cgpt/Exec/ExecutableKernelInterface.cpp.inc"

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
    // Each kernel the stage places, with the region that places it (none
    // for a kernel fused into another's region).
    SmallVector<std::pair<StringRef, wafer::RegionOp>> placedKernels;
    for (auto region : placed.getBody().front().getOps<wafer::RegionOp>()) {
      placedKernels.push_back({region.getKernel(), region});
      for (Attribute fused : region.getFused())
        placedKernels.push_back({cast<StringAttr>(fused).getValue(), {}});
    }
    auto next = placedKernels.begin();
    for (Operation &op : stage.getBody().front()) {
      auto kernel = dyn_cast<dataflow::KernelOpInterface>(op);
      if (!kernel)
        continue;
      if (next == placedKernels.end() ||
          next->first != op.getName().getStringRef())
        return op.emitError()
               << "kernel '" << op.getName() << "' has no matching region in "
               << "placed stage @" << placed.getSymName()
               << "; the wafer program was placed from another program";
      if (next->second)
        trainer.regionOf[&op] = next->second;
      ++next;
      dataflow::TileAttr tile = kernel.getTileOrNull();
      if (!tile)
        return op.emitError() << "has no tile; run dataflow-tile first";
      if (!isa<ExecutableKernelOpInterface>(op))
        return op.emitError()
               << "the functional executor cannot run '" << op.getName()
               << "': it has no ExecutableKernelOpInterface";
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

void Trainer::recordRouting(dataflow::RouteOp route, const KernelFrame &frame,
                            int64_t firstSequence) {
  auto router = route.getRouter().getDefiningOp<dataflow::WeightInOp>();
  if (!router)
    return;
  const Tensor &experts = frame[route.getExperts()];
  int64_t rowElements = experts.numel() / std::max<int64_t>(1, experts.dim(0));
  auto [entry, inserted] = routing.try_emplace(
      router.getName().str(),
      Tensor({globalBatch, experts.dim(1), experts.dim(2)}));
  // A recomputed layer routes again, to the same experts.
  std::copy(experts.data.begin(), experts.data.end(),
            entry->second.data.begin() + firstSequence * rowElements);
}

LogicalResult Trainer::runMicroBatch(const IdTensor &tokens,
                                     const IdTensor &labels,
                                     int64_t firstSequence, double &loss) {
  KernelFrame frame(tokens, labels, seqLen);
  frame.setDropoutStream({options.dropoutSeed, stepCount, firstSequence});
  frame.setStoresBF16(options.bf16Storage);
  for (auto stage :
       program.getLoop().getBodyBlock().getOps<dataflow::StageOp>()) {
    for (Operation &op : stage.getBody().front()) {
      if (auto kernel = dyn_cast<ExecutableKernelOpInterface>(op)) {
        FailureOr<bool> offloaded = false;
        if (options.offload) {
          if (auto region = regionOf.lookup(&op))
            offloaded =
                options.offload->run(&op, region, frame, tokens.shape[0]);
          else
            offloaded = options.offload->runFused(&op, frame);
        }
        if (failed(offloaded))
          return failure();
        if (!*offloaded &&
            failed(kernel.execute(frame, tiles.find(&op)->second)))
          return failure();
        if (auto route = dyn_cast<dataflow::RouteOp>(op))
          recordRouting(route, frame, firstSequence);
        // Streams are stored in the storage type; row statistics, the
        // loss and constants stay f32 (see each kernel).
        if (options.bf16Storage)
          for (OpResult result : op.getResults()) {
            if (kernel.keepsF32Result(result.getResultNumber()))
              continue;
            auto copy = std::make_shared<Tensor>(frame[result]);
            roundToBF16(copy->data);
            frame.set(result, TensorRef(std::move(copy)));
          }
        continue;
      }
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
              .Default([&](Operation *unknown) -> LogicalResult {
                return unknown->emitError()
                       << "the functional executor cannot run '"
                       << unknown->getName() << "'";
              });
      if (failed(handled))
        return failure();
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
  routing.clear();

  StepResult result;
  for (int64_t system = 0; system < numCsx; ++system) {
    auto [begin, end] = systemShare(globalBatch, numCsx, system);
    // The system's passes as the plan splits them: evenly, the larger
    // first.
    PassSplit split = PassSplit::atMost(end - begin, microBatch);
    for (int64_t pass = 0; pass < split.passes; ++pass) {
      int64_t first = begin + split.firstOf(pass);
      int64_t last = begin + split.firstOf(pass + 1);
      if (failed(runMicroBatch(sliceRows(batch.tokens, first, last),
                               sliceRows(batch.labels, first, last), first,
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
