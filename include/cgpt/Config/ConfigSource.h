//===- ConfigSource.h - typed, located reads of a config tree ---*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// A model file is held as a yaml-cpp tree (JSON is converted into one). A
// ConfigSource reads typed values out of it and reports the first error at
// the offending value's file:line:col; later reads after an error are
// no-ops, so readers can be written straight-line and checked once.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_CONFIG_CONFIGSOURCE_H
#define CGPT_CONFIG_CONFIGSOURCE_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>

namespace cgpt {

/// A mapping in the file and its dotted name ("model",
/// "trainer.init.model"). `node` is undefined when the section is absent.
struct Section {
  YAML::Node node;
  std::string name;

  std::string qualify(llvm::StringRef key) const {
    return name.empty() ? key.str() : name + "." + key.str();
  }
  bool present() const { return node.IsDefined() && !node.IsNull(); }
};

class ConfigSource {
public:
  ConfigSource(mlir::MLIRContext *context, std::string path, std::string text,
               bool isJson)
      : context(context), path(std::move(path)), text(std::move(text)),
        isJson(isJson) {}

  const std::string &getPath() const { return path; }
  const std::string &getText() const { return text; }
  bool hasFailed() const { return failed; }

  /// Parses the text as one YAML document, as PyYAML (which Model Zoo
  /// reads its files with) reads it: merge keys (`<<: *anchor`) merged in,
  /// and a key given twice in one mapping keeping its last value, with a
  /// warning naming both lines. Malformed YAML or a second document is an
  /// error; then the result is undefined.
  YAML::Node parseYaml();
  /// Warns, naming both lines, for each key a JSON object of the text gives
  /// twice: llvm::json keeps the last, as Python's json does.
  void warnRepeatedJsonKeys();

  /// Location of `node`; JSON trees carry no marks, so the first
  /// occurrence of `"key"` in the text stands in.
  mlir::Location locate(const YAML::Node &node, llvm::StringRef key = {}) const;
  mlir::Location fileStart() const;

  /// Reports the first error of the file; later ones are dropped.
  void error(mlir::Location loc, const llvm::Twine &message);
  void warning(mlir::Location loc, const llvm::Twine &message);

  /// The value of `key` in `section`, or an undefined node when absent or
  /// null. A section that is not a mapping is an error.
  YAML::Node lookup(const Section &section, llvm::StringRef key);
  /// Location of `key`'s value in `section`, found as `locate` finds it.
  mlir::Location locateKey(const Section &section, llvm::StringRef key);
  /// The mapping under `key` as a section (absent is fine, a non-mapping is
  /// an error).
  Section subsection(const Section &section, llvm::StringRef key);

  std::optional<int64_t> readInt(const Section &section, llvm::StringRef key,
                                 int64_t min, int64_t max);
  int64_t requireInt(const Section &section, llvm::StringRef key, int64_t min,
                     int64_t max);
  std::optional<double> readDouble(const Section &section, llvm::StringRef key,
                                   double min, double max);
  std::optional<bool> readBool(const Section &section, llvm::StringRef key);
  std::optional<std::string> readString(const Section &section,
                                        llvm::StringRef key);

  /// Conversions of one scalar node, `what` naming it in errors.
  std::optional<int64_t> toInt(const YAML::Node &node, llvm::StringRef what,
                               int64_t min, int64_t max);
  std::optional<double> toDouble(const YAML::Node &node, llvm::StringRef what,
                                 double min, double max);

  /// Warns once for every key of `section` not in `known`.
  void warnUnknownKeys(const Section &section,
                       llvm::ArrayRef<llvm::StringRef> known);

private:
  bool expectScalar(const YAML::Node &node, llvm::StringRef what,
                    llvm::StringRef expected);

  mlir::MLIRContext *context;
  std::string path;
  std::string text;
  bool isJson;
  bool failed = false;
};

/// Describes a node's kind for "got a list" style messages.
std::string describeNode(const YAML::Node &node);

} // namespace cgpt

#endif // CGPT_CONFIG_CONFIGSOURCE_H
