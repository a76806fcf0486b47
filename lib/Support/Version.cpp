//===- Version.cpp - cgpt's own version -----------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Support/Version.h"

#include "cgpt/Support/Version.inc"

#include "llvm/Config/llvm-config.h"

namespace cgpt {

std::string getVersion() { return CGPT_VERSION; }

std::string getGitCommit() { return CGPT_GIT_COMMIT; }

std::string getFullVersion() {
  std::string commit = getGitCommit();
  return "cgpt " + getVersion() +
         (commit.empty() ? "" : " (git " + commit + ")");
}

void printVersion(llvm::raw_ostream &os) {
  os << getFullVersion() << "\nbuilt with LLVM " << LLVM_VERSION_STRING
     << " and MLIR " << LLVM_VERSION_STRING << "\n";
}

} // namespace cgpt
