//===- StepRegion.h - the (tokens, labels) region of a step -----*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// `transformer.train_step` and `dataflow.micro_batch_loop` both hold one
// region that takes the token ids and labels of a micro-batch. They print it
// alike: `(%tokens: T, %labels: T) attributes {...} { body }`.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SUPPORT_STEPREGION_H
#define CGPT_SUPPORT_STEPREGION_H

#include "mlir/IR/OpImplementation.h"

namespace cgpt {

/// Parses `(%a: T, ...) attributes {...} { ... }` into `result`.
mlir::ParseResult parseStepRegion(mlir::OpAsmParser &parser,
                                  mlir::OperationState &result);

/// Prints `op`'s region in the form parseStepRegion reads, leaving out the
/// attributes named in `elided`.
void printStepRegion(mlir::OpAsmPrinter &printer, mlir::Operation *op,
                     mlir::Region &region,
                     llvm::ArrayRef<llvm::StringRef> elided = {});

/// Names the region's arguments %tokens and %labels.
void nameStepArguments(mlir::Region &region, mlir::OpAsmSetValueNameFn setName);

} // namespace cgpt

#endif // CGPT_SUPPORT_STEPREGION_H
