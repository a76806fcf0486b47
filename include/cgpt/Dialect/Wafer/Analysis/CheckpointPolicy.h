//===- CheckpointPolicy.h - where kept activations live ---------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_WAFER_ANALYSIS_CHECKPOINTPOLICY_H
#define CGPT_DIALECT_WAFER_ANALYSIS_CHECKPOINTPOLICY_H

#include "cgpt/Dialect/Wafer/IR/Wafer.h"

#include <string>
#include <vector>

namespace cgpt::wafer {

/// The most `every` intervals the planner weighs (all of them for every
/// model in models/, whose deepest has 96 layers).
constexpr int64_t kMaxEveryIntervals = 24;

/// Where the activations kept for the backward pass live
/// (`#wafer.checkpoint`).
struct CheckpointPolicy {
  enum class Kind { keep, every, offload };
  Kind kind = Kind::keep;
  /// For `every`: layers 0, k, 2k, ... keep theirs.
  int64_t interval = 0;

  static CheckpointPolicy fromAttr(CheckpointAttr attr);
  CheckpointAttr toAttr(mlir::MLIRContext *context) const;
  /// "keep", "every 4", "offload".
  std::string str() const;
  /// The policies the planner weighs for a model of `layers` layers under
  /// weight streaming: keep, offload, and every k for k from 2 to about
  /// 2 sqrt(layers); past kMaxEveryIntervals such k (models over 156
  /// layers), that many spaced evenly on a log scale, so that planning
  /// stays linear in layers.
  static std::vector<CheckpointPolicy> candidates(int64_t layers);
};

} // namespace cgpt::wafer

#endif // CGPT_DIALECT_WAFER_ANALYSIS_CHECKPOINTPOLICY_H
