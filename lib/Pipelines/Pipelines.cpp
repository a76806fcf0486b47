//===- Pipelines.cpp - cgpt's pass pipelines ------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Pipelines/Pipelines.h"

#include "cgpt/Conversion/Passes.h"
#include "cgpt/Dialect/Dataflow/Transforms/Passes.h"
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
  pm.addPass(dataflow::createDataflowTile(tile));
}

void buildDataflowToWaferPipeline(OpPassManager &pm) {
  pm.addPass(createConvertDataflowToWafer());
  pm.addPass(wafer::createWaferPlanBatch());
  pm.addPass(wafer::createWaferPlace());
  pm.addPass(wafer::createWaferRoute());
  pm.addPass(wafer::createWaferCheckMemory());
}

void buildLowerToWaferPipeline(OpPassManager &pm,
                               const LowerToDataflowOptions &options) {
  buildLowerToDataflowPipeline(pm, options);
  buildDataflowToWaferPipeline(pm);
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
