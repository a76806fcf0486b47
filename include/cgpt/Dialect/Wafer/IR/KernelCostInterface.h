//===- KernelCostInterface.h - what a kernel's cost depends on --*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The plain values a kernel's time on the mesh is a function of: the
// region's shape, the rectangle and layout it was placed with, the
// micro-batch and the target. The standard algorithms of the six kernel
// kinds (Analysis/KernelCost.h) and a kernel's own cost model
// (KernelCostOpInterface) both read them.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_WAFER_IR_KERNELCOSTINTERFACE_H
#define CGPT_DIALECT_WAFER_IR_KERNELCOSTINTERFACE_H

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"

#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace cgpt::target {
class WaferTargetModel;
} // namespace cgpt::target

#include "cgpt/Dialect/Wafer/IR/WaferEnums.h.inc"

namespace cgpt::wafer {

/// The kind of work a region's kernel does: the dataflow kernel's own,
/// which the region records (one enum for both dialects).
using dataflow::KernelKind;
using dataflow::stringifyKernelKind;
using dataflow::symbolizeKernelKind;

/// A rectangle of cores: origin (x, y), width and height.
struct Rect {
  int64_t x = 0, y = 0, w = 1, h = 1;
  int64_t cores() const { return w * h; }
  bool operator==(const Rect &other) const {
    return x == other.x && y == other.y && w == other.w && h == other.h;
  }
  /// Whether the two rectangles share a core.
  bool overlaps(const Rect &other) const {
    return x < other.x + other.w && other.x < x + w && y < other.y + other.h &&
           other.y < y + h;
  }
};

/// A kernel's data split over its rectangle (`#wafer.layout`): token groups
/// by feature groups (for attention, query blocks by key blocks of each
/// (sequence, head); for resident weights, groups of the weight's output
/// columns by groups of its contracted rows), and where its weights come
/// from.
struct Layout {
  int64_t tokenGroups = 1, featureGroups = 1;
  Edge weights = Edge::none;
  /// Output columns (resident: tokens) a weight kernel sums at once, or
  /// the queries attention takes at once; 0: all of them.
  int64_t sumBlock = 0;
  /// The keys attention takes at once (wafer::AttentionBlock); 0: all of
  /// them, resident.
  int64_t keyBlock = 0;
  bool operator==(const Layout &other) const {
    return tokenGroups == other.tokenGroups &&
           featureGroups == other.featureGroups && weights == other.weights &&
           sumBlock == other.sumBlock && keyBlock == other.keyBlock;
  }
};

/// The token groups `rect` holds at once when each keeps its
/// `featureGroups` on a segment of adjacent cores along one row (the row
/// its partial sums and statistics pass along): whole segments side by
/// side on every row, none when a segment is wider than the rectangle.
/// Every layout a region carries fits its rectangle so (the region's
/// verifier); the cores past the row's last whole segment stay idle.
inline int64_t tokenGroupsOn(const Rect &rect, int64_t featureGroups) {
  if (featureGroups < 1 || featureGroups > rect.w)
    return 0;
  return rect.w / featureGroups * rect.h;
}

/// The rows of `rect` that `tokenGroups` token groups occupy: the segments
/// fill the rectangle's first column of segments top to bottom before the
/// next, so fewer groups than rows leave the rows below them idle, and
/// nothing (a multicast, a chain, a result on its way out) crosses those.
inline int64_t tokenRowsOn(const Rect &rect, int64_t tokenGroups) {
  return std::min(tokenGroups, rect.h);
}

/// The columns of segments that `tokenGroups` token groups occupy on
/// `rect` (tokenRowsOn): a weight gradient's chain runs through each in
/// turn.
inline int64_t segmentColumnsOn(const Rect &rect, int64_t tokenGroups) {
  int64_t rows = tokenRowsOn(rect, tokenGroups);
  return rows < 1 ? 1 : (tokenGroups + rows - 1) / rows;
}

/// A kernel whose mesh program is its own algorithm, read from the
/// region's kernel: a norm, its gradient, the loss or its gradient, an
/// elementwise map (the region's `map`), the embedding's lookup or a
/// table's gradient (`scatterAdd`: the token embedding's, by token id, or
/// the learned positions', by position); and attention's forward or
/// backward pass, read from the kernels fused into its region (the
/// backward one fuses the softmax's gradient). The other row kernels'
/// programs run their executed FLOPs as vector operations
/// (docs/runtime.md).
enum class RowFunction : uint8_t {
  other,
  map,
  layerNorm,
  rmsNorm,
  layerNormGrad,
  rmsNormGrad,
  crossEntropy,
  crossEntropyGrad,
  attention,
  attentionGrad,
  gather,
  scatterAdd,
};

/// Whether `function` is a norm's gradient, whose gain (and shift)
/// gradients sum over the tokens.
inline bool isNormGradient(RowFunction function) {
  return function == RowFunction::layerNormGrad ||
         function == RowFunction::rmsNormGrad;
}

/// What the timing model needs of one kernel: a region's attributes.
/// One map of a weight matmul's epilogue (#wafer.epilogue_map): its kind,
/// the input that takes the running value, and whether that value is kept
/// (read beyond the map), the map's result then going beside it.
struct EpilogueMap {
  dataflow::MapKind kind = dataflow::MapKind::add;
  int running = 0;
  bool kept = false;
};

struct KernelShape {
  KernelKind kind = KernelKind::elementwise;
  /// Per sequence: [rows, columns, contracted] and executed FLOPs.
  int64_t rows = 1, columns = 1, contracted = 1, flops = 0;
  int64_t elementBytes = 2, weightBytes = 0, accumulator = 0;
  int64_t chunks = 1, repeats = 1;
  /// Routed experts run one pass each (0: not a routed kernel), each on
  /// `expertRows` rows of the micro-batch (0: not planned yet; the
  /// expected largest load is derived).
  int64_t experts = 0, expertRows = 0;
  RowFunction function = RowFunction::other;
  /// RowFunction::map's function.
  dataflow::MapKind map = dataflow::MapKind::add;
  /// A lookup's fused learned positions (a dataflow.add_positions in its
  /// region): the rows of their table its program streams after the token
  /// table, the sequence's (the others are never read); 0 without.
  int64_t positionRows = 0;
  /// The router's choice after its product (a dataflow.route region): the
  /// `choices` of a token's `columns` experts (0 for any other kernel), a
  /// null expert's fixed logit, and whether the logits round to the
  /// stored 16-bit element first.
  int64_t choices = 0;
  std::optional<double> nullLogit;
  bool roundLogits = false;
  /// A weight matmul's bias and scale, and the maps of its epilogue on
  /// each core's part of its outputs (the region's `bias`, `scale` and
  /// `epilogue`).
  bool bias = false;
  std::optional<double> scale;
  llvm::SmallVector<EpilogueMap, 2> epilogue;
};

/// The time of one kernel run, in cycles, by bound: a core's tasks and
/// operations one after another, each vector operation at its SIMD width
/// (`compute`) or held to the SRAM ports' rate (`sram`, never less); the
/// wavelets its ramp takes in (`fabric`).
struct KernelTime {
  double compute = 0, fabric = 0, sram = 0;
  /// Configuring the kernel and filling and draining its streams.
  double fixed = 0;
  double cycles() const { return std::max({compute, fabric, sram}) + fixed; }
  /// The time of `runs` runs one after another: every bound and the fixed
  /// cost repeat.
  KernelTime &operator*=(double runs) {
    compute *= runs;
    fabric *= runs;
    sram *= runs;
    fixed *= runs;
    return *this;
  }
  /// The time of this run and then `next`.
  KernelTime &operator+=(const KernelTime &next) {
    compute += next.compute;
    fabric += next.fabric;
    sram += next.sram;
    fixed += next.fixed;
    return *this;
  }
  /// "compute", "fabric" or "sram": the largest bound.
  const char *bound() const;
};

/// One kernel placed: what its time is a function of.
struct KernelCostQuery {
  const KernelShape &shape;
  Layout layout;
  Rect rect;
  int64_t microBatch;
  const target::WaferTargetModel &target;
};

} // namespace cgpt::wafer

#include "cgpt/Dialect/Wafer/IR/KernelCostInterface.h.inc"

#endif // CGPT_DIALECT_WAFER_IR_KERNELCOSTINTERFACE_H
