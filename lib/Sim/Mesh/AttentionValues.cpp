//===- AttentionValues.cpp - attention's forward pass with values ---------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/AttentionValues.h"

#include "cgpt/Exec/Kernels.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using cgpt::wafer::KernelKind;
using cgpt::wafer::KernelShape;
using cgpt::wafer::Layout;

namespace cgpt::sim::mesh {
namespace {

/// The offset of the mask window (kAttentionMaskAt) of the query at
/// `query` against `keys` keys from `firstKey` on, of a sequence of `seq`:
/// the window leaves unmasked the keys up to the last one the query sees,
/// the query's own (causal) or the sequence's last, and masks the rest.
float maskOffset(int64_t query, int64_t firstKey, int64_t keys, int64_t seq,
                 bool causal) {
  int64_t lastSeen = std::min(causal ? query : seq - 1, seq - 1) - firstKey;
  return static_cast<float>(std::clamp<int64_t>(keys - 1 - lastSeen, 0, keys));
}

} // namespace

std::string attentionRefusal(const KernelShape &k, const Layout &layout,
                             const wafer::Rect &rect) {
  if (k.kind != KernelKind::attention)
    return "it is not attention";
  if (std::min(layout.tokenGroups, k.columns) > rect.h)
    return "its " + std::to_string(layout.tokenGroups) +
           " query groups do not fit down its " + std::to_string(rect.h) +
           " rows";
  return "";
}

std::optional<AttentionRun>
runAttention(const KernelShape &k, const Layout &layout, int64_t microBatch,
             const target::WaferTargetModel &target, const wafer::Rect &rect,
             const AttentionOperands &operands, std::string &error) {
  error = attentionRefusal(k, layout, rect);
  if (!error.empty())
    return std::nullopt;
  wafer::AttentionPass pass = wafer::attentionPass(k, layout, rect, microBatch);
  int64_t seq = k.columns, headSize = k.contracted;
  int64_t heads = std::max<int64_t>(1, k.rows / std::max<int64_t>(1, seq));
  int64_t pairs = microBatch * heads, pairElements = seq * headSize;
  for (llvm::ArrayRef<float> operand :
       {operands.query, operands.key, operands.value})
    if (static_cast<int64_t>(operand.size()) != pairs * pairElements) {
      error = "the operands have " + std::to_string(operands.query.size()) +
              ", " + std::to_string(operands.key.size()) + " and " +
              std::to_string(operands.value.size()) +
              " elements; the kernel takes " + std::to_string(pairs) + " x " +
              std::to_string(seq) + " x " + std::to_string(headSize) + " each";
      return std::nullopt;
    }
  std::vector<double> slopes = operands.softmax.alibi
                                   ? exec::alibiSlopes(heads)
                                   : std::vector<double>(heads, 0.0);
  KernelProgramOptions options;
  options.attentionForward = operands.softmax;
  ElementType type = elementTypeOf(k.elementBytes);
  int64_t epw = perWavelet(type);

  AttentionRun outcome;
  outcome.output.assign(static_cast<size_t>(pairs * pairElements), 0.0f);
  // A pair's element, zero past the sequence: the last group's padding.
  auto element = [&](llvm::ArrayRef<float> operand, int64_t pair,
                     int64_t position, int64_t d) {
    return position < seq ? operand[(pair * seq + position) * headSize + d]
                          : 0.0f;
  };
  for (int64_t first = 0; first < pairs; first += pass.pairsPerBlock) {
    int64_t count = std::min(pass.pairsPerBlock, pairs - first);
    KernelProgram built =
        buildKernelProgram(pass.pair, pass.block, count, target, rect, options);
    int64_t queries = built.tokens, keys = built.features;
    int64_t queryElements = llvm::divideCeilSigned(headSize, epw) * epw;
    for (Injector &in : built.mesh.injectors) {
      int core = built.mesh.index(in.x, in.y);
      std::vector<float> elements;
      if (in.color == kStreamColor) {
        // Along a row: its query group's queries, pair by pair.
        int64_t group = built.tokenGroup[core];
        for (int64_t p = first; p < first + count; ++p)
          for (int64_t i = 0; i < queries; ++i)
            for (int64_t d = 0; d < queryElements; ++d)
              elements.push_back(
                  group < 0 || d >= headSize
                      ? 0.0f
                      : element(operands.query, p, group * queries + i, d));
      } else {
        // Down a column: its key group's keys (a row a head dimension),
        // then values (a row a key), pair by pair.
        int64_t firstKey = built.placeInSegment(core) * keys;
        for (int64_t p = first; p < first + count; ++p) {
          for (int64_t d = 0; d < headSize; ++d)
            for (int64_t j = 0; j < keys; ++j)
              elements.push_back(element(operands.key, p, firstKey + j, d));
          for (int64_t j = 0; j < keys; ++j)
            for (int64_t d = 0; d < headSize; ++d)
              elements.push_back(element(operands.value, p, firstKey + j, d));
          elements.resize(llvm::divideCeil(elements.size(), epw) * epw, 0.0f);
        }
      }
      in.payload = wavelets(elements, epw);
    }
    auto load = [&](int core, std::vector<std::vector<float>> &memory) {
      int64_t group = built.tokenGroup[core];
      int64_t firstKey = built.placeInSegment(core) * keys;
      for (int64_t i = 0; i < queries; ++i)
        memory[kAttentionMaskOffsets][i] =
            maskOffset(std::max<int64_t>(0, group) * queries + i, firstKey,
                       keys, seq, operands.softmax.causal);
      for (int64_t j = 0; j < keys; ++j)
        memory[kAttentionKeyPositions][j] = static_cast<float>(firstKey + j);
      for (int64_t p = 0; p < count; ++p)
        memory[kAttentionSlopes][p] =
            static_cast<float>(slopes[(first + p) % heads]);
    };
    std::optional<MeshResult> run = simulateWithValues(
        built.mesh, target, CoreMemoryAccess{load, nullptr}, error);
    if (!run)
      return std::nullopt;
    outcome.cycles = std::max(outcome.cycles, run->cycles);
    ++outcome.runs;
    // What leaves a segment's east end: its query group's outputs, a row
    // of the head's size a query, query by query, pair by pair.
    forEachDrained(built.mesh, *run, [&](int core, int64_t w, float value) {
      int64_t group = built.tokenGroup[core];
      int64_t p = first + w / (queries * headSize);
      int64_t position = group * queries + w / headSize % queries;
      if (group >= 0 && position < seq)
        outcome.output[(p * seq + position) * headSize + w % headSize] = value;
    });
  }
  return outcome;
}

} // namespace cgpt::sim::mesh
