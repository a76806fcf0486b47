//===- ModelReader.cpp - Model Zoo and Hugging Face model files -----------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Reads the Model Zoo params schemas and Hugging Face configs into a
// validated ModelSpec: the entry points, the schema table and what every
// schema's reader shares. The key names, defaults and limits are
// documented in docs/frontend.md; keep the two in step.
//
//===----------------------------------------------------------------------===//

#include "ModelReader.h"

#include "cgpt/Support/InputFile.h"
#include "cgpt/Support/MicroBatches.h"
#include "cgpt/Support/Nesting.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using llvm::StringRef;
using namespace cgpt::transformer;
using namespace cgpt::training;

namespace cgpt::frontend {

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

namespace detail {

/// `name` lowered, without '_', '-' and ' ', for forgiving enum matching.
std::string normalizeName(StringRef name) {
  std::string out;
  for (char c : name.lower())
    if (c != '_' && c != '-' && c != ' ')
      out += c;
  return out;
}

/// A symbol-safe model name from the file name.
static std::string nameFromPath(StringRef path) {
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

/// A schema cgpt reads: a top-level key that only its files have, and the
/// member that reads them (which names the schema in the spec where the
/// key alone cannot: Model Zoo's TensorFlow and PyTorch files share theirs).
struct SchemaReader {
  std::initializer_list<const char *> keys;
  void (ModelReader::*read)(const Section &root);
};

void ModelReader::read(const YAML::Node &root, const ImportOptions &options) {
  static const SchemaReader kSchemaReaders[] = {
      {{"trainer"}, &ModelReader::readTrainer},
      {{"model"}, &ModelReader::readTensorFlowOrPyTorch},
      {{"n_embd", "model_type"}, &ModelReader::readHuggingFace}};
  const SchemaReader *reader = llvm::find_if(kSchemaReaders, [&](auto &row) {
    return llvm::any_of(row.keys,
                        [&](const char *key) { return bool(root[key]); });
  });
  if (reader == std::end(kSchemaReaders)) {
    src.error(src.fileStart(),
              "not a model file: expected a Model Zoo params file (keys "
              "'model' and 'train_input', or 'trainer') or a Hugging Face "
              "config.json (key 'n_embd')");
    return;
  }
  (this->*reader->read)(Section{root, ""});
  finish(options);
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

} // namespace detail

using detail::ModelReader;

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
    FailureOr<YAML::Node> json =
        detail::parseJsonModel(path, text, source, context);
    if (failed(json))
      return failure();
    root = *json;
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
  spec.name = detail::nameFromPath(path);
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
