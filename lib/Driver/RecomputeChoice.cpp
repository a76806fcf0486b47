//===- RecomputeChoice.cpp - weighing the recompute policies --------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Which activations a layer's backward stage rebuilds decides the dataflow
// program, before any plan exists; the plan decides whether the memory it
// saves is worth the FLOPs it costs. So, unless the user names a policy,
// each candidate is lowered and planned whole, quietly, and the one whose
// planned step predicts the most samples per second wins: recompute=layer
// unless recompute=tensor's late rebuilds let a larger, faster micro-batch
// fit, or fit where layer does not (docs/dataflow.md, "Recompute policy").
//
//===----------------------------------------------------------------------===//

#include "cgpt/Driver/CompileSession.h"

#include "cgpt/Dialect/Wafer/Analysis/CheckpointPolicy.h"
#include "cgpt/Dialect/Wafer/Analysis/Schedule.h"
#include "cgpt/Dialect/Wafer/Analysis/StepProgram.h"
#include "cgpt/Dialect/Wafer/IR/Wafer.h"
#include "cgpt/Target/WaferTargetModel.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace cgpt;
using namespace cgpt::driver;

/// Samples per second of the planned step `device` predicts.
static std::optional<double> plannedSamplesPerSecond(wafer::DeviceOp device) {
  FailureOr<wafer::PlacedStep> placed = wafer::PlacedStep::read(device);
  if (failed(placed) || !device.getCheckpoint())
    return std::nullopt;
  wafer::StepEstimate estimate = wafer::estimateStep(
      placed->program,
      wafer::TimedPlacement::of(placed->program, placed->placement,
                                device.getMicroBatch()),
      wafer::CheckpointPolicy::fromAttr(*device.getCheckpoint()));
  return estimate.samplesPerSecond;
}

void CompileSession::chooseRecompute(ModuleOp module, std::string &why) {
  why.clear();
  chosen.reset();
  if (options.recompute) {
    recompute = *options.recompute;
    return;
  }
  recompute = dataflow::Recompute::layer;
  // A target that cannot be read is said once, here, not swallowed by the
  // quiet trials (it is loaded once per context).
  if (failed(target::WaferTargetModel::loadShared(
          options.target.value_or(kDefaultTarget.str()), &context)))
    return;
  const dataflow::Recompute candidates[] = {dataflow::Recompute::layer,
                                            dataflow::Recompute::tensor};
  struct Trial {
    std::optional<double> rate;
    Lowered lowered;
    /// Whether its lowering said anything (a warning, a note).
    bool spoke = false;
  };
  Trial trials[std::size(candidates)];
  for (auto [candidate, trial] : llvm::zip(candidates, trials)) {
    // Said again by the chosen policy's own lowering, when it speaks.
    ScopedDiagnosticHandler quiet(&context, [&trial = trial](Diagnostic &) {
      trial.spoke = true;
      return success();
    });
    auto run = [&](ModuleOp ir, Phase from, Phase to) {
      PassManager pm(&context);
      LowerToDataflowOptions lowering;
      setLoweringOptions(lowering, {}, candidate);
      buildPipeline(pm, from, to, lowering);
      return pm.run(ir);
    };
    trial.lowered.dataflow = module.clone();
    if (failed(
            run(*trial.lowered.dataflow, Phase::Transformer, Phase::Dataflow)))
      continue;
    trial.lowered.wafer = trial.lowered.dataflow->clone();
    if (failed(run(*trial.lowered.wafer, Phase::Dataflow, Phase::Wafer)))
      continue;
    trial.rate = plannedSamplesPerSecond(
        *trial.lowered.wafer->getOps<wafer::DeviceOp>().begin());
  }
  // Layer unless the other predicts more (or alone fits): it keeps fewer
  // kernels for the same result.
  size_t best = 0;
  for (size_t i = 1; i < std::size(candidates); ++i)
    if (trials[i].rate &&
        (!trials[best].rate || *trials[i].rate > *trials[best].rate))
      best = i;
  recompute = candidates[best];
  if (!trials[best].rate)
    return;
  for (size_t i = 0; i < std::size(candidates); ++i) {
    if (i == best)
      continue;
    why += (why.empty() ? "" : ", ");
    why += "weighed against " +
           dataflow::stringifyRecompute(candidates[i]).str() + ": ";
    why += trials[i].rate ? llvm::formatv("{0:f2} samples/s against {1:f2}",
                                          *trials[i].rate, *trials[best].rate)
                                .str()
                          : std::string("does not fit");
  }
  // Lowered again only to say what it said, or under MLIR's pass options.
  if (!trials[best].spoke && !options.mlirCommandLine)
    chosen = std::move(trials[best].lowered);
}
