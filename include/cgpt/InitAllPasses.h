//===- InitAllPasses.h - register every cgpt pass ---------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_INITALLPASSES_H
#define CGPT_INITALLPASSES_H

#include "cgpt/Dialect/Transformer/Transforms/Passes.h"

namespace cgpt {

inline void registerAllPasses() { transformer::registerTransformerPasses(); }

} // namespace cgpt

#endif // CGPT_INITALLPASSES_H
