//===- HostMachine.h - the machine cgpt runs on -----------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// What the host offers a run that executes (the functional executor, the
// cycle-level mesh): its memory, and the share of it a run may use unless
// told otherwise (--memory-limit).
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SUPPORT_HOSTMACHINE_H
#define CGPT_SUPPORT_HOSTMACHINE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace cgpt {

/// The host's physical memory in bytes, or 0 where it cannot be read.
int64_t hostMemoryBytes();

/// The default memory limit of a run: three quarters of the host's memory,
/// leaving the rest to the system and to what else runs; 0 where the
/// memory cannot be read (no limit).
int64_t defaultMemoryLimitBytes();

/// A size such as "8G", "512M", "64K" or "1000000" (bytes; binary
/// multiples, an optional trailing "B" or "iB"), or nothing where `text`
/// is not one or is above 2^62 bytes.
std::optional<int64_t> parseByteSize(llvm::StringRef text);

} // namespace cgpt

#endif // CGPT_SUPPORT_HOSTMACHINE_H
