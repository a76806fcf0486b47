//===- Format.cpp - number formatting -------------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Support/Format.h"

#include "mlir/IR/BuiltinTypes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <locale>

namespace cgpt {

std::string formatExactDouble(double value) {
  // fmt's default float format is the shortest text that reads back
  // exactly: plain decimals where people write them (0.0006, 10), an
  // exponent for the very small and very large (1e-08).
  std::string text = fmt::format("{}", value);
  // MLIR and YAML read a float only with a '.' in its mantissa: "10.0" and
  // "1.0e-08", never "10" or "1e-08". inf and nan are left as they are.
  if (text.find_first_of(".ni") != std::string::npos)
    return text;
  size_t exponent = text.find('e');
  if (exponent == std::string::npos)
    return text + ".0";
  return text.insert(exponent, ".0");
}

namespace {
/// Digits grouped by threes with ',' whatever the user's locale.
struct ThousandsSeparated : std::numpunct<char> {
  char do_thousands_sep() const override { return ','; }
  std::string do_grouping() const override { return "\3"; }
};
} // namespace

std::string formatGrouped(int64_t value) {
  static const std::locale grouped(std::locale::classic(),
                                   new ThousandsSeparated);
  return fmt::format(grouped, "{:L}", value);
}

std::string escapeXml(llvm::StringRef text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

std::string quoteValue(llvm::StringRef text) {
  constexpr size_t kShown = 64;
  std::string out = "'";
  for (char c : text.take_front(kShown)) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f)
      out += fmt::format("\\x{:02x}", byte);
    else
      out += c;
  }
  out += "'";
  if (text.size() > kShown)
    out += fmt::format(" (cut; {} bytes in all)", formatGrouped(text.size()));
  return out;
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

std::string formatRoughDuration(double seconds) {
  if (seconds < 90)
    return fmt::format("about {} s",
                       std::max<int64_t>(1, std::llround(seconds)));
  if (seconds < 90 * 60)
    return fmt::format("about {} min", std::llround(seconds / 60));
  if (seconds < 48 * 3600)
    return fmt::format("about {:.1f} h", seconds / 3600);
  return fmt::format("about {:.1f} days", seconds / 86400);
}

} // namespace cgpt
