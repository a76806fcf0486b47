//===- JsonModel.cpp - config.json read as the YAML tree ------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// A JSON model file becomes the YAML tree every reader reads, with its
// floats marked so that a size written `768.0` is refused as YAML's is,
// and JSON's syntax errors placed at their line and column.
//
//===----------------------------------------------------------------------===//

#include "ModelReader.h"

#include "cgpt/Support/Nesting.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"

#include <cstdio>

using namespace mlir;
using llvm::StringRef;

namespace cgpt::frontend::detail {

/// What stands before a JSON number written as a float in the text that
/// markFloatNumbers hands llvm::json: a NUL, which no model file holds.
constexpr llvm::StringRef kFloatMark("\0float:", 7);

/// `text` with every number written with a fraction or an exponent
/// (`768.0`, `8.0`, `1e-05`) turned into a string that kFloatMark starts:
/// llvm::json reads `768.0` as the integer 768, and Python's json, which
/// Model Zoo and Hugging Face read with, as a float, which a size must
/// not be (YAML's `768.0` is refused the same way).
static std::string markFloatNumbers(StringRef text) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    char c = text[at];
    if (c == '"') {
      size_t end = at + 1;
      while (end < text.size() && text[end] != '"')
        end += text[end] == '\\' ? 2 : 1;
      end = std::min(end + 1, text.size());
      out.append(text.substr(at, end - at));
      at = end;
      continue;
    }
    if (c != '-' && !llvm::isDigit(c)) {
      out.push_back(c);
      ++at;
      continue;
    }
    size_t end = text.find_first_not_of("0123456789+-.eE", at);
    StringRef number = text.substr(at, end - at);
    if (number.find_first_of(".eE") == StringRef::npos)
      out.append(number);
    else
      out.append("\"\\u0000float:" + number.str() + "\"");
    at = number.size() + at;
  }
  return out;
}

/// Converts a JSON document to the yaml-cpp tree the readers walk. Object
/// keys are sorted so that warnings come out in a stable order.
static YAML::Node jsonToYaml(const llvm::json::Value &value) {
  switch (value.kind()) {
  case llvm::json::Value::Null:
    return YAML::Node(YAML::NodeType::Null);
  case llvm::json::Value::Boolean:
    return YAML::Node(*value.getAsBoolean() ? "true" : "false");
  case llvm::json::Value::Number:
    // Written without a fraction or an exponent (markFloatNumbers); past
    // int64_t, llvm::json keeps it as a double.
    if (std::optional<int64_t> i = value.getAsInteger())
      return YAML::Node(std::to_string(*i));
    return YAML::Node(formatExactDouble(*value.getAsNumber()));
  case llvm::json::Value::String: {
    StringRef text = *value.getAsString();
    // A float as YAML spells one, so the readers treat it as they treat
    // YAML's: `768.0` is no size, `1.0e-05` is an epsilon.
    if (text.consume_front(kFloatMark))
      return YAML::Node(
          formatExactDouble(std::strtod(text.str().c_str(), nullptr)));
    YAML::Node node(text.str());
    node.SetTag("!");
    return node;
  }
  case llvm::json::Value::Array: {
    YAML::Node node(YAML::NodeType::Sequence);
    for (const llvm::json::Value &element : *value.getAsArray())
      node.push_back(jsonToYaml(element));
    return node;
  }
  case llvm::json::Value::Object: {
    const llvm::json::Object &object = *value.getAsObject();
    std::vector<std::string> keys;
    for (const auto &entry : object)
      keys.push_back(entry.first.str());
    llvm::sort(keys);
    YAML::Node node(YAML::NodeType::Map);
    for (const std::string &key : keys)
      node[key] = jsonToYaml(*object.get(key));
    return node;
  }
  }
  return YAML::Node();
}

FailureOr<YAML::Node> parseJsonModel(StringRef path, StringRef text,
                                     ConfigSource &source,
                                     MLIRContext *context) {
  if (failed(checkNestingDepth(path, text, TextSyntax::Json, context)))
    return failure();
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json) {
    // llvm::json reports "[line:column, byte=N]: message".
    std::string message = llvm::toString(json.takeError());
    unsigned line = 1, column = 1;
    size_t end = message.find("]: ");
    if (std::sscanf(message.c_str(), "[%u:%u", &line, &column) == 2 &&
        end != std::string::npos)
      message = message.substr(end + 3);
    // llvm::json counts columns from 0 at the start of a line.
    column = std::max(column, 1u);
    emitError(FileLineColLoc::get(context, path, line, column))
        << "malformed JSON: " << message;
    return failure();
  }
  source.warnRepeatedJsonKeys();
  // Parsed again with its floats marked: the first parse, of the text as
  // written, places any syntax error.
  llvm::Expected<llvm::json::Value> marked =
      llvm::json::parse(markFloatNumbers(text));
  if (!marked) {
    emitError(FileLineColLoc::get(context, path, 1, 1))
        << "malformed JSON: " << llvm::toString(marked.takeError());
    return failure();
  }
  return jsonToYaml(*marked);
}

} // namespace cgpt::frontend::detail
