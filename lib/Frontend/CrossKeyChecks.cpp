//===- CrossKeyChecks.cpp - the command line over the file, and checks ---===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// After a schema's reader: the command line's sequence length, systems,
// batch and micro-batch applied to the parsed spec as typed values (they
// win over the file), then the checks that span keys: the batch against
// the systems, the micro-batch against the batch, the sliding window
// against the sequence, and the learning-rate phases.
//
//===----------------------------------------------------------------------===//

#include "ModelReader.h"

#include "cgpt/Support/MicroBatches.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using llvm::StringRef;
using namespace cgpt::training;

namespace cgpt::frontend::detail {

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

} // namespace cgpt::frontend::detail
