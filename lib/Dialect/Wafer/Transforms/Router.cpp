//===- Router.cpp - dimension-ordered routing and color assignment --------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/Transforms/Router.h"

#include <algorithm>

namespace cgpt::wafer {
namespace {

/// A straight run of links: along a row (`horizontal`) or a column, from
/// `from` to `to` (exclusive of nothing: both ends are cores it touches).
struct Segment {
  bool horizontal;
  int64_t line; // the row or column
  int64_t from, to;

  int64_t low() const { return std::min(from, to); }
  int64_t high() const { return std::max(from, to); }
  bool forward() const { return to > from; }

  /// Two segments share a link when they run along the same line in the
  /// same direction and overlap by at least one hop.
  bool sharesLinkWith(const Segment &other) const {
    return horizontal == other.horizontal && line == other.line &&
           forward() == other.forward() &&
           std::max(low(), other.low()) < std::min(high(), other.high());
  }
};

llvm::SmallVector<Segment> segmentsOf(Point from, Point to) {
  llvm::SmallVector<Segment> segments;
  if (from.x != to.x)
    segments.push_back({true, from.y, from.x, to.x});
  if (from.y != to.y)
    segments.push_back({false, to.x, from.y, to.y});
  return segments;
}

} // namespace

std::optional<llvm::SmallVector<Route>>
Router::route(llvm::ArrayRef<std::pair<Point, Point>> flows,
              size_t &failedFlow) const {
  llvm::SmallVector<Route> routes;
  llvm::SmallVector<llvm::SmallVector<Segment>> segments;
  for (auto [index, flow] : llvm::enumerate(flows)) {
    auto [from, to] = flow;
    Route route;
    route.points = {from.x, from.y};
    if (from.x != to.x)
      route.points.append({to.x, from.y});
    if (from.y != to.y || route.points.size() == 2)
      route.points.append({to.x, to.y});
    segments.push_back(segmentsOf(from, to));

    llvm::SmallVector<bool> taken(colors, false);
    for (size_t other = 0; other < index; ++other)
      for (const Segment &mine : segments.back())
        if (llvm::any_of(segments[other], [&](const Segment &theirs) {
              return mine.sharesLinkWith(theirs);
            }))
          taken[routes[other].color] = true;
    auto free = llvm::find(taken, false);
    if (free == taken.end()) {
      failedFlow = index;
      return std::nullopt;
    }
    route.color = free - taken.begin();
    routes.push_back(route);
  }
  return routes;
}

} // namespace cgpt::wafer
