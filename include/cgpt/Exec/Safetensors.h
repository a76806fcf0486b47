//===- Safetensors.h - tensors in the safetensors layout --------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Weights, gradients and batches are exchanged in the safetensors layout:
// an 8-byte little-endian header length, a JSON header naming each tensor's
// dtype, shape and byte range, then the raw little-endian data. numpy reads
// it with `json` and `numpy.frombuffer`, no extra package needed
// (docs/functional.md shows the ten lines).
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_EXEC_SAFETENSORS_H
#define CGPT_EXEC_SAFETENSORS_H

#include "cgpt/Exec/Kernels.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>

namespace cgpt::exec {

/// One tensor to write: f32 or int32 data with its shape.
struct SafetensorsEntry {
  std::string name;
  llvm::ArrayRef<int64_t> shape;
  const float *f32 = nullptr;
  const int32_t *i32 = nullptr;
};

/// Prints `entries` (in name order, whatever their order here) and
/// `metadata` as a safetensors file.
void printSafetensors(llvm::raw_ostream &os,
                      llvm::ArrayRef<SafetensorsEntry> entries,
                      const std::map<std::string, std::string> &metadata);

/// Reads every F32 tensor of `path`. Errors name the tensor and what is
/// wrong with it; other dtypes are refused.
llvm::Expected<llvm::StringMap<Tensor>> readSafetensors(llvm::StringRef path);

/// Reads every F32 tensor of `bytes`, the contents of the file `path`
/// (named in errors).
llvm::Expected<llvm::StringMap<Tensor>> parseSafetensors(llvm::StringRef bytes,
                                                         llvm::StringRef path);

} // namespace cgpt::exec

#endif // CGPT_EXEC_SAFETENSORS_H
