//===- Nesting.cpp - bound the nesting of text before parsing it ----------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Support/Nesting.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/StringMap.h"

#include <vector>

namespace cgpt {

/// The offset of the '"' that closes the string opened at `open`, escapes
/// included, or the end of `text` for an unterminated one.
static size_t closingQuote(llvm::StringRef text, size_t open) {
  size_t i = open + 1;
  for (; i < text.size() && text[i] != '"'; ++i)
    if (text[i] == '\\')
      ++i;
  return std::min(i, text.size());
}

std::optional<size_t> findDeepNesting(llvm::StringRef text, TextSyntax syntax,
                                      unsigned limit) {
  bool mlir = syntax == TextSyntax::Mlir;
  // One count per kind of bracket, so that a stray closer of one kind (an
  // affine `>=`) cannot hide the openers of another.
  unsigned open[4] = {0, 0, 0, 0};
  auto kindOf = [&](char c, bool &opens) -> int {
    switch (c) {
    case '[':
      opens = true;
      return 0;
    case ']':
      opens = false;
      return 0;
    case '{':
      opens = true;
      return 1;
    case '}':
      opens = false;
      return 1;
    case '(':
      opens = true;
      return mlir ? 2 : -1;
    case ')':
      opens = false;
      return mlir ? 2 : -1;
    case '<':
      opens = true;
      return mlir ? 3 : -1;
    case '>':
      opens = false;
      return mlir ? 3 : -1;
    default:
      return -1;
    }
  };
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (c == '"') {
      // Skip the string; an unterminated one ends the scan (the parser
      // reports it).
      i = closingQuote(text, i);
      continue;
    }
    if (mlir && c == '/' && i + 1 < e && text[i + 1] == '/') {
      i = text.find('\n', i);
      if (i == llvm::StringRef::npos)
        break;
      continue;
    }
    if (mlir && c == '>' && i > 0 && text[i - 1] == '-')
      continue;
    bool opens = false;
    int kind = kindOf(c, opens);
    if (kind < 0)
      continue;
    if (!opens) {
      if (open[kind] > 0)
        --open[kind];
      continue;
    }
    ++open[kind];
    if (open[0] + open[1] + open[2] + open[3] > limit)
      return i;
  }
  return std::nullopt;
}

void forEachRepeatedJsonKey(
    llvm::StringRef text,
    llvm::function_ref<void(llvm::StringRef, size_t, size_t)> repeated) {
  struct Frame {
    bool object;
    bool expectKey;
    llvm::StringMap<size_t> keys; // key -> offset of its first giving
  };
  std::vector<Frame> stack;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (c == '"') {
      size_t quote = i;
      i = closingQuote(text, i);
      if (stack.empty() || !stack.back().object || !stack.back().expectKey)
        continue;
      stack.back().expectKey = false;
      llvm::StringRef key = text.slice(quote + 1, i);
      auto [slot, inserted] = stack.back().keys.try_emplace(key, quote);
      if (!inserted)
        repeated(key, slot->second, quote);
      continue;
    }
    if (c == '{' || c == '[')
      stack.push_back({c == '{', c == '{', {}});
    else if ((c == '}' || c == ']') && !stack.empty())
      stack.pop_back();
    else if (c == ',' && !stack.empty() && stack.back().object)
      stack.back().expectKey = true;
  }
}

std::pair<unsigned, unsigned> lineAndColumn(llvm::StringRef text,
                                            size_t offset) {
  llvm::StringRef before = text.take_front(offset);
  unsigned line = 1 + before.count('\n');
  size_t lineStart = before.rfind('\n');
  unsigned column =
      offset - (lineStart == llvm::StringRef::npos ? 0 : lineStart + 1) + 1;
  return {line, column};
}

mlir::LogicalResult checkNestingDepth(llvm::StringRef name,
                                      llvm::StringRef text, TextSyntax syntax,
                                      mlir::MLIRContext *context) {
  std::optional<size_t> deep = findDeepNesting(text, syntax);
  if (!deep)
    return mlir::success();
  auto [line, column] = lineAndColumn(text, *deep);
  return mlir::emitError(mlir::FileLineColLoc::get(context, name, line, column))
         << "brackets nest deeper than " << kMaxNestingDepth
         << " levels here; cgpt refuses deeper input rather than overflow "
            "its parser's stack";
}

mlir::LogicalResult checkNoNulBytes(llvm::StringRef name, llvm::StringRef text,
                                    mlir::MLIRContext *context) {
  size_t nul = text.find('\0');
  if (nul == llvm::StringRef::npos)
    return mlir::success();
  auto [line, column] = lineAndColumn(text, nul);
  return mlir::emitError(mlir::FileLineColLoc::get(context, name, line, column))
         << "a NUL byte in IR text: the file is binary or corrupted";
}

} // namespace cgpt
