//===- Dropout.cpp - the counter-based dropout mask -----------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Exec/Dropout.h"

#include <cmath>

using namespace cgpt;
using namespace cgpt::exec;

uint32_t exec::dropoutSequenceKey(const DropoutStream &stream, int64_t site,
                                  int64_t sequence) {
  auto low = [](uint64_t value) { return static_cast<uint32_t>(value); };
  uint32_t seed = low(stream.seed) ^ low(stream.seed >> 32);
  uint32_t key = hash32(seed + low(static_cast<uint64_t>(stream.step)));
  key = hash32(key + low(static_cast<uint64_t>(site)));
  return hash32(key + low(static_cast<uint64_t>(sequence)));
}

Tensor exec::dropout(const Tensor &input, double rate, int64_t site,
                     const DropoutStream &stream) {
  Tensor result(input.shape);
  int64_t sequences = input.shape.empty() ? 1 : input.shape.front();
  int64_t columns = input.shape.empty() ? 1 : input.shape.back();
  int64_t perSequence = sequences ? input.numel() / sequences : 0;
  int64_t rows = columns ? perSequence / columns : 0;
  // Kept when the bits are at least rate x 2^32 (rate < 1 fits 32 bits).
  auto threshold = static_cast<uint64_t>(std::ldexp(rate, 32));
  float scale = static_cast<float>(1.0 / (1.0 - rate));
  for (int64_t s = 0; s < sequences; ++s) {
    uint32_t sequenceKey =
        dropoutSequenceKey(stream, site, stream.firstSequence + s);
    for (int64_t r = 0; r < rows; ++r) {
      uint32_t rowKey = hash32(sequenceKey + static_cast<uint32_t>(r));
      int64_t base = (s * rows + r) * columns;
      for (int64_t c = 0; c < columns; ++c) {
        uint32_t bits = hash32(rowKey + static_cast<uint32_t>(c));
        if (bits >= threshold)
          result.data[base + c] = input.data[base + c] * scale;
      }
    }
  }
  return result;
}
