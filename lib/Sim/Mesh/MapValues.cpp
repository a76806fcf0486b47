//===- MapValues.cpp - placed elementwise maps with values ----------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/MapValues.h"

#include "cgpt/Dialect/Wafer/Analysis/MapAlgorithm.h"

using cgpt::wafer::KernelShape;
using cgpt::wafer::Layout;
using cgpt::wafer::RowFunction;

namespace cgpt::sim::mesh {

std::string mapRefusal(const KernelShape &k, const Layout &layout,
                       const wafer::Rect &rect) {
  if (k.function != RowFunction::map)
    return "it is not an elementwise map";
  return segmentsRefusal(layout, rect);
}

std::optional<MapRun> runMap(const KernelShape &k, const Layout &layout,
                             int64_t microBatch,
                             const target::WaferTargetModel &target,
                             const wafer::Rect &rect,
                             llvm::ArrayRef<float> first,
                             llvm::ArrayRef<float> second, std::string &error) {
  error = mapRefusal(k, layout, rect);
  if (!error.empty())
    return std::nullopt;
  int64_t tokens = microBatch * k.rows, features = k.columns;
  int64_t secondSize =
      wafer::mapAlgorithm(k.map).inputs > 1 ? tokens * features : 0;
  if (static_cast<int64_t>(first.size()) != tokens * features ||
      static_cast<int64_t>(second.size()) != secondSize) {
    error = "the operands have " + std::to_string(first.size()) + " and " +
            std::to_string(second.size()) + " elements; the map takes " +
            std::to_string(tokens) + " x " + std::to_string(features) +
            " and " + std::to_string(secondSize);
    return std::nullopt;
  }
  KernelProgramOptions options;
  options.allTokenGroups = true;
  KernelProgram built =
      buildKernelProgram(k, layout, microBatch, target, rect, options);
  MapRun outcome;
  outcome.result.assign(static_cast<size_t>(tokens * features), 0.0f);
  auto load = [&](int core, std::vector<std::vector<float>> &memory) {
    loadBlock(built, core, tokens, features, first, memory[kMapFirstInput]);
    if (secondSize > 0)
      loadBlock(built, core, tokens, features, second, memory[kMapSecondInput]);
  };
  auto store = [&](int core, const std::vector<std::vector<float>> &memory) {
    storeBlock(built, core, tokens, features, memory[kMapFirstInput],
               outcome.result);
  };
  std::optional<MeshResult> run = simulateWithValues(
      built.mesh, target, CoreMemoryAccess{load, store}, error);
  if (!run)
    return std::nullopt;
  outcome.cycles = run->cycles;
  return outcome;
}

} // namespace cgpt::sim::mesh
