//===- HostMemory.h - what a functional run holds on the host ---*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The host memory a functional run needs, estimated from the dataflow
// program before anything is allocated, so that a run too large for the
// machine is refused with the figure instead of dying out of memory.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_EXEC_HOSTMEMORY_H
#define CGPT_EXEC_HOSTMEMORY_H

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"

namespace cgpt::exec {

/// What a functional run of `program` holds, in bytes: every parameter in
/// f32 with its gradient and two AdamW moments (and the bf16-rounded copy
/// it streams with `bf16Storage`), and every tensor one pass of
/// `microBatch` sequences makes, in f32: the executor keeps a pass's
/// tensors until the pass ends.
double estimateFunctionalBytes(dataflow::ProgramOp program, int64_t parameters,
                               int64_t microBatch, bool bf16Storage);

} // namespace cgpt::exec

#endif // CGPT_EXEC_HOSTMEMORY_H
