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

// Mixtral 8x7B (arXiv 2401.04088; the count of its released weights):
// Mistral 7B's decoder with 8 SwiGLU experts and a router [d, 8] in every
// layer. A token meets 2 of the 8 experts: 12,879,925,248 parameters.
TEST(ParameterCount, MixtralMatchesItsPublishedCount) {
  auto mixtral = [](int64_t experts) {
    const int64_t vocab = 32000, d = 4096, layers = 32, ffn = 14336,
                  kvWidth = 1024;
    return 2 * vocab * d +
           layers * (2 * d * d + 2 * d * kvWidth + d * 8 +
                     experts * 3 * d * ffn + 2 * d) +
           d;
  };
  EXPECT_EQ(mixtral(8), 46702792704);
  EXPECT_EQ(countFromIR("models/mixtral-8x7b.yaml"), 46702792704);

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      test::importSourceModel("models/mixtral-8x7b.yaml", &context);
  ASSERT_TRUE(module);
  mlir::FailureOr<transformer::ModelFacts> facts =
      transformer::computeModelFacts(
          *module->getOps<transformer::TrainStepOp>().begin());
  ASSERT_TRUE(mlir::succeeded(facts));
  EXPECT_EQ(facts->experts, 8);
  EXPECT_EQ(facts->expertsPerToken, 2);
  EXPECT_EQ(facts->activeParameters, mixtral(2));
  EXPECT_EQ(facts->activeParameters, 12879925248);
}

// Shared experts are one feed-forward block as wide as all of them; expert
// biases are one vector per expert.
TEST(ParameterCount, SharedExpertsAndExpertBiases) {
  std::string path = test::writeTemporary(R"(train_input:
    batch_size: 2
    max_sequence_length: 8
model:
    name: mixtral
    vocab_size: 16
    hidden_size: 8
    num_hidden_layers: 1
    num_heads: 2
    filter_size: 6
    max_position_embeddings: 8
    position_embedding_type: rotary
    norm_type: rmsnorm
    nonlinearity: swiglu
    use_projection_bias_in_attention: False
    use_ffn_bias_in_attention: False
    use_ffn_bias: True
    mixed_precision: False
    moe:
        num_experts: 3
        top_k: 1
        num_shared_experts: 2
optimizer:
    learning_rate: 0.001
)",
                                          ".yaml");
  ASSERT_FALSE(path.empty());
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      frontend::importModelFile(path, &context);
  ASSERT_TRUE(module);
  mlir::FailureOr<transformer::ModelFacts> facts =
      transformer::computeModelFacts(
          *module->getOps<transformer::TrainStepOp>().begin());
  ASSERT_TRUE(mlir::succeeded(facts));
  const int64_t d = 8, f = 6, experts = 3, shared = 2;
  // An expert: up and gate [d, f] with biases [f], down [f, d] with [d].
  int64_t expert = 3 * d * f + 2 * f + d;
  int64_t sharedBlock = 3 * d * (shared * f) + 2 * shared * f + d;
  int64_t layer =
      2 * d + 4 * d * d + d * experts + experts * expert + sharedBlock;
  EXPECT_EQ(facts->parameters, 16 * d + layer + d);
  EXPECT_EQ(facts->activeParameters, facts->parameters - 2 * expert);
}
