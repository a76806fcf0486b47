//===- Safetensors.cpp - tensors in the safetensors layout ----------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Exec/Safetensors.h"

#include "cgpt/Support/InputFile.h"
#include "cgpt/Support/Nesting.h"

#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace cgpt;
using namespace cgpt::exec;
namespace json = llvm::json;

/// The header declares at most this many bytes, which bounds what a
/// malformed file can make the reader allocate.
static constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

void exec::printSafetensors(
    llvm::raw_ostream &os, llvm::ArrayRef<SafetensorsEntry> entries,
    const std::map<std::string, std::string> &metadata) {
  std::vector<const SafetensorsEntry *> sorted;
  for (const SafetensorsEntry &entry : entries)
    sorted.push_back(&entry);
  llvm::sort(sorted, [](const SafetensorsEntry *a, const SafetensorsEntry *b) {
    return a->name < b->name;
  });
  json::Object header;
  json::Object meta;
  for (const auto &[key, value] : metadata)
    meta[key] = value;
  if (!metadata.empty())
    header["__metadata__"] = std::move(meta);
  int64_t offset = 0;
  for (const SafetensorsEntry *entry : sorted) {
    int64_t bytes = mlir::ShapedType::getNumElements(entry->shape) * 4;
    json::Array shape;
    for (int64_t extent : entry->shape)
      shape.push_back(extent);
    header[entry->name] =
        json::Object{{"dtype", entry->f32 ? "F32" : "I32"},
                     {"shape", std::move(shape)},
                     {"data_offsets", json::Array{offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text;
  llvm::raw_string_ostream(text) << json::Value(std::move(header));
  // Pads the header with spaces so the data starts 8-byte aligned.
  text.append((8 - text.size() % 8) % 8, ' ');
  char length[8];
  llvm::support::endian::write64le(length, text.size());
  os.write(length, 8);
  os << text;
  for (const SafetensorsEntry *entry : sorted) {
    const void *data = entry->f32 ? static_cast<const void *>(entry->f32)
                                  : static_cast<const void *>(entry->i32);
    os.write(static_cast<const char *>(data),
             mlir::ShapedType::getNumElements(entry->shape) * 4);
  }
}

static llvm::Error malformed(llvm::StringRef path, const llvm::Twine &why) {
  return llvm::createStringError(
      std::make_error_code(std::errc::invalid_argument),
      "'" + path + "' is not a safetensors file " + "cgpt can read: " + why);
}

llvm::Expected<llvm::StringMap<Tensor>>
exec::readSafetensors(llvm::StringRef path) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      readInputFile(path);
  if (!buffer)
    return llvm::createStringError(
        std::make_error_code(std::errc::invalid_argument),
        "cannot read '" + path + "': " + llvm::toString(buffer.takeError()));
  return parseSafetensors((*buffer)->getBuffer(), path);
}

llvm::Expected<llvm::StringMap<Tensor>>
exec::parseSafetensors(llvm::StringRef bytes, llvm::StringRef path) {
  if (bytes.size() < 8)
    return malformed(path, "it is shorter than the 8-byte header length");
  uint64_t headerBytes = llvm::support::endian::read64le(bytes.data());
  if (headerBytes > kMaxHeaderBytes || headerBytes > bytes.size() - 8)
    return malformed(path, "the header length " + llvm::Twine(headerBytes) +
                               " runs past the end of the file");
  llvm::StringRef headerText = bytes.substr(8, headerBytes);
  if (std::optional<size_t> deep =
          findDeepNesting(headerText, TextSyntax::Json))
    return malformed(path, "the header nests deeper than " +
                               llvm::Twine(kMaxNestingDepth) +
                               " levels at byte " + llvm::Twine(8 + *deep));
  std::optional<std::string> repeatedName;
  forEachRepeatedJsonKey(headerText, [&](llvm::StringRef key, size_t, size_t) {
    if (!repeatedName)
      repeatedName = key.str();
  });
  if (repeatedName)
    return malformed(path, "tensor '" + *repeatedName +
                               "' is named twice in the header");
  llvm::Expected<json::Value> header = json::parse(headerText);
  if (!header)
    return malformed(path, "the header is not JSON: " +
                               llvm::toString(header.takeError()));
  const json::Object *object = header->getAsObject();
  if (!object)
    return malformed(path, "the header is not a JSON object");
  llvm::StringRef data = bytes.substr(8 + headerBytes);

  llvm::StringMap<Tensor> tensors;
  // Each tensor's [begin, end) in the data, to refuse two that share bytes.
  std::vector<std::tuple<int64_t, int64_t, std::string>> spans;
  for (const auto &[key, value] : *object) {
    if (key == "__metadata__")
      continue;
    auto bad = [&, &key = key](const llvm::Twine &why) {
      return malformed(path, "tensor '" + key.str() + "' " + why);
    };
    const json::Object *entry = value.getAsObject();
    if (!entry)
      return bad("is not an object");
    std::optional<llvm::StringRef> dtype = entry->getString("dtype");
    if (!dtype || *dtype != "F32")
      return bad("has dtype '" + dtype.value_or("?") +
                 "'; cgpt reads F32 tensors");
    const json::Array *shape = entry->getArray("shape");
    const json::Array *offsets = entry->getArray("data_offsets");
    if (!shape || !offsets || offsets->size() != 2)
      return bad("lacks a shape or a [begin, end] data_offsets");
    Tensor tensor;
    int64_t count = 1;
    for (const json::Value &extent : *shape) {
      std::optional<int64_t> n = extent.getAsInteger();
      if (!n || *n < 0 || (*n > 0 && count > (int64_t(1) << 40) / *n))
        return bad("has a shape that is not a list of sizes");
      tensor.shape.push_back(*n);
      count *= *n;
    }
    std::optional<int64_t> begin = (*offsets)[0].getAsInteger(),
                           end = (*offsets)[1].getAsInteger();
    if (!begin || !end || *begin < 0 || *end < *begin ||
        static_cast<uint64_t>(*end) > data.size())
      return bad("has data_offsets outside the file's " +
                 llvm::Twine(data.size()) + " data bytes");
    if (*end - *begin != count * 4)
      return bad("has " + llvm::Twine(*end - *begin) + " bytes for " +
                 llvm::Twine(count) + " F32 values");
    if (*end > *begin)
      spans.emplace_back(*begin, *end, key.str());
    tensor.data.resize(count);
    for (int64_t i = 0; i < count; ++i) {
      uint32_t bits =
          llvm::support::endian::read32le(data.data() + *begin + 4 * i);
      std::memcpy(&tensor.data[i], &bits, 4);
    }
    tensors[key] = std::move(tensor);
  }
  llvm::sort(spans);
  for (size_t i = 1; i < spans.size(); ++i)
    if (std::get<0>(spans[i]) < std::get<1>(spans[i - 1]))
      return malformed(path, "tensors '" + std::get<2>(spans[i - 1]) +
                                 "' and '" + std::get<2>(spans[i]) +
                                 "' have overlapping data_offsets");
  return tensors;
}
