//===- KernelFrame.h - the values of one micro-batch's run ------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// What a kernel's functional execution reads and writes: the tensor of
// every stream computed so far in the micro-batch, the token ids and
// labels, the sequence length, and where its dropout masks come from.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_EXEC_KERNELFRAME_H
#define CGPT_EXEC_KERNELFRAME_H

#include "cgpt/Exec/Dropout.h"
#include "cgpt/Exec/Kernels.h"

#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"

#include <memory>

namespace cgpt::exec {

class KernelFrame {
public:
  using TensorRef = std::shared_ptr<const Tensor>;

  KernelFrame(const IdTensor &tokens, const IdTensor &labels, int64_t seqLen)
      : ids{&tokens, &labels}, seqLen(seqLen) {}

  /// The tensor of a stream computed earlier in the micro-batch.
  const Tensor &operator[](mlir::Value value) const {
    return *tensors.at(value);
  }
  TensorRef ref(mlir::Value value) const { return tensors.at(value); }
  /// The token ids (the loop's first argument) or the labels (its second).
  const IdTensor &idsOf(mlir::Value value) const {
    return *ids[llvm::cast<mlir::BlockArgument>(value).getArgNumber()];
  }
  void set(mlir::Value value, TensorRef tensor) {
    tensors[value] = std::move(tensor);
  }
  void set(mlir::Value value, Tensor tensor) {
    tensors[value] = std::make_shared<const Tensor>(std::move(tensor));
  }
  int64_t getSeqLen() const { return seqLen; }
  /// True when streams are stored in bfloat16 (the executor rounds every
  /// result); a kernel that rounds within itself asks.
  bool storesBF16() const { return bf16Storage; }
  void setStoresBF16(bool stores) { bf16Storage = stores; }
  /// Where this micro-batch's dropout masks come from.
  const DropoutStream &getDropoutStream() const { return dropoutStream; }
  void setDropoutStream(DropoutStream stream) { dropoutStream = stream; }

private:
  llvm::DenseMap<mlir::Value, TensorRef> tensors;
  const IdTensor *ids[2];
  int64_t seqLen;
  DropoutStream dropoutStream;
  bool bf16Storage = false;
};

} // namespace cgpt::exec

#endif // CGPT_EXEC_KERNELFRAME_H
