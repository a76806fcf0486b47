//===- ModelReader.cpp - Model Zoo and Hugging Face model files -----------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Reads the three Model Zoo params schemas and Hugging Face GPT-2 configs into
// a validated ModelSpec. The key names, defaults and limits are documented in
// docs/frontend.md; keep the two in step.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Config/ConfigSource.h"

#include "cgpt/Frontend/ModelSpec.h"
#include "cgpt/Support/BatchChecks.h"
#include "cgpt/Support/Format.h"
#include "cgpt/Support/InputFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstdio>

using namespace mlir;
using llvm::StringRef;
using namespace cgpt::transformer;

namespace cgpt::frontend {

using cgpt::ConfigSource;
using cgpt::Section;

// Limits that keep every later size computation in range and reject absurd
// files before anything is allocated (docs/frontend.md lists them).
constexpr int64_t kMaxVocab = int64_t(1) << 24;
constexpr int64_t kMaxHidden = int64_t(1) << 20;
constexpr int64_t kMaxLayers = 10000;
constexpr int64_t kMaxFfn = int64_t(1) << 22;
constexpr int64_t kMaxPositions = int64_t(1) << 20;
/// CS-3 clusters scale to 2048 systems (shared/reference, WSE-3 section).
constexpr int64_t kMaxSystems = 2048;
constexpr int64_t kMaxSteps = int64_t(1) << 40;

llvm::StringRef stringifySchema(Schema schema) {
  switch (schema) {
  case Schema::ModelZooTensorFlow:
    return "Model Zoo TensorFlow params";
  case Schema::ModelZooPyTorch:
    return "Model Zoo PyTorch params";
  case Schema::ModelZooTrainer:
    return "Model Zoo trainer params";
  case Schema::HuggingFace:
    return "Hugging Face config.json";
  }
  return "unknown";
}

std::string describeOrigin(const ModelSpec &spec) {
  std::string origin = stringifySchema(spec.schema).str();
  if (spec.schema == Schema::ModelZooTensorFlow)
    origin += " (batch_size per system)";
  origin += spec.blockStyle == BlockStyle::Sequential
                ? "; sequential GPT-2/3 blocks"
                : "; parallel GPT-J/NeoX blocks";
  return origin + " (" + spec.blockStyleReason + ")";
}

bool isModelFile(StringRef path) {
  StringRef ext = llvm::sys::path::extension(path);
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

namespace {

/// Model-section keys the compiler reads.
const StringRef kUsedModelKeys[] = {
    "name", "hidden_size", "num_hidden_layers", "num_heads", "filter_size",
    "max_position_embeddings", "vocab_size", "position_embedding_type",
    "use_position_embedding", "rotary_dim", "rope_theta", "nonlinearity",
    "share_embedding_weights", "use_bias_in_output", "layer_norm_epsilon",
    "use_projection_bias_in_attention", "use_ffn_bias_in_attention",
    "use_ffn_bias", "use_untied_layer_norm", "attention_type", "norm_type",
    "scale_qk_dot_by_d", "output_logits_scale", "embeddings_scale",
    "mixed_precision", "fp16_type", "loss_scaling", "loss_weight"};
/// Model-section keys that do not change the compiled step: dropout (zero
/// in every GPT recipe here, and the wafer's timing does not depend on it),
/// initializers (used only to make weights) and TensorFlow-only switches.
const StringRef kIgnoredModelKeys[] = {
    "dropout_rate", "attention_dropout_rate", "embedding_dropout_rate",
    "residual_dropout_rate", "boundary_casting", "tf_summary",
    "embedding_initializer", "initializer", "output_layer_initializer",
    "initializer_range", "attention_softmax_fp32", "attention_kernel",
    "position_embedding_offset", "fixed_sparse_attention"};

/// Hugging Face GPT-2 config keys: read, and known but without effect on a
/// training step (generation settings, dropout, bookkeeping).
const StringRef kHuggingFaceKeys[] = {
    "model_type", "n_embd", "n_layer", "n_head", "n_inner", "n_positions",
    "n_ctx", "vocab_size", "activation_function", "layer_norm_epsilon",
    "tie_word_embeddings", "scale_attn_weights", "_name_or_path",
    "architectures", "attn_pdrop", "embd_pdrop", "resid_pdrop",
    "bos_token_id", "eos_token_id", "initializer_range",
    "reorder_and_upcast_attn", "scale_attn_by_inverse_layer_idx",
    "summary_activation", "summary_first_dropout", "summary_proj_to_labels",
    "summary_type", "summary_use_proj", "task_specific_params", "torch_dtype",
    "transformers_version", "use_cache", "gradient_checkpointing",
    "pad_token_id", "n_special", "predict_special_tokens"};

/// `name` lowered, without '_', '-' and ' ', for forgiving enum matching.
std::string normalizeName(StringRef name) {
  std::string out;
  for (char c : name.lower())
    if (c != '_' && c != '-' && c != ' ')
      out += c;
  return out;
}

/// A symbol-safe model name from the file name.
std::string nameFromPath(StringRef path) {
  std::string stem = llvm::sys::path::stem(path).str();
  if (stem == "config") // config.json: name it after its folder
    stem = llvm::sys::path::filename(llvm::sys::path::parent_path(path)).str();
  std::string name;
  for (char c : stem)
    name += llvm::isAlnum(c) ? c : '_';
  if (name.empty() || llvm::isDigit(name[0]))
    name = "m_" + name;
  return name;
}

class ModelReader {
public:
  ModelReader(ConfigSource &source, ModelSpec &spec)
      : src(source), spec(spec) {}

  void read(const YAML::Node &root, const ImportOptions &options);

private:
  void readTensorFlowOrPyTorch(const Section &root);
  void readTrainer(const Section &root);
  void readHuggingFace(const Section &root);

  /// One accepted value of an enumerated key: its spellings, compared
  /// without case, '_', '-' and ' '; the first is the one errors list.
  template <typename T>
  struct Choice {
    T value;
    std::initializer_list<StringRef> spellings;
  };
  /// Reads `key` as one of `choices`; absent gives nullopt, anything else
  /// is an error listing the allowed spellings.
  template <typename T>
  std::optional<T> readChoice(const Section &section, StringRef key,
                              std::initializer_list<Choice<T>> choices);
  std::optional<Activation> readActivation(const Section &section,
                                           StringRef key);
  void readStorageType(const Section &section);

  void readModel(const Section &model);
  void chooseBlockStyle(const Section &model);
  void readMicroBatch(const YAML::Node &node, const std::string &what);
  void readOptimizer(const Section &optimizer);
  void readTrainerOptimizer(const Section &init);
  void readSchedule(const YAML::Node &node, const std::string &what,
                    bool trainerStyle);
  void readPhase(const YAML::Node &node, const std::string &what,
                 StringRef schedulerName, const Section &params);
  void finish(const ImportOptions &options);

  ConfigSource &src;
  ModelSpec &spec;
  /// Where the batch and micro-batch came from, for divisibility errors.
  YAML::Node batchNode;
  std::string batchWhat;
  YAML::Node microBatchNode;
  bool sawSchedule = false;
};

void ModelReader::read(const YAML::Node &root, const ImportOptions &options) {
  Section top{root, ""};
  if (root["trainer"]) {
    spec.schema = Schema::ModelZooTrainer;
    readTrainer(top);
  } else if (root["model"]) {
    readTensorFlowOrPyTorch(top);
  } else if (root["n_embd"] || root["model_type"]) {
    spec.schema = Schema::HuggingFace;
    readHuggingFace(top);
  } else {
    src.error(src.fileStart(),
              "not a model file: expected a Model Zoo params file (keys "
              "'model' and 'train_input', or 'trainer') or a Hugging Face "
              "config.json (key 'n_embd')");
    return;
  }
  finish(options);
}

template <typename T>
std::optional<T>
ModelReader::readChoice(const Section &section, StringRef key,
                        std::initializer_list<Choice<T>> choices) {
  std::optional<std::string> text = src.readString(section, key);
  if (!text)
    return std::nullopt;
  std::string normalized = normalizeName(*text);
  std::string allowed;
  for (const Choice<T> &choice : choices) {
    for (StringRef spelling : choice.spellings)
      if (normalizeName(spelling) == normalized)
        return choice.value;
    allowed += (allowed.empty() ? "" : ", ") + choice.spellings.begin()->str();
  }
  src.error(src.locate(src.lookup(section, key), key),
            "'" + section.qualify(key) + "' is '" + *text + "'; allowed: " +
                allowed);
  return std::nullopt;
}

std::optional<Activation> ModelReader::readActivation(const Section &section,
                                                      StringRef key) {
  return readChoice<Activation>(
      section, key,
      {{Activation::gelu, {"gelu"}},
       {Activation::gelu_tanh,
        {"gelu_new", "gelu_tanh", "gelu_fast", "gelu_pytorch_tanh"}},
       {Activation::relu, {"relu"}},
       {Activation::silu, {"silu", "swish"}}});
}

void ModelReader::readStorageType(const Section &section) {
  // cbfloat16 is Cerebras' bfloat16 variant: stored as bf16 all the same.
  if (std::optional<StorageType> type = readChoice<StorageType>(
          section, "fp16_type",
          {{StorageType::BF16, {"bfloat16", "cbfloat16"}},
           {StorageType::F16, {"float16"}}}))
    spec.storage = *type;
}

//===----------------------------------------------------------------------===//
// Model Zoo TensorFlow and PyTorch schemas
//===----------------------------------------------------------------------===//

void ModelReader::readTensorFlowOrPyTorch(const Section &root) {
  Section model = src.subsection(root, "model");
  Section trainInput = src.subsection(root, "train_input");
  Section optimizer = src.subsection(root, "optimizer");
  Section runconfig = src.subsection(root, "runconfig");

  // TensorFlow-era files state the batch per system. They are told apart by
  // keys only the TensorFlow implementation had.
  std::optional<std::string> processor =
      src.readString(trainInput, "data_processor");
  bool tensorflow =
      src.lookup(optimizer, "weight_decay_rate").IsDefined() ||
      src.lookup(model, "tf_summary").IsDefined() ||
      src.lookup(model, "boundary_casting").IsDefined() ||
      (processor && StringRef(*processor).contains("TfRecords"));
  spec.schema =
      tensorflow ? Schema::ModelZooTensorFlow : Schema::ModelZooPyTorch;

  readModel(model);
  if (!src.lookup(model, "vocab_size").IsDefined())
    spec.vocabSize = src.requireInt(trainInput, "vocab_size", 1, kMaxVocab);
  if (std::optional<int64_t> msl = src.readInt(
          trainInput, "max_sequence_length", 1, kMaxPositions))
    spec.sequenceLength = *msl;

  batchNode = src.lookup(trainInput, "batch_size");
  batchWhat = trainInput.qualify("batch_size");
  spec.globalBatch = src.requireInt(trainInput, "batch_size", 1, kMaxBatch);
  spec.numCsx = src.readInt(runconfig, "num_csx", 1, kMaxSystems).value_or(1);
  if (tensorflow)
    spec.globalBatch *= spec.numCsx;
  readMicroBatch(src.lookup(trainInput, "micro_batch_size"),
                 trainInput.qualify("micro_batch_size"));
  readOptimizer(optimizer);
}

void ModelReader::readOptimizer(const Section &optimizer) {
  if (!optimizer.present())
    return;
  if (std::optional<std::string> type =
          src.readString(optimizer, "optimizer_type"))
    if (normalizeName(*type) != "adamw")
      src.error(src.locate(src.lookup(optimizer, "optimizer_type")),
                "'" + optimizer.qualify("optimizer_type") + "' is '" + *type +
                    "'; allowed: adamw");
  YAML::Node betas = src.lookup(optimizer, "betas");
  if (betas.IsDefined()) {
    if (!betas.IsSequence() || betas.size() != 2) {
      src.error(src.locate(betas, "betas"),
                "'" + optimizer.qualify("betas") +
                    "' must be a list of two numbers, got " +
                    describeNode(betas));
    } else {
      spec.beta1 = src.toDouble(betas[0], optimizer.qualify("betas"), 0, 0.9999999)
                       .value_or(spec.beta1);
      spec.beta2 = src.toDouble(betas[1], optimizer.qualify("betas"), 0, 0.9999999)
                       .value_or(spec.beta2);
    }
  }
  spec.beta1 = src.readDouble(optimizer, "beta1", 0, 0.9999999).value_or(spec.beta1);
  spec.beta2 = src.readDouble(optimizer, "beta2", 0, 0.9999999).value_or(spec.beta2);
  for (StringRef key : {"eps", "epsilon"})
    spec.epsilon = src.readDouble(optimizer, key, 1e-30, 1).value_or(spec.epsilon);
  for (StringRef key : {"weight_decay", "weight_decay_rate"})
    spec.weightDecay =
        src.readDouble(optimizer, key, 0, 1e6).value_or(spec.weightDecay);
  spec.maxGradientNorm = src.readDouble(optimizer, "max_gradient_norm", 0, 1e30)
                             .value_or(spec.maxGradientNorm);
  for (StringRef key : {"correct_bias", "use_bias_correction"})
    if (src.readBool(optimizer, key) == false)
      src.error(src.locate(src.lookup(optimizer, key), key),
                "'" + optimizer.qualify(key) +
                    "' is false; cgpt's weight servers always apply Adam bias "
                    "correction (allowed: true)");
  Section adjust = src.subsection(optimizer, "adjust_learning_rate");
  if (std::optional<double> scale =
          src.readDouble(adjust, "decoder_kernel", 1e-12, 1e12)) {
    spec.decoderKernelLrScale = *scale;
    spec.mup = true;
  }
  YAML::Node lr = src.lookup(optimizer, "learning_rate");
  if (lr.IsDefined())
    readSchedule(lr, optimizer.qualify("learning_rate"), /*trainerStyle=*/false);
}

//===----------------------------------------------------------------------===//
// Learning-rate schedules
//===----------------------------------------------------------------------===//

void ModelReader::readSchedule(const YAML::Node &node, const std::string &what,
                               bool trainerStyle) {
  sawSchedule = true;
  if (node.IsScalar()) {
    double lr = src.toDouble(node, what, 0, 1e6).value_or(0);
    spec.schedule.push_back({ScheduleKind::constant, lr, lr, 0});
    return;
  }
  if (node.IsMap()) {
    if (trainerStyle) {
      // {LinearLR: {...}} or {SequentialLR: {schedulers: [...]}}.
      if (node.size() != 1) {
        src.error(src.locate(node), "'" + what +
                                        "' must hold exactly one scheduler");
        return;
      }
      auto entry = *node.begin();
      std::string name = entry.first.Scalar();
      Section params{entry.second, what + "." + name};
      if (normalizeName(name) == "sequentiallr") {
        readSchedule(src.lookup(params, "schedulers"),
                     params.qualify("schedulers"), true);
        return;
      }
      readPhase(entry.second, params.name, name, params);
      return;
    }
    Section params{node, what};
    std::optional<std::string> name = src.readString(params, "scheduler");
    if (!name) {
      src.error(src.locate(node), "'" + what + "' needs a 'scheduler' key");
      return;
    }
    readPhase(node, what, *name, params);
    return;
  }
  if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i)
      readSchedule(node[i], what + "[" + std::to_string(i) + "]", trainerStyle);
    return;
  }
  src.error(src.locate(node), "'" + what + "' must be a number, a scheduler "
                                           "or a list of schedulers, got " +
                                  describeNode(node));
}

void ModelReader::readPhase(const YAML::Node &node, const std::string &what,
                            StringRef schedulerName, const Section &params) {
  std::string kind = normalizeName(schedulerName);
  if (StringRef(kind).ends_with("lr"))
    kind.resize(kind.size() - 2);
  std::optional<int64_t> steps;
  for (StringRef key : {"total_iters", "steps", "decay_steps"})
    if (std::optional<int64_t> s = src.readInt(params, key, 0, kMaxSteps))
      steps = s;
  auto initial = src.readDouble(params, "initial_learning_rate", 0, 1e6);
  if (kind == "constant") {
    double lr = src.readDouble(params, "learning_rate", 0, 1e6)
                    .value_or(initial.value_or(0));
    spec.schedule.push_back({ScheduleKind::constant, lr, lr, steps.value_or(0)});
    return;
  }
  if (kind != "linear" && kind != "cosine" && kind != "cosinedecay") {
    src.error(src.locate(node), "'" + what + "' uses scheduler '" +
                                    schedulerName +
                                    "'; allowed: Linear, CosineDecay, "
                                    "Constant (and SequentialLR of them)");
    return;
  }
  if (!initial) {
    src.error(src.locate(node), "'" + what +
                                    "' needs 'initial_learning_rate'");
    return;
  }
  double end = *initial;
  if (std::optional<double> e =
          src.readDouble(params, "end_learning_rate", 0, 1e6))
    end = *e;
  else if (std::optional<double> alpha = src.readDouble(params, "alpha", 0, 1))
    end = *initial * *alpha;
  if (!steps) {
    src.error(src.locate(node), "'" + what + "' needs 'total_iters' (or "
                                             "'steps'/'decay_steps')");
    return;
  }
  spec.schedule.push_back({kind == "linear" ? ScheduleKind::linear
                                            : ScheduleKind::cosine,
                           *initial, end, *steps});
}

//===----------------------------------------------------------------------===//
// The model section (all Model Zoo schemas)
//===----------------------------------------------------------------------===//

void ModelReader::readModel(const Section &model) {
  if (!model.present()) {
    src.error(src.fileStart(), "missing required section '" + model.name + "'");
    return;
  }
  src.warnUnknownKeys(model, [] {
    std::vector<StringRef> known(std::begin(kUsedModelKeys),
                                 std::end(kUsedModelKeys));
    known.insert(known.end(), std::begin(kIgnoredModelKeys),
                 std::end(kIgnoredModelKeys));
    return known;
  }());

  spec.hiddenSize = src.requireInt(model, "hidden_size", 1, kMaxHidden);
  spec.numLayers = src.requireInt(model, "num_hidden_layers", 1, kMaxLayers);
  spec.numHeads = src.requireInt(model, "num_heads", 1, kMaxHidden);
  if (!src.hasFailed() && spec.hiddenSize % spec.numHeads != 0)
    src.error(src.locate(src.lookup(model, "num_heads"), "num_heads"),
              "'" + model.qualify("hidden_size") + "' (" +
                  std::to_string(spec.hiddenSize) +
                  ") must be divisible by '" + model.qualify("num_heads") +
                  "' (" + std::to_string(spec.numHeads) + ")");
  spec.headSize = spec.hiddenSize / std::max<int64_t>(spec.numHeads, 1);
  spec.ffnSize = src.readInt(model, "filter_size", 1, kMaxFfn)
                     .value_or(4 * spec.hiddenSize);
  spec.maxPositions =
      src.requireInt(model, "max_position_embeddings", 1, kMaxPositions);
  spec.sequenceLength = spec.maxPositions;
  if (std::optional<int64_t> vocab =
          src.readInt(model, "vocab_size", 1, kMaxVocab))
    spec.vocabSize = *vocab;

  if (src.readBool(model, "use_position_embedding") == false)
    src.error(src.locate(src.lookup(model, "use_position_embedding")),
              "'" + model.qualify("use_position_embedding") +
                  "' is false; GPT models without position embeddings are "
                  "not supported (allowed: true)");
  spec.position = readChoice<PositionKind>(
                      model, "position_embedding_type",
                      {{PositionKind::Learned, {"learned"}},
                       {PositionKind::Rotary, {"rotary"}}})
                      .value_or(PositionKind::Learned);
  if (spec.position == PositionKind::Rotary) {
    spec.rotaryDim = src.readInt(model, "rotary_dim", 2, spec.headSize)
                         .value_or(spec.headSize);
    if (spec.rotaryDim % 2 != 0)
      src.error(src.locate(src.lookup(model, "rotary_dim"), "rotary_dim"),
                "'" + model.qualify("rotary_dim") + "' (" +
                    std::to_string(spec.rotaryDim) + ") must be even");
    spec.rotaryBase =
        src.readDouble(model, "rope_theta", 1.0000001, 1e12).value_or(10000.0);
  }

  spec.activation =
      readActivation(model, "nonlinearity").value_or(Activation::gelu);
  // Only the attention and normalization every GPT here uses are modelled.
  readChoice<int>(model, "attention_type", {{0, {"scaled_dot_product"}}});
  readChoice<int>(model, "norm_type", {{0, {"layernorm"}}});

  spec.tiedEmbeddings =
      src.readBool(model, "share_embedding_weights").value_or(true);
  spec.outputBias = src.readBool(model, "use_bias_in_output").value_or(false);
  spec.qkvBias =
      src.readBool(model, "use_projection_bias_in_attention").value_or(true);
  spec.attentionOutBias =
      src.readBool(model, "use_ffn_bias_in_attention").value_or(true);
  spec.ffnBias = src.readBool(model, "use_ffn_bias").value_or(true);
  spec.untiedLayerNorm =
      src.readBool(model, "use_untied_layer_norm").value_or(false);
  spec.layerNormEpsilon =
      src.readDouble(model, "layer_norm_epsilon", 1e-30, 0.5).value_or(1e-5);

  spec.scaleQkByHeadSize =
      src.readBool(model, "scale_qk_dot_by_d").value_or(false);
  if (auto scale = src.readDouble(model, "output_logits_scale", 1e-12, 1e12))
    spec.outputLogitsScale = *scale;
  if (auto scale = src.readDouble(model, "embeddings_scale", 1e-12, 1e12))
    spec.embeddingsScale = *scale;
  spec.mup = spec.mup || spec.scaleQkByHeadSize ||
             src.lookup(model, "output_logits_scale").IsDefined() ||
             src.lookup(model, "embeddings_scale").IsDefined();

  if (src.readBool(model, "mixed_precision") == false)
    spec.storage = StorageType::F32;
  readStorageType(model);
  spec.lossScaling = readChoice<LossScaling>(
                         model, "loss_scaling",
                         {{LossScaling::num_tokens, {"num_tokens"}},
                          {LossScaling::batch_size, {"batch_size"}}})
                         .value_or(LossScaling::num_tokens);
  spec.lossWeight =
      src.readDouble(model, "loss_weight", 1e-30, 1e30).value_or(1.0);
  chooseBlockStyle(model);
}

void ModelReader::chooseBlockStyle(const Section &model) {
  if (std::optional<BlockStyle> style = readChoice<BlockStyle>(
          model, "name",
          {{BlockStyle::Sequential, {"gpt2", "gpt3"}},
           {BlockStyle::Parallel, {"gptj", "gpt_neox", "neox"}}})) {
    spec.blockStyle = *style;
    spec.blockStyleReason =
        "'" + model.qualify("name") + "' is '" +
        src.readString(model, "name").value_or("") + "'";
    return;
  }
  if (src.lookup(model, "use_untied_layer_norm").IsDefined()) {
    spec.blockStyle = BlockStyle::Parallel;
    spec.blockStyleReason = "GPT-J family key 'use_untied_layer_norm'";
    return;
  }
  // Model Zoo selects the model class by folder (gpt3/ or gptj/); the file
  // name is all that is left of that choice here.
  std::string file = StringRef(llvm::sys::path::filename(spec.path)).lower();
  if (StringRef(file).contains("gptj") || StringRef(file).contains("neox")) {
    spec.blockStyle = BlockStyle::Parallel;
    spec.blockStyleReason = "file name names GPT-J/NeoX";
    return;
  }
  spec.blockStyle = BlockStyle::Sequential;
  spec.blockStyleReason = "GPT-2/3 default";
}

void ModelReader::readMicroBatch(const YAML::Node &node,
                                 const std::string &what) {
  if (!node.IsDefined() || node.IsNull())
    return;
  microBatchNode = node;
  if (node.IsMap()) {
    // {explore: {min: a, max: b}}
    Section explore = src.subsection(Section{node, what}, "explore");
    if (!explore.present()) {
      src.error(src.locate(node),
                "'" + what + "' mapping must be {explore: {min: .., max: ..}}");
      return;
    }
    spec.microBatchMode = MicroBatchMode::explore;
    spec.microBatchMin = src.readInt(explore, "min", 1, kMaxBatch).value_or(0);
    spec.microBatchMax = src.readInt(explore, "max", 1, kMaxBatch).value_or(0);
    if (spec.microBatchMax != 0 && spec.microBatchMin > spec.microBatchMax)
      src.error(src.locate(node), "'" + what + "' explore range has min " +
                                      std::to_string(spec.microBatchMin) +
                                      " > max " +
                                      std::to_string(spec.microBatchMax));
    return;
  }
  if (node.IsScalar()) {
    std::string word = StringRef(node.Scalar()).lower();
    if (word == "auto") {
      spec.microBatchMode = MicroBatchMode::automatic;
      return;
    }
    if (word == "explore") {
      spec.microBatchMode = MicroBatchMode::explore;
      return;
    }
    if (word == "none") {
      spec.microBatchMode = MicroBatchMode::none;
      return;
    }
    if (!word.empty() && llvm::all_of(word, llvm::isDigit)) {
      spec.microBatchMode = MicroBatchMode::fixed;
      spec.microBatchSize = src.toInt(node, what, 1, kMaxBatch).value_or(1);
      return;
    }
  }
  src.error(src.locate(node), "'" + what + "' is " + describeNode(node) +
                                  "; allowed: a positive integer, auto, "
                                  "explore, {explore: {min, max}} or none");
}

//===----------------------------------------------------------------------===//
// Model Zoo trainer schema
//===----------------------------------------------------------------------===//

void ModelReader::readTrainer(const Section &root) {
  Section trainer = src.subsection(root, "trainer");
  if (!trainer.present()) {
    src.error(src.locate(root.node["trainer"]),
              "'trainer' must be a mapping with 'init' and 'fit' (a list of "
              "trainers is not supported)");
    return;
  }
  Section init = src.subsection(trainer, "init");
  Section fit = src.subsection(trainer, "fit");
  readModel(src.subsection(init, "model"));

  Section loader = src.subsection(fit, "train_dataloader");
  batchNode = src.lookup(loader, "batch_size");
  batchWhat = loader.qualify("batch_size");
  spec.globalBatch = src.requireInt(loader, "batch_size", 1, kMaxBatch);
  if (std::optional<int64_t> msl =
          src.readInt(loader, "max_sequence_length", 1, kMaxPositions))
    spec.sequenceLength = *msl;

  Section backend = src.subsection(init, "backend");
  Section cluster = src.subsection(backend, "cluster_config");
  spec.numCsx = src.readInt(cluster, "num_csx", 1, kMaxSystems).value_or(1);

  Section precision = src.subsection(init, "precision");
  if (src.readBool(precision, "enabled") == false)
    spec.storage = StorageType::F32;
  readStorageType(precision);
  spec.maxGradientNorm =
      src.readDouble(precision, "max_gradient_norm", 0, 1e30).value_or(0);

  // The micro-batch is a scoped flag of a callback.
  YAML::Node callbacks = src.lookup(init, "callbacks");
  if (callbacks.IsSequence())
    for (size_t i = 0; i < callbacks.size(); ++i) {
      const YAML::Node &callback = callbacks[i];
      if (!callback.IsMap() || !callback["ScopedTrainFlags"])
        continue;
      Section flags{callback["ScopedTrainFlags"],
                    init.qualify("callbacks") + "[" + std::to_string(i) +
                        "].ScopedTrainFlags"};
      readMicroBatch(src.lookup(flags, "csx.performance.micro_batch_size"),
                     flags.qualify("csx.performance.micro_batch_size"));
    }
  readTrainerOptimizer(init);
}

void ModelReader::readTrainerOptimizer(const Section &init) {
  Section optimizer = src.subsection(init, "optimizer");
  if (optimizer.present()) {
    if (optimizer.node.size() != 1 || !optimizer.node["AdamW"]) {
      src.error(src.locate(optimizer.node), "'" + optimizer.name +
                                                "' must be {AdamW: {...}}; "
                                                "allowed optimizers: AdamW");
      return;
    }
    readOptimizer(src.subsection(optimizer, "AdamW"));
  }
  YAML::Node schedulers = src.lookup(init, "schedulers");
  if (schedulers.IsDefined())
    readSchedule(schedulers, init.qualify("schedulers"), /*trainerStyle=*/true);
}

//===----------------------------------------------------------------------===//
// Hugging Face config.json
//===----------------------------------------------------------------------===//

void ModelReader::readHuggingFace(const Section &root) {
  src.warnUnknownKeys(root, kHuggingFaceKeys);
  // Only GPT-2 type configs (the released Cerebras-GPT ones) are read.
  readChoice<int>(root, "model_type", {{0, {"gpt2"}}});
  if (src.hasFailed())
    return;
  spec.blockStyle = BlockStyle::Sequential;
  spec.blockStyleReason = "'model_type' is 'gpt2'";
  spec.hiddenSize = src.requireInt(root, "n_embd", 1, kMaxHidden);
  spec.numLayers = src.requireInt(root, "n_layer", 1, kMaxLayers);
  spec.numHeads = src.requireInt(root, "n_head", 1, kMaxHidden);
  if (!src.hasFailed() && spec.hiddenSize % spec.numHeads != 0)
    src.error(src.locate(src.lookup(root, "n_head"), "n_head"),
              "'n_embd' (" + std::to_string(spec.hiddenSize) +
                  ") must be divisible by 'n_head' (" +
                  std::to_string(spec.numHeads) + ")");
  spec.headSize = spec.hiddenSize / std::max<int64_t>(spec.numHeads, 1);
  spec.ffnSize =
      src.readInt(root, "n_inner", 1, kMaxFfn).value_or(4 * spec.hiddenSize);
  if (std::optional<int64_t> positions =
          src.readInt(root, "n_positions", 1, kMaxPositions))
    spec.maxPositions = *positions;
  else
    spec.maxPositions = src.requireInt(root, "n_ctx", 1, kMaxPositions);
  spec.sequenceLength = spec.maxPositions;
  spec.vocabSize = src.requireInt(root, "vocab_size", 1, kMaxVocab);
  // GPT-2's own default is the tanh form.
  spec.activation = readActivation(root, "activation_function")
                        .value_or(Activation::gelu_tanh);
  spec.layerNormEpsilon =
      src.readDouble(root, "layer_norm_epsilon", 1e-30, 0.5).value_or(1e-5);
  spec.tiedEmbeddings =
      src.readBool(root, "tie_word_embeddings").value_or(true);
  if (src.readBool(root, "scale_attn_weights") == false)
    src.error(src.locate(src.lookup(root, "scale_attn_weights"),
                         "scale_attn_weights"),
              "'scale_attn_weights' is false; unscaled attention is not "
              "supported (allowed: true)");
  // GPT-2 projections all carry biases; the head does not.
  spec.qkvBias = spec.attentionOutBias = spec.ffnBias = true;
  spec.outputBias = false;
  // config.json describes the network, not its training run.
  spec.globalBatch = 1;
  src.warning(src.fileStart(),
              "config.json states no batch size; using 1 sequence per step "
              "(write a Model Zoo params file to set train_input.batch_size)");
}

//===----------------------------------------------------------------------===//
// Cross-key checks and command-line overrides
//===----------------------------------------------------------------------===//

void ModelReader::finish(const ImportOptions &options) {
  if (src.hasFailed())
    return;
  if (options.microBatchSize) {
    // The command line wins over the file; written as in a params file,
    // with explore's range as explore:MIN-MAX.
    StringRef text = *options.microBatchSize;
    YAML::Node node;
    if (text.consume_front("explore:")) {
      auto [min, max] = text.split('-');
      node = YAML::Load("{explore: {min: " + min.str() + ", max: " +
                        max.str() + "}}");
    } else {
      node = YAML::Node(text.str());
    }
    microBatchNode = YAML::Node();
    spec.microBatchMode = MicroBatchMode::automatic;
    spec.microBatchSize = spec.microBatchMin = spec.microBatchMax = 0;
    readMicroBatch(node, "--micro-batch-size");
    if (src.hasFailed())
      return;
  }
  if (spec.sequenceLength > spec.maxPositions)
    src.error(src.fileStart(),
              "sequence length " + std::to_string(spec.sequenceLength) +
                  " exceeds max_position_embeddings " +
                  std::to_string(spec.maxPositions));
  if (options.numCsx) {
    if (*options.numCsx < 1 || *options.numCsx > kMaxSystems) {
      src.error(src.fileStart(), "--num-csx is " +
                                     std::to_string(*options.numCsx) +
                                     "; allowed 1 to " +
                                     std::to_string(kMaxSystems));
      return;
    }
    // A TensorFlow file's batch is per system: it scales with the systems.
    if (spec.schema == Schema::ModelZooTensorFlow)
      spec.globalBatch = spec.globalBatch / spec.numCsx * *options.numCsx;
    spec.numCsx = *options.numCsx;
  }
  if (spec.globalBatch < spec.numCsx) {
    src.error(src.locate(batchNode, "batch_size"),
              "'" + batchWhat + "' (" + std::to_string(spec.globalBatch) +
                  ") is smaller than num_csx (" +
                  std::to_string(spec.numCsx) +
                  (options.numCsx ? ", from --num-csx" : "") +
                  "): every system needs at least one sequence");
    return;
  }
  int64_t perSystem = llvm::divideCeil(spec.globalBatch, spec.numCsx);
  if (spec.microBatchMode == MicroBatchMode::fixed &&
      perSystem % spec.microBatchSize != 0) {
    src.error(src.locate(microBatchNode, "micro_batch_size"),
              "micro_batch_size " + std::to_string(spec.microBatchSize) +
                  " does not divide the per-system batch " +
                  std::to_string(perSystem) + " (global " +
                  std::to_string(spec.globalBatch) + " / " +
                  std::to_string(spec.numCsx) + " systems)");
    return;
  }
  if (!sawSchedule || spec.schedule.empty()) {
    // The paper's 111M peak rate: a neutral stand-in when none is given.
    spec.schedule.push_back({ScheduleKind::constant, 6e-4, 6e-4, 0});
    if (spec.schema != Schema::HuggingFace)
      src.warning(src.fileStart(),
                  "no learning rate given; using a constant 6e-4");
  }
  for (size_t i = 0; i + 1 < spec.schedule.size(); ++i)
    if (spec.schedule[i].steps == 0)
      src.error(src.fileStart(),
                "learning-rate phase #" + std::to_string(i) +
                    " has no step count but is not the last phase");
}

/// Converts a JSON document to the yaml-cpp tree the readers walk. Object
/// keys are sorted so that warnings come out in a stable order.
YAML::Node jsonToYaml(const llvm::json::Value &value) {
  switch (value.kind()) {
  case llvm::json::Value::Null:
    return YAML::Node(YAML::NodeType::Null);
  case llvm::json::Value::Boolean:
    return YAML::Node(*value.getAsBoolean() ? "true" : "false");
  case llvm::json::Value::Number: {
    if (std::optional<int64_t> i = value.getAsInteger())
      return YAML::Node(std::to_string(*i));
    return YAML::Node(formatExactDouble(*value.getAsNumber()));
  }
  case llvm::json::Value::String: {
    YAML::Node node(value.getAsString()->str());
    node.SetTag("!");
    return node;
  }
  case llvm::json::Value::Array: {
    YAML::Node node(YAML::NodeType::Sequence);
    for (const llvm::json::Value &element : *value.getAsArray())
      node.push_back(jsonToYaml(element));
    return node;
  }
  case llvm::json::Value::Object: {
    const llvm::json::Object &object = *value.getAsObject();
    std::vector<std::string> keys;
    for (const auto &entry : object)
      keys.push_back(entry.first.str());
    llvm::sort(keys);
    YAML::Node node(YAML::NodeType::Map);
    for (const std::string &key : keys)
      node[key] = jsonToYaml(*object.get(key));
    return node;
  }
  }
  return YAML::Node();
}

} // namespace

/// The first key that a mapping under `node` repeats. yaml-cpp keeps both
/// entries and a lookup finds one, so the other would be silently ignored.
/// An alias shares its anchor's node and position: `visited` (positions in
/// the text) makes each node count once, so alias cycles and alias fan-out
/// ("billion laughs") cost no more than the text.
static std::optional<YAML::Node> findRepeatedKey(const YAML::Node &node,
                                                 llvm::DenseSet<int> &visited) {
  if (!visited.insert(node.Mark().pos).second)
    return std::nullopt;
  if (node.IsSequence()) {
    for (const YAML::Node &element : node)
      if (std::optional<YAML::Node> repeated =
              findRepeatedKey(element, visited))
        return repeated;
  } else if (node.IsMap()) {
    llvm::StringSet<> keys;
    for (const auto &entry : node) {
      if (entry.first.IsScalar() && !keys.insert(entry.first.Scalar()).second)
        return entry.first;
      if (std::optional<YAML::Node> repeated =
              findRepeatedKey(entry.second, visited))
        return repeated;
    }
  }
  return std::nullopt;
}

/// Emits `message` at `loc`; the failure every reader error returns.
static FailureOr<ModelSpec> fail(Location loc, const llvm::Twine &message) {
  emitError(loc) << message;
  return failure();
}

FailureOr<ModelSpec> readModelFile(StringRef path, MLIRContext *context,
                                   const ImportOptions &options) {
  Location fileLoc = FileLineColLoc::get(context, path, 1, 1);
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      readInputFile(path);
  if (!buffer)
    return fail(fileLoc, "cannot read model file '" + path +
                             "': " + llvm::toString(buffer.takeError()));
  return readModelText(path, (*buffer)->getBuffer(), context, options);
}

FailureOr<ModelSpec> readModelText(StringRef path, StringRef text,
                                   MLIRContext *context,
                                   const ImportOptions &options) {
  Location fileLoc = FileLineColLoc::get(context, path, 1, 1);
  if (text.contains('\0'))
    return fail(fileLoc, "'" + path + "' is a binary file, not a model file");

  bool isJson = llvm::sys::path::extension(path) == ".json";
  ConfigSource source(context, path.str(), text.str(), isJson);
  YAML::Node root;
  if (isJson) {
    llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
    if (!json) {
      // llvm::json reports "[line:column, byte=N]: message".
      std::string message = llvm::toString(json.takeError());
      unsigned line = 1, column = 1;
      size_t end = message.find("]: ");
      if (std::sscanf(message.c_str(), "[%u:%u", &line, &column) == 2 &&
          end != std::string::npos)
        message = message.substr(end + 3);
      // llvm::json counts columns from 0 at the start of a line.
      column = std::max(column, 1u);
      return fail(FileLineColLoc::get(context, path, line, column),
                  "malformed JSON: " + message);
    }
    root = jsonToYaml(*json);
  } else {
    try {
      root = YAML::Load(text.str());
    } catch (const YAML::Exception &e) {
      return fail(FileLineColLoc::get(context, path, e.mark.line + 1,
                                      e.mark.column + 1),
                  "malformed YAML: " + e.msg);
    }
  }
  if (!root.IsDefined() || root.IsNull())
    return fail(fileLoc, "model file '" + path + "' is empty");
  if (!root.IsMap())
    return fail(source.locate(root),
                "a model file must be a mapping of sections, got " +
                    describeNode(root));
  llvm::DenseSet<int> visited;
  if (std::optional<YAML::Node> repeated = findRepeatedKey(root, visited))
    return fail(source.locate(*repeated),
                "key '" + repeated->Scalar() +
                    "' is given twice in the same mapping; only one can "
                    "count");

  ModelSpec spec;
  spec.path = path.str();
  spec.name = nameFromPath(path);
  try {
    ModelReader(source, spec).read(root, options);
  } catch (const YAML::Exception &e) {
    // yaml-cpp throws on shapes the readers did not expect; report, never
    // crash.
    source.error(e.mark.line >= 0
                     ? Location(FileLineColLoc::get(context, path,
                                                    e.mark.line + 1,
                                                    e.mark.column + 1))
                     : fileLoc,
                 "unexpected structure: " + e.msg);
  }
  if (source.hasFailed())
    return failure();
  return spec;
}

} // namespace cgpt::frontend
