//===- InputFile.cpp - read a user's input file, within limits ------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Support/InputFile.h"

#include "cgpt/Support/Format.h"

#include "llvm/Support/FileSystem.h"

namespace cgpt {

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readInputFile(llvm::StringRef path) {
  llvm::sys::fs::file_status status;
  if (std::error_code error = llvm::sys::fs::status(path, status))
    return llvm::createStringError(error, error.message());
  if (status.type() == llvm::sys::fs::file_type::directory_file)
    return llvm::createStringError(std::errc::is_a_directory,
                                   "it is a directory");
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return llvm::createStringError(std::errc::invalid_argument,
                                   "it is not a regular file");
  if (status.getSize() > kMaxInputFileBytes)
    return llvm::createStringError(
        std::errc::file_too_large, "it has %s bytes; the limit is %s",
        formatGrouped(static_cast<int64_t>(status.getSize())).c_str(),
        formatGrouped(static_cast<int64_t>(kMaxInputFileBytes)).c_str());
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   buffer.getError().message());
  return std::move(*buffer);
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readToolInput(llvm::StringRef path) {
  if (path == "-")
    return llvm::errorOrToExpected(llvm::MemoryBuffer::getSTDIN());
  return readInputFile(path);
}

} // namespace cgpt
