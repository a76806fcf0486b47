//===- Placer.cpp - the serpentine constructive placer --------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/Transforms/Placer.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace mlir;

namespace cgpt::wafer {

llvm::SmallVector<int64_t> apportion(int64_t total,
                                     llvm::ArrayRef<int64_t> weights) {
  size_t n = weights.size();
  llvm::SmallVector<int64_t> shares(n, 1);
  int64_t rest = total - static_cast<int64_t>(n);
  double sum = 0;
  for (int64_t w : weights)
    sum += static_cast<double>(std::max<int64_t>(w, 1));
  llvm::SmallVector<std::pair<double, size_t>> remainders;
  int64_t given = 0;
  for (size_t i = 0; i < n; ++i) {
    double exact = rest * static_cast<double>(std::max<int64_t>(weights[i], 1)) /
                   sum;
    int64_t whole = static_cast<int64_t>(std::floor(exact));
    shares[i] += whole;
    given += whole;
    remainders.push_back({exact - static_cast<double>(whole), i});
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto &a, const auto &b) { return a.first > b.first; });
  for (int64_t i = 0; i < rest - given; ++i)
    ++shares[remainders[i % n].second];
  return shares;
}

/// Splits `work` into `bands` runs of consecutive kernels with about equal
/// work, each run at most `width` kernels long. Returns the run lengths, or
/// nothing when the runs cannot be made short enough.
static std::optional<llvm::SmallVector<size_t>>
splitIntoBands(llvm::ArrayRef<int64_t> work, int64_t bands, int64_t width) {
  double total = 0;
  for (int64_t w : work)
    total += static_cast<double>(std::max<int64_t>(w, 1));
  llvm::SmallVector<size_t> lengths;
  size_t start = 0;
  double done = 0;
  for (int64_t band = 0; band < bands && start < work.size(); ++band) {
    int64_t left = bands - band;
    size_t remaining = work.size() - start;
    double target = total * static_cast<double>(band + 1) / bands;
    size_t length = 0;
    while (start + length < work.size()) {
      // Leave at least one kernel for every later band.
      if (remaining - length <= static_cast<size_t>(left - 1))
        break;
      if (length > 0 &&
          (done >= target || static_cast<int64_t>(length) == width))
        break;
      done += static_cast<double>(std::max<int64_t>(work[start + length], 1));
      ++length;
    }
    lengths.push_back(length);
    start += length;
  }
  if (start < work.size())
    return std::nullopt;
  for (size_t length : lengths)
    if (static_cast<int64_t>(length) > width)
      return std::nullopt;
  return lengths;
}

FailureOr<llvm::SmallVector<Rect>>
SerpentinePlacer::place(llvm::ArrayRef<int64_t> work, int64_t width,
                        int64_t height) const {
  int64_t kernels = static_cast<int64_t>(work.size());
  if (kernels == 0 || kernels > width * height)
    return failure();
  // About square cells: as many bands as the mesh's aspect ratio asks.
  int64_t bands = std::clamp<int64_t>(
      static_cast<int64_t>(std::lround(
          std::sqrt(static_cast<double>(kernels) * height / width))),
      1, std::min(kernels, height));
  std::optional<llvm::SmallVector<size_t>> lengths;
  for (; bands <= std::min(kernels, height); ++bands)
    if ((lengths = splitIntoBands(work, bands, width)))
      break;
  if (!lengths)
    return failure();

  llvm::SmallVector<int64_t> bandWork;
  size_t start = 0;
  for (size_t length : *lengths) {
    int64_t sum = 0;
    for (size_t i = start; i < start + length; ++i)
      sum += std::max<int64_t>(work[i], 1);
    bandWork.push_back(sum);
    start += length;
  }
  llvm::SmallVector<int64_t> heights = apportion(height, bandWork);

  llvm::SmallVector<Rect> rects;
  int64_t y = 0;
  start = 0;
  for (size_t band = 0; band < lengths->size(); ++band) {
    llvm::ArrayRef<int64_t> members = work.slice(start, (*lengths)[band]);
    llvm::SmallVector<int64_t> widths = apportion(width, members);
    // Odd bands run right to left, so a band's last kernel sits above the
    // next band's first.
    bool reversed = band % 2 == 1;
    int64_t x = reversed ? width : 0;
    for (int64_t w : widths) {
      if (reversed)
        x -= w;
      rects.push_back({x, y, w, heights[band]});
      if (!reversed)
        x += w;
    }
    y += heights[band];
    start += (*lengths)[band];
  }
  return rects;
}

} // namespace cgpt::wafer
