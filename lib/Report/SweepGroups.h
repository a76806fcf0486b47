//===- SweepGroups.h - how a sweep's rows differ ----------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// What the sweep's table and its chart share: which axes other than the
// systems differ between rows (the table's extra columns, the chart's
// legend), and each row's speed-up over the first row of its group.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_LIB_REPORT_SWEEPGROUPS_H
#define CGPT_LIB_REPORT_SWEEPGROUPS_H

#include "cgpt/Report/Report.h"

#include "llvm/ADT/StringExtras.h"

namespace cgpt::report::detail {

/// Which of a sweep's axes other than the systems differ between its rows.
struct VaryingAxes {
  bool model = false, target = false, sequence = false, batch = false,
       microBatch = false;

  explicit VaryingAxes(llvm::ArrayRef<SweepRow> rows) {
    for (const SweepRow &row : rows) {
      const SweepRow &first = rows.front();
      model |= row.model != first.model;
      target |= row.target != first.target;
      sequence |= row.sequenceLength != first.sequenceLength;
      batch |= row.globalBatch != first.globalBatch;
      microBatch |= row.microBatchRequest != first.microBatchRequest;
    }
  }
  /// What tells `row`'s group from the others, for a chart's legend.
  std::string label(const SweepRow &row) const {
    llvm::SmallVector<std::string> parts;
    if (model)
      parts.push_back(row.model);
    if (target)
      parts.push_back(row.target);
    if (sequence)
      parts.push_back("sequence " + std::to_string(row.sequenceLength));
    if (batch)
      parts.push_back("batch " + std::to_string(row.globalBatch));
    if (microBatch)
      parts.push_back("micro-batch " + row.microBatchRequest);
    return llvm::join(parts, ", ");
  }
};

/// `row`'s samples/s over those of the first row of its group.
inline double speedUp(llvm::ArrayRef<SweepRow> rows, const SweepRow &row) {
  return row.samplesPerSecond / rows[row.groupFirst].samplesPerSecond;
}

} // namespace cgpt::report::detail

#endif // CGPT_LIB_REPORT_SWEEPGROUPS_H
