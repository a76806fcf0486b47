//===- MapAlgorithm.h - an elementwise map as core operations ---*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The vector operations a core runs to apply a `dataflow.map` to one row of
// its block (docs/runtime.md, "Maps on the mesh"): the SDK's operations
// (multiply-add, add, multiply, maximum) and the integer steps of a
// software reciprocal square root and exponential, over the map's inputs,
// f32 work rows and f32 constants. The mesh program (Sim/Mesh) runs these
// operations, and the analytic model counts them, each by its own rules:
// the algorithm is shared, its time is not.
//
// The transcendental functions are built as the loss and softmax programs
// build theirs: exp by a clamped power of two and a degree-6 polynomial,
// 1/v as (1/sqrt v)^2 by three Newton steps from the estimate of the bits,
// erf by Abramowitz and Stegun's 7.1.26 (error under 1.5e-7), a step
// function by saturating a product. The result replaces the first input.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_WAFER_ANALYSIS_MAPALGORITHM_H
#define CGPT_DIALECT_WAFER_ANALYSIS_MAPALGORITHM_H

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"

#include <cstdint>
#include <vector>

namespace cgpt::wafer {

/// Where an operand of a map's operation lives on the core: the map's
/// inputs (the region's element type; the result replaces input 0), an f32
/// work row, one of the f32 constants (read as one element, the same for
/// every element), or zero.
struct MapOperand {
  enum class Kind : uint8_t { none, zero, input, work, constant };
  Kind kind = Kind::none;
  int index = 0;
  bool isMemory() const {
    return kind == Kind::input || kind == Kind::work || kind == Kind::constant;
  }
};

/// One vector operation over a row: dst = a + b * scalar (multiplyAdd), a +
/// b, a b, max(a, b), the estimate of 1 / sqrt(a) from its bits, or a 2^b
/// by adding b to a's exponent bits.
struct MapStep {
  enum class Kind : uint8_t {
    multiplyAdd,
    add,
    multiply,
    maximum,
    rsqrtEstimate,
    scaleByPowerOfTwo
  };
  Kind kind = Kind::add;
  MapOperand dst, a, b, scalar;
  /// Whether every memory operand is one of the map's inputs, so that a
  /// 16-bit map runs it at the 16-bit SIMD width; any f32 row or constant
  /// makes it an f32 operation.
  bool onInputsOnly() const;
};

/// A map's operations on one row, in order, with the work rows and
/// constants they use.
struct MapAlgorithm {
  unsigned inputs = 1;
  int workRows = 0;
  std::vector<float> constants;
  std::vector<MapStep> steps;
};

/// The operations that apply `kind` to a row.
const MapAlgorithm &mapAlgorithm(dataflow::MapKind kind);

/// The bytes a core holds for `kind` beside its inputs: its f32 work rows
/// of `features` elements and its f32 constants.
int64_t mapWorkBytes(dataflow::MapKind kind, int64_t features);

} // namespace cgpt::wafer

#endif // CGPT_DIALECT_WAFER_ANALYSIS_MAPALGORITHM_H
