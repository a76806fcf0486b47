//===- SafetensorsFuzzer.cpp - fuzz the weights reader --------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to the safetensors reader that --init-weights uses.
// Any outcome but a crash, a sanitizer report or a hang is fine: a bad file
// must end in an error.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Exec/Safetensors.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  llvm::Expected<llvm::StringMap<cgpt::exec::Tensor>> tensors =
      cgpt::exec::parseSafetensors(bytes, "fuzz.safetensors");
  if (!tensors)
    llvm::consumeError(tensors.takeError());
  return 0;
}
