//===- CheckpointPolicy.cpp - where kept activations live -----------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/Analysis/CheckpointPolicy.h"

#include <algorithm>
#include <cmath>

using namespace mlir;

namespace cgpt::wafer {

CheckpointPolicy CheckpointPolicy::fromAttr(CheckpointAttr attr) {
  CheckpointPolicy policy;
  if (!attr)
    return policy;
  if (attr.getPolicy() == "every")
    policy = {Kind::every, attr.getInterval()};
  else if (attr.getPolicy() == "offload")
    policy.kind = Kind::offload;
  return policy;
}

CheckpointAttr CheckpointPolicy::toAttr(MLIRContext *context) const {
  switch (kind) {
  case Kind::keep:
    return CheckpointAttr::get(context, "keep", 0);
  case Kind::every:
    return CheckpointAttr::get(context, "every", interval);
  case Kind::offload:
    return CheckpointAttr::get(context, "offload", 0);
  }
  llvm_unreachable("unknown checkpoint policy");
}

std::string CheckpointPolicy::str() const {
  switch (kind) {
  case Kind::keep:
    return "keep";
  case Kind::every:
    return "every " + std::to_string(interval);
  case Kind::offload:
    return "offload";
  }
  llvm_unreachable("unknown checkpoint policy");
}

std::vector<CheckpointPolicy> CheckpointPolicy::candidates(int64_t layers) {
  std::vector<CheckpointPolicy> policies = {{Kind::keep, 0}};
  // Intervals around sqrt(layers) keep the fewest checkpoints at once
  // (layers / k kept plus k - 1 rebuilt); shorter ones recompute less.
  int64_t top = 1;
  while (top + 1 < layers && (top + 1) * (top + 1) <= 4 * layers)
    ++top;
  if (top - 1 <= kMaxEveryIntervals) {
    for (int64_t k = 2; k <= top; ++k)
      policies.push_back({Kind::every, k});
  } else {
    // Deep models: intervals spaced evenly on a log scale from 2 to the
    // top, so that planning stays linear in layers.
    double ratio =
        std::pow(static_cast<double>(top) / 2, 1.0 / (kMaxEveryIntervals - 1));
    int64_t last = 0;
    for (int64_t i = 0; i < kMaxEveryIntervals; ++i) {
      auto k = static_cast<int64_t>(std::llround(2 * std::pow(ratio, i)));
      k = std::clamp<int64_t>(k, last + 1, top);
      if (k > last)
        policies.push_back({Kind::every, k});
      last = k;
    }
  }
  policies.push_back({Kind::offload, 0});
  return policies;
}

} // namespace cgpt::wafer
