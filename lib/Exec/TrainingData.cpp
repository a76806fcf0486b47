//===- TrainingData.cpp - the batches a functional run trains on ----------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Exec/TrainingData.h"

#include "cgpt/Support/Format.h"
#include "cgpt/Support/InputFile.h"

#include "llvm/Support/FormatVariadic.h"

using namespace cgpt;
using namespace cgpt::exec;

llvm::Expected<TrainingData>
TrainingData::fromText(llvm::StringRef path, int64_t seqLen, int64_t vocab) {
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError(
        std::make_error_code(std::errc::invalid_argument),
        "training text '" + path + "': " + why);
  };
  if (vocab < 256)
    return fail("byte tokens need a vocabulary of at least 256; the model "
                "has " +
                llvm::Twine(vocab));
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      readInputFile(path);
  if (!buffer)
    return fail(llvm::toString(buffer.takeError()));
  TrainingData data;
  data.text = (*buffer)->getBuffer().str();
  if (static_cast<int64_t>(data.text.size()) < seqLen + 1)
    return fail(llvm::formatv("it has {0} bytes; a sequence of {1} tokens "
                              "needs at least {2}",
                              data.text.size(), seqLen, seqLen + 1)
                    .str());
  data.seqLen = seqLen;
  data.vocab = vocab;
  data.description =
      llvm::formatv("{0} ({1} bytes, byte tokens)", path,
                    formatGrouped(static_cast<int64_t>(data.text.size())))
          .str();
  return data;
}

TrainingData TrainingData::synthetic(uint64_t seed, int64_t seqLen,
                                     int64_t vocab) {
  TrainingData data;
  data.seed = seed;
  data.seqLen = seqLen;
  data.vocab = vocab;
  data.description =
      llvm::formatv("synthetic: uniform tokens from seed {0}", seed).str();
  return data;
}

Batch TrainingData::batch(int64_t step, int64_t batchSize) const {
  Batch batch;
  batch.tokens.shape = batch.labels.shape = {batchSize, seqLen};
  batch.tokens.data.resize(batchSize * seqLen);
  batch.labels.data.resize(batchSize * seqLen);
  if (text.empty()) {
    RandomStream stream(seedFor(seed, "batch") + static_cast<uint64_t>(step));
    for (int64_t row = 0; row < batchSize; ++row) {
      int32_t previous = static_cast<int32_t>(stream.next() % vocab);
      for (int64_t s = 0; s < seqLen; ++s) {
        int32_t next = static_cast<int32_t>(stream.next() % vocab);
        batch.tokens.data[row * seqLen + s] = previous;
        batch.labels.data[row * seqLen + s] = next;
        previous = next;
      }
    }
    return batch;
  }
  int64_t windows = static_cast<int64_t>(text.size()) - seqLen;
  for (int64_t row = 0; row < batchSize; ++row) {
    int64_t start = ((step * batchSize + row) * seqLen) % windows;
    for (int64_t s = 0; s < seqLen; ++s) {
      batch.tokens.data[row * seqLen + s] =
          static_cast<unsigned char>(text[start + s]);
      batch.labels.data[row * seqLen + s] =
          static_cast<unsigned char>(text[start + s + 1]);
    }
  }
  return batch;
}
