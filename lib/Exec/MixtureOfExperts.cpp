//===- MixtureOfExperts.cpp - routed-expert kernels' arithmetic -----------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Exec/MixtureOfExperts.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace cgpt;
using namespace cgpt::exec;

/// The expert of routed row `row` of batch entry `b`.
static int64_t expertOf(const Tensor &experts, int64_t b, int64_t row) {
  int64_t rows = experts.dim(1) * experts.dim(2);
  return static_cast<int64_t>(experts.data[b * rows + row]);
}

RouteResult exec::route(const Tensor &input, const Tensor &router, int64_t topK,
                        std::optional<double> nullExpert, bool roundLogits) {
  int64_t batch = input.dim(0), seq = input.dim(1), model = input.dim(2);
  int64_t numExperts = router.dim(1);
  Tensor logits({batch, seq, numExperts});
  for (int64_t t = 0; t < batch * seq; ++t) {
    const float *x = &input.data[t * model];
    float *row = &logits.data[t * numExperts];
    for (int64_t c = 0; c < model; ++c)
      for (int64_t e = 0; e < numExperts; ++e)
        row[e] += x[c] * router.data[c * numExperts + e];
  }
  return routeFromLogits(std::move(logits), topK, nullExpert, roundLogits);
}

RouteResult exec::routeFromLogits(Tensor logits, int64_t topK,
                                  std::optional<double> nullExpert,
                                  bool roundLogits) {
  int64_t batch = logits.dim(0), seq = logits.dim(1);
  int64_t numExperts = logits.dim(2);
  RouteResult r{Tensor({batch, seq, topK}), Tensor({batch, seq, topK}),
                Tensor({batch, seq, numExperts})};
  std::vector<float> row(numExperts);
  std::vector<int64_t> order(numExperts);
  for (int64_t t = 0; t < batch * seq; ++t) {
    std::copy_n(&logits.data[t * numExperts], numExperts, row.begin());
    if (roundLogits)
      roundToBF16(row);
    float largest = *std::max_element(row.begin(), row.end());
    float *p = &r.probs.data[t * numExperts];
    float sum = 0.0f;
    for (int64_t e = 0; e < numExperts; ++e)
      sum += p[e] = std::exp(row[e] - largest);
    for (int64_t e = 0; e < numExperts; ++e)
      p[e] /= sum;
    // Largest first; equal probabilities keep the lower index first.
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return p[a] > p[b]; });
    float chosen = 0.0f;
    for (int64_t j = 0; j < topK; ++j)
      chosen += p[order[j]];
    if (nullExpert)
      chosen += static_cast<float>(std::exp(*nullExpert - largest)) / sum;
    for (int64_t j = 0; j < topK; ++j) {
      r.experts.data[t * topK + j] = static_cast<float>(order[j]);
      r.weights.data[t * topK + j] = p[order[j]] / chosen;
    }
  }
  return r;
}

/// Each expert's share of sequence `b`'s choices, summing to k.
static std::vector<float> choiceShares(const Tensor &experts, int64_t b,
                                       int64_t numExperts) {
  int64_t seq = experts.dim(1), k = experts.dim(2);
  std::vector<float> shares(numExperts, 0.0f);
  for (int64_t r = 0; r < seq * k; ++r)
    shares[expertOf(experts, b, r)] += 1.0f;
  for (float &share : shares)
    share /= static_cast<float>(seq);
  return shares;
}

Tensor exec::balanceLoss(const Tensor &probs, const Tensor &experts,
                         double scale) {
  int64_t batch = probs.dim(0), seq = probs.dim(1), numExperts = probs.dim(2);
  double loss = 0.0;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<float> shares = choiceShares(experts, b, numExperts);
    for (int64_t e = 0; e < numExperts; ++e) {
      float mean = 0.0f;
      for (int64_t t = 0; t < seq; ++t)
        mean += probs.data[(b * seq + t) * numExperts + e];
      loss += static_cast<double>(shares[e]) * (mean / static_cast<float>(seq));
    }
  }
  Tensor result(llvm::ArrayRef<int64_t>{});
  result.data[0] =
      static_cast<float>(scale * static_cast<double>(numExperts) * loss);
  return result;
}

Tensor exec::routeGrad(const Tensor &probs, const Tensor &experts,
                       const Tensor &weights, const Tensor &weightsGrad,
                       double balanceScale) {
  int64_t batch = probs.dim(0), seq = probs.dim(1), numExperts = probs.dim(2);
  int64_t k = experts.dim(2);
  Tensor result(probs.shape);
  std::vector<float> g(numExperts);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<float> shares = choiceShares(experts, b, numExperts);
    for (int64_t e = 0; e < numExperts; ++e)
      g[e] = static_cast<float>(balanceScale * static_cast<double>(numExperts) *
                                shares[e] / static_cast<double>(seq));
    for (int64_t t = 0; t < seq; ++t) {
      int64_t token = b * seq + t;
      const float *p = &probs.data[token * numExperts];
      const float *w = &weights.data[token * k];
      const float *dw = &weightsGrad.data[token * k];
      float *dz = &result.data[token * numExperts];
      float weighted = 0.0f;
      for (int64_t j = 0; j < k; ++j)
        weighted += w[j] * dw[j];
      for (int64_t j = 0; j < k; ++j)
        dz[expertOf(experts, b, t * k + j)] += w[j] * (dw[j] - weighted);
      if (balanceScale == 0.0)
        continue;
      float mean = 0.0f;
      for (int64_t e = 0; e < numExperts; ++e)
        mean += p[e] * g[e];
      for (int64_t e = 0; e < numExperts; ++e)
        dz[e] += p[e] * (g[e] - mean);
    }
  }
  return result;
}

Tensor exec::dispatch(const Tensor &input, int64_t k) {
  int64_t batch = input.dim(0), seq = input.dim(1), width = input.dim(2);
  Tensor result({batch, seq * k, width});
  for (int64_t t = 0; t < batch * seq; ++t)
    for (int64_t j = 0; j < k; ++j)
      std::copy_n(&input.data[t * width], width,
                  &result.data[(t * k + j) * width]);
  return result;
}

Tensor exec::combine(const Tensor &routed, const Tensor *weights, int64_t k) {
  int64_t batch = routed.dim(0), seq = routed.dim(1) / k, width = routed.dim(2);
  Tensor result({batch, seq, width});
  for (int64_t t = 0; t < batch * seq; ++t) {
    float *out = &result.data[t * width];
    for (int64_t j = 0; j < k; ++j) {
      float w = weights ? weights->data[t * k + j] : 1.0f;
      const float *in = &routed.data[(t * k + j) * width];
      for (int64_t c = 0; c < width; ++c)
        out[c] += w * in[c];
    }
  }
  return result;
}

CombineGrad exec::combineGrad(const Tensor &routed, const Tensor &weights,
                              const Tensor &grad) {
  int64_t k = weights.dim(2), width = routed.dim(2);
  int64_t tokens = weights.dim(0) * weights.dim(1);
  CombineGrad r{Tensor(routed.shape), Tensor(weights.shape)};
  for (int64_t t = 0; t < tokens; ++t) {
    const float *dy = &grad.data[t * width];
    for (int64_t j = 0; j < k; ++j) {
      int64_t row = t * k + j;
      float w = weights.data[row], dot = 0.0f;
      for (int64_t c = 0; c < width; ++c) {
        r.routed.data[row * width + c] = w * dy[c];
        dot += routed.data[row * width + c] * dy[c];
      }
      r.weights.data[row] = dot;
    }
  }
  return r;
}

Tensor exec::expertMatmul(const Tensor &lhs, const Tensor &rhs,
                          const Tensor &experts, const Tensor *bias,
                          bool transposeRhs) {
  int64_t batch = lhs.dim(0), rows = lhs.dim(1), contracted = lhs.dim(2);
  int64_t columns = transposeRhs ? rhs.dim(1) : rhs.dim(2);
  int64_t perExpert = contracted * columns;
  Tensor result({batch, rows, columns});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = 0; r < rows; ++r) {
      int64_t e = expertOf(experts, b, r);
      const float *x = &lhs.data[(b * rows + r) * contracted];
      const float *w = &rhs.data[e * perExpert];
      float *out = &result.data[(b * rows + r) * columns];
      for (int64_t n = 0; n < columns; ++n) {
        float sum = 0.0f;
        for (int64_t c = 0; c < contracted; ++c)
          sum += x[c] *
                 (transposeRhs ? w[n * contracted + c] : w[c * columns + n]);
        out[n] = sum + (bias ? bias->data[e * columns + n] : 0.0f);
      }
    }
  return result;
}

Tensor exec::expertWeightGrad(const Tensor &lhs, const Tensor &grad,
                              const Tensor &experts, int64_t numExperts) {
  int64_t batch = lhs.dim(0), rows = lhs.dim(1);
  int64_t a = lhs.dim(2), n = grad.dim(2);
  Tensor result({numExperts, a, n});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = 0; r < rows; ++r) {
      float *sum = &result.data[expertOf(experts, b, r) * a * n];
      const float *x = &lhs.data[(b * rows + r) * a];
      const float *dy = &grad.data[(b * rows + r) * n];
      for (int64_t i = 0; i < a; ++i)
        for (int64_t c = 0; c < n; ++c)
          sum[i * n + c] += x[i] * dy[c];
    }
  return result;
}

Tensor exec::expertBiasGrad(const Tensor &grad, const Tensor &experts,
                            int64_t numExperts) {
  int64_t batch = grad.dim(0), rows = grad.dim(1), n = grad.dim(2);
  Tensor result({numExperts, n});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = 0; r < rows; ++r) {
      float *sum = &result.data[expertOf(experts, b, r) * n];
      const float *dy = &grad.data[(b * rows + r) * n];
      for (int64_t c = 0; c < n; ++c)
        sum[c] += dy[c];
    }
  return result;
}
