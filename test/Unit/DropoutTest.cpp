//===- DropoutTest.cpp - the regenerated dropout mask
//-----------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The counter-based mask (include/cgpt/Exec/Dropout.h): the hash, the rate
// it keeps, a mask that does not depend on how the batch is split, and what
// dropout adds to a compiled step: no bytes anywhere, and the generator's
// FLOPs where its region runs.
//
//===----------------------------------------------------------------------===//

#include "WaferFixture.h"

#include "cgpt/Exec/Dropout.h"

using namespace cgpt;
using namespace cgpt::exec;

namespace {

/// C. Wellons' lowbias32: 0 stays 0; 1 gives 0x688990c0 (the NumPy copy in
/// check_against_torch.py gives the same).
TEST(Dropout, HashIsLowbias32) {
  EXPECT_EQ(hash32(0), 0u);
  EXPECT_EQ(hash32(1), 0x688990c0u);
  EXPECT_EQ(hash32(0x12345678), 0xf5e71c96u);
}

Tensor ones(llvm::ArrayRef<int64_t> shape) {
  Tensor t(shape);
  std::fill(t.data.begin(), t.data.end(), 1.0f);
  return t;
}

/// At rate 0.25 about three elements in four are kept, each scaled by 4/3;
/// the rest are 0. 2 x 300 x 400 = 240,000 draws: the kept share is within
/// 0.5% (about five standard deviations) of 0.75.
TEST(Dropout, KeepsOneMinusTheRateScaledUp) {
  Tensor dropped = dropout(ones({2, 300, 400}), 0.25, 3, {7, 2, 0});
  int64_t kept = 0;
  for (float value : dropped.data) {
    if (value != 0.0f) {
      EXPECT_EQ(value, static_cast<float>(1.0 / 0.75));
      ++kept;
    }
  }
  EXPECT_NEAR(static_cast<double>(kept) / dropped.numel(), 0.75, 0.005);
  // Rate 0 keeps everything, unscaled.
  Tensor all = dropout(ones({1, 3, 5}), 0.0, 0, {});
  for (float value : all.data)
    EXPECT_EQ(value, 1.0f);
}

/// A sequence's mask is a function of its place in the global batch: four
/// sequences at once, or two micro-batches of two (the second starting at
/// sequence 2), draw the same; another step, site or seed draws another.
TEST(Dropout, MaskIsTheSequencesWhateverTheSplit) {
  Tensor whole = dropout(ones({4, 6, 10}), 0.5, 1, {9, 3, 0});
  Tensor first = dropout(ones({2, 6, 10}), 0.5, 1, {9, 3, 0});
  Tensor second = dropout(ones({2, 6, 10}), 0.5, 1, {9, 3, 2});
  std::vector<float> joined = first.data;
  joined.insert(joined.end(), second.data.begin(), second.data.end());
  EXPECT_EQ(whole.data, joined);
  EXPECT_NE(dropout(ones({4, 6, 10}), 0.5, 1, {9, 4, 0}).data, whole.data);
  EXPECT_NE(dropout(ones({4, 6, 10}), 0.5, 2, {9, 3, 0}).data, whole.data);
  EXPECT_NE(dropout(ones({4, 6, 10}), 0.5, 1, {10, 3, 0}).data, whole.data);
}

using DropoutStepTest = test::WaferFixture;

/// A region's attribute by the kernels it runs, for the first region of
/// `stage` whose principal kernel is `kernel`.
wafer::RegionOp regionOf(wafer::DeviceOp device, llvm::StringRef stage,
                         llvm::StringRef kernel) {
  for (auto s : device.getBody().getOps<wafer::StageOp>())
    if (s.getSymName() == stage)
      for (auto region : s.getBody().getOps<wafer::RegionOp>())
        if (region.getKernel() == kernel)
          return region;
  ADD_FAILURE() << "no " << kernel.str() << " region in " << stage.str();
  return {};
}

/// odd-gptj-dropout.yaml is odd-gptj-rotary.yaml with dropout at three
/// rates (24 tokens, d_model 48, 4 heads). On mini both keep the same bytes
/// per sequence (no mask is kept), and their forward stages the same
/// regions with the same live bytes: each dropout runs in the region of
/// the kernel whose result it drops. (Backward, a dropped gradient is a
/// stream of its own beside the gradient it came from.) The embeddings'
/// region runs 20 more FLOPs per element (24 x 48 x 20 = 23,040 a
/// sequence), attention's forward 20 more per score (4 x 24 x 24 x 20 =
/// 46,080).
TEST_F(DropoutStepTest, NoBytesAndTheGeneratorsFlops) {
  wafer::DeviceOp plain =
      compile("test/reference/Inputs/odd-gptj-rotary.yaml", "mini");
  auto plainModule = std::move(module);
  wafer::DeviceOp dropped =
      compile("test/reference/Inputs/odd-gptj-dropout.yaml", "mini");
  EXPECT_EQ(plain.getKeptBytesPerSequence(), dropped.getKeptBytesPerSequence());
  auto plainStages = plain.getBody().getOps<wafer::StageOp>();
  auto droppedStages = dropped.getBody().getOps<wafer::StageOp>();
  for (auto [a, b] : llvm::zip(plainStages, droppedStages)) {
    ASSERT_EQ(a.getSymName(), b.getSymName());
    if (a.getPhase() != "forward")
      continue;
    auto aRegions = a.getBody().getOps<wafer::RegionOp>();
    auto bRegions = b.getBody().getOps<wafer::RegionOp>();
    ASSERT_EQ(llvm::range_size(aRegions), llvm::range_size(bRegions));
    for (auto [x, y] : llvm::zip(aRegions, bRegions))
      EXPECT_EQ(x.getLive(), y.getLive()) << x.getSymName().str();
  }
  EXPECT_EQ(regionOf(dropped, "embed.forward", "dataflow.gather").getFlops() -
                regionOf(plain, "embed.forward", "dataflow.gather").getFlops(),
            23040);
  // Attention's region is led by the scores' product.
  auto attention = [](wafer::DeviceOp device) {
    for (auto s : device.getBody().getOps<wafer::StageOp>())
      if (s.getSymName() == "h.0.forward")
        for (auto region : s.getBody().getOps<wafer::RegionOp>())
          if (region.getKind() == wafer::KernelKind::attention)
            return region.getFlops();
    return int64_t{-1};
  };
  EXPECT_EQ(attention(dropped) - attention(plain), 46080);
}

} // namespace
