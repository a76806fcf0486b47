//===- LoweringInterface.h - lowering a transformer op ----------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_CONVERSION_TRANSFORMERTODATAFLOW_LOWERINGINTERFACE_H
#define CGPT_CONVERSION_TRANSFORMERTODATAFLOW_LOWERINGINTERFACE_H

#include "cgpt/Conversion/TransformerToDataflow/StepLowering.h"

#include "cgpt/Conversion/TransformerToDataflow/LoweringInterface.h.inc"

#endif // CGPT_CONVERSION_TRANSFORMERTODATAFLOW_LOWERINGINTERFACE_H
