//===- Format.cpp - number formatting -------------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Support/Format.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace cgpt {

/// The shortest rendering of `value` under `format` (one precision
/// argument) that reads back exactly, trying precisions up to `maxPrecision`.
static std::string shortestRoundTrip(const char *format, double value,
                                     int maxPrecision) {
  char buffer[512];
  for (int precision = 0; precision <= maxPrecision; ++precision) {
    std::snprintf(buffer, sizeof(buffer), format, precision, value);
    if (std::strtod(buffer, nullptr) == value)
      break;
  }
  return buffer;
}

std::string formatExactDouble(double value) {
  double magnitude = std::fabs(value);
  // Plain decimals where people write them (0.0006, 10.0), exponents for
  // the very small and very large (1.0e-08).
  bool plain = magnitude == 0 || (magnitude >= 1e-4 && magnitude < 1e15);
  // 17 significant digits always round-trip; as decimals below 1e-4 is
  // excluded, 4 leading zeros more always suffice.
  std::string text = plain ? shortestRoundTrip("%.*f", value, 17 + 4)
                           : shortestRoundTrip("%.*g", value, 17);
  // MLIR and YAML read a float only with a '.' in its mantissa: "10.0" and
  // "1.0e-08", never "10" or "1e-08". inf and nan are left as they are.
  if (text.find_first_of(".ni") != std::string::npos)
    return text;
  size_t exponent = text.find('e');
  if (exponent == std::string::npos)
    return text + ".0";
  return text.insert(exponent, ".0");
}

std::string formatGrouped(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ", ";
    out += mlir::ShapedType::isDynamic(shape[i]) ? std::string("?")
                                                 : std::to_string(shape[i]);
  }
  return out + "]";
}

} // namespace cgpt
