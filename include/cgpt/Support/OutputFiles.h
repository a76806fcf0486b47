//===- OutputFiles.h - a run's output files, written all or none -*- C++
//-*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// A run that writes several files (a report, a trace, a picture) must not
// leave some of them new and some old when it fails half-way, nor replace
// what a path names when that is not a plain file. OutputFiles holds each
// output's bytes until the run has succeeded, then writes them all: each
// plain file through a temporary file beside it, renamed into place only
// once every one is written; a character device or fifo (/dev/stdout,
// /dev/null) written directly, never replaced; a symlink written through
// to its target, never replaced.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SUPPORT_OUTPUTFILES_H
#define CGPT_SUPPORT_OUTPUTFILES_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace cgpt {

class OutputFiles {
public:
  /// Fails, saying why, unless `path` can be written: a name is given, it
  /// is not a directory, its folder exists, and it is not the same file as
  /// any of `inputs` (which would be overwritten); "-" (standard output)
  /// always can. For checking every output before a run does any work.
  static llvm::Error checkWritable(llvm::StringRef path,
                                   llvm::ArrayRef<std::string> inputs = {});

  /// Adds `contents` to be written to `path` on commit(); "-" prints them
  /// on standard output now.
  void add(llvm::StringRef path, std::string contents);
  /// Adds what `write` prints, to be written to `path` on commit().
  llvm::Error add(llvm::StringRef path,
                  llvm::function_ref<llvm::Error(llvm::raw_ostream &)> write);

  /// Writes every output, or none of the plain files: temporaries first,
  /// then devices, then the renames. On failure, names the path.
  llvm::Error commit();
  /// Flushes `out` (standard output) and commits only if all of it was
  /// written: a run whose printed results were lost changes no file.
  llvm::Error commitAfter(llvm::raw_fd_ostream &out);

  bool empty() const { return outputs.empty(); }

private:
  struct Output {
    std::string path;
    std::string contents;
  };
  std::vector<Output> outputs;
};

} // namespace cgpt

#endif // CGPT_SUPPORT_OUTPUTFILES_H
