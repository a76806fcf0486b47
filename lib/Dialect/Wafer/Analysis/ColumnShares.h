//===- ColumnShares.h - a mesh's columns shared among regions ---*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The placers that put regions side by side (the side-by-side and the
// layer-pipelined one) give each a band of the mesh's columns in proportion
// to its work.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_LIB_DIALECT_WAFER_ANALYSIS_COLUMNSHARES_H
#define CGPT_LIB_DIALECT_WAFER_ANALYSIS_COLUMNSHARES_H

#include "llvm/ADT/ArrayRef.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace cgpt::wafer::detail {

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

#endif // CGPT_LIB_DIALECT_WAFER_ANALYSIS_COLUMNSHARES_H
