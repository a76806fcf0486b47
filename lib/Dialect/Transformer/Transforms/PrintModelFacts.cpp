//===- PrintModelFacts.cpp - transformer-print-model-facts ----------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Transformer/Analysis/ModelFacts.h"
#include "cgpt/Dialect/Transformer/Transforms/Passes.h"

namespace cgpt::transformer {
#define GEN_PASS_DEF_TRANSFORMERPRINTMODELFACTS
#include "cgpt/Dialect/Transformer/Transforms/Passes.h.inc"

namespace {
struct TransformerPrintModelFacts
    : impl::TransformerPrintModelFactsBase<TransformerPrintModelFacts> {
  void runOnOperation() override {
    for (auto step : getOperation().getOps<TrainStepOp>()) {
      mlir::FailureOr<ModelFacts> facts = computeModelFacts(step);
      if (mlir::failed(facts))
        return signalPassFailure();
      llvm::outs() << "model " << facts->name << ": parameters "
                   << facts->parameters << ", layers " << facts->layers
                   << ", hidden " << facts->hiddenSize << ", heads "
                   << facts->numHeads << "x" << facts->headSize << ", ffn "
                   << facts->ffnSize << ", vocab " << facts->vocabSize
                   << ", seq " << facts->sequenceLength << ", batch "
                   << facts->globalBatch << " on " << facts->numCsx
                   << " system(s)\n";
    }
    markAllAnalysesPreserved();
  }
};
} // namespace
} // namespace cgpt::transformer
