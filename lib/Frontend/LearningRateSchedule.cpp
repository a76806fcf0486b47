//===- LearningRateSchedule.cpp - learning-rate schedules -----------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Model Zoo's learning-rate schedules, in both the params files' and the
// trainer's spellings, as phases of a ScheduleKind.
//
//===----------------------------------------------------------------------===//

#include "ModelReader.h"

using namespace mlir;
using llvm::StringRef;
using namespace cgpt::training;

namespace cgpt::frontend::detail {

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

} // namespace cgpt::frontend::detail
