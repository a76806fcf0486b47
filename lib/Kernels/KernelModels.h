//===- KernelModels.h - attaching kernel behaviour to ops -------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Each file of lib/Kernels holds one family of ops in one place: the
// lowering of its transformer op (forward and hand-derived backward) and
// the functional execution of the dataflow kernels that lowering creates.
// The templates below turn a family's plain functions into the external
// models of DataflowLoweringOpInterface and ExecutableKernelOpInterface.
// (A kernel's cost and tiling space are methods of the dataflow op itself:
// KernelOpInterface, in DataflowOps.cpp.)
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_LIB_KERNELS_KERNELMODELS_H
#define CGPT_LIB_KERNELS_KERNELMODELS_H

#include "cgpt/Conversion/TransformerToDataflow/LoweringInterface.h"
#include "cgpt/Exec/ExecutableKernel.h"

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

/// Which results of a kernel stay f32 when streams are stored in bf16.
enum class F32Results {
  none,
  /// All but the first: row statistics next to a normalized stream.
  statistics,
  all,
};

/// The execution of dataflow kernel `OpTy` by `Execute(op, frame, tile)`.
template <typename OpTy, auto Execute, F32Results KeptF32 = F32Results::none>
struct ExecutionModel : exec::ExecutableKernelOpInterface::ExternalModel<
                            ExecutionModel<OpTy, Execute, KeptF32>, OpTy> {
  mlir::LogicalResult execute(mlir::Operation *op, exec::KernelFrame &frame,
                              llvm::ArrayRef<int64_t> tile) const {
    return Execute(llvm::cast<OpTy>(op), frame, tile);
  }
  bool keepsF32Result(mlir::Operation *, unsigned index) const {
    return KeptF32 == F32Results::all ||
           (KeptF32 == F32Results::statistics && index != 0);
  }
};

/// Attaches `Model` to `OpTy` whenever `DialectTy` is loaded.
template <typename DialectTy, typename OpTy, typename Model>
void attachModel(mlir::DialectRegistry &registry) {
  registry.addExtension(+[](mlir::MLIRContext *context, DialectTy *) {
    OpTy::template attachInterface<Model>(*context);
  });
}

template <typename OpTy, typename Family>
void attachLowering(mlir::DialectRegistry &registry) {
  attachModel<transformer::TransformerDialect, OpTy,
              LoweringModel<OpTy, Family>>(registry);
}

template <typename OpTy, auto Execute, F32Results KeptF32 = F32Results::none>
void attachExecution(mlir::DialectRegistry &registry) {
  attachModel<dataflow::DataflowDialect, OpTy,
              ExecutionModel<OpTy, Execute, KeptF32>>(registry);
}

/// `scale` when the kernel has one, else 1.
inline float scaleOr1(std::optional<llvm::APFloat> scale) {
  return scale ? static_cast<float>(scale->convertToDouble()) : 1.0f;
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
