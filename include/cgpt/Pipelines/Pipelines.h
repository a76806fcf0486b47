//===- Pipelines.h - cgpt's pass pipelines ----------------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The pipelines from a training step down each stage. cgpt-run and
// cgpt-opt (`--cgpt-lower-to-dataflow`) build them from here, so both run
// the same passes with the same options.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_PIPELINES_PIPELINES_H
#define CGPT_PIPELINES_PIPELINES_H

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace cgpt {

struct LowerToDataflowOptions
    : public mlir::PassPipelineOptions<LowerToDataflowOptions> {
  Option<std::string> target{
      *this, "target",
      llvm::cl::desc("Target: wse2, wse3, mini, or a target file"),
      llvm::cl::init("wse2")};
  Option<dataflow::Recompute> recompute{
      *this, "recompute",
      llvm::cl::desc("Which activations the backward pass recomputes"),
      llvm::cl::init(dataflow::Recompute::layer),
      llvm::cl::values(
          clEnumValN(dataflow::Recompute::none, "none",
                     "keep every activation the backward pass reads"),
          clEnumValN(dataflow::Recompute::layer, "layer",
                     "keep each layer's input, recompute the rest"),
          clEnumValN(dataflow::Recompute::tensor, "tensor",
                     "as layer, and rebuild late the recomputed tensors "
                     "live across the stage's peak"))};
  Option<std::string> placer{
      *this, "placer",
      llvm::cl::desc("The placers the batch planner weighs: auto, "
                     "whole-mesh, side-by-side or pipelined"),
      llvm::cl::init("auto")};
};

/// The level a module of cgpt's IR stands at, by the op it holds.
enum class Phase { Transformer, Dataflow, Wafer };
llvm::StringRef stringifyPhase(Phase phase);

/// The phase of `module`: it must hold exactly one transformer.train_step,
/// dataflow.program or wafer.device (and nothing else of the three); fails
/// with a diagnostic at `loc` otherwise.
mlir::FailureOr<Phase> detectPhase(mlir::ModuleOp module, mlir::Location loc);

/// Adds the passes that take a module from `from` to `to` (none when they
/// are equal; `to` must not be above `from`). As IREE's buildPipeline does,
/// so that every tool lowers from wherever its input stands.
void buildPipeline(mlir::OpPassManager &pm, Phase from, Phase to,
                   const LowerToDataflowOptions &options);

/// transformer -> dataflow: convert-transformer-to-dataflow, dataflow-tile.
void buildLowerToDataflowPipeline(mlir::OpPassManager &pm,
                                  const LowerToDataflowOptions &options);

/// dataflow -> wafer: convert-dataflow-to-wafer, wafer-plan-batch (weighing
/// `options.placer`), wafer-place (with the placer and micro-batch
/// planned), wafer-route, wafer-check-memory.
void buildDataflowToWaferPipeline(mlir::OpPassManager &pm,
                                  const LowerToDataflowOptions &options);

/// Placed wafer IR from elsewhere (a file, an edit): wafer-check-memory,
/// which refuses a region without a placement and one whose cores would
/// hold more than their SRAM, before anything runs it.
void buildCheckPlacedPipeline(mlir::OpPassManager &pm);

/// transformer -> wafer: the two pipelines above, one after the other.
void buildLowerToWaferPipeline(mlir::OpPassManager &pm,
                               const LowerToDataflowOptions &options);

/// Registers `cgpt-lower-to-dataflow` and `cgpt-lower-to-wafer` with the
/// pass registry.
void registerPipelines();

} // namespace cgpt

#endif // CGPT_PIPELINES_PIPELINES_H
