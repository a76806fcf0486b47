//===- Format.cpp - number formatting ---------------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Support/Format.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cstdio>
#include <cstdlib>

namespace cgpt {

std::string formatExactDouble(double value) {
  char buffer[64];
  // 17 significant digits always round-trip an IEEE double; stop at the
  // first precision that already does.
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value)
      break;
  }
  std::string text(buffer);
  // Keep floats recognizable as floats ("10.0", not "10").
  if (text.find_first_of(".eEn") == std::string::npos)
    text += ".0";
  return text;
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
