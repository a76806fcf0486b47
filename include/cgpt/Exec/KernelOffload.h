//===- KernelOffload.h - kernels a step runs elsewhere ----------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The functional executor computes every kernel itself unless it is given
// a KernelOffload: then each kernel placed as a wafer region is offered to
// it first, with the region the wafer IR places it in, and what it takes
// it computes from the micro-batch's frame instead (the cycle-level mesh
// running a placed weight kernel with real values:
// cgpt/Sim/Mesh/MeshKernelOffload.h). A run may take kernels fused into
// its region as well, which the executor then skips.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_EXEC_KERNELOFFLOAD_H
#define CGPT_EXEC_KERNELOFFLOAD_H

#include "cgpt/Dialect/Wafer/IR/Wafer.h"
#include "cgpt/Exec/KernelFrame.h"

namespace cgpt::exec {

class KernelOffload {
public:
  virtual ~KernelOffload() = default;
  /// Runs `op`, placed as `region`, for the frame's `sequences`: reads its
  /// operands from `frame` and sets its results. Returns false when it does
  /// not take the kernel (the executor then runs it), failure with a
  /// diagnostic when it takes it and cannot run it.
  virtual mlir::FailureOr<bool> run(mlir::Operation *op, wafer::RegionOp region,
                                    KernelFrame &frame, int64_t sequences) = 0;
  /// Runs `op`, a kernel fused into a region after its first, when the
  /// region's run took it (or left it to run now, its operands read from
  /// `frame`) and sets its results: true, and the executor skips it;
  /// false when the executor runs it; failure with a diagnostic when it
  /// takes it and cannot run it.
  virtual mlir::FailureOr<bool> runFused(mlir::Operation *op,
                                         KernelFrame &frame) {
    return false;
  }
};

} // namespace cgpt::exec

#endif // CGPT_EXEC_KERNELOFFLOAD_H
