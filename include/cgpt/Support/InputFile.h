//===- InputFile.h - read a user's input file, within limits ----*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SUPPORT_INPUTFILE_H
#define CGPT_SUPPORT_INPUTFILE_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/StringSaver.h"

#include <memory>

namespace cgpt {

/// The largest input file cgpt reads: far above any model, target or IR
/// file (the placed 175B wafer IR is a few MB), far below what would
/// exhaust memory.
constexpr uint64_t kMaxInputFileBytes = 256ull << 20;

/// Reads `path` as text. Fails with a message for people (without the
/// path, which the caller names) when it is missing, unreadable, not a
/// regular file (a directory, a device such as /dev/zero, a pipe) or larger
/// than kMaxInputFileBytes.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readInputFile(llvm::StringRef path);

/// `text` without a leading UTF-8 byte order mark, which editors on some
/// systems write and no parser cgpt uses accepts.
llvm::StringRef withoutByteOrderMark(llvm::StringRef text);
/// The same for a whole buffer (the same buffer when it has none).
std::unique_ptr<llvm::MemoryBuffer>
withoutByteOrderMark(std::unique_ptr<llvm::MemoryBuffer> buffer);

/// A tool's input: standard input for "-", read to its end but no further
/// than kMaxInputFileBytes, otherwise readInputFile(path); without a byte
/// order mark. The buffer of standard input is named "<stdin>".
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readToolInput(llvm::StringRef path);

/// Input given in memory (a Python string) under the name `path`, within
/// the same limit as a file and without a byte-order mark.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readInputText(llvm::StringRef path, llvm::StringRef text);

/// The command line with every `@file` argument replaced by the arguments
/// the file holds, as LLVM's tools expand response files, but with each
/// file read as readInputFile reads inputs (a regular file within
/// kMaxInputFileBytes: not /dev/zero, not a fifo) and at most 8 files deep.
/// The result holds no `@file` argument, so LLVM's own expansion, which
/// reads without a bound, finds nothing left to do.
llvm::Expected<llvm::SmallVector<const char *>>
expandResponseFiles(int argc, char **argv, llvm::StringSaver &saver);

} // namespace cgpt

#endif // CGPT_SUPPORT_INPUTFILE_H
