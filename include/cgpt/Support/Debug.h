//===- Debug.h - why a pass or a model chose what it chose ------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Debug tracing as LLVM does it: each pass and each major class defines a
// DEBUG_TYPE, and `-debug-only=TYPE[,TYPE...]` (or `-debug` for all) prints
// its traces to llvm::dbgs(). LLVM_DEBUG compiles to nothing where NDEBUG
// is defined, which a release build of cgpt and Debian's LLVM both are, so
// the traces would be there for no user. CGPT_DEBUG is LLVM_DEBUG kept in
// every build: the same switch (llvm::DebugFlag, llvm::isCurrentDebugType,
// which LLVM's Support library defines in release builds too), a branch on
// one global when off. docs/debugging.md lists the types.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SUPPORT_DEBUG_H
#define CGPT_SUPPORT_DEBUG_H

#include "llvm/Support/Debug.h"

#ifdef NDEBUG
// Debug.h stands these in by nothing where NDEBUG is defined; LLVM's
// Support library defines the functions in every build.
#undef isCurrentDebugType
#undef setCurrentDebugTypes
namespace llvm {
bool isCurrentDebugType(const char *type);
void setCurrentDebugTypes(const char **types, unsigned count);
} // namespace llvm
#endif

/// Runs the statements when `-debug`, or `-debug-only` naming DEBUG_TYPE,
/// was given.
#define CGPT_DEBUG(...)                                                        \
  do {                                                                         \
    if (::llvm::DebugFlag && ::llvm::isCurrentDebugType(DEBUG_TYPE)) {         \
      __VA_ARGS__;                                                             \
    }                                                                          \
  } while (false)

/// llvm::dbgs() with the trace's type first, "[wafer-place] ", as every
/// trace line starts.
#define CGPT_DBGS() (::llvm::dbgs() << "[" DEBUG_TYPE "] ")

namespace cgpt {

/// Registers `-debug` and `-debug-only=TYPE[,TYPE...]` with llvm::cl, as an
/// LLVM built with assertions does; does nothing where LLVM already has.
/// Call before the command line is parsed.
void registerDebugOptions();

} // namespace cgpt

#endif // CGPT_SUPPORT_DEBUG_H
