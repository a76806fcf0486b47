//===- ParameterCountTest.cpp - Appendix E parameter counts ---------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The parameter count is computed from the imported IR (one element per
// scalar of every transformer.weight). For the seven Cerebras-GPT models it
// must equal the paper's Appendix E formula exactly, and for the LLaMA-style
// models the counts published with their weights.
//
//===----------------------------------------------------------------------===//

#include "TestModels.h"

#include "cgpt/Dialect/Transformer/Analysis/ModelFacts.h"
#include "cgpt/Frontend/ModelSpec.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace cgpt;

namespace {

struct CerebrasGpt {
  const char *file;
  int64_t dModel, layers, ffn;
  int64_t published; // the paper's figure where it prints one, else 0
};

/// Appendix E: embeddings (tokens and learned positions, the head tied),
/// per layer two layer norms, attention with biases and the ffn, and the
/// final layer norm.
int64_t appendixE(int64_t d, int64_t layers, int64_t ffn) {
  const int64_t vocab = 50257, seq = 2048;
  int64_t perLayer = 2 * d + 4 * (d * d + d) + 2 * d + 2 * d * ffn + ffn + d;
  return vocab * d + d * seq + layers * perLayer + 2 * d;
}

int64_t countFromIR(const std::string &file) {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      test::importSourceModel(file, &context);
  if (!module)
    return -1;
  auto step = *module->getOps<transformer::TrainStepOp>().begin();
  mlir::FailureOr<transformer::ModelFacts> facts =
      transformer::computeModelFacts(step);
  return mlir::succeeded(facts) ? facts->parameters : -1;
}

class AppendixE : public ::testing::TestWithParam<CerebrasGpt> {};

TEST_P(AppendixE, CountFromIRMatchesFormula) {
  const CerebrasGpt &model = GetParam();
  int64_t expected = appendixE(model.dModel, model.layers, model.ffn);
  if (model.published) {
    EXPECT_EQ(expected, model.published);
  }
  EXPECT_EQ(countFromIR(model.file), expected);
}

INSTANTIATE_TEST_SUITE_P(
    CerebrasGptFamily, AppendixE,
    ::testing::Values(
        CerebrasGpt{"models/cerebras-gpt-111m.yaml", 768, 10, 3072, 111050496},
        CerebrasGpt{"models/cerebras-gpt-256m.yaml", 1088, 14, 4352, 0},
        CerebrasGpt{"models/cerebras-gpt-590m.yaml", 1536, 18, 6144, 0},
        CerebrasGpt{"models/cerebras-gpt-1.3b.yaml", 2048, 24, 8192, 0},
        CerebrasGpt{"models/cerebras-gpt-2.7b.yaml", 2560, 32, 10240, 0},
        CerebrasGpt{"models/cerebras-gpt-6.7b.yaml", 4096, 32, 16384, 0},
        CerebrasGpt{"models/cerebras-gpt-13b.yaml", 5120, 40, 20480,
                    12853386240}));

TEST(ParameterCount, TiedHeadIsCountedOnce) {
  // muP changes multipliers, never the parameter count.
  EXPECT_EQ(countFromIR("models/cerebras-gpt-111m-mup.yaml"), 111050496);
}

TEST(ParameterCount, UntiedHeadAndBiasAreCounted) {
  // GPT-J 6B: rotary (no position table), untied head with a bias, no
  // attention biases, one layer norm per parallel block.
  const int64_t d = 4096, layers = 28, ffn = 16384, vocab = 50257;
  int64_t perLayer = 2 * d + 3 * d * d + d * d + 2 * d * ffn + ffn + d;
  int64_t expected = vocab * d + layers * perLayer + 2 * d + vocab * d + vocab;
  EXPECT_EQ(countFromIR("models/gptj-6b.yaml"), expected);
}

} // namespace

// LLaMA-style models: untied embeddings, RMS norms (a gain each), SwiGLU
// (three matrices), no biases, and for LLaMA-3 and Mistral key/value
// heads shared by four query heads each. The counts Meta and Mistral AI
// publish with their weights.
TEST(ParameterCount, LlamaStyleModelsMatchTheirPublishedCounts) {
  EXPECT_EQ(countFromIR("models/llama-2-7b.yaml"), 6738415616);
  EXPECT_EQ(countFromIR("models/llama-2-13b.yaml"), 13015864320);
  EXPECT_EQ(countFromIR("models/llama-3-8b.yaml"), 8030261248);
  EXPECT_EQ(countFromIR("models/mistral-7b.yaml"), 7241732096);
}

TEST(ParameterCount, LlamaCountFollowsItsShape) {
  // vocab x d twice, per layer q, o (d^2 each), k, v (d x kv width each),
  // three d x ffn matrices and two gains, and the final gain.
  auto llama = [](int64_t vocab, int64_t d, int64_t layers, int64_t ffn,
                  int64_t kvWidth) {
    return 2 * vocab * d +
           layers * (2 * d * d + 2 * d * kvWidth + 3 * d * ffn + 2 * d) + d;
  };
  EXPECT_EQ(llama(32000, 4096, 32, 11008, 4096), 6738415616);
  EXPECT_EQ(llama(128256, 4096, 32, 14336, 1024), 8030261248);
  EXPECT_EQ(llama(32000, 4096, 32, 14336, 1024), 7241732096);
}
