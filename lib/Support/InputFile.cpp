//===- InputFile.cpp - read a user's input file, within limits ------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Support/InputFile.h"

#include "cgpt/Support/Format.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"

namespace cgpt {

/// Refuses an input of `bytes` over kMaxInputFileBytes.
static llvm::Error tooLarge(uint64_t bytes) {
  return llvm::createStringError(
      std::errc::file_too_large, "it has %s bytes; the limit is %s",
      formatGrouped(static_cast<int64_t>(bytes)).c_str(),
      formatGrouped(static_cast<int64_t>(kMaxInputFileBytes)).c_str());
}

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
    return tooLarge(status.getSize());
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   buffer.getError().message());
  return std::move(*buffer);
}

llvm::StringRef withoutByteOrderMark(llvm::StringRef text) {
  text.consume_front("\xEF\xBB\xBF");
  return text;
}

std::unique_ptr<llvm::MemoryBuffer>
withoutByteOrderMark(std::unique_ptr<llvm::MemoryBuffer> buffer) {
  llvm::StringRef text = withoutByteOrderMark(buffer->getBuffer());
  if (text.size() == buffer->getBufferSize())
    return buffer;
  return llvm::MemoryBuffer::getMemBufferCopy(text,
                                              buffer->getBufferIdentifier());
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readToolInput(llvm::StringRef path) {
  if (path != "-") {
    llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        readInputFile(path);
    if (!buffer)
      return buffer.takeError();
    return withoutByteOrderMark(std::move(*buffer));
  }
  // A pipe has no size to check first: read in chunks and stop one byte
  // past the limit.
  llvm::SmallString<0> text;
  char chunk[1 << 16];
  while (true) {
    llvm::Expected<size_t> read = llvm::sys::fs::readNativeFile(
        llvm::sys::fs::getStdinHandle(), llvm::MutableArrayRef(chunk));
    if (!read)
      return read.takeError();
    if (*read == 0)
      break;
    text.append(chunk, chunk + *read);
    if (text.size() > kMaxInputFileBytes)
      return llvm::createStringError(
          std::errc::file_too_large,
          "standard input has more than %s bytes, the limit",
          formatGrouped(static_cast<int64_t>(kMaxInputFileBytes)).c_str());
  }
  return withoutByteOrderMark(
      llvm::MemoryBuffer::getMemBufferCopy(text, "<stdin>"));
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readInputText(llvm::StringRef path, llvm::StringRef text) {
  if (text.size() > kMaxInputFileBytes)
    return tooLarge(text.size());
  return llvm::MemoryBuffer::getMemBufferCopy(withoutByteOrderMark(text), path);
}

/// Appends `args`, expanding `@file` arguments, `depth` files deep so far.
static llvm::Error expandInto(llvm::ArrayRef<const char *> args,
                              llvm::StringSaver &saver, unsigned depth,
                              llvm::SmallVectorImpl<const char *> &out) {
  constexpr unsigned kMaxDepth = 8;
  for (const char *arg : args) {
    llvm::StringRef text(arg);
    if (!text.starts_with("@") || text.size() == 1) {
      out.push_back(arg);
      continue;
    }
    llvm::StringRef path = text.drop_front();
    if (depth == kMaxDepth)
      return llvm::createStringError(
          std::errc::too_many_links,
          "response file '%s' is nested more than %u response files deep",
          path.str().c_str(), kMaxDepth);
    llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        readInputFile(path);
    if (!buffer)
      return llvm::createStringError(
          std::errc::invalid_argument, "cannot read response file '%s': %s",
          path.str().c_str(), llvm::toString(buffer.takeError()).c_str());
    // Arguments are text: a binary file would be split into fragments
    // that reach the messages raw.
    llvm::StringRef contents = (*buffer)->getBuffer();
    size_t invalid = llvm::StringRef::npos;
    if (llvm::json::isUTF8(contents, &invalid))
      invalid = llvm::StringRef::npos;
    size_t bad = std::min(contents.find('\0'), invalid);
    if (bad != llvm::StringRef::npos)
      return llvm::createStringError(
          std::errc::invalid_argument,
          "response file '%s' is not text: the byte at offset %zu is %s",
          path.str().c_str(), bad, contents[bad] == '\0' ? "NUL" : "not UTF-8");
    llvm::SmallVector<const char *> inner;
    llvm::cl::TokenizeGNUCommandLine(contents, saver, inner);
    if (llvm::Error error = expandInto(inner, saver, depth + 1, out))
      return error;
  }
  return llvm::Error::success();
}

llvm::Expected<llvm::SmallVector<const char *>>
expandResponseFiles(int argc, char **argv, llvm::StringSaver &saver) {
  llvm::SmallVector<const char *> out;
  if (llvm::Error error = expandInto(llvm::ArrayRef(argv, argc), saver, 0, out))
    return std::move(error);
  return out;
}

} // namespace cgpt
