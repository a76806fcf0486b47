//===- FormatSniffing.cpp - YAML or JSON, by name or content --------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Whether a model file is YAML or JSON: by its name's extension, else by
// its first character.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Frontend/ModelSpec.h"
#include "cgpt/Support/InputFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

using llvm::StringRef;

namespace cgpt::frontend {

std::optional<ModelFormat> modelFormatOf(StringRef path) {
  StringRef ext = llvm::sys::path::extension(path);
  if (ext == ".yaml" || ext == ".yml")
    return ModelFormat::Yaml;
  if (ext == ".json")
    return ModelFormat::Json;
  return std::nullopt;
}

std::optional<ModelFormat> modelFormatOfInput(StringRef path, StringRef text) {
  if (std::optional<ModelFormat> format = modelFormatOf(path))
    return format;
  if (llvm::sys::path::extension(path) == ".mlir")
    return std::nullopt;
  return sniffModelFormat(text);
}

std::optional<ModelFormat> sniffModelFormat(StringRef text) {
  StringRef rest = withoutByteOrderMark(text);
  while (!rest.empty()) {
    auto [line, next] = rest.split('\n');
    rest = next;
    line = line.trim();
    // A YAML comment, or an MLIR alias definition, which cannot start a
    // model file either way: look further.
    if (line.empty() || line.starts_with("#") || line == "---")
      continue;
    if (line.starts_with("{"))
      return ModelFormat::Json;
    if (line.starts_with("//"))
      return std::nullopt;
    size_t colon = line.find(':');
    StringRef key = line.take_front(colon);
    bool yamlKey =
        colon != StringRef::npos && !key.empty() &&
        llvm::all_of(key, [](char c) {
          return llvm::isAlnum(c) || c == '_' || c == '-' || c == '.';
        });
    return yamlKey ? std::optional(ModelFormat::Yaml) : std::nullopt;
  }
  return std::nullopt;
}

} // namespace cgpt::frontend
