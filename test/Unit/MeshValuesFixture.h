//===- MeshValuesFixture.h - kernels on the mesh with values ----*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// What the tests of the kernels' programs run with values share: the mini
// target's cores, operands drawn uniformly from a seed, and results held
// to a reference within a relative tolerance.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_TEST_UNIT_MESHVALUESFIXTURE_H
#define CGPT_TEST_UNIT_MESHVALUESFIXTURE_H

#include "cgpt/Target/WaferTargetModel.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace cgpt::test {

class MeshValuesFixture : public ::testing::Test {
protected:
  const target::WaferTargetModel &mini() {
    return **target::WaferTargetModel::loadShared("mini", &context);
  }
  mlir::MLIRContext context;
};

/// `count` values drawn uniformly from [-bound, bound) by a generator
/// seeded with `seed`.
inline std::vector<float> uniformValues(int64_t count, unsigned seed,
                                        float bound = 1.0f) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> value(-bound, bound);
  std::vector<float> out(count);
  for (float &v : out)
    v = value(generator);
  return out;
}

/// Every element of `got` within `relative` of `want`'s, relative to 1
/// plus its magnitude.
inline void expectClose(const std::vector<float> &got,
                        const std::vector<float> &want, float relative) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], relative * (1.0f + std::abs(want[i])))
        << "element " << i;
}

} // namespace cgpt::test

#endif // CGPT_TEST_UNIT_MESHVALUESFIXTURE_H
