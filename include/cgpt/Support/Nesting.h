//===- Nesting.h - bound the nesting of text before parsing it --*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// MLIR's parser and llvm::json recurse once per level of brackets, so a
// file nested a few thousand levels deep overflows the stack. Their input
// is scanned first and refused past a depth no real file comes near; the
// same scans find what the parsers would pass over without a word (a
// repeated JSON key, a NUL byte in IR).
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SUPPORT_NESTING_H
#define CGPT_SUPPORT_NESTING_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <optional>

namespace cgpt {

/// The deepest bracket nesting cgpt parses. cgpt's own IR nests about a
/// dozen levels (module, device, stage, region, attributes, types); model
/// files and safetensors headers fewer.
constexpr unsigned kMaxNestingDepth = 256;

enum class TextSyntax {
  /// `[]` and `{}` outside "strings" with backslash escapes.
  Json,
  /// `()`, `[]`, `{}` and `<>` (but not the `>` of `->`) outside "strings"
  /// and `//` comments.
  Mlir,
};

/// Where the nesting of `text` first goes deeper than `limit`: its offset,
/// or nullopt when it never does.
std::optional<size_t> findDeepNesting(llvm::StringRef text, TextSyntax syntax,
                                      unsigned limit = kMaxNestingDepth);

/// Calls `repeated(key, firstOffset, offset)` for each key a JSON object in
/// `text` gives a second (or later) time: llvm::json keeps the last giving
/// without a word. Offsets are those of the keys' opening quotes. Run it
/// after findDeepNesting has bounded the depth.
void forEachRepeatedJsonKey(
    llvm::StringRef text,
    llvm::function_ref<void(llvm::StringRef, size_t, size_t)> repeated);

/// 1-based line and column of `offset` in `text`.
std::pair<unsigned, unsigned> lineAndColumn(llvm::StringRef text,
                                            size_t offset);

/// Fails with an error at `name`:line:col, naming the limit, where `text`
/// nests deeper than kMaxNestingDepth.
mlir::LogicalResult checkNestingDepth(llvm::StringRef name,
                                      llvm::StringRef text, TextSyntax syntax,
                                      mlir::MLIRContext *context);

/// Fails with an error at `name`:line:col where IR `text` holds a NUL
/// byte: MLIR's lexer would skip it as blank and parse the rest.
mlir::LogicalResult checkNoNulBytes(llvm::StringRef name, llvm::StringRef text,
                                    mlir::MLIRContext *context);

} // namespace cgpt

#endif // CGPT_SUPPORT_NESTING_H
