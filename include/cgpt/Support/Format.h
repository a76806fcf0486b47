//===- Format.h - number formatting for IR, reports, tools ------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SUPPORT_FORMAT_H
#define CGPT_SUPPORT_FORMAT_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>

namespace cgpt {

/// The shortest decimal form of `value` that reads back to the same double
/// ("0.9", "0.3333333333333333", "1.0e-08"), always with a '.' in the
/// mantissa so MLIR reads it back as a float. Deterministic across platforms.
std::string formatExactDouble(double value);

/// `value` with thousands separators: 111050496 -> "111,050,496".
std::string formatGrouped(int64_t value);

/// `text` as a diagnostic quotes a value the user wrote: in single quotes,
/// control bytes (NUL included) escaped as \xNN, and cut to 64 bytes with
/// the full length said, so that a 10 MB value makes a short line.
std::string quoteValue(llvm::StringRef text);

/// `text` as SVG or XML text: '<', '>' and '&' escaped.
std::string escapeXml(llvm::StringRef text);

/// A shape as "[?, 2048, 768]"; dynamic dimensions print as "?".
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// A duration for someone waiting: "about 40 s", "about 3 min", "about
/// 2.5 h", "about 12.0 days".
std::string formatRoughDuration(double seconds);

} // namespace cgpt

#endif // CGPT_SUPPORT_FORMAT_H
