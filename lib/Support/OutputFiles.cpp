//===- OutputFiles.cpp - a run's output files, written all or none --------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Support/OutputFiles.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <optional>

#include <unistd.h>

using llvm::StringRef;
namespace fs = llvm::sys::fs;

namespace cgpt {

/// Where writing `path` lands: a symlink's final target (even a dangling
/// one, which is then created), or `path` itself.
static std::string destinationOf(StringRef path) {
  std::string current = path.str();
  // A bounded walk: a symlink loop ends as the path it started from.
  for (int hop = 0; hop < 40; ++hop) {
    fs::file_status status;
    if (fs::status(current, status, /*follow=*/false) ||
        status.type() != fs::file_type::symlink_file)
      return current;
    char buffer[4096];
    ssize_t length = ::readlink(current.c_str(), buffer, sizeof(buffer));
    if (length <= 0 || length == static_cast<ssize_t>(sizeof(buffer)))
      return current;
    llvm::SmallString<256> target(StringRef(buffer, length));
    if (llvm::sys::path::is_relative(target)) {
      llvm::SmallString<256> joined(llvm::sys::path::parent_path(current));
      llvm::sys::path::append(joined, target);
      target = joined;
    }
    current = std::string(target);
  }
  return path.str();
}

llvm::Error OutputFiles::checkWritable(StringRef path,
                                       llvm::ArrayRef<std::string> inputs) {
  if (path.empty())
    return llvm::createStringError(std::errc::invalid_argument,
                                   "no file name given");
  if (path == "-")
    return llvm::Error::success();
  std::string destination = destinationOf(path);
  if (fs::is_directory(destination))
    return llvm::createStringError(std::errc::is_a_directory,
                                   "it is a directory");
  StringRef folder = llvm::sys::path::parent_path(destination);
  if (!folder.empty() && !fs::is_directory(folder))
    return llvm::createStringError(std::errc::no_such_file_or_directory,
                                   "its folder '%s' does not exist",
                                   folder.str().c_str());
  for (const std::string &input : inputs)
    if (!input.empty() && input != "-" && fs::equivalent(destination, input))
      return llvm::createStringError(
          std::errc::invalid_argument,
          "it is '%s', an input of this run, which it would overwrite",
          input.c_str());
  return llvm::Error::success();
}

void OutputFiles::add(StringRef path, std::string contents) {
  // "-" is standard output, written in order with the rest of it.
  if (path == "-") {
    llvm::outs() << contents;
    return;
  }
  outputs.push_back({path.str(), std::move(contents)});
}

llvm::Error
OutputFiles::add(StringRef path,
                 llvm::function_ref<llvm::Error(llvm::raw_ostream &)> write) {
  std::string contents;
  llvm::raw_string_ostream os(contents);
  if (llvm::Error error = write(os))
    return error;
  os.flush();
  add(path, std::move(contents));
  return llvm::Error::success();
}

/// An error naming `path`.
static llvm::Error cannotWrite(StringRef path, const llvm::Twine &why) {
  return llvm::createStringError(std::errc::io_error, "cannot write '%s': %s",
                                 path.str().c_str(), why.str().c_str());
}

llvm::Error OutputFiles::commitAfter(llvm::raw_fd_ostream &out) {
  out.flush();
  if (out.has_error()) {
    std::error_code error = out.error();
    out.clear_error();
    return llvm::createStringError(
        error, "cannot write standard output: " + error.message() +
                   "; no file was written");
  }
  if (llvm::Error error = commit())
    return llvm::createStringError(llvm::toString(std::move(error)) +
                                   "; no file was changed");
  return llvm::Error::success();
}

llvm::Error OutputFiles::commit() {
  struct Staged {
    const Output *output;
    std::string destination;
    std::optional<fs::TempFile> temporary;
  };
  std::vector<Staged> staged;
  auto discard = [&] {
    for (Staged &s : staged)
      if (s.temporary)
        llvm::consumeError(s.temporary->discard());
  };
  // Plain files: a temporary beside each destination, written in full.
  for (const Output &output : outputs) {
    Staged s{&output, destinationOf(output.path), std::nullopt};
    fs::file_status status;
    bool device = !fs::status(s.destination, status) &&
                  status.type() != fs::file_type::regular_file &&
                  status.type() != fs::file_type::file_not_found;
    if (!device) {
      llvm::Expected<fs::TempFile> temporary =
          fs::TempFile::create(s.destination + ".tmp-%%%%%%");
      if (!temporary) {
        discard();
        return cannotWrite(output.path, llvm::toString(temporary.takeError()));
      }
      llvm::raw_fd_ostream os(temporary->FD, /*shouldClose=*/false);
      os << output.contents;
      os.flush();
      if (os.has_error()) {
        std::string why = os.error().message();
        os.clear_error();
        llvm::consumeError(temporary->discard());
        discard();
        return cannotWrite(output.path, why);
      }
      s.temporary = std::move(*temporary);
    }
    staged.push_back(std::move(s));
  }
  // Devices, fifos and the like: written, never replaced.
  for (Staged &s : staged) {
    if (s.temporary)
      continue;
    std::error_code error;
    llvm::raw_fd_ostream os(s.destination, error, fs::OF_None);
    if (!error) {
      os << s.output->contents;
      os.flush();
      if (os.has_error()) {
        error = os.error();
        os.clear_error();
      }
    }
    if (error) {
      discard();
      return cannotWrite(s.output->path, error.message());
    }
  }
  // Only now does any plain file change.
  for (Staged &s : staged)
    if (s.temporary)
      if (llvm::Error error = s.temporary->keep(s.destination)) {
        std::string why = llvm::toString(std::move(error));
        s.temporary.reset();
        discard();
        return cannotWrite(s.output->path, why);
      }
  outputs.clear();
  return llvm::Error::success();
}

} // namespace cgpt
