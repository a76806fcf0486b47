//===- InitAllDialects.h - register every cgpt dialect ----------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_INITALLDIALECTS_H
#define CGPT_INITALLDIALECTS_H

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"
#include "cgpt/Dialect/Transformer/IR/Transformer.h"
#include "mlir/IR/DialectRegistry.h"

namespace cgpt {

inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<transformer::TransformerDialect, dataflow::DataflowDialect>();
}

} // namespace cgpt

#endif // CGPT_INITALLDIALECTS_H
