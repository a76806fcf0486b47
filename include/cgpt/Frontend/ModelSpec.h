//===- ModelSpec.h - a GPT model and its training recipe --------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// ModelSpec is what the frontend reads out of a model file (Model Zoo params
// YAML in its TensorFlow, PyTorch and trainer schemas, or a Hugging Face
// config.json) before any IR exists. Every field is validated when read;
// see docs/frontend.md for the keys and their limits.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_FRONTEND_MODELSPEC_H
#define CGPT_FRONTEND_MODELSPEC_H

#include "cgpt/Dialect/Transformer/IR/Transformer.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <optional>
#include <string>
#include <vector>

namespace cgpt::frontend {

/// The most systems a run may name: CS-3 clusters scale to 2048
/// (shared/reference, WSE-3 section).
constexpr int64_t kMaxSystems = 2048;

/// The dialect of model file a spec was read from.
/// How the decoder normalizes: layer norm (gain and bias) or RMS norm
/// (gain only).
enum class NormKind { LayerNorm, RMSNorm };

enum class Schema {
  /// Model Zoo TensorFlow (R1.x).
  ModelZooTensorFlow,
  /// Model Zoo PyTorch (R1.7 on).
  ModelZooPyTorch,
  /// Model Zoo `trainer:` schema (R2.4 on).
  ModelZooTrainer,
  /// Hugging Face `config.json` of a GPT-2 type model.
  HuggingFace,
};
llvm::StringRef stringifySchema(Schema schema);

/// How attention and feed-forward sit on the residual stream.
enum class BlockStyle {
  /// GPT-2/3: x += attn(ln1(x)); x += ffn(ln2(x)).
  Sequential,
  /// GPT-J/NeoX: x += attn(ln1(x)) + ffn(ln2(x)), ln2 == ln1 unless untied.
  Parallel,
};

/// What a file's `batch_size` counts. Model Zoo's release notes (1.9.1):
/// TensorFlow files and PyTorch files before 1.9.0 give it per system;
/// PyTorch files from 1.9.0 on and all trainer files give the global batch,
/// divided evenly across num_csx systems.
enum class BatchSemantics { Global, PerSystem };
llvm::StringRef stringifyBatchSemantics(BatchSemantics semantics);

/// Learned position embeddings, rotary ones, or ALiBi score biases.
enum class PositionKind { Learned, Rotary, Alibi };
enum class StorageType { F32, BF16, F16 };

struct LRPhase {
  training::ScheduleKind kind;
  double start;
  double end;
  int64_t steps;
  /// Where the file gives the phase, for errors about it (null for a
  /// phase cgpt supplies).
  mlir::LocationAttr where = {};
};

struct ModelSpec {
  /// Symbol-safe name of the model (from the file name).
  std::string name;
  std::string path;
  Schema schema = Schema::ModelZooPyTorch;
  BlockStyle blockStyle = BlockStyle::Sequential;
  /// Why blockStyle was chosen, for the summary ("model.name 'gptj'").
  std::string blockStyleReason;

  // Architecture.
  int64_t vocabSize = 0;
  int64_t hiddenSize = 0;
  int64_t numLayers = 0;
  int64_t numHeads = 0;
  int64_t headSize = 0;
  /// Key and value heads (grouped-query attention); 0: one per head.
  int64_t numKvHeads = 0;
  int64_t ffnSize = 0;
  int64_t maxPositions = 0;
  int64_t sequenceLength = 0;
  PositionKind position = PositionKind::Learned;
  int64_t rotaryDim = 0;
  double rotaryBase = 10000.0;
  transformer::Activation activation = transformer::Activation::gelu;
  /// A gated feed-forward block (SwiGLU, GeGLU): `activation` gates a
  /// second up projection.
  bool gatedFfn = false;
  bool tiedEmbeddings = true;
  bool qkvBias = true;
  bool attentionOutBias = true;
  bool ffnBias = true;
  bool outputBias = false;
  bool untiedLayerNorm = false;
  NormKind norm = NormKind::LayerNorm;
  double layerNormEpsilon = 1e-5;
  /// A mixture of experts in place of each feed-forward block, when
  /// `experts` > 0: `topK` of them per token; `sharedExperts` more that
  /// every token uses; the load-balancing loss coefficient; a router in
  /// f32; the fixed logit of a null expert (Model Zoo's null_expert_bias).
  struct MixtureOfExperts {
    int64_t experts = 0;
    int64_t topK = 1;
    int64_t sharedExperts = 0;
    double balanceCoefficient = 0.0;
    bool routerF32 = true;
    std::optional<double> nullExpert;
  } moe;
  /// Dropout rates, 0 for none: of the embeddings' sum, of attention's
  /// probabilities, and of each block's output before its residual add.
  double embeddingDropout = 0.0;
  double attentionDropout = 0.0;
  double residualDropout = 0.0;

  // muP (all 1 and scaleQkByHeadSize false for a standard model).
  bool mup = false;
  double embeddingsScale = 1.0;
  double outputLogitsScale = 1.0;
  double decoderKernelLrScale = 1.0;
  bool scaleQkByHeadSize = false;
  /// Model Zoo's `attention_logits_alpha`: a factor on attention's scores.
  double attentionLogitsAlpha = 1.0;

  // Precision.
  StorageType storage = StorageType::BF16;

  // Batch. `batchSize` is the number the file (or --batch-size) gives, read
  // as `batchSemantics` says; `globalBatch` is what a step trains on.
  int64_t batchSize = 0;
  BatchSemantics batchSemantics = BatchSemantics::Global;
  /// Why batchSemantics was chosen, for the summary.
  std::string batchSemanticsReason;
  int64_t globalBatch = 0;
  int64_t numCsx = 1;
  training::MicroBatchMode microBatchMode = training::MicroBatchMode::automatic;
  int64_t microBatchSize = 0;
  int64_t microBatchMin = 0;
  int64_t microBatchMax = 0;

  // Optimizer and loss.
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-6;
  double weightDecay = 0.0;
  double maxGradientNorm = 0.0;
  std::vector<LRPhase> schedule;
  transformer::LossScaling lossScaling = transformer::LossScaling::num_tokens;
  double lossWeight = 1.0;

  /// Where the keys that shape the step were read (file:line:col; null
  /// when the file did not give the key), so that an error a later pass
  /// reports on an op points at the line the user wrote.
  struct KeyLocations {
    mlir::LocationAttr batch, microBatch, hidden, layers, heads, ffn, vocab,
        positions, optimizer;
  } locations;
};

/// What the frontend decided about a file, for the summary: "Model Zoo
/// PyTorch params; sequential GPT-2/3 blocks (GPT-2/3 default)".
std::string describeOrigin(const ModelSpec &spec);
/// How the file's batch_size was read, for the summary: "batch_size global
/// (trainer schema)".
std::string describeBatchReading(const ModelSpec &spec);

/// A micro_batch_size as a value: the mode, and the size (fixed) or the
/// range (explore; 0 for no bound).
struct MicroBatchChoice {
  training::MicroBatchMode mode = training::MicroBatchMode::automatic;
  int64_t size = 0, min = 0, max = 0;
};

/// Parses a micro_batch_size from the command line: a positive integer,
/// `auto`, `explore`, `explore:MIN-MAX` or `none` (any case). Fails with a
/// sentence naming the text and what is allowed.
llvm::Expected<MicroBatchChoice> parseMicroBatchChoice(llvm::StringRef text);

/// Overrides a user gives on the command line; they win over the file.
struct ImportOptions {
  std::optional<int64_t> numCsx;
  /// `batch_size` as a file would give it (a Hugging Face config.json gives
  /// none), read with the file's batch semantics.
  std::optional<int64_t> batchSize;
  /// How to read the file's `batch_size`, where the file cannot say.
  std::optional<BatchSemantics> batchSemantics;
  /// Tokens per sequence, at most max_position_embeddings.
  std::optional<int64_t> sequenceLength;
  /// A micro_batch_size (parseMicroBatchChoice).
  std::optional<MicroBatchChoice> microBatch;
};

/// Reads and validates a model file. Errors and warnings are emitted through
/// `context`'s diagnostic engine at `file:line:col`; on error returns failure.
mlir::FailureOr<ModelSpec> readModelFile(llvm::StringRef path,
                                         mlir::MLIRContext *context,
                                         const ImportOptions &options = {});

enum class ModelFormat { Yaml, Json };

/// readModelFile on `text` already in memory; `path` names it in
/// diagnostics.
mlir::FailureOr<ModelSpec>
readModelText(llvm::StringRef path, llvm::StringRef text, ModelFormat format,
              mlir::MLIRContext *context, const ImportOptions &options = {});

/// Builds the `transformer.train_step` that `spec` describes, in a new module.
mlir::OwningOpRef<mlir::ModuleOp> buildTrainStep(const ModelSpec &spec,
                                                 mlir::MLIRContext *context);

/// readModelFile followed by buildTrainStep and verification.
mlir::OwningOpRef<mlir::ModuleOp>
importModelFile(llvm::StringRef path, mlir::MLIRContext *context,
                const ImportOptions &options = {});

/// buildTrainStep on `spec`, verified; null after a diagnostic.
mlir::OwningOpRef<mlir::ModuleOp> importModel(const ModelSpec &spec,
                                              mlir::MLIRContext *context);

/// The model format `path` names by its extension (.yaml, .yml, .json), or
/// nullopt for anything else (IR).
std::optional<ModelFormat> modelFormatOf(llvm::StringRef path);

/// The model format of `text` read from standard input, or nullopt when it
/// is IR: JSON starts with '{', a YAML model file's first line that is not
/// blank or a comment is a `key:`; MLIR's first is an op, an alias
/// definition or a `//` comment.
std::optional<ModelFormat> sniffModelFormat(llvm::StringRef text);

/// The model format of a tool's input: by `path`'s extension (.yaml, .yml,
/// .json; .mlir is IR), or by `text` for standard input ("-") and any other
/// name; nullopt when the input is IR.
std::optional<ModelFormat> modelFormatOfInput(llvm::StringRef path,
                                              llvm::StringRef text);

} // namespace cgpt::frontend

#endif // CGPT_FRONTEND_MODELSPEC_H
