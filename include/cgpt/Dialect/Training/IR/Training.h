//===- Training.h - shared training attributes ------------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_TRAINING_IR_TRAINING_H
#define CGPT_DIALECT_TRAINING_IR_TRAINING_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"

namespace cgpt::training {
/// Parses an f64 written by `printExactDouble` (or any float literal).
mlir::FailureOr<llvm::APFloat> parseExactDouble(mlir::AsmParser &parser);
/// Prints the shortest decimal form of `value` that reads back exactly.
void printExactDouble(mlir::AsmPrinter &printer, const llvm::APFloat &value);
} // namespace cgpt::training

#include "cgpt/Dialect/Training/IR/TrainingDialect.h.inc"
#include "cgpt/Dialect/Training/IR/TrainingEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "cgpt/Dialect/Training/IR/TrainingAttrs.h.inc"

#endif // CGPT_DIALECT_TRAINING_IR_TRAINING_H
