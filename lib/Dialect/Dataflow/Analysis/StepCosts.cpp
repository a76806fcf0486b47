//===- StepCosts.cpp - FLOPs, streamed bytes and kept activations ---------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Dataflow/Analysis/StepCosts.h"

using namespace mlir;

#include "llvm/Support/MathExtras.h"

namespace cgpt::dataflow {

StepCosts computeStepCosts(ProgramOp program) {
  StepCosts costs;
  costs.globalBatch = program.getGlobalBatchAttr().getInt();
  costs.numCsx = program.getNumCsxAttr().getInt();
  MicroBatchLoopOp loop = program.getLoop();
  costs.passesPerSystem = loop.getGradAccumStepsAttr().getInt();

  int64_t keptInLayers = 0;
  program.walk([&](Operation *op) {
    if (auto kernel = dyn_cast<KernelOpInterface>(op)) {
      int64_t &sum = kernel.isRecompute() ? costs.recomputeFlopsPerSequence
                                          : costs.flopsPerSequence;
      costs.overflowed |=
          llvm::AddOverflow(sum, kernel.getFlopsPerSequence(), sum);
    } else if (auto in = dyn_cast<WeightInOp>(op)) {
      costs.weightBytesIn += in.getBytesAttr().getInt();
    } else if (auto out = dyn_cast<GradOutOp>(op)) {
      costs.gradientBytesOut += out.getBytesAttr().getInt();
    } else if (auto stash = dyn_cast<StashOp>(op)) {
      int64_t bytes = bytesPerSequence(stash.getBuffer().getType().getTensor());
      costs.keptBytesPerSequence += bytes;
      auto stage = stash->getParentOfType<StageOp>();
      if (stage && stage.getLayer())
        keptInLayers += bytes;
    } else if (auto stage = dyn_cast<StageOp>(op)) {
      if (stage.getLayer() && stage.getPhase() == Phase::forward)
        ++costs.layers;
    }
  });
  if (costs.layers)
    costs.keptBytesPerSequencePerLayer = keptInLayers / costs.layers;
  return costs;
}

} // namespace cgpt::dataflow
