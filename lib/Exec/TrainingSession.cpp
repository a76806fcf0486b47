//===- TrainingSession.cpp - a functional training run --------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Exec/TrainingSession.h"

#include "cgpt/Exec/Executor.h"
#include "cgpt/Exec/Safetensors.h"
#include "cgpt/Exec/TrainingData.h"
#include "cgpt/Support/Format.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <cmath>
#include <map>
#include <optional>

using namespace cgpt;
using namespace cgpt::exec;

namespace {

llvm::Error failure(const llvm::Twine &message) {
  return llvm::createStringError(std::errc::invalid_argument,
                                 message.str().c_str());
}

/// The weights a session starts from: the file's, or seeded.
llvm::Expected<std::vector<Tensor>>
startingWeights(llvm::ArrayRef<ParameterSpec> specs,
                const SessionOptions &options) {
  if (options.initWeightsPath.empty())
    return initializeParameters(specs, options.seed);
  llvm::Expected<llvm::StringMap<Tensor>> file =
      readSafetensors(options.initWeightsPath);
  if (!file)
    return file.takeError();
  std::vector<Tensor> values;
  for (const ParameterSpec &spec : specs) {
    auto it = file->find(spec.name);
    if (it == file->end() || it->second.shape != spec.shape)
      return failure("'" + options.initWeightsPath + "' " +
                     (it == file->end()
                          ? "has no tensor '" + spec.name + "'"
                          : "has tensor '" + spec.name + "' of shape " +
                                formatShape(it->second.shape)) +
                     "; the model needs " + formatShape(spec.shape));
    values.push_back(std::move(it->second));
  }
  // As PyTorch's strict load_state_dict: a tensor the model has no place
  // for is a mistake (another model's file, a renamed parameter). The
  // first in name order, so that the message does not depend on hashing.
  llvm::StringSet<> names;
  for (const ParameterSpec &spec : specs)
    names.insert(spec.name);
  std::optional<llvm::StringRef> stray;
  for (const auto &entry : *file)
    if (!names.contains(entry.getKey()) && (!stray || entry.getKey() < *stray))
      stray = entry.getKey();
  if (stray)
    return failure("'" + options.initWeightsPath + "' has tensor '" +
                   stray->str() + "', which is no parameter of the model");
  return values;
}

/// One named tensor per parameter, `prefix` before each name.
void addParameterEntries(std::vector<SafetensorsEntry> &out,
                         llvm::StringRef prefix,
                         llvm::ArrayRef<ParameterSpec> specs,
                         llvm::ArrayRef<Tensor> values) {
  for (auto [spec, value] : llvm::zip(specs, values))
    out.push_back({(prefix + spec.name).str(), value.shape, value.data.data()});
}

/// The state before a step, kept to dump the step in full.
struct StepSnapshot {
  std::vector<Tensor> weights, firstMoments, secondMoments;
  Batch batch;
  int64_t step = 0;
};

/// The last step in full, as a safetensors file.
std::string dumpStep(const Trainer &trainer, const StepSnapshot &before,
                     const Trainer::StepResult &result, bool bf16Storage,
                     uint64_t dropoutSeed) {
  std::vector<SafetensorsEntry> entries;
  llvm::ArrayRef<ParameterSpec> specs = trainer.getSpecs();
  addParameterEntries(entries, "param.", specs, before.weights);
  addParameterEntries(entries, "adam_m.", specs, before.firstMoments);
  addParameterEntries(entries, "adam_v.", specs, before.secondMoments);
  addParameterEntries(entries, "grad.", specs, trainer.getGradients());
  addParameterEntries(entries, "updated.", specs, trainer.getValues());
  entries.push_back({"tokens", before.batch.tokens.shape, nullptr,
                     before.batch.tokens.data.data()});
  entries.push_back({"labels", before.batch.labels.shape, nullptr,
                     before.batch.labels.data.data()});
  for (const auto &[router, experts] : trainer.getRouting())
    entries.push_back({"route." + router, experts.shape, experts.data.data()});
  float loss = static_cast<float>(result.loss);
  entries.push_back({"loss", {}, &loss});
  std::map<std::string, std::string> metadata = {
      {"step", std::to_string(before.step)},
      {"learning_rate", llvm::formatv("{0:e9}", result.learningRate).str()},
      {"gradient_norm", llvm::formatv("{0:e9}", result.gradientNorm).str()},
      {"storage", bf16Storage ? "bf16" : "f32"},
      {"dropout_seed", std::to_string(dropoutSeed)}};
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  printSafetensors(os, entries, metadata);
  os.flush();
  return bytes;
}

/// What a run of many steps tells the person waiting: after the first
/// step, the time the rest will take at its pace when that is long; on a
/// terminal, a line that counts the steps.
class StepProgress {
public:
  using Clock = std::chrono::steady_clock;
  /// Runs expected to end sooner pass silently.
  static constexpr double kEstimateFromSeconds = 10;

  StepProgress(llvm::raw_ostream *log, int64_t total, Clock::time_point start)
      : log(log), total(total), start(start), shown(start) {}

  void afterStep(int64_t done) {
    Clock::time_point now = Clock::now();
    double elapsed = std::chrono::duration<double>(now - start).count();
    double left = elapsed / done * (total - done);
    if (done == 1 && left > kEstimateFromSeconds) {
      *log << llvm::formatv(
          "functional run: {0} steps at {1:f3} s a step on this host: {2} in "
          "all\n",
          total, elapsed, formatRoughDuration(elapsed + left));
      counting = log->is_displayed();
    }
    if (!counting || (now - shown < std::chrono::seconds(1) && done < total))
      return;
    shown = now;
    *log << llvm::formatv("\rstep {0} of {1}, {2} left   ", done, total,
                          formatRoughDuration(left));
    if (done == total)
      *log << "\n";
    log->flush();
  }

private:
  llvm::raw_ostream *log;
  int64_t total;
  Clock::time_point start, shown;
  bool counting = false;
};

} // namespace

llvm::Expected<SessionResult> exec::runTrainingSession(
    dataflow::ProgramOp program, wafer::DeviceOp device,
    std::vector<ParameterSpec> specs, llvm::StringRef modelName,
    const SessionOptions &options, llvm::raw_ostream &log) {
  llvm::Expected<std::vector<Tensor>> weights = startingWeights(specs, options);
  if (!weights)
    return weights.takeError();
  ExecOptions execOptions;
  execOptions.bf16Storage = options.bf16Storage;
  execOptions.offload = options.offload;
  execOptions.dropoutSeed = options.seed;
  mlir::FailureOr<Trainer> trainer = Trainer::create(
      program, device, std::move(specs), std::move(*weights), execOptions);
  if (mlir::failed(trainer))
    return failure("the program cannot be executed (see the error above)");
  std::optional<TrainingData> data;
  if (options.dataPath.empty()) {
    data = TrainingData::synthetic(options.seed, trainer->getSeqLen(),
                                   trainer->getVocab());
  } else {
    llvm::Expected<TrainingData> text = TrainingData::fromText(
        options.dataPath, trainer->getSeqLen(), trainer->getVocab());
    if (!text)
      return text.takeError();
    data = std::move(*text);
  }

  int64_t total = std::max<int64_t>(options.steps, 1);
  log << llvm::formatv(
      "cgpt functional: {0} on {1}, {2} sequences x {3} tokens per step "
      "({4} x {5} per system on {6} system(s)), {7}, weights {8}\n"
      "  data: {9}\n",
      modelName, device.getTarget(), trainer->getGlobalBatch(),
      trainer->getSeqLen(), device.getMicroBatch(), device.getGradAccumSteps(),
      device.getNumCsx(),
      options.bf16Storage ? "bf16 storage, f32 accumulation" : "f32",
      options.initWeightsPath.empty() ? "seeded " + std::to_string(options.seed)
                                      : "from " + options.initWeightsPath,
      data->describe());
  SessionResult session;
  StepSnapshot before;
  auto start = std::chrono::steady_clock::now();
  StepProgress progress(options.estimateLog, total, start);
  for (int64_t index = 0; index < total; ++index) {
    Batch batch = data->batch(index, trainer->getGlobalBatch());
    bool last = index == total - 1;
    if (options.dumpLastStep && last)
      before = {trainer->getValues().vec(), trainer->getFirstMoments().vec(),
                trainer->getSecondMoments().vec(), batch, index};
    mlir::FailureOr<Trainer::StepResult> result = trainer->step(batch);
    if (mlir::failed(result))
      return failure("step " + llvm::Twine(index + 1) + " failed");
    if (!std::isfinite(result->loss))
      return failure("the loss of step " + llvm::Twine(index + 1) +
                     " is not a number (" +
                     llvm::formatv("{0}", result->loss).str() +
                     "): training diverged, and nothing is saved");
    session.losses.push_back(result->loss);
    if (options.estimateLog)
      progress.afterStep(index + 1);
    if ((index + 1) % options.logEvery == 0 || last)
      log << llvm::formatv("| Train Device=CSX, Step={0}, Loss={1:f5}, "
                           "Rate={2:f2} samples/sec, GlobalRate={2:f2} "
                           "samples/sec\n",
                           index + 1, result->loss, options.samplesPerSecond);
    if (options.dumpLastStep && last)
      session.lastStep = dumpStep(*trainer, before, *result,
                                  options.bf16Storage, options.seed);
  }
  session.hostSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::vector<SafetensorsEntry> entries;
  addParameterEntries(entries, "", trainer->getSpecs(), trainer->getValues());
  llvm::raw_string_ostream os(session.weights);
  printSafetensors(os, entries, {});
  os.flush();
  return session;
}
