//===- MapAlgorithm.cpp - an elementwise map as core operations -----------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/Analysis/MapAlgorithm.h"

#include "cgpt/Dialect/Dataflow/IR/RowOperations.h"

#include "llvm/ADT/STLExtras.h"

#include <array>
#include <cmath>

using cgpt::dataflow::MapKind;

namespace cgpt::wafer {

bool MapStep::onInputsOnly() const {
  for (const MapOperand &operand : {dst, a, b})
    if (operand.isMemory() && operand.kind != MapOperand::Kind::input)
      return false;
  return true;
}

namespace {

using Operand = MapOperand;
using Step = MapStep::Kind;

/// Builds a map's operations: work rows are taken as needed, constants
/// stored once each.
class AlgorithmBuilder {
public:
  explicit AlgorithmBuilder(unsigned inputs) { out.inputs = inputs; }

  Operand input(int index) const { return {Operand::Kind::input, index}; }
  Operand row() { return {Operand::Kind::work, out.workRows++}; }
  Operand constant(double value) {
    auto single = static_cast<float>(value);
    for (auto [index, known] : llvm::enumerate(out.constants))
      if (known == single)
        return {Operand::Kind::constant, static_cast<int>(index)};
    out.constants.push_back(single);
    return {Operand::Kind::constant,
            static_cast<int>(out.constants.size() - 1)};
  }
  static Operand zero() { return {Operand::Kind::zero, 0}; }

  void step(Step kind, Operand dst, Operand a, Operand b = {},
            Operand scalar = {}) {
    out.steps.push_back({kind, dst, a, b, scalar});
  }
  /// dst = a + b `multiplier`.
  void multiplyAdd(Operand dst, Operand a, Operand b, double multiplier) {
    step(Step::multiplyAdd, dst, a, b, constant(multiplier));
  }

  /// exp(factor x) in a new row: t = factor x log2 e clamped to [-125, 125]
  /// (so that 2^n stays a normal f32 either way), n = round(t) by adding and
  /// subtracting 1.5 2^23, f = t - n, 2^f by its Taylor polynomial (Horner)
  /// and n added to its exponent bits.
  Operand exponential(Operand x, double factor) {
    Operand f = row(), power = row(), polynomial = row();
    multiplyAdd(f, zero(), x, factor * M_LOG2E);
    for (int side = 0; side < 2; ++side) {
      step(Step::maximum, f, f, constant(-125.0));
      multiplyAdd(f, zero(), f, -1.0);
    }
    step(Step::add, power, f, constant(0x1.8p23));
    step(Step::add, power, power, constant(-0x1.8p23));
    multiplyAdd(f, f, power, -1.0);
    auto taylor = dataflow::exponentialTaylor();
    multiplyAdd(polynomial, constant(taylor[1]), f, taylor[0]);
    for (int64_t i = 2; i <= dataflow::kExponentialDegree; ++i) {
      step(Step::multiply, polynomial, polynomial, f);
      step(Step::add, polynomial, polynomial, constant(taylor[i]));
    }
    step(Step::scaleByPowerOfTwo, polynomial, polynomial, power);
    return polynomial;
  }

  /// 1 / v for v > 0, in place of `v`: r = 1 / sqrt(v) by three Newton
  /// steps r (3/2 - v r^2 / 2) from the estimate of the bits, then r^2.
  void reciprocal(Operand v) {
    Operand r = row(), work = row();
    step(Step::rsqrtEstimate, r, v);
    for (int i = 0; i < 3; ++i) {
      step(Step::multiply, work, r, r);
      step(Step::multiply, work, work, v);
      multiplyAdd(work, constant(1.5), work, -0.5);
      step(Step::multiply, r, r, work);
    }
    step(Step::multiply, v, r, r);
  }

  /// s = 1 / (1 + e), e = exp(-factor x), each in a new row: 1 - s is e s,
  /// which keeps its digits where s rounds to 1.
  struct Sigmoid {
    Operand s, e;
  };
  Sigmoid sigmoid(Operand x, double factor) {
    Operand e = exponential(x, -factor), s = row();
    step(Step::add, s, e, constant(1.0));
    reciprocal(s);
    return {s, e};
  }

  /// -1 where x > 0, else 0, in a new row: x 2^254 saturates every
  /// positive f32 (denormals too) past 1.
  Operand negatedStep(Operand x) {
    Operand s = row();
    multiplyAdd(s, zero(), x, 0x1p127);
    step(Step::multiply, s, s, constant(0x1p127));
    step(Step::maximum, s, s, constant(0.0));
    multiplyAdd(s, zero(), s, -1.0);
    step(Step::maximum, s, s, constant(-1.0));
    return s;
  }

  /// Q = (1 - erf(|x| / sqrt 2)) / 2, by Abramowitz and Stegun's 7.1.26,
  /// in a new row; also |x| and exp(-x^2 / 2).
  struct Tail {
    Operand q, magnitude, gaussian;
  };
  Tail normalTail(Operand x) {
    static constexpr double p = 0.3275911;
    static constexpr std::array<double, 5> a = {
        0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429};
    Operand magnitude = row();
    multiplyAdd(magnitude, zero(), x, -1.0);
    step(Step::maximum, magnitude, magnitude, x);
    Operand t = row();
    multiplyAdd(t, constant(1.0), magnitude, p / M_SQRT2);
    reciprocal(t);
    Operand q = row();
    multiplyAdd(q, constant(a[3]), t, a[4]);
    for (int i = 2; i >= 0; --i) {
      step(Step::multiply, q, q, t);
      step(Step::add, q, q, constant(a[i]));
    }
    step(Step::multiply, q, q, t);
    Operand square = row();
    step(Step::multiply, square, x, x);
    Operand gaussian = exponential(square, -0.5);
    step(Step::multiply, q, q, gaussian);
    multiplyAdd(q, zero(), q, 0.5);
    return {q, magnitude, gaussian};
  }

  MapAlgorithm out;
};

/// sqrt(2 / pi) and the cubic term's coefficient of GELU's tanh form.
constexpr double kTanhGeluScale = 0.7978845608028654;
constexpr double kTanhGeluCubic = 0.044715;

MapAlgorithm build(MapKind kind) {
  AlgorithmBuilder b(dataflow::mapArity(kind));
  Operand x = b.input(0), dy = b.input(1), zero = AlgorithmBuilder::zero();
  auto tanhArgument = [&] {
    // x + 0.044715 x^3, which the sigmoid scales by 2 sqrt(2 / pi).
    Operand u = b.row();
    b.step(Step::multiply, u, x, x);
    b.multiplyAdd(u, b.constant(1.0), u, kTanhGeluCubic);
    b.step(Step::multiply, u, u, x);
    return u;
  };
  switch (kind) {
  case MapKind::add:
    b.step(Step::add, x, x, dy);
    break;
  case MapKind::mul:
    b.step(Step::multiply, x, x, dy);
    break;
  case MapKind::relu:
    b.step(Step::maximum, x, x, b.constant(0.0));
    break;
  case MapKind::relu_grad: {
    Operand step = b.negatedStep(x);
    b.step(Step::multiply, step, step, dy);
    b.multiplyAdd(x, zero, step, -1.0);
    break;
  }
  case MapKind::silu:
    b.step(Step::multiply, x, x, b.sigmoid(x, 1.0).s);
    break;
  case MapKind::silu_grad: {
    // s (1 + x (1 - s)) dy.
    AlgorithmBuilder::Sigmoid sigmoid = b.sigmoid(x, 1.0);
    Operand w = b.row();
    b.step(Step::multiply, w, sigmoid.e, sigmoid.s);
    b.step(Step::multiply, w, w, x);
    b.step(Step::add, w, w, b.constant(1.0));
    b.step(Step::multiply, w, w, sigmoid.s);
    b.step(Step::multiply, x, w, dy);
    break;
  }
  case MapKind::gelu_tanh:
    // x (1 + tanh u) / 2 = x sigmoid(2u).
    b.step(Step::multiply, x, x,
           b.sigmoid(tanhArgument(), 2 * kTanhGeluScale).s);
    break;
  case MapKind::gelu_tanh_grad: {
    // s + 2 sqrt(2 / pi) x s (1 - s) (1 + 3 0.044715 x^2), s = sigmoid(2u).
    AlgorithmBuilder::Sigmoid sigmoid =
        b.sigmoid(tanhArgument(), 2 * kTanhGeluScale);
    Operand s = sigmoid.s, d = b.row();
    b.step(Step::multiply, d, sigmoid.e, s);
    b.step(Step::multiply, d, d, s);
    b.step(Step::multiply, d, d, x);
    Operand slope = b.row();
    b.step(Step::multiply, slope, x, x);
    b.multiplyAdd(slope, b.constant(1.0), slope, 3 * kTanhGeluCubic);
    b.step(Step::multiply, d, d, slope);
    b.multiplyAdd(d, s, d, 2 * kTanhGeluScale);
    b.step(Step::multiply, x, d, dy);
    break;
  }
  case MapKind::gelu: {
    // x Phi(x) = x / 2 + |x| (1/2 - Q), Q the normal tail of |x|.
    AlgorithmBuilder::Tail tail = b.normalTail(x);
    Operand w = b.row();
    b.multiplyAdd(w, b.constant(0.5), tail.q, -1.0);
    b.step(Step::multiply, w, w, tail.magnitude);
    b.multiplyAdd(x, w, x, 0.5);
    break;
  }
  case MapKind::gelu_grad: {
    // (Phi(x) + x exp(-x^2 / 2) / sqrt(2 pi)) dy, Phi = Q + step(x) (1 - 2Q).
    AlgorithmBuilder::Tail tail = b.normalTail(x);
    Operand negated = b.negatedStep(x), phi = b.row();
    b.multiplyAdd(phi, b.constant(-1.0), tail.q, 2.0);
    b.step(Step::multiply, phi, phi, negated);
    b.step(Step::add, phi, phi, tail.q);
    b.step(Step::multiply, tail.gaussian, tail.gaussian, x);
    b.multiplyAdd(phi, phi, tail.gaussian, 1.0 / std::sqrt(2.0 * M_PI));
    b.step(Step::multiply, x, phi, dy);
    break;
  }
  }
  return b.out;
}

} // namespace

const MapAlgorithm &mapAlgorithm(MapKind kind) {
  constexpr size_t kinds = dataflow::getMaxEnumValForMapKind() + 1;
  static const std::array<MapAlgorithm, kinds> algorithms = [] {
    std::array<MapAlgorithm, kinds> all;
    for (uint32_t k = 0; k < all.size(); ++k)
      all[k] = build(static_cast<MapKind>(k));
    return all;
  }();
  return algorithms[static_cast<uint32_t>(kind)];
}

int64_t mapWorkBytes(MapKind kind, int64_t features) {
  constexpr int64_t f32 = 4;
  const MapAlgorithm &algorithm = mapAlgorithm(kind);
  return (algorithm.workRows * features +
          static_cast<int64_t>(algorithm.constants.size())) *
         f32;
}

} // namespace cgpt::wafer
