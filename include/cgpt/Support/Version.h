//===- Version.h - cgpt's own version ---------------------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SUPPORT_VERSION_H
#define CGPT_SUPPORT_VERSION_H

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace cgpt {

/// The release version from CMake ("0.5.0").
std::string getVersion();
/// The git commit the tools were built from ("0123456789ab", with "-dirty"
/// for uncommitted changes), or empty outside a checkout.
std::string getGitCommit();
/// "cgpt 0.5.0 (git 0123456789ab)" or "cgpt 0.5.0".
std::string getFullVersion();
/// Prints getFullVersion() and the LLVM/MLIR release the tools were built
/// with, for `--version`.
void printVersion(llvm::raw_ostream &os);

} // namespace cgpt

#endif // CGPT_SUPPORT_VERSION_H
