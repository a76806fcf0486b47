//===- PlacementKeys.h - what makes two placements alike --------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The layers of a model are alike: StepProgram numbers the classes of
// regions and stages by these keys, everything a region's cost and a
// stage's placement depend on, so that the placers and the layout search
// decide once a class and reuse the decision.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_LIB_DIALECT_WAFER_ANALYSIS_PLACEMENTKEYS_H
#define CGPT_LIB_DIALECT_WAFER_ANALYSIS_PLACEMENTKEYS_H

#include "cgpt/Dialect/Wafer/Analysis/StepProgram.h"

#include <vector>

namespace cgpt::wafer::detail {

/// Appends what `region`'s time depends on besides its placement to
/// `key`: its kernel (a kernel may have a cost model of its own) and every
/// field of its shape.
inline void appendCostKey(const ProgramRegion &region,
                          std::vector<int64_t> &key) {
  const KernelShape &k = region.shape;
  key.insert(key.end(),
             {reinterpret_cast<intptr_t>(
                  region.op.getKernelAttr().getAsOpaquePointer()),
              static_cast<int64_t>(k.kind), k.rows, k.columns, k.contracted,
              k.flops, k.elementBytes, k.weightBytes, k.accumulator, k.chunks,
              k.repeats, k.experts, k.expertRows});
}

/// Appends what `region`'s cost and grouping depend on to `key`.
inline void appendRegionKey(const ProgramRegion &region,
                            std::vector<int64_t> &key) {
  appendCostKey(region, key);
  key.insert(key.end(), {region.ingressBytes > 0 ? 1 : 0,
                         static_cast<int64_t>(region.reads.size())});
  key.insert(key.end(), region.reads.begin(), region.reads.end());
}

/// Everything a stage's placement depends on.
inline std::vector<int64_t> stageKey(const ProgramStage &stage) {
  std::vector<int64_t> key;
  for (const ProgramRegion &region : stage.regions)
    appendRegionKey(region, key);
  return key;
}

/// Splits `width` columns among parts: each its `minimum` (at least one
/// column; the minimums must add up to at most `width`), and the columns
/// left over in proportion to `weights`.
inline std::vector<int64_t> shareColumns(int64_t width,
                                         llvm::ArrayRef<double> weights,
                                         llvm::ArrayRef<int64_t> minimum = {}) {
  auto parts = static_cast<int64_t>(weights.size());
  std::vector<int64_t> widths(weights.size(), 1);
  int64_t spare = width;
  for (auto [i, w] : llvm::enumerate(widths)) {
    if (i < minimum.size())
      w = std::max<int64_t>(1, minimum[i]);
    spare -= w;
  }
  double total = 0;
  for (double weight : weights)
    total += weight;
  int64_t given = 0;
  std::vector<std::pair<double, size_t>> remainders;
  for (auto [i, weight] : llvm::enumerate(weights)) {
    double share =
        total > 0 ? spare * weight / total : static_cast<double>(spare) / parts;
    auto whole = static_cast<int64_t>(share);
    widths[i] += whole;
    given += whole;
    remainders.push_back({share - static_cast<double>(whole), i});
  }
  // The columns left by rounding go to the largest remainders, the
  // earlier part first on a tie.
  std::stable_sort(
      remainders.begin(), remainders.end(),
      [](const auto &a, const auto &b) { return a.first > b.first; });
  for (size_t i = 0; given < spare; ++i, ++given)
    ++widths[remainders[i % remainders.size()].second];
  return widths;
}

} // namespace cgpt::wafer::detail

#endif // CGPT_LIB_DIALECT_WAFER_ANALYSIS_PLACEMENTKEYS_H
