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
#include "cgpt/Support/MicroBatches.h"
#include "cgpt/Support/Nesting.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using llvm::StringRef;
using namespace cgpt::transformer;
using namespace cgpt::training;

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

llvm::StringRef stringifyBatchSemantics(BatchSemantics semantics) {
  return semantics == BatchSemantics::Global ? "global" : "per-system";
}

std::string describeOrigin(const ModelSpec &spec) {
  std::string origin = stringifySchema(spec.schema).str();
  origin += spec.blockStyle == BlockStyle::Sequential
                ? "; sequential GPT-2/3 blocks"
                : "; parallel GPT-J/NeoX blocks";
  return origin + " (" + spec.blockStyleReason + ")";
}

std::string describeBatchReading(const ModelSpec &spec) {
  return "batch_size " + stringifyBatchSemantics(spec.batchSemantics).str() +
         " (" + spec.batchSemanticsReason + ")";
}

std::optional<ModelFormat> modelFormatOf(StringRef path) {
  StringRef ext = llvm::sys::path::extension(path);
  if (ext == ".yaml" || ext == ".yml")
    return ModelFormat::Yaml;
  if (ext == ".json")
    return ModelFormat::Json;
  return std::nullopt;
}

std::optional<ModelFormat> modelFormatOfInput(StringRef path, StringRef text) {
  if (std::optional<ModelFormat> format = modelFormatOf(path))
    return format;
  if (llvm::sys::path::extension(path) == ".mlir")
    return std::nullopt;
  return sniffModelFormat(text);
}

std::optional<ModelFormat> sniffModelFormat(StringRef text) {
  StringRef rest = withoutByteOrderMark(text);
  while (!rest.empty()) {
    auto [line, next] = rest.split('\n');
    rest = next;
    line = line.trim();
    // A YAML comment, or an MLIR alias definition, which cannot start a
    // model file either way: look further.
    if (line.empty() || line.starts_with("#") || line == "---")
      continue;
    if (line.starts_with("{"))
      return ModelFormat::Json;
    if (line.starts_with("//"))
      return std::nullopt;
    size_t colon = line.find(':');
    StringRef key = line.take_front(colon);
    bool yamlKey =
        colon != StringRef::npos && !key.empty() &&
        llvm::all_of(key, [](char c) {
          return llvm::isAlnum(c) || c == '_' || c == '-' || c == '.';
        });
    return yamlKey ? std::optional(ModelFormat::Yaml) : std::nullopt;
  }
  return std::nullopt;
}

namespace {

/// Model-section keys the compiler reads.
const StringRef kUsedModelKeys[] = {"name",
                                    "hidden_size",
                                    "num_hidden_layers",
                                    "num_heads",
                                    "filter_size",
                                    "max_position_embeddings",
                                    "vocab_size",
                                    "position_embedding_type",
                                    "use_position_embedding",
                                    "rotary_dim",
                                    "rope_theta",
                                    "nonlinearity",
                                    "share_embedding_weights",
                                    "use_bias_in_output",
                                    "layer_norm_epsilon",
                                    "use_projection_bias_in_attention",
                                    "use_ffn_bias_in_attention",
                                    "use_ffn_bias",
                                    "use_untied_layer_norm",
                                    "attention_type",
                                    "norm_type",
                                    "scale_qk_dot_by_d",
                                    "output_logits_scale",
                                    "embeddings_scale",
                                    "mup_base_hidden_size",
                                    "mup_base_filter_size",
                                    "output_logits_alpha",
                                    "attention_logits_alpha",
                                    "scale_output_logits_by_d",
                                    "mixed_precision",
                                    "use_bfloat16",
                                    "fp16_type",
                                    "loss_scaling",
                                    "loss_weight",
                                    "extra_attention_params",
                                    "attention_module",
                                    "attention_sliding_window_length",
                                    "alibi_trainable_slopes",
                                    "moe"};
/// Dropout rates (readDropout).
const StringRef kDropoutKeys[] = {"dropout_rate", "attention_dropout_rate",
                                  "embedding_dropout_rate",
                                  "residual_dropout_rate"};
/// Model-section keys that do not change the compiled step: initializers
/// (used only to make weights), the Cerebras compiler's own optimization
/// level and TensorFlow-only switches.
const StringRef kIgnoredModelKeys[] = {
    "boundary_casting",          "tf_summary",
    "embedding_initializer",     "initializer",
    "output_layer_initializer",  "initializer_range",
    "attention_softmax_fp32",    "attention_kernel",
    "position_embedding_offset", "fixed_sparse_attention",
    "precision_opt_level"};

/// Hugging Face config keys (GPT-2, GPT-J and GPT-NeoX): read, or known but
/// without effect on a training step (generation settings, bookkeeping).
const StringRef kHuggingFaceKeys[] = {
    "model_type", "n_embd", "n_layer", "n_head", "n_inner", "n_positions",
    "n_ctx", "vocab_size", "activation_function", "layer_norm_epsilon",
    "tie_word_embeddings", "scale_attn_weights", "rotary", "rotary_dim",
    "hidden_size", "intermediate_size", "num_attention_heads",
    "num_hidden_layers", "max_position_embeddings", "hidden_act",
    "layer_norm_eps", "rotary_pct", "rotary_emb_base", "use_parallel_residual",
    "attention_bias", "_name_or_path", "architectures", "bos_token_id",
    "eos_token_id", "initializer_range", "reorder_and_upcast_attn",
    "scale_attn_by_inverse_layer_idx", "summary_activation",
    "summary_first_dropout", "summary_proj_to_labels", "summary_type",
    "summary_use_proj", "task_specific_params", "torch_dtype",
    "transformers_version", "use_cache", "gradient_checkpointing",
    "pad_token_id", "n_special", "predict_special_tokens", "tokenizer_class",
    "attn_pdrop", "embd_pdrop", "resid_pdrop", "attention_probs_dropout_prob",
    "hidden_dropout_prob", "attention_dropout", "hidden_dropout",
    // LLaMA and Mistral.
    "num_key_value_heads", "rms_norm_eps", "rope_theta", "rope_scaling",
    "mlp_bias", "head_dim", "pretraining_tp", "sliding_window",
    // BTLM and Jais.
    "position_embedding_type", "mup_embeddings_scale", "mup_output_alpha",
    "mup_scale_qk_dot_by_d", "mup_width_scale", "alibi_scaling", "auto_map",
    // Mixtral.
    "num_local_experts", "num_experts_per_tok", "router_aux_loss_coef",
    "output_router_logits", "router_jitter_noise"};
/// Where each dropout rate is read, the first key present: Model Zoo's
/// own key for the site, else its `dropout_rate`; Hugging Face's GPT-2 and
/// GPT-J keys, GPT-NeoX's (whose hidden dropout also drops the
/// embeddings), then BERT-style ones; LLaMA and Mistral drop only the
/// attention probabilities.
struct DropoutKeys {
  llvm::ArrayRef<StringRef> embedding, attention, residual;
};
const StringRef kZooEmbeddingDropout[] = {"embedding_dropout_rate",
                                          "dropout_rate"};
const StringRef kZooAttentionDropout[] = {"attention_dropout_rate",
                                          "dropout_rate"};
const StringRef kZooResidualDropout[] = {"residual_dropout_rate",
                                         "dropout_rate"};
const StringRef kHfEmbeddingDropout[] = {"embd_pdrop", "hidden_dropout",
                                         "hidden_dropout_prob"};
const StringRef kHfAttentionDropout[] = {"attn_pdrop", "attention_dropout",
                                         "attention_probs_dropout_prob"};
const StringRef kHfResidualDropout[] = {"resid_pdrop", "hidden_dropout",
                                        "hidden_dropout_prob"};

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
  void readHuggingFaceGpt2(const Section &root);
  void readHuggingFaceGptJ(const Section &root);
  void readHuggingFaceNeoX(const Section &root);
  void readHuggingFaceLlama(const Section &root);
  /// The shape in transformers' BERT-style key names (GPT-NeoX, LLaMA).
  void readBertStyleShape(const Section &root);
  void readHuggingFaceBtlm(const Section &root);
  /// Reads a positive integer size that must be given, under one of
  /// `keys` (Hugging Face spells some sizes two ways), and records where.
  int64_t requireSize(const Section &section, StringRef key, int64_t max,
                      mlir::LocationAttr &where);
  void requireHeadsDivide(const Section &section, StringRef hiddenKey,
                          StringRef headsKey);

  /// One accepted value of an enumerated key: its spellings, compared
  /// without case, '_', '-' and ' '; the first is the one errors list.
  template <typename T> struct Choice {
    T value;
    std::initializer_list<StringRef> spellings;
  };
  /// Reads `key` as one of `choices`; absent gives nullopt, anything else
  /// is an error listing the allowed spellings (and `alsoAllowed`, those
  /// the caller has matched itself).
  template <typename T>
  std::optional<T> readChoice(const Section &section, StringRef key,
                              std::initializer_list<Choice<T>> choices,
                              StringRef alsoAllowed = "");
  std::optional<Activation> readActivation(const Section &section,
                                           StringRef key,
                                           StringRef alsoAllowed = "");
  void readStorageType(const Section &section);
  /// The feed-forward nonlinearity: an activation, or a gated unit
  /// (`swiglu`, `geglu`, `reglu`) of one.
  void readFeedForwardActivation(const Section &section, StringRef key,
                                 Activation fallback);
  /// Model Zoo's grouped-query attention (`extra_attention_params:
  /// num_kv_groups`) and its sliding window, which cgpt warns it leaves out.
  void readKeyValueHeads(const Section &model);
  /// Model Zoo's `moe` section, and Hugging Face Mixtral's expert keys.
  void readMixtureOfExperts(const Section &model);
  void readHuggingFaceExperts(const Section &root);
  /// Refuses, at `where` (the experts' count), experts whose weights pass
  /// kMaxExpertParameters.
  void checkExpertParameters(mlir::Location where, const std::string &key);
  /// Notes a sliding attention window, which finish() warns about when
  /// the sequence is longer: cgpt simulates full causal attention.
  void noteSlidingWindow(mlir::LocationAttr where, const std::string &key,
                         int64_t window);

  void readModel(const Section &model);
  void readMuP(const Section &model);
  void chooseBlockStyle(const Section &model);
  /// `rotary_dim` and `rope_theta` of a rotary model.
  void readRotary(const Section &model);
  /// Warns for each of `keys` in `section` whose rate is above zero.
  void readDropout(const Section &section, const DropoutKeys &keys);
  /// Warns that a sparsity section is simulated as dense.
  void warnSparsity(const Section &sparsity);
  void readBatchSize(const Section &section);
  void readMicroBatch(const YAML::Node &node, const std::string &what);
  void readOptimizer(const Section &optimizer);
  void readTrainerOptimizer(const Section &init);
  void readSchedule(const YAML::Node &node, const std::string &what,
                    bool trainerStyle);
  void readPhase(const YAML::Node &node, const std::string &what,
                 StringRef schedulerName, const Section &params);
  void finish(const ImportOptions &options);
  void applyBatchOverrides(const ImportOptions &options);

  ConfigSource &src;
  ModelSpec &spec;
  /// A sliding attention window the file states.
  struct SlidingWindow {
    mlir::LocationAttr where;
    std::string key;
    int64_t size;
  };
  std::optional<SlidingWindow> slidingWindow;
  /// Where the batch and micro-batch came from, for divisibility errors.
  YAML::Node batchNode;
  std::string batchWhat;
  YAML::Node microBatchNode;
  bool sawSchedule = false;
  /// The batch reading is a default the file cannot confirm (a PyTorch file
  /// of release 1.x): warn when the reading changes the step.
  bool batchSemanticsGuessed = false;
  /// A Model Zoo file of release 1.x (TensorFlow, or PyTorch spelling
  /// `optimizer.weight_decay_rate`), whose defaults differ from 2.x's.
  bool release1x = false;
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
                        std::initializer_list<Choice<T>> choices,
                        StringRef alsoAllowed) {
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
  if (!alsoAllowed.empty())
    allowed += ", " + alsoAllowed.str();
  src.error(src.locateKey(section, key), "'" + section.qualify(key) + "' is " +
                                             quoteValue(*text) +
                                             "; allowed: " + allowed);
  return std::nullopt;
}

std::optional<Activation> ModelReader::readActivation(const Section &section,
                                                      StringRef key,
                                                      StringRef alsoAllowed) {
  return readChoice<Activation>(
      section, key,
      {{Activation::gelu, {"gelu"}},
       {Activation::gelu_tanh,
        {"gelu_new", "gelu_tanh", "gelu_fast", "gelu_pytorch_tanh"}},
       {Activation::relu, {"relu"}},
       {Activation::silu, {"silu", "swish"}}},
      alsoAllowed);
}

void ModelReader::readFeedForwardActivation(const Section &section,
                                            StringRef key,
                                            Activation fallback) {
  // A gated unit is named after the activation of its gate.
  std::optional<std::string> name = src.readString(section, key);
  std::string unit = name ? normalizeName(*name) : "";
  for (auto [spelling, activation] : {std::pair{"swiglu", Activation::silu},
                                      std::pair{"geglu", Activation::gelu},
                                      std::pair{"reglu", Activation::relu}}) {
    if (unit == spelling) {
      spec.gatedFfn = true;
      spec.activation = activation;
      return;
    }
  }
  spec.activation =
      readActivation(section, key, "swiglu, geglu, reglu").value_or(fallback);
}

void ModelReader::readKeyValueHeads(const Section &model) {
  enum class AttentionModule { MultiHead, MultiQuery };
  std::optional<AttentionModule> module = readChoice<AttentionModule>(
      model, "attention_module",
      {{AttentionModule::MultiHead, {"aiayn_attention"}},
       {AttentionModule::MultiQuery, {"multiquery_attention"}}});
  Section extra = src.subsection(model, "extra_attention_params");
  std::optional<int64_t> groups;
  if (extra.present())
    groups = src.readInt(extra, "num_kv_groups", 1, kMaxHidden);
  if (groups && !src.hasFailed() && spec.numHeads % *groups != 0)
    src.error(src.locateKey(extra, "num_kv_groups"),
              "'" + extra.qualify("num_kv_groups") + "' (" +
                  std::to_string(*groups) + ") must divide '" +
                  model.qualify("num_heads") + "' (" +
                  std::to_string(spec.numHeads) + ")");
  // Model Zoo's MultiQueryAttention defaults num_kv_groups to 1: one key
  // and value head that every query head shares.
  if (!groups && module == AttentionModule::MultiQuery)
    groups = 1;
  if (groups && *groups != spec.numHeads)
    spec.numKvHeads = *groups;
  if (std::optional<int64_t> window = src.readInt(
          model, "attention_sliding_window_length", 1, kMaxPositions))
    noteSlidingWindow(src.locateKey(model, "attention_sliding_window_length"),
                      model.qualify("attention_sliding_window_length"),
                      *window);
}

/// The keys of Model Zoo's `moe` section cgpt reads; any other is refused,
/// since a routing option silently dropped would train a different model.
const StringRef kMixtureOfExpertsKeys[] = {"num_experts",
                                           "top_k",
                                           "load_balancing_loss_coef",
                                           "router_fp32",
                                           "num_shared_experts",
                                           "null_expert_bias",
                                           "routing_algorithm"};
constexpr int64_t kMaxExperts = 4096;
/// The most expert parameters cgpt models: 2^48, more than the largest
/// MemoryX (2.4 PB) holds at 12 B a parameter, and far inside int64_t
/// when summed with the rest of the model.
constexpr double kMaxExpertParameters = 281474976710656.0;

void ModelReader::readMixtureOfExperts(const Section &model) {
  Section moe = src.subsection(model, "moe");
  if (!moe.present())
    return;
  if (!moe.node.IsMap()) {
    src.error(src.locateKey(model, "moe"),
              "'" + model.qualify("moe") + "' must be a mapping of the keys " +
                  llvm::join(ArrayRef<StringRef>(kMixtureOfExpertsKeys), ", "));
    return;
  }
  for (const auto &entry : moe.node) {
    std::string key = entry.first.as<std::string>("");
    if (!llvm::is_contained(kMixtureOfExpertsKeys, key))
      src.error(
          src.locate(entry.first),
          "'" + moe.qualify(key) + "' is not modelled; cgpt reads the keys " +
              llvm::join(ArrayRef<StringRef>(kMixtureOfExpertsKeys), ", "));
  }
  std::optional<int64_t> experts =
      src.readInt(moe, "num_experts", 2, kMaxExperts);
  if (!experts) {
    if (!src.hasFailed())
      src.error(src.locateKey(model, "moe"),
                "'" + moe.qualify("num_experts") +
                    "' is required: the experts each token is routed among");
    return;
  }
  spec.moe.experts = *experts;
  checkExpertParameters(src.locateKey(moe, "num_experts"),
                        moe.qualify("num_experts"));
  // Model Zoo's default: one expert per token.
  spec.moe.topK = src.readInt(moe, "top_k", 1, *experts).value_or(1);
  // Switch Transformer's coefficient (Fedus et al. 2021) where none is given.
  spec.moe.balanceCoefficient =
      src.readDouble(moe, "load_balancing_loss_coef", 0.0, 1e3).value_or(0.01);
  spec.moe.routerF32 = src.readBool(moe, "router_fp32").value_or(true);
  spec.moe.sharedExperts =
      src.readInt(moe, "num_shared_experts", 0, kMaxExperts).value_or(0);
  spec.moe.nullExpert = src.readDouble(moe, "null_expert_bias", -1e3, 1e3);
  readChoice<int>(moe, "routing_algorithm", {{0, {"learned"}}});
}

void ModelReader::checkExpertParameters(mlir::Location where,
                                        const std::string &key) {
  // Up, gate and down projections of every expert of every layer.
  double parameters = static_cast<double>(spec.moe.experts) * 3.0 *
                      static_cast<double>(spec.hiddenSize) *
                      static_cast<double>(spec.ffnSize) *
                      static_cast<double>(spec.numLayers);
  if (parameters > kMaxExpertParameters)
    src.error(where,
              llvm::formatv("'{0}' ({1}) gives about {2:e2} expert "
                            "parameters ({3} layers of {1} experts of "
                            "3 x {4} x {5}); cgpt models at most "
                            "2^48, more than the largest weight "
                            "servers (2.4 PB) hold",
                            key, spec.moe.experts, parameters, spec.numLayers,
                            spec.hiddenSize, spec.ffnSize)
                  .str());
}

void ModelReader::readHuggingFaceExperts(const Section &root) {
  std::optional<int64_t> experts =
      src.readInt(root, "num_local_experts", 2, kMaxExperts);
  if (!experts) {
    if (!src.hasFailed())
      src.error(src.fileStart(),
                "'num_local_experts' is required for model_type 'mixtral'");
    return;
  }
  spec.moe.experts = *experts;
  checkExpertParameters(src.locateKey(root, "num_local_experts"),
                        "num_local_experts");
  // transformers' MixtralConfig defaults.
  spec.moe.topK =
      src.readInt(root, "num_experts_per_tok", 1, *experts).value_or(2);
  double coefficient =
      src.readDouble(root, "router_aux_loss_coef", 0.0, 1e3).value_or(0.001);
  // MixtralForCausalLM adds the load-balancing loss only when it outputs
  // the router logits.
  if (src.readBool(root, "output_router_logits").value_or(false)) {
    spec.moe.balanceCoefficient = coefficient;
  } else if (coefficient > 0.0) {
    src.warning(src.locateKey(root, "output_router_logits"),
                "'output_router_logits' is false, so Hugging Face's Mixtral "
                "adds no load-balancing loss and 'router_aux_loss_coef' is "
                "not applied; set it to true to train with the loss");
  }
  // transformers' Mixtral routes in the hidden states' type.
  spec.moe.routerF32 = false;
  if (std::optional<double> jitter =
          src.readDouble(root, "router_jitter_noise", 0.0, 1.0);
      jitter && *jitter > 0.0)
    src.error(src.locateKey(root, "router_jitter_noise"),
              "'router_jitter_noise' is " + formatExactDouble(*jitter) +
                  "; cgpt routes without noise (allowed: 0)");
}

void ModelReader::noteSlidingWindow(mlir::LocationAttr where,
                                    const std::string &key, int64_t window) {
  slidingWindow = SlidingWindow{where, key, window};
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

  // Keys only the TensorFlow implementation had. `weight_decay_rate` is not
  // one: PyTorch files of 1.7 to 1.9.1 spell the decay that way too.
  // A PyTorch data processor (HDF5) decides against leftover TensorFlow
  // keys: R1.7.1's PyTorch GPT-3 13B and 20B files still carry them.
  std::optional<std::string> processor =
      src.readString(trainInput, "data_processor");
  bool pytorchProcessor = processor && StringRef(*processor).contains("HDF5");
  bool tensorflow =
      !pytorchProcessor &&
      (src.lookup(model, "tf_summary").IsDefined() ||
       src.lookup(model, "boundary_casting").IsDefined() ||
       (processor && StringRef(*processor).contains("TfRecords")));
  bool pytorch1x =
      !tensorflow && src.lookup(optimizer, "weight_decay_rate").IsDefined();
  release1x = tensorflow || pytorch1x;
  if (tensorflow) {
    spec.schema = Schema::ModelZooTensorFlow;
    spec.batchSemantics = BatchSemantics::PerSystem;
    spec.batchSemanticsReason = "TensorFlow schema";
  } else if (pytorch1x) {
    // Releases 1.7 to 1.9.1: only 1.9.x reads batch_size as global, and
    // nothing in the file tells them apart. Model Zoo reads it as global
    // today, so cgpt does, and says so where it matters.
    spec.schema = Schema::ModelZooPyTorch;
    spec.batchSemantics = BatchSemantics::Global;
    spec.batchSemanticsReason =
        "'" + optimizer.qualify("weight_decay_rate") +
        "' marks a PyTorch file of release 1.x; read as the global batch, "
        "as releases 1.9.0 and later read it; --batch-semantics=per-system "
        "for 1.7 and 1.8";
    batchSemanticsGuessed = true;
  } else {
    spec.schema = Schema::ModelZooPyTorch;
    spec.batchSemantics = BatchSemantics::Global;
    spec.batchSemanticsReason = "PyTorch schema, no release 1.x spelling";
  }

  readModel(model);
  // Model Zoo's TensorFlow GPT-J and GPT-NeoX are rotary only: their files
  // name no position embedding, and the models have no learned table.
  if (tensorflow && spec.blockStyle == BlockStyle::Parallel &&
      !src.lookup(model, "position_embedding_type").IsDefined()) {
    spec.position = PositionKind::Rotary;
    readRotary(model);
  }
  if (!src.lookup(model, "vocab_size").IsDefined()) {
    spec.vocabSize = src.requireInt(trainInput, "vocab_size", 1, kMaxVocab);
    spec.locations.vocab = src.locateKey(trainInput, "vocab_size");
  }
  if (std::optional<int64_t> msl =
          src.readInt(trainInput, "max_sequence_length", 1, kMaxPositions))
    spec.sequenceLength = *msl;

  readBatchSize(trainInput);
  spec.numCsx = src.readInt(runconfig, "num_csx", 1, kMaxSystems).value_or(1);
  readMicroBatch(src.lookup(trainInput, "micro_batch_size"),
                 trainInput.qualify("micro_batch_size"));
  readOptimizer(optimizer);
  warnSparsity(src.subsection(root, "sparsity"));
}

void ModelReader::readBatchSize(const Section &section) {
  batchNode = src.lookup(section, "batch_size");
  batchWhat = section.qualify("batch_size");
  spec.batchSize = src.requireInt(section, "batch_size", 1, kMaxBatch);
  spec.locations.batch = src.locate(batchNode, "batch_size");
}

void ModelReader::readDropout(const Section &section, const DropoutKeys &keys) {
  auto rate = [&](llvm::ArrayRef<StringRef> candidates) {
    for (StringRef key : candidates) {
      if (!src.lookup(section, key))
        continue;
      double value = src.readDouble(section, key, 0, 1).value_or(0.0);
      if (value == 1.0)
        src.error(src.locateKey(section, key),
                  "'" + section.qualify(key) +
                      "' is 1, which drops every activation; a dropout "
                      "rate is below 1");
      return value;
    }
    return 0.0;
  };
  spec.embeddingDropout = rate(keys.embedding);
  spec.attentionDropout = rate(keys.attention);
  spec.residualDropout = rate(keys.residual);
}

void ModelReader::warnSparsity(const Section &sparsity) {
  if (src.hasFailed() || !sparsity.present())
    return;
  std::string what = "'" + sparsity.name + "'";
  // `sparsity` is a level or, per parameter group, a schedule: quote it.
  if (YAML::Node level = src.lookup(sparsity, "sparsity"); level.IsScalar())
    what += " (sparsity " + level.Scalar() + ")";
  src.warning(src.locate(sparsity.node, sparsity.name),
              what + " is not modelled: cgpt trains and simulates dense "
                     "weights, so time, memory and streamed bytes are those "
                     "of the dense model");
}

void ModelReader::readOptimizer(const Section &optimizer) {
  if (!optimizer.present())
    return;
  if (!spec.locations.optimizer)
    spec.locations.optimizer = src.locate(optimizer.node);
  if (std::optional<std::string> type =
          src.readString(optimizer, "optimizer_type"))
    if (normalizeName(*type) != "adamw")
      src.error(src.locate(src.lookup(optimizer, "optimizer_type")),
                "'" + optimizer.qualify("optimizer_type") + "' is " +
                    quoteValue(*type) + "; allowed: adamw");
  YAML::Node betas = src.lookup(optimizer, "betas");
  if (betas.IsDefined()) {
    if (!betas.IsSequence() || betas.size() != 2) {
      src.error(src.locate(betas, "betas"),
                "'" + optimizer.qualify("betas") +
                    "' must be a list of two numbers, got " +
                    describeNode(betas));
    } else {
      spec.beta1 =
          src.toDouble(betas[0], optimizer.qualify("betas"), 0, 0.9999999)
              .value_or(spec.beta1);
      spec.beta2 =
          src.toDouble(betas[1], optimizer.qualify("betas"), 0, 0.9999999)
              .value_or(spec.beta2);
    }
  }
  spec.beta1 =
      src.readDouble(optimizer, "beta1", 0, 0.9999999).value_or(spec.beta1);
  spec.beta2 =
      src.readDouble(optimizer, "beta2", 0, 0.9999999).value_or(spec.beta2);
  for (StringRef key : {"eps", "epsilon"})
    spec.epsilon =
        src.readDouble(optimizer, key, 1e-30, 1).value_or(spec.epsilon);
  for (StringRef key : {"weight_decay", "weight_decay_rate"})
    spec.weightDecay =
        src.readDouble(optimizer, key, 0, 1e6).value_or(spec.weightDecay);
  spec.maxGradientNorm = src.readDouble(optimizer, "max_gradient_norm", 0, 1e30)
                             .value_or(spec.maxGradientNorm);
  for (StringRef key : {"correct_bias", "use_bias_correction"})
    if (src.readBool(optimizer, key) == false)
      src.error(src.locateKey(optimizer, key),
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
    readSchedule(lr, optimizer.qualify("learning_rate"),
                 /*trainerStyle=*/false);
}

//===----------------------------------------------------------------------===//
// Learning-rate schedules
//===----------------------------------------------------------------------===//

void ModelReader::readSchedule(const YAML::Node &node, const std::string &what,
                               bool trainerStyle) {
  sawSchedule = true;
  if (node.IsScalar() && trainerStyle) {
    // The trainer schema takes schedulers only; a bare rate belongs in
    // the optimizer's `lr`.
    src.error(src.locate(node), "'" + what +
                                    "' must be a scheduler or a list of "
                                    "schedulers ({LinearLR: {...}}), got " +
                                    describeNode(node));
    return;
  }
  if (node.IsScalar()) {
    double lr = src.toDouble(node, what, 0, 1e6).value_or(0);
    spec.schedule.push_back({ScheduleKind::constant, lr, lr, 0});
    return;
  }
  if (node.IsMap()) {
    if (trainerStyle) {
      // {LinearLR: {...}} or {SequentialLR: {schedulers: [...]}}.
      if (node.size() != 1) {
        src.error(src.locate(node),
                  "'" + what + "' must hold exactly one scheduler");
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
      // Model Zoo 2.x's ScalePerParamLR runs its `scheduler` with each
      // parameter group's adjust_learning_rate factor, which cgpt applies
      // to the decoder's matrices whatever the scheduler (muP).
      if (normalizeName(name) == "scaleperparamlr") {
        readSchedule(src.lookup(params, "scheduler"),
                     params.qualify("scheduler"), true);
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
  src.error(src.locate(node), "'" + what +
                                  "' must be a number, a scheduler "
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
    spec.schedule.push_back(
        {ScheduleKind::constant, lr, lr, steps.value_or(0), src.locate(node)});
    return;
  }
  if (kind != "linear" && kind != "cosine" && kind != "cosinedecay") {
    src.error(src.locate(node),
              "'" + what + "' uses scheduler '" + schedulerName +
                  "'; allowed: Linear, CosineDecay, "
                  "Constant (and SequentialLR or ScalePerParamLR of them)");
    return;
  }
  if (!initial) {
    src.error(src.locate(node), "'" + what + "' needs 'initial_learning_rate'");
    return;
  }
  double end = *initial;
  if (std::optional<double> e =
          src.readDouble(params, "end_learning_rate", 0, 1e6))
    end = *e;
  else if (std::optional<double> alpha = src.readDouble(params, "alpha", 0, 1))
    end = *initial * *alpha;
  if (!steps) {
    src.error(src.locate(node), "'" + what +
                                    "' needs 'total_iters' (or "
                                    "'steps'/'decay_steps')");
    return;
  }
  spec.schedule.push_back(
      {kind == "linear" ? ScheduleKind::linear : ScheduleKind::cosine, *initial,
       end, *steps, src.locate(node)});
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
    known.insert(known.end(), std::begin(kDropoutKeys), std::end(kDropoutKeys));
    return known;
  }());

  spec.hiddenSize =
      requireSize(model, "hidden_size", kMaxHidden, spec.locations.hidden);
  spec.numLayers = requireSize(model, "num_hidden_layers", kMaxLayers,
                               spec.locations.layers);
  spec.numHeads =
      requireSize(model, "num_heads", kMaxHidden, spec.locations.heads);
  requireHeadsDivide(model, "hidden_size", "num_heads");
  spec.ffnSize = src.readInt(model, "filter_size", 1, kMaxFfn)
                     .value_or(4 * spec.hiddenSize);
  spec.locations.ffn = src.locateKey(model, "filter_size");
  spec.maxPositions = requireSize(model, "max_position_embeddings",
                                  kMaxPositions, spec.locations.positions);
  spec.sequenceLength = spec.maxPositions;
  if (std::optional<int64_t> vocab =
          src.readInt(model, "vocab_size", 1, kMaxVocab)) {
    spec.vocabSize = *vocab;
    spec.locations.vocab = src.locateKey(model, "vocab_size");
  }
  readDropout(
      model, {kZooEmbeddingDropout, kZooAttentionDropout, kZooResidualDropout});

  if (src.readBool(model, "use_position_embedding") == false)
    src.error(src.locate(src.lookup(model, "use_position_embedding")),
              "'" + model.qualify("use_position_embedding") +
                  "' is false; GPT models without position embeddings are "
                  "not supported (allowed: true)");
  spec.position =
      readChoice<PositionKind>(model, "position_embedding_type",
                               {{PositionKind::Learned, {"learned"}},
                                {PositionKind::Rotary, {"rotary"}},
                                {PositionKind::Alibi, {"alibi"}}})
          .value_or(PositionKind::Learned);
  if (spec.position == PositionKind::Alibi &&
      src.readBool(model, "alibi_trainable_slopes") == true)
    src.error(src.locateKey(model, "alibi_trainable_slopes"),
              "'" + model.qualify("alibi_trainable_slopes") +
                  "' is true; cgpt models ALiBi's fixed slopes only "
                  "(allowed: false)");
  if (spec.position == PositionKind::Rotary)
    readRotary(model);
  // Block-sparse attention is a TensorFlow-era option cgpt does not model.
  if (YAML::Node sparse = src.lookup(model, "fixed_sparse_attention");
      sparse.IsDefined() && !sparse.IsNull())
    src.warning(src.locateKey(model, "fixed_sparse_attention"),
                "'" + model.qualify("fixed_sparse_attention") +
                    "' is set; cgpt trains and simulates dense attention, so "
                    "attention's time, memory and FLOPs are those of dense "
                    "attention");

  readFeedForwardActivation(model, "nonlinearity", Activation::gelu);
  readMixtureOfExperts(model);
  // Only the attention every GPT here uses is modelled.
  readChoice<int>(model, "attention_type", {{0, {"scaled_dot_product"}}});
  readKeyValueHeads(model);
  spec.norm = readChoice<NormKind>(model, "norm_type",
                                   {{NormKind::LayerNorm, {"layernorm"}},
                                    {NormKind::RMSNorm, {"rmsnorm"}}})
                  .value_or(NormKind::LayerNorm);

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

  readMuP(model);

  // Mixed precision stores bfloat16 from release 2.0 on unless `fp16_type`
  // says otherwise; release 1.x stored float16 unless `use_bfloat16: true`
  // (its default was false, hence those files' dynamic loss scaling).
  if (src.readBool(model, "mixed_precision") == false)
    spec.storage = StorageType::F32;
  else if (std::optional<bool> bf16 = src.readBool(model, "use_bfloat16"))
    spec.storage = *bf16 ? StorageType::BF16 : StorageType::F16;
  else if (release1x)
    spec.storage = StorageType::F16;
  readStorageType(model);
  spec.lossScaling =
      readChoice<LossScaling>(model, "loss_scaling",
                              {{LossScaling::num_tokens, {"num_tokens"}},
                               {LossScaling::batch_size, {"batch_size"}}})
          .value_or(LossScaling::num_tokens);
  spec.lossWeight =
      src.readDouble(model, "loss_weight", 1e-30, 1e30).value_or(1.0);
  chooseBlockStyle(model);
}

void ModelReader::readRotary(const Section &model) {
  spec.rotaryDim = src.readInt(model, "rotary_dim", 2, spec.headSize)
                       .value_or(spec.headSize);
  if (spec.rotaryDim % 2 != 0)
    src.error(src.locateKey(model, "rotary_dim"),
              "'" + model.qualify("rotary_dim") + "' (" +
                  std::to_string(spec.rotaryDim) + ") must be even");
  spec.rotaryBase =
      src.readDouble(model, "rope_theta", 1.0000001, 1e12).value_or(10000.0);
}

int64_t ModelReader::requireSize(const Section &section, StringRef key,
                                 int64_t max, mlir::LocationAttr &where) {
  where = src.locateKey(section, key);
  return src.requireInt(section, key, 1, max);
}

void ModelReader::requireHeadsDivide(const Section &section,
                                     StringRef hiddenKey, StringRef headsKey) {
  if (!src.hasFailed() && spec.hiddenSize % spec.numHeads != 0)
    src.error(src.locateKey(section, headsKey),
              "'" + section.qualify(hiddenKey) + "' (" +
                  std::to_string(spec.hiddenSize) + ") must be divisible by '" +
                  section.qualify(headsKey) + "' (" +
                  std::to_string(spec.numHeads) + ")");
  spec.headSize = spec.hiddenSize / std::max<int64_t>(spec.numHeads, 1);
}

/// muP as Model Zoo writes it: release 2.3 states the multipliers
/// (`output_logits_scale`, `adjust_learning_rate.decoder_kernel`); release
/// 2.x derives them from the base model's widths, as Model Zoo's GPT-2
/// model does: width multiplier m = hidden_size / mup_base_hidden_size,
/// logits scaled by output_logits_alpha / m, decoder matrices learning at
/// 1 / m (the FFN's output matrix at mup_base_filter_size / filter_size),
/// attention scores by 1 / head_size.
void ModelReader::readMuP(const Section &model) {
  spec.scaleQkByHeadSize =
      src.readBool(model, "scale_qk_dot_by_d").value_or(false);
  if (auto scale = src.readDouble(model, "embeddings_scale", 1e-12, 1e12))
    spec.embeddingsScale = *scale;
  std::optional<int64_t> baseHidden =
      src.readInt(model, "mup_base_hidden_size", 1, kMaxHidden);
  std::optional<int64_t> baseFilter =
      src.readInt(model, "mup_base_filter_size", 1, kMaxFfn);
  std::optional<double> logitsAlpha =
      src.readDouble(model, "output_logits_alpha", 1e-12, 1e12);
  spec.attentionLogitsAlpha =
      src.readDouble(model, "attention_logits_alpha", 1e-12, 1e12)
          .value_or(1.0);
  if (src.readBool(model, "scale_output_logits_by_d") == false)
    src.error(src.locateKey(model, "scale_output_logits_by_d"),
              "'" + model.qualify("scale_output_logits_by_d") +
                  "' is false; cgpt models muP's output_logits_alpha / "
                  "width-multiplier logits only (allowed: true)");
  if (baseHidden) {
    double widthMultiplier = double(spec.hiddenSize) / double(*baseHidden);
    spec.scaleQkByHeadSize = true;
    spec.outputLogitsScale = logitsAlpha.value_or(1.0) / widthMultiplier;
    spec.decoderKernelLrScale = 1.0 / widthMultiplier;
    if (baseFilter) {
      double filterMultiplier = double(spec.ffnSize) / double(*baseFilter);
      if (std::fabs(filterMultiplier - widthMultiplier) >
          1e-12 * widthMultiplier)
        src.error(src.locateKey(model, "mup_base_filter_size"),
                  "muP width multipliers differ: filter_size / "
                  "mup_base_filter_size is " +
                      formatExactDouble(filterMultiplier) +
                      ", hidden_size / mup_base_hidden_size is " +
                      formatExactDouble(widthMultiplier) +
                      "; cgpt gives all decoder matrices one learning-rate "
                      "scale, so they must agree");
    }
  } else if (baseFilter || logitsAlpha) {
    StringRef key = baseFilter ? "mup_base_filter_size" : "output_logits_alpha";
    src.error(src.locateKey(model, key),
              "'" + model.qualify(key) + "' needs '" +
                  model.qualify("mup_base_hidden_size") +
                  "', from which muP's multipliers are derived");
  }
  // A stated scale wins over a derived one.
  if (auto scale = src.readDouble(model, "output_logits_scale", 1e-12, 1e12))
    spec.outputLogitsScale = *scale;
  spec.mup = spec.mup || spec.scaleQkByHeadSize || baseHidden ||
             src.lookup(model, "output_logits_scale").IsDefined() ||
             src.lookup(model, "embeddings_scale").IsDefined();
}

void ModelReader::chooseBlockStyle(const Section &model) {
  if (std::optional<BlockStyle> style = readChoice<BlockStyle>(
          model, "name",
          {{BlockStyle::Sequential,
            {"gpt2", "gpt3", "llama", "mistral", "mixtral", "btlm", "jais"}},
           {BlockStyle::Parallel, {"gptj", "gpt_neox", "neox"}}})) {
    spec.blockStyle = *style;
    spec.blockStyleReason = "'" + model.qualify("name") + "' is '" +
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
  spec.locations.microBatch = src.locate(node, "micro_batch_size");
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
  readBatchSize(loader);
  spec.batchSemantics = BatchSemantics::Global;
  spec.batchSemanticsReason = "trainer schema";
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
      Section flags{callback["ScopedTrainFlags"], init.qualify("callbacks") +
                                                      "[" + std::to_string(i) +
                                                      "].ScopedTrainFlags"};
      readMicroBatch(src.lookup(flags, "csx.performance.micro_batch_size"),
                     flags.qualify("csx.performance.micro_batch_size"));
    }
  readTrainerOptimizer(init);
  warnSparsity(src.subsection(init, "sparsity"));
}

void ModelReader::readTrainerOptimizer(const Section &init) {
  Section optimizer = src.subsection(init, "optimizer");
  if (optimizer.present()) {
    // Model Zoo looks optimizers up by name without case ("adamw:" in the
    // GPT-J and NeoX files of 2.4 and 2.10).
    auto isAdamW = [](const auto &entry) {
      return entry.first.IsScalar() &&
             normalizeName(entry.first.Scalar()) == "adamw";
    };
    if (!optimizer.node.IsMap() || optimizer.node.size() != 1 ||
        !isAdamW(*optimizer.node.begin())) {
      src.error(src.locate(optimizer.node), "'" + optimizer.name +
                                                "' must be {AdamW: {...}}; "
                                                "allowed optimizers: AdamW");
      return;
    }
    spec.locations.optimizer = src.locate(optimizer.node);
    readOptimizer(
        src.subsection(optimizer, optimizer.node.begin()->first.Scalar()));
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
  std::optional<int> type = readChoice<int>(root, "model_type",
                                            {{0, {"gpt2"}},
                                             {1, {"gptj"}},
                                             {2, {"gpt_neox"}},
                                             {3, {"llama"}},
                                             {4, {"mistral"}},
                                             {5, {"btlm"}},
                                             {6, {"jais"}},
                                             {7, {"mixtral"}}});
  if (src.hasFailed())
    return;
  spec.blockStyleReason = "'model_type' is '" +
                          src.readString(root, "model_type").value_or("gpt2") +
                          "'";
  switch (type.value_or(0)) {
  case 0:
    readHuggingFaceGpt2(root);
    break;
  case 1:
    readHuggingFaceGptJ(root);
    break;
  case 2:
    readHuggingFaceNeoX(root);
    break;
  case 3:
  case 4:
    readHuggingFaceLlama(root);
    break;
  case 7:
    readHuggingFaceLlama(root);
    readHuggingFaceExperts(root);
    break;
  case 5:
  case 6:
    readHuggingFaceBtlm(root);
    break;
  }
  std::optional<double> epsilon;
  for (StringRef key : {"layer_norm_epsilon", "layer_norm_eps", "rms_norm_eps"})
    if (!epsilon)
      epsilon = src.readDouble(root, key, 1e-30, 0.5);
  spec.layerNormEpsilon = epsilon.value_or(1e-5);
  spec.sequenceLength = spec.maxPositions;
  readDropout(root,
              {kHfEmbeddingDropout, kHfAttentionDropout, kHfResidualDropout});
  // config.json describes the network, not its training run: the batch
  // comes from --batch-size, or is one sequence.
  spec.batchSemantics = BatchSemantics::Global;
}

/// GPT-2 (and the released Cerebras-GPT configs): learned positions,
/// biases on every projection but the head.
void ModelReader::readHuggingFaceGpt2(const Section &root) {
  spec.blockStyle = BlockStyle::Sequential;
  spec.hiddenSize =
      requireSize(root, "n_embd", kMaxHidden, spec.locations.hidden);
  spec.numLayers =
      requireSize(root, "n_layer", kMaxLayers, spec.locations.layers);
  spec.numHeads = requireSize(root, "n_head", kMaxHidden, spec.locations.heads);
  requireHeadsDivide(root, "n_embd", "n_head");
  spec.ffnSize =
      src.readInt(root, "n_inner", 1, kMaxFfn).value_or(4 * spec.hiddenSize);
  spec.locations.ffn = src.locateKey(root, "n_inner");
  if (src.lookup(root, "n_positions").IsDefined())
    spec.maxPositions = requireSize(root, "n_positions", kMaxPositions,
                                    spec.locations.positions);
  else
    spec.maxPositions =
        requireSize(root, "n_ctx", kMaxPositions, spec.locations.positions);
  spec.vocabSize =
      requireSize(root, "vocab_size", kMaxVocab, spec.locations.vocab);
  // GPT-2's own default is the tanh form.
  readFeedForwardActivation(root, "activation_function", Activation::gelu_tanh);
  spec.tiedEmbeddings =
      src.readBool(root, "tie_word_embeddings").value_or(true);
  if (src.readBool(root, "scale_attn_weights") == false)
    src.error(src.locateKey(root, "scale_attn_weights"),
              "'scale_attn_weights' is false; unscaled attention is not "
              "supported (allowed: true)");
  spec.qkvBias = spec.attentionOutBias = spec.ffnBias = true;
  spec.outputBias = false;
}

/// GPT-J (transformers' GPTJConfig): GPT-2's key names, rotary positions on
/// `rotary_dim` of each head, parallel blocks with one layer norm, no
/// attention biases, an untied head with a bias.
void ModelReader::readHuggingFaceGptJ(const Section &root) {
  readHuggingFaceGpt2(root);
  spec.blockStyle = BlockStyle::Parallel;
  spec.untiedLayerNorm = false;
  spec.tiedEmbeddings =
      src.readBool(root, "tie_word_embeddings").value_or(false);
  spec.qkvBias = spec.attentionOutBias = false;
  spec.ffnBias = true;
  spec.outputBias = true;
  if (src.readBool(root, "rotary") == false)
    src.error(src.locateKey(root, "rotary"),
              "'rotary' is false; GPT-J without rotary positions is not "
              "supported (allowed: true)");
  spec.position = PositionKind::Rotary;
  // transformers' GPTJConfig default.
  spec.rotaryDim = src.readInt(root, "rotary_dim", 2, spec.headSize)
                       .value_or(std::min<int64_t>(64, spec.headSize));
  if (spec.rotaryDim % 2 != 0)
    src.error(src.locateKey(root, "rotary_dim"),
              "'rotary_dim' (" + std::to_string(spec.rotaryDim) +
                  ") must be even");
}

void ModelReader::readBertStyleShape(const Section &root) {
  spec.hiddenSize =
      requireSize(root, "hidden_size", kMaxHidden, spec.locations.hidden);
  spec.numLayers =
      requireSize(root, "num_hidden_layers", kMaxLayers, spec.locations.layers);
  spec.numHeads = requireSize(root, "num_attention_heads", kMaxHidden,
                              spec.locations.heads);
  requireHeadsDivide(root, "hidden_size", "num_attention_heads");
  spec.ffnSize =
      requireSize(root, "intermediate_size", kMaxFfn, spec.locations.ffn);
  spec.maxPositions = requireSize(root, "max_position_embeddings",
                                  kMaxPositions, spec.locations.positions);
  spec.vocabSize =
      requireSize(root, "vocab_size", kMaxVocab, spec.locations.vocab);
}

/// GPT-NeoX (transformers' GPTNeoXConfig): BERT-style key names, rotary
/// positions on `rotary_pct` of each head, parallel blocks with two layer
/// norms (or sequential ones), biases on every projection, an untied head
/// without a bias.
void ModelReader::readHuggingFaceNeoX(const Section &root) {
  readBertStyleShape(root);
  spec.activation =
      readActivation(root, "hidden_act").value_or(Activation::gelu);
  bool parallel = src.readBool(root, "use_parallel_residual").value_or(true);
  spec.blockStyle = parallel ? BlockStyle::Parallel : BlockStyle::Sequential;
  spec.untiedLayerNorm = true;
  spec.tiedEmbeddings =
      src.readBool(root, "tie_word_embeddings").value_or(false);
  bool biases = src.readBool(root, "attention_bias").value_or(true);
  spec.qkvBias = spec.attentionOutBias = biases;
  spec.ffnBias = true;
  spec.outputBias = false;
  spec.position = PositionKind::Rotary;
  double fraction = src.readDouble(root, "rotary_pct", 0, 1).value_or(0.25);
  // transformers rounds down: rotary_ndims = int(head_size * rotary_pct).
  spec.rotaryDim = static_cast<int64_t>(double(spec.headSize) * fraction);
  if (!src.hasFailed() && (spec.rotaryDim < 2 || spec.rotaryDim % 2 != 0))
    src.error(src.locateKey(root, "rotary_pct"),
              "'rotary_pct' (" + formatExactDouble(fraction) +
                  ") of head size " + std::to_string(spec.headSize) +
                  " gives " + std::to_string(spec.rotaryDim) +
                  " rotary dimensions; cgpt needs an even number, at least 2");
  spec.rotaryBase =
      src.readDouble(root, "rotary_emb_base", 1.0000001, 1e12).value_or(10000);
}

/// LLaMA and Mistral (transformers' LlamaConfig, MistralConfig): RMS norm,
/// SwiGLU, rotary positions on the whole head, grouped-query attention,
/// no biases, an untied head.
void ModelReader::readHuggingFaceLlama(const Section &root) {
  // Mixtral is Mistral's decoder with experts for its feed-forward blocks.
  std::optional<std::string> modelType = src.readString(root, "model_type");
  bool mistral = modelType == "mistral" || modelType == "mixtral";
  readBertStyleShape(root);
  if (std::optional<int64_t> headDim =
          src.readInt(root, "head_dim", 1, kMaxHidden);
      headDim && *headDim != spec.headSize)
    src.error(src.locateKey(root, "head_dim"),
              "'head_dim' (" + std::to_string(*headDim) +
                  ") differs from hidden_size / num_attention_heads (" +
                  std::to_string(spec.headSize) +
                  "); cgpt's heads span the hidden size");
  std::optional<int64_t> kvHeads =
      src.readInt(root, "num_key_value_heads", 1, kMaxHidden);
  if (kvHeads && !src.hasFailed() && spec.numHeads % *kvHeads != 0)
    src.error(src.locateKey(root, "num_key_value_heads"),
              "'num_key_value_heads' (" + std::to_string(*kvHeads) +
                  ") must divide 'num_attention_heads' (" +
                  std::to_string(spec.numHeads) + ")");
  if (kvHeads && *kvHeads != spec.numHeads)
    spec.numKvHeads = *kvHeads;
  spec.gatedFfn = true;
  spec.activation =
      readActivation(root, "hidden_act").value_or(Activation::silu);
  spec.norm = NormKind::RMSNorm;
  spec.blockStyle = BlockStyle::Sequential;
  spec.tiedEmbeddings =
      src.readBool(root, "tie_word_embeddings").value_or(false);
  spec.qkvBias = spec.attentionOutBias =
      src.readBool(root, "attention_bias").value_or(false);
  spec.ffnBias = src.readBool(root, "mlp_bias").value_or(false);
  spec.outputBias = false;
  spec.position = PositionKind::Rotary;
  spec.rotaryDim = spec.headSize;
  spec.rotaryBase =
      src.readDouble(root, "rope_theta", 1.0000001, 1e12).value_or(10000.0);
  if (YAML::Node scaling = src.lookup(root, "rope_scaling");
      scaling.IsDefined() && !scaling.IsNull())
    src.error(src.locate(scaling, "rope_scaling"),
              "'rope_scaling' is set; cgpt models plain rotary positions "
              "(allowed: null)");
  if (mistral)
    if (std::optional<int64_t> window =
            src.readInt(root, "sliding_window", 1, kMaxPositions))
      noteSlidingWindow(src.locateKey(root, "sliding_window"), "sliding_window",
                        *window);
}

/// BTLM and Jais (Cerebras' GPT-2 derivatives): GPT-2's key names, ALiBi
/// positions, SwiGLU, layer norm, muP with the multipliers stated as
/// `mup_*` keys.
void ModelReader::readHuggingFaceBtlm(const Section &root) {
  readHuggingFaceGpt2(root);
  if (!src.hasFailed() && !src.lookup(root, "n_inner").IsDefined())
    src.error(src.locateKey(root, "n_embd"),
              "'n_inner' is missing; a SwiGLU model states its width");
  spec.position =
      readChoice<PositionKind>(root, "position_embedding_type",
                               {{PositionKind::Learned, {"learned"}},
                                {PositionKind::Alibi, {"alibi"}}})
          .value_or(PositionKind::Learned);
  if (YAML::Node scaling = src.lookup(root, "alibi_scaling");
      scaling.IsDefined() && !scaling.IsNull())
    src.error(src.locate(scaling, "alibi_scaling"),
              "'alibi_scaling' is set; cgpt models ALiBi without position "
              "interpolation (allowed: null)");
  // muP: the width multiplier's inverse scales the logits (with their
  // alpha) and the decoder matrices' learning rate.
  std::optional<double> width =
      src.readDouble(root, "mup_width_scale", 1e-12, 1e12);
  std::optional<double> alpha =
      src.readDouble(root, "mup_output_alpha", 1e-12, 1e12);
  std::optional<double> embeddings =
      src.readDouble(root, "mup_embeddings_scale", 1e-12, 1e12);
  spec.scaleQkByHeadSize =
      src.readBool(root, "mup_scale_qk_dot_by_d").value_or(false);
  if (width || alpha || embeddings) {
    spec.mup = true;
    spec.embeddingsScale = embeddings.value_or(1.0);
    spec.outputLogitsScale = alpha.value_or(1.0) * width.value_or(1.0);
    spec.decoderKernelLrScale = width.value_or(1.0);
  }
}

//===----------------------------------------------------------------------===//
// Cross-key checks and command-line overrides
//===----------------------------------------------------------------------===//

/// The sequence length, the systems and the batch, from the file and the
/// command line, which wins.
void ModelReader::applyBatchOverrides(const ImportOptions &options) {
  if (options.sequenceLength) {
    if (*options.sequenceLength < 1 ||
        *options.sequenceLength > spec.maxPositions) {
      src.error(src.fileStart(),
                "--sequence-length is " +
                    std::to_string(*options.sequenceLength) +
                    "; allowed 1 to the model's max_position_embeddings (" +
                    std::to_string(spec.maxPositions) + ")");
      return;
    }
    spec.sequenceLength = *options.sequenceLength;
  }
  if (spec.sequenceLength > spec.maxPositions) {
    src.error(src.fileStart(), "sequence length " +
                                   std::to_string(spec.sequenceLength) +
                                   " exceeds max_position_embeddings " +
                                   std::to_string(spec.maxPositions));
    return;
  }
  // A command-line count outside 1 to `max`, refused naming the flag.
  auto outOfRange = [&](StringRef flag, int64_t value, int64_t max) {
    if (value >= 1 && value <= max)
      return false;
    src.error(src.fileStart(), flag + " is " + std::to_string(value) +
                                   "; allowed 1 to " + std::to_string(max));
    return true;
  };
  if (options.numCsx) {
    if (outOfRange("--num-csx", *options.numCsx, kMaxSystems))
      return;
    spec.numCsx = *options.numCsx;
  }
  if (options.batchSize) {
    if (outOfRange("--batch-size", *options.batchSize, kMaxBatch))
      return;
    spec.batchSize = *options.batchSize;
    batchNode = YAML::Node();
    batchWhat = "--batch-size";
    spec.locations.batch = nullptr;
    if (spec.schema == Schema::HuggingFace)
      spec.batchSemanticsReason = "from --batch-size";
  } else if (spec.schema == Schema::HuggingFace) {
    spec.batchSize = 1;
    batchWhat = "the batch";
    spec.batchSemanticsReason = "config.json states none: 1 sequence";
    src.warning(src.fileStart(),
                "config.json states no batch size; using 1 sequence per step "
                "(--batch-size sets one)");
  }
  if (options.batchSemantics) {
    spec.batchSemantics = *options.batchSemantics;
    spec.batchSemanticsReason = "--batch-semantics";
  } else if (batchSemanticsGuessed && spec.numCsx > 1) {
    src.warning(src.locate(batchNode, "batch_size"),
                "'" + batchWhat + "' (" + std::to_string(spec.batchSize) +
                    ") read as the global batch over " +
                    std::to_string(spec.numCsx) +
                    " systems, as Model Zoo 1.9.0 and later read it; this "
                    "file's 1.x spelling fits releases 1.7 to 1.9.1, and "
                    "before 1.9.0 batch_size was per system: pass "
                    "--batch-semantics=per-system for such a file");
  }
  spec.globalBatch = spec.batchSemantics == BatchSemantics::PerSystem
                         ? spec.batchSize * spec.numCsx
                         : spec.batchSize;
  if (spec.globalBatch > kMaxBatch) {
    src.error(src.locate(batchNode, "batch_size"),
              "'" + batchWhat + "' (" + std::to_string(spec.batchSize) +
                  ") per system on " + std::to_string(spec.numCsx) +
                  " systems is a global batch of " +
                  std::to_string(spec.globalBatch) + "; the limit is " +
                  std::to_string(kMaxBatch));
    return;
  }
  if (spec.globalBatch < spec.numCsx)
    src.error(src.locate(batchNode, "batch_size"),
              "'" + batchWhat + "' (" + std::to_string(spec.globalBatch) +
                  ") is smaller than num_csx (" + std::to_string(spec.numCsx) +
                  (options.numCsx ? ", from --num-csx" : "") +
                  "): every system needs at least one sequence");
}

void ModelReader::finish(const ImportOptions &options) {
  if (src.hasFailed())
    return;
  if (const std::optional<MicroBatchChoice> &choice = options.microBatch) {
    // The command line wins over the file.
    microBatchNode = YAML::Node();
    spec.microBatchMode = choice->mode;
    spec.microBatchSize = choice->size;
    spec.microBatchMin = choice->min;
    spec.microBatchMax = choice->max;
    spec.locations.microBatch = nullptr;
  }
  applyBatchOverrides(options);
  if (src.hasFailed())
    return;
  if (slidingWindow && spec.sequenceLength > slidingWindow->size)
    src.warning(slidingWindow->where,
                "'" + slidingWindow->key + "' is " +
                    std::to_string(slidingWindow->size) +
                    " but sequences are " +
                    std::to_string(spec.sequenceLength) +
                    " tokens; cgpt models full causal attention, so each "
                    "query attends to (and pays for) every earlier key");
  int64_t perSystem = llvm::divideCeil(spec.globalBatch, spec.numCsx);
  if (int64_t left = spec.globalBatch % spec.numCsx) {
    // Model Zoo 1.9 to 2.4 refuse it; the busiest systems set the pace.
    mlir::Location where = spec.locations.batch
                               ? mlir::Location(spec.locations.batch)
                               : src.fileStart();
    src.warning(where,
                llvm::formatv("the global batch of {0} does not divide by "
                              "{1} systems, which Model Zoo releases 1.9 to "
                              "2.4 refuse; cgpt splits it as evenly as it "
                              "goes ({3} sequences on {2} system(s), {5} on "
                              "{4})",
                              spec.globalBatch, spec.numCsx, left, perSystem,
                              spec.numCsx - left, perSystem - 1)
                    .str());
  }
  if (spec.microBatchMode == MicroBatchMode::fixed) {
    // Model Zoo 2.5+ adjusts a micro-batch to split the batch evenly and
    // says so; the planner runs it that way.
    PassSplit split = PassSplit::atMost(perSystem, spec.microBatchSize);
    if (split.microBatch != spec.microBatchSize)
      src.warning(
          src.locate(microBatchNode, "micro_batch_size"),
          llvm::formatv("micro_batch_size {0} runs as {1}: the per-system "
                        "batch of {2} (global {3} / {4} systems) splits "
                        "evenly into {5} pass(es) of at most {1}",
                        spec.microBatchSize, split.microBatch, perSystem,
                        spec.globalBatch, spec.numCsx, split.passes)
              .str());
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
      src.error(spec.schedule[i].where ? mlir::Location(spec.schedule[i].where)
                                       : src.fileStart(),
                "learning-rate phase #" + std::to_string(i) +
                    " has no step count (or 0 steps) but is not the last "
                    "phase: it would never end");
}

/// What stands before a JSON number written as a float in the text that
/// markFloatNumbers hands llvm::json: a NUL, which no model file holds.
constexpr llvm::StringRef kFloatMark("\0float:", 7);

/// `text` with every number written with a fraction or an exponent
/// (`768.0`, `8.0`, `1e-05`) turned into a string that kFloatMark starts:
/// llvm::json reads `768.0` as the integer 768, and Python's json, which
/// Model Zoo and Hugging Face read with, as a float, which a size must
/// not be (YAML's `768.0` is refused the same way).
std::string markFloatNumbers(StringRef text) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    char c = text[at];
    if (c == '"') {
      size_t end = at + 1;
      while (end < text.size() && text[end] != '"')
        end += text[end] == '\\' ? 2 : 1;
      end = std::min(end + 1, text.size());
      out.append(text.substr(at, end - at));
      at = end;
      continue;
    }
    if (c != '-' && !llvm::isDigit(c)) {
      out.push_back(c);
      ++at;
      continue;
    }
    size_t end = text.find_first_not_of("0123456789+-.eE", at);
    StringRef number = text.substr(at, end - at);
    if (number.find_first_of(".eE") == StringRef::npos)
      out.append(number);
    else
      out.append("\"\\u0000float:" + number.str() + "\"");
    at = number.size() + at;
  }
  return out;
}

/// Converts a JSON document to the yaml-cpp tree the readers walk. Object
/// keys are sorted so that warnings come out in a stable order.
YAML::Node jsonToYaml(const llvm::json::Value &value) {
  switch (value.kind()) {
  case llvm::json::Value::Null:
    return YAML::Node(YAML::NodeType::Null);
  case llvm::json::Value::Boolean:
    return YAML::Node(*value.getAsBoolean() ? "true" : "false");
  case llvm::json::Value::Number:
    // Written without a fraction or an exponent (markFloatNumbers); past
    // int64_t, llvm::json keeps it as a double.
    if (std::optional<int64_t> i = value.getAsInteger())
      return YAML::Node(std::to_string(*i));
    return YAML::Node(formatExactDouble(*value.getAsNumber()));
  case llvm::json::Value::String: {
    StringRef text = *value.getAsString();
    // A float as YAML spells one, so the readers treat it as they treat
    // YAML's: `768.0` is no size, `1.0e-05` is an epsilon.
    if (text.consume_front(kFloatMark))
      return YAML::Node(
          formatExactDouble(std::strtod(text.str().c_str(), nullptr)));
    YAML::Node node(text.str());
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
  return readModelText(path, (*buffer)->getBuffer(),
                       modelFormatOf(path).value_or(ModelFormat::Yaml), context,
                       options);
}

FailureOr<ModelSpec> readModelText(StringRef path, StringRef text,
                                   ModelFormat format, MLIRContext *context,
                                   const ImportOptions &options) {
  Location fileLoc = FileLineColLoc::get(context, path, 1, 1);
  text = withoutByteOrderMark(text);
  if (text.contains('\0'))
    return fail(fileLoc, "'" + path + "' is a binary file, not a model file");

  bool isJson = format == ModelFormat::Json;
  ConfigSource source(context, path.str(), text.str(), isJson);
  YAML::Node root;
  if (isJson) {
    if (failed(checkNestingDepth(path, text, TextSyntax::Json, context)))
      return failure();
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
    source.warnRepeatedJsonKeys();
    // Parsed again with its floats marked: the first parse, of the text as
    // written, places any syntax error.
    llvm::Expected<llvm::json::Value> marked =
        llvm::json::parse(markFloatNumbers(text));
    if (!marked)
      return fail(fileLoc,
                  "malformed JSON: " + llvm::toString(marked.takeError()));
    root = jsonToYaml(*marked);
  } else {
    root = source.parseYaml();
    if (source.hasFailed())
      return failure();
  }
  if (!root.IsDefined() || root.IsNull())
    return fail(fileLoc, "model file '" + path + "' is empty");
  if (!root.IsMap())
    return fail(source.locate(root),
                "a model file must be a mapping of sections, got " +
                    describeNode(root));

  ModelSpec spec;
  spec.path = path.str();
  spec.name = nameFromPath(path);
  try {
    ModelReader(source, spec).read(root, options);
  } catch (const YAML::Exception &e) {
    // yaml-cpp throws on shapes the readers did not expect; report, never
    // crash.
    source.error(e.mark.line >= 0
                     ? Location(FileLineColLoc::get(
                           context, path, e.mark.line + 1, e.mark.column + 1))
                     : fileLoc,
                 "unexpected structure: " + e.msg);
  }
  if (source.hasFailed())
    return failure();
  return spec;
}

llvm::Expected<MicroBatchChoice> parseMicroBatchChoice(StringRef text) {
  auto refuse = [&]() {
    return llvm::createStringError("--micro-batch-size is '" + text.str() +
                                   "'; allowed: a positive integer up to " +
                                   std::to_string(kMaxBatch) +
                                   ", auto, explore, explore:MIN-MAX or none");
  };
  // A positive integer of at most kMaxBatch, written in decimal digits.
  auto count = [&](StringRef digits) -> std::optional<int64_t> {
    uint64_t value = 0;
    if (digits.empty() || !llvm::all_of(digits, llvm::isDigit) ||
        digits.getAsInteger(10, value) || value < 1 ||
        value > static_cast<uint64_t>(kMaxBatch))
      return std::nullopt;
    return static_cast<int64_t>(value);
  };
  MicroBatchChoice choice;
  std::string word = text.trim().lower();
  StringRef rest = word;
  if (rest == "auto")
    return choice;
  if (rest == "none") {
    choice.mode = MicroBatchMode::none;
    return choice;
  }
  if (rest == "explore") {
    choice.mode = MicroBatchMode::explore;
    return choice;
  }
  if (rest.consume_front("explore:")) {
    auto [low, high] = rest.split('-');
    std::optional<int64_t> min = count(low), max = count(high);
    if (!min || !max)
      return refuse();
    if (*min > *max)
      return llvm::createStringError(
          "--micro-batch-size explore range has min " + std::to_string(*min) +
          " > max " + std::to_string(*max));
    choice.mode = MicroBatchMode::explore;
    choice.min = *min;
    choice.max = *max;
    return choice;
  }
  std::optional<int64_t> size = count(rest);
  if (!size)
    return refuse();
  choice.mode = MicroBatchMode::fixed;
  choice.size = *size;
  return choice;
}

} // namespace cgpt::frontend
