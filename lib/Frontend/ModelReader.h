//===- ModelReader.h - the reader every model schema shares -----*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The reader every schema shares: the spec it fills and the typed readers
// of keys (choices, sizes, activations, dropout), in ModelReader.cpp with
// the schema table. Each schema's own keys are read in its own file:
// ModelZooParams.cpp, ModelZooTrainer.cpp (both sharing ModelZooModel.cpp
// and LearningRateSchedule.cpp) and HuggingFace.cpp, whose architectures
// are a table by model_type; the command line and the checks across keys
// come after, in CrossKeyChecks.cpp. A new schema is one file and one row
// of kSchemaReaders; docs/adding-a-model-format.md walks through it.
// Private to lib/Frontend.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_LIB_FRONTEND_MODELREADER_H
#define CGPT_LIB_FRONTEND_MODELREADER_H

#include "cgpt/Config/ConfigSource.h"
#include "cgpt/Frontend/ModelSpec.h"
#include "cgpt/Support/BatchChecks.h"
#include "cgpt/Support/Format.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <initializer_list>
#include <optional>
#include <string>

namespace cgpt::frontend::detail {

using cgpt::ConfigSource;
using cgpt::Section;
using llvm::StringRef;
using transformer::Activation;

// Limits that keep every later size computation in range and reject absurd
// files before anything is allocated (docs/frontend.md lists them).
inline constexpr int64_t kMaxVocab = int64_t(1) << 24;
inline constexpr int64_t kMaxHidden = int64_t(1) << 20;
inline constexpr int64_t kMaxLayers = 10000;
inline constexpr int64_t kMaxFfn = int64_t(1) << 22;
inline constexpr int64_t kMaxPositions = int64_t(1) << 20;
inline constexpr int64_t kMaxSteps = int64_t(1) << 40;
inline constexpr int64_t kMaxExperts = 4096;
/// The most expert parameters cgpt models: 2^48, more than the largest
/// MemoryX (2.4 PB) holds at 12 B a parameter, and far inside int64_t
/// when summed with the rest of the model.
inline constexpr double kMaxExpertParameters = 281474976710656.0;

/// Where each dropout rate is read, the first key present: Model Zoo's
/// own key for the site, else its `dropout_rate`; Hugging Face's GPT-2 and
/// GPT-J keys, GPT-NeoX's (whose hidden dropout also drops the
/// embeddings), then BERT-style ones; LLaMA and Mistral drop only the
/// attention probabilities.
struct DropoutKeys {
  llvm::ArrayRef<StringRef> embedding, attention, residual;
};

/// `name` lowered, without '_', '-' and ' ', for forgiving enum matching.
std::string normalizeName(StringRef name);

/// Reads one model file's tree into `spec`, reporting through `source`.
class ModelReader {
public:
  ModelReader(ConfigSource &source, ModelSpec &spec)
      : src(source), spec(spec) {}

  /// Picks the schema (kSchemaReaders in ModelReader.cpp), reads it, then
  /// applies `options` and checks the keys against each other.
  void read(const YAML::Node &root, const ImportOptions &options);

private:
  // One reader per schema (a row of kSchemaReaders).
  void readTensorFlowOrPyTorch(const Section &root);
  void readTrainer(const Section &root);
  void readHuggingFace(const Section &root);

  // One reader per Hugging Face architecture (a row of kArchitectures).
  void readHuggingFaceGpt2(const Section &root);
  void readHuggingFaceBigCode(const Section &root);
  void readHuggingFaceGptJ(const Section &root);
  void readHuggingFaceNeoX(const Section &root);
  void readHuggingFaceLlama(const Section &root);
  /// Mistral's decoder with experts for its feed-forward blocks.
  void readHuggingFaceMixtral(const Section &root);
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
                              llvm::ArrayRef<Choice<T>> choices,
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

template <typename T>
std::optional<T> ModelReader::readChoice(const Section &section, StringRef key,
                                         llvm::ArrayRef<Choice<T>> choices,
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

/// The YAML tree of JSON model text (JsonModel.cpp), or failure, reported
/// at the line and column of a syntax error.
mlir::FailureOr<YAML::Node> parseJsonModel(StringRef path, StringRef text,
                                           ConfigSource &source,
                                           mlir::MLIRContext *context);

} // namespace cgpt::frontend::detail

#endif // CGPT_LIB_FRONTEND_MODELREADER_H
