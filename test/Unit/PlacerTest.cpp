//===- PlacerTest.cpp - the serpentine placer and the router --------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/Transforms/Placer.h"
#include "cgpt/Dialect/Wafer/Transforms/Router.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

using namespace cgpt::wafer;

namespace {

/// Every core of the mesh belongs to exactly one rectangle.
void expectTiling(llvm::ArrayRef<Rect> rects, int64_t width, int64_t height) {
  std::vector<int> owners(width * height, 0);
  for (const Rect &r : rects) {
    ASSERT_GE(r.w, 1);
    ASSERT_GE(r.h, 1);
    ASSERT_GE(r.x, 0);
    ASSERT_GE(r.y, 0);
    ASSERT_LE(r.x + r.w, width);
    ASSERT_LE(r.y + r.h, height);
    for (int64_t y = r.y; y < r.y + r.h; ++y)
      for (int64_t x = r.x; x < r.x + r.w; ++x)
        ++owners[y * width + x];
  }
  for (int owner : owners)
    EXPECT_EQ(owner, 1);
}

bool shareEdge(const Rect &a, const Rect &b) {
  bool sideBySide = (a.x + a.w == b.x || b.x + b.w == a.x) &&
                    a.y < b.y + b.h && b.y < a.y + a.h;
  bool stacked = (a.y + a.h == b.y || b.y + b.h == a.y) &&
                 a.x < b.x + b.w && b.x < a.x + a.w;
  return sideBySide || stacked;
}

TEST(Apportion, SharesAddUpAndFollowTheWeights) {
  llvm::SmallVector<int64_t> shares = apportion(100, {1, 3, 0, 6});
  EXPECT_EQ(std::accumulate(shares.begin(), shares.end(), int64_t(0)), 100);
  for (int64_t share : shares)
    EXPECT_GE(share, 1);
  EXPECT_LT(shares[0], shares[1]);
  EXPECT_LT(shares[1], shares[3]);
}

TEST(SerpentinePlacer, CoversTheMeshWithoutOverlap) {
  SerpentinePlacer placer;
  for (auto [width, height] : {std::pair<int64_t, int64_t>{16, 12},
                              {750, 994},
                              {5, 40}}) {
    std::vector<int64_t> work;
    for (int i = 0; i < 37; ++i)
      work.push_back((i * 7919) % 1000 + (i % 5 == 0 ? 0 : 50));
    mlir::FailureOr<llvm::SmallVector<Rect>> rects =
        placer.place(work, width, height);
    ASSERT_TRUE(mlir::succeeded(rects)) << width << " x " << height;
    ASSERT_EQ(rects->size(), work.size());
    expectTiling(*rects, width, height);
    // Kernels that follow each other share an edge.
    for (size_t i = 0; i + 1 < rects->size(); ++i)
      EXPECT_TRUE(shareEdge((*rects)[i], (*rects)[i + 1])) << i;
  }
}

TEST(SerpentinePlacer, LargerWorkGetsMoreCores) {
  SerpentinePlacer placer;
  mlir::FailureOr<llvm::SmallVector<Rect>> rects =
      placer.place({100, 900}, 20, 20);
  ASSERT_TRUE(mlir::succeeded(rects));
  EXPECT_GT((*rects)[1].w * (*rects)[1].h, 5 * (*rects)[0].w * (*rects)[0].h);
}

TEST(SerpentinePlacer, RefusesMoreKernelsThanCores) {
  SerpentinePlacer placer;
  EXPECT_TRUE(mlir::failed(placer.place({1, 1, 1, 1, 1}, 2, 2)));
  EXPECT_TRUE(mlir::succeeded(placer.place({1, 1, 1, 1}, 2, 2)));
}

TEST(Router, XThenYAndDistinctColorsOnSharedLinks) {
  Router router(/*colors=*/2);
  size_t failed = 0;
  std::optional<llvm::SmallVector<Route>> routes = router.route(
      {{{0, 0}, {5, 3}},   // along row 0, then down column 5
       {{1, 0}, {4, 0}},   // shares row 0 eastward with the first
       {{5, 3}, {0, 0}},   // the reverse direction: links of its own
       {{0, 9}, {9, 9}}},  // nowhere near the others
      failed);
  ASSERT_TRUE(routes);
  EXPECT_EQ((*routes)[0].points, (llvm::SmallVector<int64_t>{0, 0, 5, 0, 5, 3}));
  EXPECT_EQ((*routes)[0].color, 0);
  EXPECT_EQ((*routes)[1].color, 1);
  EXPECT_EQ((*routes)[2].color, 0);
  EXPECT_EQ((*routes)[3].color, 0);
}

TEST(Router, ReportsTheFlowBeyondTheColorBudget) {
  Router router(/*colors=*/2);
  size_t failed = 0;
  EXPECT_FALSE(router.route({{{0, 0}, {9, 0}},
                             {{1, 0}, {8, 0}},
                             {{2, 0}, {7, 0}}},
                            failed));
  EXPECT_EQ(failed, 2u);
}

} // namespace
