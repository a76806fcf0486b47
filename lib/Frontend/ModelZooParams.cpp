//===- ModelZooParams.cpp - Model Zoo params files ------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Model Zoo params files of the TensorFlow and PyTorch implementations
// (releases 1.x and 2.x): sections `model`, `train_input`, `optimizer` and
// `runconfig`.
//
//===----------------------------------------------------------------------===//

#include "ModelReader.h"

using namespace mlir;
using llvm::StringRef;
using namespace cgpt::transformer;
using namespace cgpt::training;

namespace cgpt::frontend::detail {

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

} // namespace cgpt::frontend::detail
