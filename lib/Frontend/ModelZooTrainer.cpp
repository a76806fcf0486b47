//===- ModelZooTrainer.cpp - Model Zoo's trainer schema -------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Model Zoo's trainer schema (release 2.3 and later): `trainer.init` holds
// the model, optimizer and schedulers, `trainer.fit` the data.
//
//===----------------------------------------------------------------------===//

#include "ModelReader.h"

using namespace mlir;
using llvm::StringRef;
using namespace cgpt::training;

namespace cgpt::frontend::detail {

//===----------------------------------------------------------------------===//
// Model Zoo trainer schema
//===----------------------------------------------------------------------===//

void ModelReader::readTrainer(const Section &root) {
  spec.schema = Schema::ModelZooTrainer;
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

} // namespace cgpt::frontend::detail
