//===- Report.cpp - summary and JSON report --------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Report/Report.h"

#include "cgpt/Support/Format.h"

#include "llvm/Support/FormatVariadic.h"

using namespace cgpt::transformer;

namespace cgpt::report {

/// The micro-batch request as a user writes it in a params file.
static std::string describeMicroBatch(MicroBatchAttr microBatch) {
  switch (microBatch.getMode()) {
  case MicroBatchMode::fixed:
    return std::to_string(microBatch.getSize());
  case MicroBatchMode::explore:
    if (microBatch.getMin() || microBatch.getMax())
      return llvm::formatv("explore {0}..{1}", microBatch.getMin(),
                           microBatch.getMax());
    return "explore";
  default:
    return stringifyMicroBatchMode(microBatch.getMode()).str();
  }
}

static std::string typeName(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

void printSummary(llvm::raw_ostream &os, TrainStepOp step,
                  const ModelFacts &facts, llvm::StringRef sourcePath,
                  llvm::StringRef origin) {
  os << "cgpt: " << facts.name;
  if (!sourcePath.empty())
    os << " (" << sourcePath << ")";
  os << "\n";
  if (!origin.empty())
    os << "  read as     " << origin << "\n";
  os << llvm::formatv("  model       {0} layers, d_model {1}, {2} heads x {3}, "
                      "d_ffn {4}, vocab {5}\n",
                      facts.layers, facts.hiddenSize, facts.numHeads,
                      facts.headSize, facts.ffnSize, facts.vocabSize);
  os << "              " << facts.positionEmbedding << " positions, "
     << (facts.tiedEmbeddings ? "tied" : "untied") << " embeddings"
     << (step.getMupAttr() ? ", muP" : "") << "\n";
  os << "  parameters  " << formatGrouped(facts.parameters) << "\n";
  os << llvm::formatv("  batch       {0} sequences x {1} tokens per step on "
                      "{2} system(s): {3} per system, micro-batch {4}\n",
                      facts.globalBatch, facts.sequenceLength, facts.numCsx,
                      step.getPerSystemBatch(),
                      describeMicroBatch(step.getMicroBatch()));
  AdamWAttr adamw = step.getOptimizer();
  PrecisionAttr precision = step.getPrecision();
  auto exact = [](const llvm::APFloat &value) {
    return formatExactDouble(value.convertToDouble());
  };
  os << "  optimizer   AdamW betas (" << exact(adamw.getBeta1()) << ", "
     << exact(adamw.getBeta2()) << "), eps " << exact(adamw.getEpsilon())
     << ", weight decay " << exact(adamw.getWeightDecay()) << ", clip "
     << formatExactDouble(step.getMaxGradientNorm().convertToDouble())
     << "\n";
  os << "  precision   " << typeName(precision.getStorage()) << " storage, "
     << typeName(precision.getAccumulate()) << " accumulation\n";
}

llvm::json::Value buildReport(TrainStepOp step, const ModelFacts &facts) {
  return llvm::json::Object{
      {"model",
       llvm::json::Object{
           {"name", facts.name},
           {"parameters", facts.parameters},
           {"layers", facts.layers},
           {"hidden_size", facts.hiddenSize},
           {"num_heads", facts.numHeads},
           {"head_size", facts.headSize},
           {"ffn_size", facts.ffnSize},
           {"vocab_size", facts.vocabSize},
           {"sequence_length", facts.sequenceLength},
           {"position_embedding", facts.positionEmbedding},
           {"tied_embeddings", facts.tiedEmbeddings},
           {"mup", static_cast<bool>(step.getMupAttr())},
       }},
      {"batch",
       llvm::json::Object{
           {"global", facts.globalBatch},
           {"num_csx", facts.numCsx},
           {"per_system", step.getPerSystemBatch()},
           {"micro_batch_request", describeMicroBatch(step.getMicroBatch())},
       }},
  };
}

llvm::Error writeJsonFile(llvm::StringRef path, const llvm::json::Value &value) {
  return llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
    os << llvm::formatv("{0:2}", value) << "\n";
    return llvm::Error::success();
  });
}

} // namespace cgpt::report
