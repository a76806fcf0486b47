//===- ConfigSource.cpp - typed, located reads of a config tree -----------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Config/ConfigSource.h"

#include "cgpt/Support/Format.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace mlir;
using llvm::StringRef;

namespace cgpt {

std::string describeNode(const YAML::Node &node) {
  switch (node.Type()) {
  case YAML::NodeType::Sequence:
    return "a list";
  case YAML::NodeType::Map:
    return "a mapping";
  case YAML::NodeType::Null:
  case YAML::NodeType::Undefined:
    return "nothing";
  case YAML::NodeType::Scalar:
    return "'" + node.Scalar() + "'";
  }
  return "an unknown node";
}

/// The last key of a dotted name: "model.hidden_size" -> "hidden_size".
static StringRef lastKey(StringRef what) {
  return what.substr(what.rfind('.') + 1);
}

Location ConfigSource::locate(const YAML::Node &node, StringRef key) const {
  if (node.IsDefined()) {
    YAML::Mark mark = node.Mark();
    if (mark.line >= 0)
      return FileLineColLoc::get(context, path, mark.line + 1, mark.column + 1);
  }
  if (isJson && !key.empty()) {
    size_t offset = text.find(("\"" + key + "\"").str());
    if (offset != std::string::npos) {
      StringRef before = StringRef(text).take_front(offset);
      unsigned line = 1 + before.count('\n');
      size_t lineStart = before.rfind('\n');
      unsigned column =
          offset - (lineStart == StringRef::npos ? 0 : lineStart + 1) + 1;
      return FileLineColLoc::get(context, path, line, column);
    }
  }
  return fileStart();
}

Location ConfigSource::fileStart() const {
  return FileLineColLoc::get(context, path, 1, 1);
}

void ConfigSource::error(Location loc, const llvm::Twine &message) {
  if (!failed)
    emitError(loc) << message;
  failed = true;
}

void ConfigSource::warning(Location loc, const llvm::Twine &message) {
  emitWarning(loc) << message;
}

YAML::Node ConfigSource::lookup(const Section &section, StringRef key) {
  if (failed || !section.present())
    return YAML::Node(YAML::NodeType::Undefined);
  if (!section.node.IsMap()) {
    error(locate(section.node, section.name),
          "'" + section.name + "' must be a mapping, got " +
              describeNode(section.node));
    return YAML::Node(YAML::NodeType::Undefined);
  }
  const YAML::Node &map = section.node;
  YAML::Node value = map[key.str()];
  if (!value.IsDefined() || value.IsNull())
    return YAML::Node(YAML::NodeType::Undefined);
  return value;
}

Section ConfigSource::subsection(const Section &section, StringRef key) {
  Section sub{lookup(section, key), section.qualify(key)};
  if (sub.present() && !sub.node.IsMap()) {
    error(locate(sub.node, key), "'" + sub.name + "' must be a mapping, got " +
                                     describeNode(sub.node));
    sub.node = YAML::Node(YAML::NodeType::Undefined);
  }
  return sub;
}

bool ConfigSource::expectScalar(const YAML::Node &node, StringRef what,
                                StringRef expected) {
  if (node.IsScalar())
    return true;
  error(locate(node, lastKey(what)),
        "'" + what + "' must be " + expected + ", got " + describeNode(node));
  return false;
}

/// A quoted YAML scalar ("768") carries the non-specific tag "!": it is a
/// string, even when it looks like a number, as Model Zoo's own loader sees
/// it.
static bool isQuoted(const YAML::Node &node) { return node.Tag() == "!"; }

std::optional<int64_t> ConfigSource::toInt(const YAML::Node &node,
                                           StringRef what, int64_t min,
                                           int64_t max) {
  if (failed || !expectScalar(node, what, "an integer"))
    return std::nullopt;
  StringRef key = lastKey(what);
  int64_t value = 0;
  if (isQuoted(node) || StringRef(node.Scalar()).getAsInteger(10, value)) {
    error(locate(node, key), "'" + what + "' must be an integer, got " +
                                 (isQuoted(node) ? "the string " : "") +
                                 describeNode(node));
    return std::nullopt;
  }
  if (value < min || value > max) {
    error(locate(node, key), "'" + what + "' is " + node.Scalar() +
                                 "; allowed " + formatGrouped(min) + " to " +
                                 formatGrouped(max));
    return std::nullopt;
  }
  return value;
}

std::optional<double> ConfigSource::toDouble(const YAML::Node &node,
                                             StringRef what, double min,
                                             double max) {
  if (failed || !expectScalar(node, what, "a number"))
    return std::nullopt;
  StringRef key = lastKey(what);
  double value = 0;
  if (isQuoted(node) || StringRef(node.Scalar()).getAsDouble(value) ||
      !std::isfinite(value)) {
    error(locate(node, key), "'" + what + "' must be a number, got " +
                                 (isQuoted(node) ? "the string " : "") +
                                 describeNode(node));
    return std::nullopt;
  }
  if (value < min || value > max) {
    error(locate(node, key), "'" + what + "' is " + node.Scalar() +
                                 "; allowed " + formatExactDouble(min) +
                                 " to " + formatExactDouble(max));
    return std::nullopt;
  }
  return value;
}

std::optional<int64_t> ConfigSource::readInt(const Section &section,
                                             StringRef key, int64_t min,
                                             int64_t max) {
  YAML::Node node = lookup(section, key);
  if (!node.IsDefined())
    return std::nullopt;
  return toInt(node, section.qualify(key), min, max);
}

int64_t ConfigSource::requireInt(const Section &section, StringRef key,
                                 int64_t min, int64_t max) {
  YAML::Node node = lookup(section, key);
  if (!node.IsDefined()) {
    if (!failed)
      error(section.present() ? locate(section.node, section.name)
                              : fileStart(),
            "missing required key '" + section.qualify(key) + "'");
    return min;
  }
  return toInt(node, section.qualify(key), min, max).value_or(min);
}

std::optional<double> ConfigSource::readDouble(const Section &section,
                                               StringRef key, double min,
                                               double max) {
  YAML::Node node = lookup(section, key);
  if (!node.IsDefined())
    return std::nullopt;
  return toDouble(node, section.qualify(key), min, max);
}

std::optional<bool> ConfigSource::readBool(const Section &section,
                                           StringRef key) {
  YAML::Node node = lookup(section, key);
  std::string what = section.qualify(key);
  if (!node.IsDefined() || !expectScalar(node, what, "true or false"))
    return std::nullopt;
  std::string lower = StringRef(node.Scalar()).lower();
  if (!isQuoted(node)) {
    if (lower == "true" || lower == "yes" || lower == "on")
      return true;
    if (lower == "false" || lower == "no" || lower == "off")
      return false;
  }
  error(locate(node, key),
        "'" + what + "' must be true or false, got " + describeNode(node));
  return std::nullopt;
}

std::optional<std::string> ConfigSource::readString(const Section &section,
                                                    StringRef key) {
  YAML::Node node = lookup(section, key);
  if (!node.IsDefined() ||
      !expectScalar(node, section.qualify(key), "a string"))
    return std::nullopt;
  return node.Scalar();
}

void ConfigSource::warnUnknownKeys(const Section &section,
                                   llvm::ArrayRef<StringRef> known) {
  if (failed || !section.present() || !section.node.IsMap())
    return;
  for (const auto &entry : section.node) {
    if (!entry.first.IsScalar())
      continue;
    std::string key = entry.first.Scalar();
    if (!llvm::is_contained(known, StringRef(key)))
      warning(locate(entry.first, key),
              "unknown key '" + section.qualify(key) + "' ignored");
  }
}

} // namespace cgpt
