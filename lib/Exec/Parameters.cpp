//===- Parameters.cpp - a model's weights and how they start --------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Exec/Parameters.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <cmath>

using namespace mlir;
using namespace cgpt;
using namespace cgpt::exec;

uint64_t RandomStream::next() {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double RandomStream::uniform() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

double RandomStream::normal() {
  double u1 = uniform(), u2 = uniform();
  return std::sqrt(-2.0 * std::log1p(-u1)) * std::cos(2.0 * M_PI * u2);
}

uint64_t exec::seedFor(uint64_t seed, llvm::StringRef name) {
  uint64_t hash = 0xcbf29ce484222325ull ^ seed;
  for (unsigned char c : name)
    hash = (hash ^ c) * 0x100000001b3ull;
  return hash;
}

std::vector<ParameterSpec>
exec::collectParameters(transformer::TrainStepOp step) {
  // Roles come from where each weight is used.
  llvm::SmallPtrSet<Value, 16> outputProjections, normScales, expertBiases;
  int64_t layers = 0;
  step.walk([&](Operation *op) {
    if (auto attention = dyn_cast<transformer::AttentionOp>(op))
      outputProjections.insert(attention.getOutWeight());
    else if (auto ffn = dyn_cast<transformer::FeedForwardOp>(op))
      outputProjections.insert(ffn.getDownWeight());
    else if (auto moe = dyn_cast<transformer::MixtureOfExpertsOp>(op)) {
      outputProjections.insert(moe.getDownWeight());
      // [experts, width]: one bias vector per expert, not a matrix.
      for (Value bias : {moe.getUpBias(), moe.getGateBias(), moe.getDownBias()})
        if (bias)
          expertBiases.insert(bias);
    } else if (auto norm = dyn_cast<transformer::NormOpInterface>(op))
      normScales.insert(norm.getGamma());
    else if (auto weight = dyn_cast<transformer::WeightOp>(op))
      if (std::optional<uint64_t> layer = weight.getLayer())
        layers = std::max<int64_t>(layers, *layer + 1);
  });
  training::MuPAttr mup = step.getMupAttr();
  // muP's width multiplier: the logits are scaled by its inverse.
  double widthMultiplier =
      mup ? 1.0 / mup.getOutputLogitsScale().convertToDouble() : 1.0;

  std::vector<ParameterSpec> specs;
  for (auto weight : step.getBodyBlock().getOps<transformer::WeightOp>()) {
    ParameterSpec spec;
    spec.name = weight.getName().str();
    auto type = cast<RankedTensorType>(weight.getResult().getType());
    spec.shape.assign(type.getShape().begin(), type.getShape().end());
    bool matrix =
        type.getRank() >= 2 && !expertBiases.contains(weight.getResult());
    bool decoder = weight.getLayer().has_value();
    if (!matrix) {
      spec.initValue = normScales.contains(weight.getResult()) ? 1.0f : 0.0f;
    } else {
      spec.initStd = 0.02;
      if (outputProjections.contains(weight.getResult()))
        spec.initStd /= std::sqrt(2.0 * static_cast<double>(layers));
      if (decoder && mup) {
        spec.initStd /= std::sqrt(widthMultiplier);
        spec.lrScale = mup.getDecoderKernelLrScale().convertToDouble();
      }
      spec.weightDecay = true;
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

std::vector<Tensor>
exec::initializeParameters(llvm::ArrayRef<ParameterSpec> specs, uint64_t seed) {
  std::vector<Tensor> values;
  for (const ParameterSpec &spec : specs) {
    Tensor value(spec.shape);
    if (spec.initStd == 0.0) {
      std::fill(value.data.begin(), value.data.end(), spec.initValue);
    } else {
      RandomStream stream(seedFor(seed, spec.name));
      for (float &element : value.data) {
        double z;
        do
          z = stream.normal();
        while (std::fabs(z) > 2.0);
        element = static_cast<float>(spec.initStd * z);
      }
    }
    values.push_back(std::move(value));
  }
  return values;
}
