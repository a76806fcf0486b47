//===- ConfigSource.cpp - typed, located reads of a config tree -----------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Config/ConfigSource.h"

#include "cgpt/Support/Format.h"
#include "cgpt/Support/Nesting.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

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
    return quoteValue(node.Scalar());
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
      auto [line, column] = lineAndColumn(text, offset);
      return FileLineColLoc::get(context, path, line, column);
    }
  }
  return fileStart();
}

/// Whether PyYAML's safe loader, which Model Zoo reads files with, knows
/// `tag`: none, a quoted scalar's "!", or one of YAML's own.
static bool isSafeTag(StringRef tag) {
  if (tag.empty() || tag == "?" || tag == "!")
    return true;
  return tag.consume_front("tag:yaml.org,2002:") &&
         llvm::is_contained(
             {"str", "int", "float", "bool", "null", "map", "seq", "merge"},
             tag);
}

/// Merges `<<` keys and keeps the last of repeated keys in every mapping
/// under `node`. An alias shares its anchor's node and position: `visited`
/// (positions in the text) makes each node count once, so alias cycles and
/// alias fan-out ("billion laughs") cost no more than the text.
static void normalize(YAML::Node node, ConfigSource &source,
                      llvm::DenseSet<int> &visited) {
  if (!visited.insert(node.Mark().pos).second)
    return;
  if (!isSafeTag(node.Tag())) {
    source.error(source.locate(node),
                 "the YAML tag " + quoteValue(node.Tag()) +
                     " names no type PyYAML's safe loader, which Model Zoo "
                     "reads files with, constructs");
    return;
  }
  if (node.IsSequence()) {
    for (YAML::Node element : node)
      normalize(element, source, visited);
    return;
  }
  if (!node.IsMap())
    return;
  llvm::StringMap<YAML::Node> lastKey;
  std::vector<YAML::Node> overridden, merged;
  for (const auto &entry : node) {
    if (!entry.first.IsScalar())
      continue;
    normalize(entry.second, source, visited);
    if (entry.first.Scalar() == "<<" && entry.first.Tag() != "!") {
      merged.push_back(entry.second);
      overridden.push_back(entry.first);
      continue;
    }
    auto [slot, inserted] =
        lastKey.try_emplace(entry.first.Scalar(), entry.first);
    if (!inserted) {
      source.warning(
          source.locate(entry.first),
          "key " + quoteValue(entry.first.Scalar()) + " is given again (line " +
              std::to_string(slot->second.Mark().line + 1) + " and line " +
              std::to_string(entry.first.Mark().line + 1) +
              "); the last one counts, as in PyYAML");
      overridden.push_back(slot->second);
      slot->second = entry.first;
    }
  }
  // Removing by key node drops exactly that entry, not every equal key.
  for (const YAML::Node &key : overridden)
    node.remove(key);
  // A merge adds the keys the mapping does not give itself; of several
  // merged mappings, the first that gives a key wins.
  for (const YAML::Node &value : merged) {
    std::vector<YAML::Node> sources;
    if (value.IsSequence())
      for (const YAML::Node &mapping : value)
        sources.push_back(mapping);
    else
      sources.push_back(value);
    for (const YAML::Node &mapping : sources) {
      if (!mapping.IsMap()) {
        source.error(source.locate(mapping),
                     "a merge key '<<' must name a mapping or a list of "
                     "mappings, got " +
                         describeNode(mapping));
        return;
      }
      for (const auto &entry : mapping)
        if (entry.first.IsScalar() && !lastKey.count(entry.first.Scalar())) {
          lastKey.try_emplace(entry.first.Scalar(), entry.first);
          node[entry.first] = entry.second;
        }
    }
  }
}

/// The line (1-based) where a second YAML document starts in `text`: a
/// `---` at the start of a line after the first document's content, or
/// content after a `...` end marker; 0 when there is none. (yaml-cpp's
/// LoadAll cannot be used to count documents: on a stray ',' it makes
/// empty documents without end.)
static unsigned secondDocumentLine(StringRef text) {
  // `opened`: a `---` began the first document, so another starts a
  // second even with nothing between (PyYAML reads an empty document).
  bool content = false, ended = false, opened = false;
  unsigned number = 0;
  for (StringRef rest = text; !rest.empty();) {
    auto [line, next] = rest.split('\n');
    rest = next;
    ++number;
    StringRef trimmed = line.rtrim();
    bool start = trimmed == "---" || line.starts_with("--- ");
    if (trimmed == "...") {
      ended = content;
      continue;
    }
    if ((start && (content || opened)) || (ended && !trimmed.ltrim().empty() &&
                                           !trimmed.ltrim().starts_with("#")))
      return number;
    opened = opened || start;
    if (start || trimmed.ltrim().empty() || trimmed.ltrim().starts_with("#") ||
        (!content && trimmed.starts_with("%")))
      continue;
    content = true;
  }
  return 0;
}

YAML::Node ConfigSource::parseYaml() {
  // A carriage return alone ends a line in YAML, as PyYAML reads it (files
  // saved with classic Mac line ends); yaml-cpp reads it as a character.
  // One byte for one: every line and column stays where it was.
  for (size_t at = 0; at < text.size(); ++at)
    if (text[at] == '\r' && (at + 1 == text.size() || text[at + 1] != '\n'))
      text[at] = '\n';
  if (unsigned line = secondDocumentLine(text)) {
    error(FileLineColLoc::get(context, path, line, 1),
          "a second YAML document starts here; a file holds one");
    return YAML::Node(YAML::NodeType::Undefined);
  }
  // yaml-cpp stops a file nested past its recursion limit with a bare "bad
  // file"; YAML's flow brackets are JSON's, so the same scan names the place
  // and the limit.
  if (std::optional<size_t> deep = findDeepNesting(text, TextSyntax::Json)) {
    auto [line, column] = lineAndColumn(text, *deep);
    error(FileLineColLoc::get(context, path, line, column),
          "brackets nest deeper than " + std::to_string(kMaxNestingDepth) +
              " levels here; cgpt refuses deeper input rather than overflow "
              "its parser's stack");
    return YAML::Node(YAML::NodeType::Undefined);
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception &e) {
    error(
        FileLineColLoc::get(context, path, e.mark.line + 1, e.mark.column + 1),
        "malformed YAML: " + e.msg);
    return YAML::Node(YAML::NodeType::Undefined);
  }
  llvm::DenseSet<int> visited;
  normalize(root, *this, visited);
  return failed ? YAML::Node(YAML::NodeType::Undefined) : root;
}

void ConfigSource::warnRepeatedJsonKeys() {
  forEachRepeatedJsonKey(text, [&](StringRef key, size_t first, size_t at) {
    auto [line, column] = lineAndColumn(text, at);
    warning(FileLineColLoc::get(context, path, line, column),
            "key " + quoteValue(key) + " is given again (line " +
                std::to_string(lineAndColumn(text, first).first) +
                " and line " + std::to_string(line) +
                "); the last one counts, as in Python's json");
  });
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
    error(locate(section.node, section.name), "'" + section.name +
                                                  "' must be a mapping, got " +
                                                  describeNode(section.node));
    return YAML::Node(YAML::NodeType::Undefined);
  }
  const YAML::Node &map = section.node;
  YAML::Node value = map[key.str()];
  if (!value.IsDefined() || value.IsNull())
    return YAML::Node(YAML::NodeType::Undefined);
  return value;
}

Location ConfigSource::locateKey(const Section &section, StringRef key) {
  return locate(lookup(section, key), key);
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
/// So is one tagged `!!str`.
static bool isQuoted(const YAML::Node &node) {
  return node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str";
}

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
              "unknown key " + quoteValue(section.qualify(key)) + " ignored");
  }
}

} // namespace cgpt
