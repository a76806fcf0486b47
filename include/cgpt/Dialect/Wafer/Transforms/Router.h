//===- Router.h - routing a stage's flows on the mesh -----------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_WAFER_TRANSFORMS_ROUTER_H
#define CGPT_DIALECT_WAFER_TRANSFORMS_ROUTER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace cgpt::wafer {

struct Point {
  int64_t x, y;
};

struct Route {
  /// Corner points, x then y: an X-then-Y path.
  llvm::SmallVector<int64_t> points;
  int64_t color = 0;
};

/// Routes flows dimension-ordered (along X, then along Y) and gives each a
/// routing color such that no two flows that share a link in the same
/// direction share a color. Colors are given greedily, in flow order, the
/// lowest free one first, so the same flows always get the same colors.
class Router {
public:
  explicit Router(int64_t colors) : colors(colors) {}

  /// The routes of `flows` (from, to). When a flow needs a color beyond the
  /// budget, returns nothing and sets `failedFlow` to its index.
  std::optional<llvm::SmallVector<Route>>
  route(llvm::ArrayRef<std::pair<Point, Point>> flows,
        size_t &failedFlow) const;

private:
  int64_t colors;
};

} // namespace cgpt::wafer

#endif // CGPT_DIALECT_WAFER_TRANSFORMS_ROUTER_H
