//===- Debug.cpp - -debug and -debug-only for release builds --------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Support/Debug.h"

#include "llvm/Support/CommandLine.h"

#include <string>
#include <vector>

void cgpt::registerDebugOptions() {
  // An LLVM built with assertions registers both itself.
  if (llvm::cl::getRegisteredOptions().count("debug-only"))
    return;
  static llvm::cl::opt<bool, true> debug(
      "debug", llvm::cl::desc("Print every debug trace (docs/debugging.md)"),
      llvm::cl::Hidden, llvm::cl::location(llvm::DebugFlag));
  static std::vector<std::string> types;
  static llvm::cl::list<std::string> debugOnly(
      "debug-only",
      llvm::cl::desc("Print the debug traces of these types, such as "
                     "wafer-plan-batch,wafer-layout (docs/debugging.md)"),
      llvm::cl::Hidden, llvm::cl::CommaSeparated, llvm::cl::value_desc("type"),
      llvm::cl::callback([](const std::string &t) {
        types.push_back(t);
        std::vector<const char *> names;
        for (const std::string &name : types)
          names.push_back(name.c_str());
        llvm::DebugFlag = true;
        llvm::setCurrentDebugTypes(names.data(), names.size());
      }));
}
