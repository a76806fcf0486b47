//===- InitAllPasses.h - register every cgpt pass ---------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_INITALLPASSES_H
#define CGPT_INITALLPASSES_H

#include "cgpt/Conversion/Passes.h"
#include "cgpt/Dialect/Dataflow/Transforms/Passes.h"
#include "cgpt/Dialect/Transformer/Transforms/Passes.h"
#include "cgpt/Dialect/Wafer/Transforms/Passes.h"
#include "cgpt/Pipelines/Pipelines.h"

namespace cgpt {

inline void registerAllPasses() {
  registerCGPTConversionPasses();
  dataflow::registerDataflowPasses();
  transformer::registerTransformerPasses();
  wafer::registerWaferPasses();
  registerPipelines();
}

} // namespace cgpt

#endif // CGPT_INITALLPASSES_H
