//===- Passes.h - conversions between cgpt dialects -------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_CONVERSION_PASSES_H
#define CGPT_CONVERSION_PASSES_H

#include "cgpt/Conversion/DataflowToWafer/DataflowToWafer.h"
#include "cgpt/Conversion/TransformerToDataflow/TransformerToDataflow.h"

namespace cgpt {

#define GEN_PASS_REGISTRATION
#include "cgpt/Conversion/Passes.h.inc"

} // namespace cgpt

#endif // CGPT_CONVERSION_PASSES_H
