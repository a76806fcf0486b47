//===- FlopCountTest.cpp - Appendix F algorithmic FLOPs -------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The FLOPs of a training step are counted from the dataflow kernels the
// lowering emits. For the seven Cerebras-GPT models at sequence length 2048
// they must agree with the paper's Appendix F formula within 1%.
//
//===----------------------------------------------------------------------===//

#include "TestModels.h"

#include "cgpt/Dialect/Dataflow/Analysis/StepCosts.h"
#include "cgpt/Frontend/ModelSpec.h"
#include "cgpt/Pipelines/Pipelines.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace cgpt;

namespace {

struct CerebrasGpt {
  const char *file;
  int64_t dModel, layers;
  double published; // the paper's example, where it gives one
};

/// Appendix F: forward FLOPs per sequence; training is three forwards less
/// the embedding and position terms once (they pass no gradient back).
double appendixF(int64_t d, int64_t layers) {
  const double s = 2048, v = 50257, dm = static_cast<double>(d);
  double perLayer = 2 * 3 * s * dm * dm           // QKV
                    + 2 * s * s * dm              // QK^T
                    + 3 * dm * s * s + s * s * dm // softmax and its reduction
                    + 2 * s * s * dm              // softmax x V
                    + 2 * s * dm * dm             // output projection
                    + 16 * s * dm * dm            // feed-forward
                    + 2 * 7 * s * dm              // layer norms
                    + 20 * 4 * s * dm;            // GELU
  double embedding = 2 * s * v * dm, position = 2 * dm * s;
  double forward = embedding + position + layers * perLayer + 2 * s * dm * v;
  return 3 * forward - embedding - position;
}

double flopsFromKernels(const std::string &file) {
  mlir::MLIRContext context(test::allDialects());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      test::importSourceModel(file, &context);
  if (!module)
    return -1;
  mlir::PassManager pm(&context);
  buildLowerToDataflowPipeline(pm, LowerToDataflowOptions());
  if (mlir::failed(pm.run(*module)))
    return -1;
  auto program = *module->getOps<dataflow::ProgramOp>().begin();
  return static_cast<double>(
      dataflow::computeStepCosts(program).flopsPerSequence);
}

class AppendixF : public ::testing::TestWithParam<CerebrasGpt> {};

TEST_P(AppendixF, KernelFlopsWithinOnePercent) {
  const CerebrasGpt &model = GetParam();
  double expected = appendixF(model.dModel, model.layers);
  if (model.published) {
    EXPECT_NEAR(expected / model.published, 1.0, 5e-5);
  }
  double counted = flopsFromKernels(model.file);
  EXPECT_NEAR(counted / expected, 1.0, 0.01)
      << model.file << ": " << counted << " vs " << expected;
}

INSTANTIATE_TEST_SUITE_P(
    CerebrasGptFamily, AppendixF,
    ::testing::Values(
        CerebrasGpt{"models/cerebras-gpt-111m.yaml", 768, 10, 2.4377e12},
        CerebrasGpt{"models/cerebras-gpt-256m.yaml", 1088, 14, 0},
        CerebrasGpt{"models/cerebras-gpt-590m.yaml", 1536, 18, 0},
        CerebrasGpt{"models/cerebras-gpt-1.3b.yaml", 2048, 24, 2.1928e13},
        CerebrasGpt{"models/cerebras-gpt-2.7b.yaml", 2560, 32, 0},
        CerebrasGpt{"models/cerebras-gpt-6.7b.yaml", 4096, 32, 0},
        CerebrasGpt{"models/cerebras-gpt-13b.yaml", 5120, 40, 1.8062e14}));

TEST(Recompute, LayerPolicyRecomputesOneForwardOfTheLayers) {
  // Recomputing a layer reruns its forward kernels: a third of the layers'
  // training FLOPs, and nothing for the embedding and the head.
  mlir::MLIRContext context(test::allDialects());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      test::importSourceModel("models/cerebras-gpt-111m.yaml", &context);
  ASSERT_TRUE(module);
  mlir::PassManager pm(&context);
  buildLowerToDataflowPipeline(pm, LowerToDataflowOptions());
  ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
  dataflow::StepCosts costs = dataflow::computeStepCosts(
      *module->getOps<dataflow::ProgramOp>().begin());
  EXPECT_GT(costs.recomputeFlopsPerSequence, 0);
  EXPECT_LT(costs.recomputeFlopsPerSequence, costs.flopsPerSequence / 3);
}

} // namespace
