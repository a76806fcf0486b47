//===- ModelZooModel.cpp - Model Zoo's model section ----------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The `model` section both Model Zoo schemas share (params files of
// releases 1.x and 2.x, and the trainer schema's `trainer.init.model`):
// the network's shape, positions, norms, attention, experts, muP and
// precision; and the batch, micro-batch and sparsity keys they share.
//
//===----------------------------------------------------------------------===//

#include "ModelReader.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using llvm::StringRef;
using namespace cgpt::transformer;
using namespace cgpt::training;

namespace cgpt::frontend::detail {

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

const StringRef kZooEmbeddingDropout[] = {"embedding_dropout_rate",
                                          "dropout_rate"};
const StringRef kZooAttentionDropout[] = {"attention_dropout_rate",
                                          "dropout_rate"};
const StringRef kZooResidualDropout[] = {"residual_dropout_rate",
                                         "dropout_rate"};

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

void ModelReader::readBatchSize(const Section &section) {
  batchNode = src.lookup(section, "batch_size");
  batchWhat = section.qualify("batch_size");
  spec.batchSize = src.requireInt(section, "batch_size", 1, kMaxBatch);
  spec.locations.batch = src.locate(batchNode, "batch_size");
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

} // namespace cgpt::frontend::detail
