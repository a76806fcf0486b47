//===- TestModels.h - helpers shared by the unit tests ----------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_TEST_UNIT_TESTMODELS_H
#define CGPT_TEST_UNIT_TESTMODELS_H

#include "cgpt/Exec/ExecutionModels.h"
#include "cgpt/Frontend/ModelSpec.h"
#include "cgpt/InitAllDialects.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace cgpt::test {

/// The source tree, as lit passes it (CGPT_SOURCE_DIR).
inline std::string sourcePath(const std::string &relative) {
  const char *root = std::getenv("CGPT_SOURCE_DIR");
  return std::string(root ? root : ".") + "/" + relative;
}

/// The text of built-in target `name`'s file (lib/Target/targets), for
/// tests that edit a figure of it.
inline std::string builtinTargetText(const std::string &name) {
  std::ifstream in(sourcePath("lib/Target/targets/" + name + ".yaml"));
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

/// Every cgpt dialect with its kernels' lowering and execution models, as
/// the tools register them.
inline mlir::DialectRegistry allDialects() {
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  exec::registerExecutionModels(registry);
  return registry;
}

/// Imports a model file of the source tree; null (with a diagnostic) when
/// it does not import.
inline mlir::OwningOpRef<mlir::ModuleOp>
importSourceModel(const std::string &relative, mlir::MLIRContext *context) {
  return frontend::importModelFile(sourcePath(relative), context);
}

/// Writes `text` to a fresh temporary file with `suffix` and returns its
/// path.
inline std::string writeTemporary(const std::string &text,
                                  const std::string &suffix) {
  llvm::SmallString<128> path;
  int fd = -1;
  if (llvm::sys::fs::createTemporaryFile("cgpt-unit", suffix, fd, path))
    return "";
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << text;
  return std::string(path);
}

} // namespace cgpt::test

#endif // CGPT_TEST_UNIT_TESTMODELS_H
