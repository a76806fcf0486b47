//===- Registration.cpp - the behaviour of every kernel -------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Kernels/Registration.h"

#include "KernelModels.h"

void cgpt::registerKernelModels(mlir::DialectRegistry &registry) {
  kernels::registerCommonModels(registry);
  kernels::registerDropoutModels(registry);
  kernels::registerEmbeddingModels(registry);
  kernels::registerLayerNormModels(registry);
  kernels::registerAttentionModels(registry);
  kernels::registerFeedForwardModels(registry);
  kernels::registerLossModels(registry);
  kernels::registerMixtureOfExpertsModels(registry);
  kernels::registerRMSNormModels(registry);
}
