//===- FrontendTest.cpp - model file semantics ----------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "TestModels.h"

#include "cgpt/Frontend/ModelSpec.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace cgpt;
using namespace cgpt::frontend;
using training::MicroBatchMode;
using training::ScheduleKind;

namespace {

const char *kModel = R"(
model:
    vocab_size: 256
    hidden_size: 64
    num_hidden_layers: 2
    num_heads: 4
    max_position_embeddings: 64
)";

/// Reads `text` as a model file; diagnostics are collected in `errors`.
mlir::FailureOr<ModelSpec> read(const std::string &text,
                                std::string *errors = nullptr,
                                ImportOptions options = {},
                                const std::string &suffix = "yaml") {
  mlir::MLIRContext context;
  std::string collected;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    collected += d.str() + "\n";
    return mlir::success();
  });
  std::string path = test::writeTemporary(text, suffix);
  mlir::FailureOr<ModelSpec> spec = readModelFile(path, &context, options);
  llvm::sys::fs::remove(path);
  if (errors)
    *errors = collected;
  return spec;
}

TEST(Frontend, PyTorchBatchIsGlobal) {
  auto spec = read(std::string("train_input:\n    batch_size: 16\n") + kModel +
                   "runconfig:\n    num_csx: 4\n");
  ASSERT_TRUE(mlir::succeeded(spec));
  EXPECT_EQ(spec->schema, Schema::ModelZooPyTorch);
  EXPECT_EQ(spec->globalBatch, 16);
  EXPECT_EQ(spec->numCsx, 4);
}

TEST(Frontend, TensorFlowBatchIsPerSystem) {
  auto spec = read(std::string("train_input:\n    batch_size: 16\n"
                               "    data_processor: GptTfRecordsProcessor\n") +
                   kModel + "runconfig:\n    num_csx: 4\n");
  ASSERT_TRUE(mlir::succeeded(spec));
  EXPECT_EQ(spec->schema, Schema::ModelZooTensorFlow);
  EXPECT_EQ(spec->batchSemantics, BatchSemantics::PerSystem);
  EXPECT_EQ(spec->globalBatch, 64);
}

// PyTorch files of 1.7 to 1.9.1 spell the decay as TensorFlow files do; the
// spelling does not make the batch per system.
TEST(Frontend, PyTorchWeightDecayRateKeepsGlobalBatchAndWarns) {
  std::string errors;
  auto spec = read(std::string("train_input:\n    batch_size: 16\n") + kModel +
                       "optimizer:\n    weight_decay_rate: 0.01\n"
                       "runconfig:\n    num_csx: 4\n",
                   &errors);
  ASSERT_TRUE(mlir::succeeded(spec));
  EXPECT_EQ(spec->schema, Schema::ModelZooPyTorch);
  EXPECT_EQ(spec->batchSemantics, BatchSemantics::Global);
  EXPECT_EQ(spec->globalBatch, 16);
  EXPECT_NE(errors.find("--batch-semantics=per-system"), std::string::npos)
      << errors;
}

TEST(Frontend, BatchSemanticsOverrideWins) {
  ImportOptions options;
  options.batchSemantics = BatchSemantics::PerSystem;
  options.numCsx = 3;
  std::string errors;
  auto spec = read(std::string("train_input:\n    batch_size: 16\n") + kModel +
                       "optimizer:\n    weight_decay_rate: 0.01\n",
                   &errors, options);
  ASSERT_TRUE(mlir::succeeded(spec));
  EXPECT_EQ(spec->globalBatch, 48);
  EXPECT_EQ(errors.find("warning"), std::string::npos) << errors;
}

TEST(Frontend, BatchSizeAndSequenceLengthOverridesWin) {
  ImportOptions options;
  options.batchSize = 6;
  options.sequenceLength = 32;
  auto spec = read(std::string("train_input:\n    batch_size: 16\n") + kModel,
                   nullptr, options);
  ASSERT_TRUE(mlir::succeeded(spec));
  EXPECT_EQ(spec->globalBatch, 6);
  EXPECT_EQ(spec->sequenceLength, 32);
  options.sequenceLength = 65;
  std::string errors;
  EXPECT_TRUE(mlir::failed(read(std::string("train_input:\n    batch_size: "
                                            "16\n") +
                                    kModel,
                                &errors, options)));
  EXPECT_NE(errors.find("--sequence-length is 65; allowed 1 to the model's "
                        "max_position_embeddings (64)"),
            std::string::npos)
      << errors;
}

TEST(Frontend, RepeatedKeyLastWins) {
  std::string errors;
  auto spec = read(std::string("train_input:\n    batch_size: 16\n"
                               "    batch_size: 8\n") +
                       kModel,
                   &errors);
  ASSERT_TRUE(mlir::succeeded(spec));
  EXPECT_EQ(spec->globalBatch, 8);
  EXPECT_NE(errors.find("key 'batch_size' is given again (line 2 and line 3)"),
            std::string::npos)
      << errors;
}

// Release 2.x muP: multipliers derived from the base widths.
TEST(Frontend, MuPFromBaseWidths) {
  const char *model = R"(
model:
    vocab_size: 256
    hidden_size: 512
    num_hidden_layers: 2
    num_heads: 4
    filter_size: 2048
    max_position_embeddings: 64
    mup_base_hidden_size: 128
    mup_base_filter_size: 512
    output_logits_alpha: 2.0
    embeddings_scale: 10.0
)";
  auto spec = read(std::string("train_input:\n    batch_size: 16\n") + model);
  ASSERT_TRUE(mlir::succeeded(spec));
  EXPECT_TRUE(spec->mup);
  EXPECT_TRUE(spec->scaleQkByHeadSize);
  EXPECT_DOUBLE_EQ(spec->outputLogitsScale, 0.5);
  EXPECT_DOUBLE_EQ(spec->decoderKernelLrScale, 0.25);
  EXPECT_DOUBLE_EQ(spec->embeddingsScale, 10.0);

  std::string errors;
  std::string uneven(model);
  uneven.replace(uneven.find("mup_base_filter_size: 512"), 25,
                 "mup_base_filter_size: 1024");
  EXPECT_TRUE(mlir::failed(read(
      std::string("train_input:\n    batch_size: 16\n") + uneven, &errors)));
  EXPECT_NE(errors.find("muP width multipliers differ"), std::string::npos)
      << errors;
}

TEST(Frontend, UseBfloat16FalseStoresFloat16) {
  auto spec = read(std::string("train_input:\n    batch_size: 16\n") + kModel +
                   "    mixed_precision: true\n    use_bfloat16: false\n");
  ASSERT_TRUE(mlir::succeeded(spec));
  EXPECT_EQ(spec->storage, StorageType::F16);
}

TEST(Frontend, SniffsStandardInput) {
  EXPECT_EQ(sniffModelFormat("{\"n_embd\": 8}"), ModelFormat::Json);
  EXPECT_EQ(sniffModelFormat("# comment\n\ntrainer:\n  init: {}\n"),
            ModelFormat::Yaml);
  EXPECT_EQ(sniffModelFormat("module {\n}\n"), std::nullopt);
  EXPECT_EQ(sniffModelFormat("// RUN: x\nmodule {}\n"), std::nullopt);
  EXPECT_EQ(sniffModelFormat("#map = affine_map<(d0) -> (d0)>\nmodule {}\n"),
            std::nullopt);
  EXPECT_EQ(sniffModelFormat(""), std::nullopt);
}

TEST(Frontend, NumCsxOverrideWins) {
  ImportOptions options;
  options.numCsx = 2;
  auto spec = read(std::string("train_input:\n    batch_size: 16\n") + kModel,
                   nullptr, options);
  ASSERT_TRUE(mlir::succeeded(spec));
  EXPECT_EQ(spec->numCsx, 2);
  EXPECT_EQ(spec->globalBatch, 16);
}

TEST(Frontend, MicroBatchForms) {
  struct Case {
    const char *yaml;
    MicroBatchMode mode;
    int64_t size, min, max;
  } cases[] = {
      {"auto", MicroBatchMode::automatic, 0, 0, 0},
      {"none", MicroBatchMode::none, 0, 0, 0},
      {"explore", MicroBatchMode::explore, 0, 0, 0},
      {"{explore: {min: 2, max: 8}}", MicroBatchMode::explore, 0, 2, 8},
      {"4", MicroBatchMode::fixed, 4, 0, 0},
  };
  for (const Case &c : cases) {
    auto spec = read(std::string("train_input:\n    batch_size: 16\n"
                                 "    micro_batch_size: ") +
                     c.yaml + "\n" + kModel);
    ASSERT_TRUE(mlir::succeeded(spec)) << c.yaml;
    EXPECT_EQ(spec->microBatchMode, c.mode) << c.yaml;
    EXPECT_EQ(spec->microBatchSize, c.size) << c.yaml;
    EXPECT_EQ(spec->microBatchMin, c.min) << c.yaml;
    EXPECT_EQ(spec->microBatchMax, c.max) << c.yaml;
  }
}

TEST(Frontend, TensorFlowCosineEndsAtAlphaTimesInitial) {
  auto spec = read(std::string("train_input:\n    batch_size: 8\n") + kModel +
                   "optimizer:\n    weight_decay_rate: 0.01\n"
                   "    learning_rate:\n"
                   "        - scheduler: Linear\n"
                   "          initial_learning_rate: 0.0\n"
                   "          end_learning_rate: 0.0002\n"
                   "          steps: 100\n"
                   "        - scheduler: Cosine\n"
                   "          initial_learning_rate: 0.0002\n"
                   "          alpha: 0.1\n"
                   "          decay_steps: 900\n"
                   "        - scheduler: Constant\n"
                   "          learning_rate: 0.00002\n");
  ASSERT_TRUE(mlir::succeeded(spec));
  ASSERT_EQ(spec->schedule.size(), 3u);
  EXPECT_EQ(spec->schedule[0].kind, ScheduleKind::linear);
  EXPECT_EQ(spec->schedule[0].steps, 100);
  EXPECT_EQ(spec->schedule[1].kind, ScheduleKind::cosine);
  EXPECT_DOUBLE_EQ(spec->schedule[1].end, 0.0002 * 0.1);
  EXPECT_EQ(spec->schedule[2].kind, ScheduleKind::constant);
  EXPECT_EQ(spec->schedule[2].steps, 0);
}

TEST(Frontend, GptJFamilyFromModelName) {
  auto spec = read(std::string("train_input:\n    batch_size: 8\n") + kModel +
                   "    name: gptj\n    position_embedding_type: rotary\n"
                   "    rotary_dim: 8\n");
  ASSERT_TRUE(mlir::succeeded(spec));
  EXPECT_EQ(spec->blockStyle, BlockStyle::Parallel);
  EXPECT_EQ(spec->position, PositionKind::Rotary);
  EXPECT_EQ(spec->rotaryDim, 8);
}

TEST(Frontend, FirstErrorOnlyAndNoSpec) {
  std::string errors;
  auto spec = read("train_input:\n    batch_size: 0\nmodel:\n"
                   "    hidden_size: -1\n",
                   &errors);
  EXPECT_TRUE(mlir::failed(spec));
  // One line: the first problem, not a cascade.
  EXPECT_EQ(std::count(errors.begin(), errors.end(), '\n'), 1) << errors;
}

TEST(Frontend, HuggingFaceDefaultsToFourTimesWidth) {
  auto spec = read(R"({"model_type": "gpt2", "n_embd": 64, "n_layer": 2,
                       "n_head": 4, "n_positions": 32, "vocab_size": 256,
                       "n_inner": null})",
                   nullptr, {}, "json");
  ASSERT_TRUE(mlir::succeeded(spec));
  EXPECT_EQ(spec->schema, Schema::HuggingFace);
  EXPECT_EQ(spec->ffnSize, 256);
  EXPECT_TRUE(spec->tiedEmbeddings);
}

} // namespace
