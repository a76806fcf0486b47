//===- Placer.h - placing a stage's kernels on the mesh ---------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Placement as a plain C++ class: given the work of each kernel of a stage
// (in dataflow order) and the mesh, return a rectangle per kernel. The
// `wafer-place` pass wraps it; other placers can replace the default.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_WAFER_TRANSFORMS_PLACER_H
#define CGPT_DIALECT_WAFER_TRANSFORMS_PLACER_H

#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <memory>

namespace cgpt::wafer {

struct Rect {
  int64_t x, y, w, h;
};

class Placer {
public:
  virtual ~Placer() = default;
  virtual llvm::StringRef getName() const = 0;
  /// Places kernels of the given `work` (in dataflow order) on disjoint
  /// rectangles that together cover the `width` x `height` mesh. Fails
  /// when there are more kernels than cores.
  virtual mlir::FailureOr<llvm::SmallVector<Rect>>
  place(llvm::ArrayRef<int64_t> work, int64_t width, int64_t height) const = 0;
};

/// The default: a fast constructive placer. Kernels fill horizontal bands
/// in dataflow order, left to right then right to left (a serpentine), so
/// consecutive kernels, which exchange most of the traffic, share an edge;
/// band heights and widths within a band are proportional to work.
class SerpentinePlacer : public Placer {
public:
  llvm::StringRef getName() const override { return "serpentine"; }
  mlir::FailureOr<llvm::SmallVector<Rect>>
  place(llvm::ArrayRef<int64_t> work, int64_t width,
        int64_t height) const override;
};

class DeviceOp;

/// Places the regions of every stage of `device` for `microBatch`: each
/// region is sized for the larger of its share of the stage's FLOPs and
/// the cores its data needs at that micro-batch. Emits an error and fails
/// when a stage has more kernels than the mesh has cores.
mlir::LogicalResult placeDevice(DeviceOp device, const Placer &placer,
                                int64_t microBatch);

/// Splits `total` into one share per weight, each at least 1, the rest in
/// proportion to the weights (largest remainders, ties to the earlier).
llvm::SmallVector<int64_t> apportion(int64_t total,
                                     llvm::ArrayRef<int64_t> weights);

} // namespace cgpt::wafer

#endif // CGPT_DIALECT_WAFER_TRANSFORMS_PLACER_H
