//===- HuggingFace.cpp - Hugging Face config.json -------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Hugging Face config.json files: the keys every architecture shares, and
// one reader per architecture, chosen by `model_type` from a table
// (kArchitectures): a new architecture is a reader and a row.
//
//===----------------------------------------------------------------------===//

#include "ModelReader.h"

using namespace mlir;
using llvm::StringRef;
using namespace cgpt::transformer;

namespace cgpt::frontend::detail {

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
    // GPTBigCode.
    "multi_query", "attention_softmax_in_fp32",
    "scale_attention_softmax_in_fp32",
    // Mixtral.
    "num_local_experts", "num_experts_per_tok", "router_aux_loss_coef",
    "output_router_logits", "router_jitter_noise"};

const StringRef kHfEmbeddingDropout[] = {"embd_pdrop", "hidden_dropout",
                                         "hidden_dropout_prob"};
const StringRef kHfAttentionDropout[] = {"attn_pdrop", "attention_dropout",
                                         "attention_probs_dropout_prob"};
const StringRef kHfResidualDropout[] = {"resid_pdrop", "hidden_dropout",
                                        "hidden_dropout_prob"};

//===----------------------------------------------------------------------===//
// Hugging Face config.json
//===----------------------------------------------------------------------===//

void ModelReader::readHuggingFace(const Section &root) {
  // The architectures cgpt reads, by `model_type`, and the member that
  // reads each one's keys. A config that states no type is GPT-2 (the
  // released Cerebras-GPT configs).
  using ArchitectureReader = void (ModelReader::*)(const Section &);
  static const Choice<ArchitectureReader> kArchitectures[] = {
      {&ModelReader::readHuggingFaceGpt2, {"gpt2"}},
      {&ModelReader::readHuggingFaceBigCode, {"gpt_bigcode"}},
      {&ModelReader::readHuggingFaceGptJ, {"gptj"}},
      {&ModelReader::readHuggingFaceNeoX, {"gpt_neox"}},
      {&ModelReader::readHuggingFaceLlama, {"llama"}},
      {&ModelReader::readHuggingFaceLlama, {"mistral"}},
      {&ModelReader::readHuggingFaceBtlm, {"btlm"}},
      {&ModelReader::readHuggingFaceBtlm, {"jais"}},
      {&ModelReader::readHuggingFaceMixtral, {"mixtral"}}};
  spec.schema = Schema::HuggingFace;
  src.warnUnknownKeys(root, kHuggingFaceKeys);
  ArchitectureReader read =
      readChoice<ArchitectureReader>(root, "model_type", kArchitectures)
          .value_or(&ModelReader::readHuggingFaceGpt2);
  if (src.hasFailed())
    return;
  spec.blockStyleReason = "'model_type' is '" +
                          src.readString(root, "model_type").value_or("gpt2") +
                          "'";
  (this->*read)(root);
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

/// GPTBigCode (transformers' GPTBigCodeConfig: SantaCoder, StarCoder):
/// GPT-2 with multi-query attention, one key and value head that every
/// query head shares, unless `multi_query` is false.
void ModelReader::readHuggingFaceBigCode(const Section &root) {
  readHuggingFaceGpt2(root);
  if (src.readBool(root, "multi_query").value_or(true) && spec.numHeads > 1)
    spec.numKvHeads = 1;
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

void ModelReader::readHuggingFaceMixtral(const Section &root) {
  readHuggingFaceLlama(root);
  readHuggingFaceExperts(root);
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

} // namespace cgpt::frontend::detail
