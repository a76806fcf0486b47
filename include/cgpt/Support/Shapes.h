//===- Shapes.h - shape comparisons shared by the verifiers -----*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SUPPORT_SHAPES_H
#define CGPT_SUPPORT_SHAPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"

namespace cgpt {

/// Two dimensions agree when equal or when either is still symbolic.
inline bool dimsAgree(int64_t a, int64_t b) {
  return a == b || mlir::ShapedType::isDynamic(a) ||
         mlir::ShapedType::isDynamic(b);
}

/// Shapes agree when their ranks match and every dimension agrees.
inline bool shapesAgree(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!dimsAgree(a[i], b[i]))
      return false;
  return true;
}

/// A dimension's extent for one sequence: the symbolic batch counts as 1.
inline int64_t perSequence(int64_t dim) {
  return mlir::ShapedType::isDynamic(dim) ? 1 : dim;
}

/// The product of `dims`, each taken per sequence.
inline int64_t productPerSequence(llvm::ArrayRef<int64_t> dims) {
  int64_t product = 1;
  for (int64_t dim : dims)
    product *= perSequence(dim);
  return product;
}

} // namespace cgpt

#endif // CGPT_SUPPORT_SHAPES_H
