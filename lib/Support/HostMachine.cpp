//===- HostMachine.cpp - the machine cgpt runs on -------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Support/HostMachine.h"

#include <unistd.h>

namespace cgpt {

int64_t hostMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? int64_t(pages) * size : 0;
}

int64_t defaultMemoryLimitBytes() { return hostMemoryBytes() / 4 * 3; }

std::optional<int64_t> parseByteSize(llvm::StringRef text) {
  text = text.trim();
  if (!text.consume_back("iB"))
    text.consume_back("B");
  int shift = 0;
  if (!text.empty()) {
    switch (text.back()) {
    case 'K':
    case 'k':
      shift = 10;
      break;
    case 'M':
    case 'm':
      shift = 20;
      break;
    case 'G':
    case 'g':
      shift = 30;
      break;
    case 'T':
    case 't':
      shift = 40;
      break;
    default:
      break;
    }
  }
  if (shift)
    text = text.drop_back();
  uint64_t value = 0;
  if (text.empty() || text.getAsInteger(10, value) || value == 0 ||
      value > (uint64_t(1) << (62 - shift)))
    return std::nullopt;
  return static_cast<int64_t>(value << shift);
}

} // namespace cgpt
