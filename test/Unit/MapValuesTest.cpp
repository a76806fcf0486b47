//===- MapValuesTest.cpp - elementwise maps on the mesh, with numbers -----===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Every dataflow.map function, run as its mesh program (wafer::mapAlgorithm's
// operations on the mini target's cores) with values, gives what the
// functional executor's map gives (exec::map, in double precision) over
// inputs from -12 to 12, zero, the smallest positive f32 and values whose
// exponentials leave the f32 range, on layouts whose groups do not divide
// the operands, in 16-bit and f32 storage. The software exponential, the
// reciprocal and erf's polynomial carry an error near 1e-7, hence the
// tolerance. A map's program declares the buffers its algorithm names,
// whose bytes are what the memory model counts, and the runner refuses another
// kernel and operands of the wrong size.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/MapValues.h"
#include "MeshValuesFixture.h"
#include "cgpt/Dialect/Wafer/Analysis/MapAlgorithm.h"
#include "cgpt/Exec/Kernels.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <random>

using namespace cgpt;
using namespace cgpt::sim::mesh;
using cgpt::dataflow::MapKind;
using cgpt::wafer::Edge;
using cgpt::wafer::KernelKind;
using cgpt::wafer::KernelShape;
using cgpt::wafer::Layout;

namespace {

using MapValues = test::MeshValuesFixture;

KernelShape mapShape(MapKind kind, int64_t tokensPerSequence, int64_t features,
                     int64_t bytes) {
  KernelShape k;
  k.kind = KernelKind::elementwise;
  k.function = wafer::RowFunction::map;
  k.map = kind;
  k.rows = tokensPerSequence;
  k.columns = features;
  k.elementBytes = bytes;
  k.flops = dataflow::mapFlopsPerElement(kind) * tokensPerSequence * features;
  return k;
}

struct MapCase {
  const char *what;
  int64_t sequences, tokensPerSequence, features, bytes;
  Layout layout;
  wafer::Rect rect;
};

const MapCase kMapCases[] = {
    {"groups that do not divide",
     2,
     5,
     7,
     2,
     {3, 4, Edge::none, 0},
     {0, 0, 4, 3}},
    {"token groups in two columns of segments, f32",
     1,
     12,
     6,
     4,
     {6, 2, Edge::none, 0},
     {0, 0, 4, 3}},
    {"one core", 1, 3, 5, 2, {1, 1, Edge::none, 0}, {0, 0, 1, 1}},
};

constexpr MapKind kAllMaps[] = {MapKind::add,       MapKind::mul,
                                MapKind::relu,      MapKind::relu_grad,
                                MapKind::silu,      MapKind::silu_grad,
                                MapKind::gelu,      MapKind::gelu_grad,
                                MapKind::gelu_tanh, MapKind::gelu_tanh_grad};

/// `count` inputs: the edge cases first, then uniform in [-12, 12].
std::vector<float> inputs(int64_t count, unsigned seed) {
  std::vector<float> out = {0.0f,
                            std::numeric_limits<float>::denorm_min(),
                            -std::numeric_limits<float>::denorm_min(),
                            1e-30f,
                            -1e-30f,
                            100.0f,
                            -100.0f,
                            1.0f,
                            -1.0f};
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> value(-12.0f, 12.0f);
  while (static_cast<int64_t>(out.size()) < count)
    out.push_back(value(generator));
  out.resize(count);
  return out;
}

TEST_F(MapValues, MapsAreTheirFunctions) {
  for (MapKind kind : kAllMaps)
    for (const MapCase &c : kMapCases) {
      SCOPED_TRACE(std::string(dataflow::stringifyMapKind(kind)) + ", " +
                   c.what);
      int64_t tokens = c.sequences * c.tokensPerSequence, n = c.features;
      bool binary = dataflow::mapArity(kind) > 1;
      exec::Tensor x({tokens, n}), y({tokens, n});
      x.data = inputs(tokens * n, 41);
      y.data = inputs(tokens * n, 42);
      std::string error;
      std::optional<MapRun> ran = runMap(
          mapShape(kind, c.tokensPerSequence, n, c.bytes), c.layout,
          c.sequences, mini(), c.rect, x.data,
          binary ? llvm::ArrayRef<float>(y.data) : llvm::ArrayRef<float>(),
          error);
      ASSERT_TRUE(ran) << error;
      EXPECT_GT(ran->cycles, 0);
      std::vector<const exec::Tensor *> operands = {&x};
      if (binary)
        operands.push_back(&y);
      // One row a tile.
      exec::Tensor want = exec::map(kind, operands, {1, n});
      for (int64_t i = 0; i < tokens * n; ++i)
        EXPECT_NEAR(ran->result[i], want.data[i],
                    2e-6 * (1.0 + std::abs(want.data[i]) +
                            std::abs(x.data[i]) * std::abs(y.data[i])))
            << "x = " << x.data[i] << ", y = " << y.data[i];
    }
}

TEST_F(MapValues, ProgramsDeclareTheirAlgorithmsBuffers) {
  Layout layout{3, 4, Edge::none, 0};
  wafer::Rect rect{0, 0, 4, 3};
  for (MapKind kind : kAllMaps) {
    SCOPED_TRACE(dataflow::stringifyMapKind(kind).str());
    const wafer::MapAlgorithm &algorithm = wafer::mapAlgorithm(kind);
    KernelProgram built = buildKernelProgram(mapShape(kind, 5, 7, 2), layout, 2,
                                             mini(), rect, {});
    const CoreProgram &core = built.mesh.programs.front();
    // The inputs, a work row each, the constants.
    ASSERT_EQ(core.buffers.size(), 2u + algorithm.workRows + 1);
    EXPECT_EQ(core.buffers[kMapSecondInput].elements,
              algorithm.inputs > 1 ? built.tokens * built.features : 0);
    EXPECT_EQ(core.buffers.back().elements,
              static_cast<int64_t>(algorithm.constants.size()));
    // What memory counts beside the inputs is what the program declares.
    int64_t work = 0;
    for (size_t b = kMapSecondInput + 1; b < core.buffers.size(); ++b)
      work += core.buffers[b].bytes();
    EXPECT_EQ(wafer::mapWorkBytes(kind, built.features), work);
  }
}

TEST_F(MapValues, RefusesWhatItCannotCarry) {
  Layout layout{3, 4, Edge::none, 0};
  wafer::Rect rect{0, 0, 4, 3};
  std::vector<float> operand(2 * 5 * 7, 1.0f);
  std::string error;
  KernelShape other = mapShape(MapKind::mul, 5, 7, 2);
  other.function = wafer::RowFunction::other;
  EXPECT_FALSE(runMap(other, layout, 2, mini(), rect, operand, operand, error));
  EXPECT_EQ(error, "it is not an elementwise map");
  EXPECT_FALSE(runMap(mapShape(MapKind::mul, 5, 7, 2), layout, 2, mini(), rect,
                      operand, {}, error));
  EXPECT_EQ(error, "the operands have 70 and 0 elements; the map takes 10 x 7 "
                   "and 70");
  EXPECT_FALSE(runMap(mapShape(MapKind::gelu, 5, 7, 2), layout, 2, mini(), rect,
                      operand, operand, error));
  EXPECT_EQ(error, "the operands have 70 and 70 elements; the map takes 10 x "
                   "7 and 0");
}

} // namespace
