//===- Pipelines.cpp - cgpt's pass pipelines -------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Pipelines/Pipelines.h"

#include "cgpt/Conversion/Passes.h"
#include "cgpt/Dialect/Dataflow/Transforms/Passes.h"

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

void registerPipelines() {
  PassPipelineRegistration<LowerToDataflowOptions>(
      "cgpt-lower-to-dataflow",
      "Lowers a transformer training step to tiled dataflow kernels",
      buildLowerToDataflowPipeline);
}

} // namespace cgpt
