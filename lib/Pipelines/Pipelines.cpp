//===- Pipelines.cpp - cgpt's pass pipelines ------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Pipelines/Pipelines.h"

#include "cgpt/Conversion/Passes.h"
#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"
#include "cgpt/Dialect/Dataflow/Transforms/Passes.h"
#include "cgpt/Dialect/Transformer/IR/Transformer.h"
#include "cgpt/Dialect/Wafer/IR/Wafer.h"
#include "cgpt/Dialect/Wafer/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace cgpt {

void buildLowerToDataflowPipeline(OpPassManager &pm,
                                  const LowerToDataflowOptions &options) {
  ConvertTransformerToDataflowOptions convert;
  convert.recompute = options.recompute;
  pm.addPass(createConvertTransformerToDataflow(convert));
  dataflow::DataflowTileOptions tile;
  tile.target = options.target;
  pm.nest<dataflow::ProgramOp>().addPass(dataflow::createDataflowTile(tile));
}

void buildDataflowToWaferPipeline(OpPassManager &pm,
                                  const LowerToDataflowOptions &options) {
  pm.addPass(createConvertDataflowToWafer());
  // The wafer passes run on each device: its placement, routes and plan
  // are its own.
  OpPassManager &device = pm.nest<wafer::DeviceOp>();
  wafer::WaferPlanBatchOptions plan;
  plan.placer = options.placer;
  device.addPass(wafer::createWaferPlanBatch(plan));
  device.addPass(wafer::createWaferPlace());
  device.addPass(wafer::createWaferRoute());
  device.addPass(wafer::createWaferCheckMemory());
}

void buildCheckPlacedPipeline(OpPassManager &pm) {
  pm.nest<wafer::DeviceOp>().addPass(wafer::createWaferCheckMemory());
}

void buildLowerToWaferPipeline(OpPassManager &pm,
                               const LowerToDataflowOptions &options) {
  buildLowerToDataflowPipeline(pm, options);
  buildDataflowToWaferPipeline(pm, options);
}

llvm::StringRef stringifyPhase(Phase phase) {
  switch (phase) {
  case Phase::Transformer:
    return "transformer";
  case Phase::Dataflow:
    return "dataflow";
  case Phase::Wafer:
    return "wafer";
  }
  return "unknown";
}

FailureOr<Phase> detectPhase(ModuleOp module, Location loc) {
  std::optional<Phase> found;
  int count = 0;
  for (Operation &op : module.getBody()->getOperations()) {
    std::optional<Phase> phase;
    if (isa<transformer::TrainStepOp>(op))
      phase = Phase::Transformer;
    else if (isa<dataflow::ProgramOp>(op))
      phase = Phase::Dataflow;
    else if (isa<wafer::DeviceOp>(op))
      phase = Phase::Wafer;
    if (phase) {
      found = phase;
      ++count;
    }
  }
  if (count != 1)
    return emitError(loc) << "expected one transformer.train_step, "
                             "dataflow.program or wafer.device in the "
                             "module, found "
                          << count;
  return *found;
}

void buildPipeline(OpPassManager &pm, Phase from, Phase to,
                   const LowerToDataflowOptions &options) {
  assert(from <= to && "a pipeline only lowers");
  if (from == Phase::Transformer && to >= Phase::Dataflow)
    buildLowerToDataflowPipeline(pm, options);
  if (from <= Phase::Dataflow && to == Phase::Wafer)
    buildDataflowToWaferPipeline(pm, options);
}

void registerPipelines() {
  PassPipelineRegistration<LowerToDataflowOptions>(
      "cgpt-lower-to-dataflow",
      "Lowers a transformer training step to tiled dataflow kernels",
      buildLowerToDataflowPipeline);
  PassPipelineRegistration<LowerToDataflowOptions>(
      "cgpt-lower-to-wafer",
      "Lowers a transformer training step to placed, routed wafer IR with "
      "its micro-batch planned",
      buildLowerToWaferPipeline);
}

} // namespace cgpt
