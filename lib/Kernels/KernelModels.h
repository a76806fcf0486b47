//===- KernelModels.h - attaching kernel behaviour to ops -------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Each file of lib/Kernels holds the compiler's half of one family of ops:
// the lowering of its transformer op (forward and hand-derived backward)
// to the dataflow kernels. The templates below turn a family's plain
// functions into external models of DataflowLoweringOpInterface. (A
// kernel's cost and tiling space are methods of the dataflow op itself,
// in DataflowOps.cpp; its execution with real numbers is the executor's,
// lib/Exec/ExecutionModels.cpp.)
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_LIB_KERNELS_KERNELMODELS_H
#define CGPT_LIB_KERNELS_KERNELMODELS_H

#include "cgpt/Conversion/TransformerToDataflow/LoweringInterface.h"

#include "mlir/IR/DialectRegistry.h"

namespace cgpt::kernels {

/// The lowering of transformer op `OpTy` by `Family::forward(op, s)` and
/// `Family::backward(op, saved, s)`.
template <typename OpTy, typename Family>
struct LoweringModel
    : DataflowLoweringOpInterface::ExternalModel<LoweringModel<OpTy, Family>,
                                                 OpTy> {
  mlir::FailureOr<SavedActivations> lowerForward(mlir::Operation *op,
                                                 StepLowering &s) const {
    return Family::forward(llvm::cast<OpTy>(op), s);
  }
  mlir::LogicalResult lowerBackward(mlir::Operation *op,
                                    llvm::ArrayRef<mlir::Value> saved,
                                    StepLowering &s) const {
    return Family::backward(llvm::cast<OpTy>(op), saved, s);
  }
};

/// Attaches the lowering of `OpTy` by `Family` whenever the transformer
/// dialect is loaded.
template <typename OpTy, typename Family>
void attachLowering(mlir::DialectRegistry &registry) {
  registry.addExtension(
      +[](mlir::MLIRContext *context, transformer::TransformerDialect *) {
        OpTy::template attachInterface<LoweringModel<OpTy, Family>>(*context);
      });
}

/// A feed-forward activation and its derivative as elementwise map kinds
/// (FeedForward.cpp; the experts of a mixture use them too).
std::pair<dataflow::MapKind, dataflow::MapKind>
activationMaps(transformer::Activation activation);

// One per family file.
void registerCommonModels(mlir::DialectRegistry &registry);
void registerDropoutModels(mlir::DialectRegistry &registry);
void registerEmbeddingModels(mlir::DialectRegistry &registry);
void registerLayerNormModels(mlir::DialectRegistry &registry);
void registerAttentionModels(mlir::DialectRegistry &registry);
void registerFeedForwardModels(mlir::DialectRegistry &registry);
void registerLossModels(mlir::DialectRegistry &registry);
void registerMixtureOfExpertsModels(mlir::DialectRegistry &registry);
void registerRMSNormModels(mlir::DialectRegistry &registry);

} // namespace cgpt::kernels

#endif // CGPT_LIB_KERNELS_KERNELMODELS_H
