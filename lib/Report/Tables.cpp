//===- Tables.cpp - tables as CSV or JSON ---------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Report/Report.h"

#include "cgpt/Support/Format.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

namespace cgpt::report {
DataTable exploreData(llvm::ArrayRef<StepReport::Wafer::Explored> rows) {
  DataTable table{{"micro_batch", "placer", "checkpoint", "fits",
                   "sram_peak_bytes", "samples_per_second"},
                  {}};
  for (const StepReport::Wafer::Explored &row : rows) {
    llvm::json::Object object{
        {"micro_batch", row.microBatch},   {"placer", row.placer},
        {"checkpoint", row.checkpoint},    {"fits", row.fits},
        {"sram_peak_bytes", row.sramPeak}, {"samples_per_second", nullptr}};
    if (row.fits)
      object["samples_per_second"] = row.samplesPerSecond;
    table.rows.push_back(std::move(object));
  }
  return table;
}

/// One CSV field (RFC 4180): numbers in their shortest exact form, text
/// quoted when it holds a separator, a quote or a line break, null empty.
static std::string csvField(const llvm::json::Value &value) {
  if (value.kind() == llvm::json::Value::Null)
    return "";
  if (std::optional<int64_t> integer = value.getAsInteger())
    return std::to_string(*integer);
  if (std::optional<double> number = value.getAsNumber())
    return fmt::format("{}", *number);
  if (std::optional<bool> flag = value.getAsBoolean())
    return *flag ? "true" : "false";
  std::string text = value.getAsString().value_or("").str();
  if (text.find_first_of(",\"\r\n") == std::string::npos)
    return text;
  std::string quoted = "\"";
  for (char c : text)
    quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

void printDataTable(llvm::raw_ostream &os, const DataTable &table, bool csv) {
  if (!csv) {
    printJson(os, llvm::json::Array(table.rows));
    return;
  }
  os << fmt::format("{}", fmt::join(table.keys, ",")) << "\n";
  for (const llvm::json::Value &row : table.rows) {
    const llvm::json::Object &object = *row.getAsObject();
    llvm::interleave(
        table.keys, os,
        [&](const std::string &key) { os << csvField(*object.get(key)); }, ",");
    os << "\n";
  }
}

} // namespace cgpt::report
