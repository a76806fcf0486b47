//===- KernelCost.h - a kernel's time on its rectangle ----------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The cost of one kernel on a given rectangle and layout: the largest of its
// compute, fabric and SRAM bounds plus the time to fill and drain its
// streams, from the target's rates (docs/runtime.md). The standard
// algorithm of each kernel kind is here; a kernel with its own algorithm
// brings its cost through KernelCostOpInterface, and KernelCostModel asks
// it first.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_WAFER_ANALYSIS_KERNELCOST_H
#define CGPT_DIALECT_WAFER_ANALYSIS_KERNELCOST_H

#include "cgpt/Dialect/Wafer/IR/Wafer.h"
#include "cgpt/Target/WaferTargetModel.h"

namespace cgpt::wafer {

/// Partial sums and weight gradients are f32.
constexpr int64_t kPartialSumBytes = 4;

/// FMACs per cycle for operands of `elementBytes`: 16-bit operands
/// accumulate in f32 (bf16 storage, f32 accumulation), f32 ones run the
/// f32 FMAC.
int64_t fmacLanes(const target::WaferTargetModel &target,
                  int64_t elementBytes);
/// Elements of `elementBytes` one wavelet carries (two 16-bit values).
int64_t elementsPerWavelet(const target::WaferTargetModel &target,
                           int64_t elementBytes);

/// A region's attributes as the timing model reads them.
KernelShape shapeOf(RegionOp region);

/// The (sequence, head) blocks an attention kernel of `shape` runs at
/// `microBatch` on `cores` cores: of the splits near sqrt(cores per pair)
/// query blocks by key blocks, the one that leaves each core the fewest
/// scores; one core per block when the pairs outnumber the cores.
Layout bestAttentionBlock(const KernelShape &shape, int64_t microBatch,
                          int64_t cores);

/// The time of the standard algorithm of `query.shape.kind` (the one the
/// cycle-level mesh model executes, lib/Sim/Mesh) on `query.rect` with
/// `query.layout`.
KernelTime kernelTime(const KernelCostQuery &query);

/// How the time of a region running one dataflow kernel is found: that
/// op's own KernelCostOpInterface when it has one, else the standard
/// algorithm of the region's kind. Looked up once per region.
class KernelCostModel {
public:
  /// For regions running `kernel` (a dataflow op's name).
  static KernelCostModel forKernel(mlir::StringAttr kernel);
  KernelTime operator()(const KernelCostQuery &query) const;

private:
  const detail::KernelCostOpInterfaceInterfaceTraits::Concept *own = nullptr;
};

} // namespace cgpt::wafer

#endif // CGPT_DIALECT_WAFER_ANALYSIS_KERNELCOST_H
