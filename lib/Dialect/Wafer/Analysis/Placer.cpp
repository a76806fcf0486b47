//===- Placer.cpp - the placers by name -----------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/Analysis/Placer.h"

namespace cgpt::wafer {

Placer::~Placer() = default;

llvm::ArrayRef<llvm::StringRef> getPlacerNames() {
  static const llvm::StringRef names[] = {"whole-mesh", "side-by-side",
                                          "pipelined"};
  return names;
}

llvm::ArrayRef<llvm::StringRef> getDefaultPlacerNames() {
  return getPlacerNames().take_front(2);
}

std::unique_ptr<Placer> createPlacer(llvm::StringRef name) {
  if (name == "whole-mesh")
    return createWholeMeshPlacer();
  if (name == "side-by-side")
    return createSideBySidePlacer();
  if (name == "pipelined")
    return createPipelinedPlacer();
  return nullptr;
}

} // namespace cgpt::wafer
