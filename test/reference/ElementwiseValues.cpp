//===- ElementwiseValues.cpp - activations and softmax, as numbers --------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Prints, as JSON, what the functional executor's kernels (lib/Exec) compute
// for a grid of inputs, for check_elementwise.py to compare with PyTorch's
// autograd: every map (each activation and its derivative, the gate's
// product and the residual sum) on x from -12 to 12, and softmax,
// its gradient and cross-entropy with its gradient on logits near 1e3,
// where a softmax without its max subtracted overflows f32. Tiles that do
// not divide the rows and columns exercise the partial edges.
//
//   cgpt-elementwise-values > values.json
//
//===----------------------------------------------------------------------===//

#include "cgpt/Exec/Kernels.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace cgpt;
using namespace cgpt::exec;

namespace {

/// An upstream gradient that varies in sign and size, reproducibly.
float upstream(int64_t i) { return static_cast<float>(std::sin(0.7 * i)); }

/// Logits near 1e3 whose spread (about 12) keeps every probability
/// resolvable in f32.
float logitNear1e3(int64_t i) {
  return 1000.0f + static_cast<float>(6.0 * std::sin(1.3 * i + 0.4));
}

llvm::json::Array numbers(const Tensor &tensor) {
  llvm::json::Array out;
  for (float value : tensor.data)
    out.push_back(static_cast<double>(value));
  return out;
}

llvm::json::Object maps() {
  Tensor x({1, 2401}), dy({1, 2401});
  for (int64_t i = 0; i < x.numel(); ++i) {
    x.data[i] = static_cast<float>(-12.0 + 0.01 * i);
    dy.data[i] = upstream(i);
  }
  const int64_t tile[] = {1, 97};
  llvm::json::Object kernels;
  for (uint32_t k = 0;
       std::optional<dataflow::MapKind> kind = dataflow::symbolizeMapKind(k);
       ++k)
    kernels[dataflow::stringifyMapKind(*kind)] =
        numbers(map(*kind, {&x, &dy}, tile));
  return llvm::json::Object{
      {"x", numbers(x)}, {"dy", numbers(dy)}, {"kernels", std::move(kernels)}};
}

llvm::json::Object softmaxValues() {
  // [batch 2, heads 3, 7 queries, 7 keys], causal and not.
  Tensor scores({2, 3, 7, 7}), dp({2, 3, 7, 7});
  for (int64_t i = 0; i < scores.numel(); ++i) {
    scores.data[i] = logitNear1e3(i);
    dp.data[i] = upstream(i);
  }
  const int64_t tile[] = {3, 4};
  const float scale = 0.5f;
  llvm::json::Object out{
      {"scores", numbers(scores)}, {"dp", numbers(dp)}, {"scale", scale}};
  for (bool causal : {false, true}) {
    Tensor probs = softmax(scores, scale, causal, tile);
    Tensor grad = softmaxGrad(probs, dp, scale, tile);
    llvm::StringRef name = causal ? "causal" : "full";
    out[name] =
        llvm::json::Object{{"probs", numbers(probs)}, {"grad", numbers(grad)}};
  }
  return out;
}

llvm::json::Object crossEntropyValues() {
  // [batch 2, sequence 3, vocabulary 11].
  Tensor logits({2, 3, 11});
  for (int64_t i = 0; i < logits.numel(); ++i)
    logits.data[i] = logitNear1e3(i);
  IdTensor labels{{2, 3}, {0, 10, 4, 7, 1, 5}};
  const int64_t tile[] = {2, 4};
  const double scale = 1.0 / 6.0;
  CrossEntropyResult forward = crossEntropy(logits, labels, scale, tile);
  Tensor grad = crossEntropyGrad(logits, forward.lse, labels,
                                 static_cast<float>(scale), tile);
  llvm::json::Array labelValues;
  for (int32_t label : labels.data)
    labelValues.push_back(label);
  return llvm::json::Object{{"logits", numbers(logits)},
                            {"labels", std::move(labelValues)},
                            {"scale", scale},
                            {"loss", numbers(forward.loss)},
                            {"grad", numbers(grad)}};
}

} // namespace

int main() {
  llvm::json::Object values{{"maps", maps()},
                            {"softmax", softmaxValues()},
                            {"cross_entropy", crossEntropyValues()}};
  llvm::outs() << llvm::formatv("{0:2}\n",
                                llvm::json::Value(std::move(values)));
  return 0;
}
