//===- Tile.cpp - dataflow-tile -------------------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Dataflow/Transforms/Passes.h"
#include "cgpt/Target/WaferTargetModel.h"

#include <algorithm>

namespace cgpt::dataflow {
#define GEN_PASS_DEF_DATAFLOWTILE
#include "cgpt/Dialect/Dataflow/Transforms/Passes.h.inc"
} // namespace cgpt::dataflow

using namespace mlir;
using namespace cgpt::dataflow;

namespace {

/// What a tile may use of one core.
struct CoreBudget {
  int64_t bytes;
  /// SIMD lanes: one FMAC (two FLOPs) per lane per cycle.
  int64_t lanes;
};

int64_t roundDownTo(int64_t value, int64_t multiple) {
  return std::max<int64_t>(multiple, value / multiple * multiple);
}

/// [t, t, t] capped by the extents, for the largest multiple `t` of the
/// lanes whose working set fits the budget.
SmallVector<int64_t> tileMatmul(KernelOpInterface kernel,
                                ArrayRef<int64_t> space, CoreBudget budget) {
  auto cube = [&](int64_t t) -> SmallVector<int64_t> {
    return {std::min(t, space[0]), std::min(t, space[1]),
            std::min(t, space[2])};
  };
  int64_t largest = *std::max_element(space.begin(), space.end());
  int64_t t = budget.lanes;
  while (t < largest &&
         tileWorkingSetBytes(kernel, cube(t + budget.lanes)) <= budget.bytes)
    t += budget.lanes;
  return cube(t);
}

/// [rows, columns] for a map or row reduction: as much of a row as fits
/// (all of it when it can), then as many rows as fit.
SmallVector<int64_t> tileRows(KernelOpInterface kernel, ArrayRef<int64_t> space,
                              CoreBudget budget) {
  int64_t perColumn = tileWorkingSetBytes(kernel, {1, 1});
  int64_t fitting = budget.bytes / perColumn;
  int64_t columns =
      space[1] <= fitting
          ? space[1]
          : std::min(space[1], roundDownTo(fitting, budget.lanes));
  int64_t rows =
      std::clamp<int64_t>(budget.bytes / (perColumn * columns), 1, space[0]);
  return {rows, columns};
}

struct DataflowTile : cgpt::dataflow::impl::DataflowTileBase<DataflowTile> {
  using DataflowTileBase::DataflowTileBase;

  void runOnOperation() override {
    ProgramOp program = getOperation();
    if (!(workingSetFraction > 0 && workingSetFraction <= 1)) {
      program.emitError() << "dataflow-tile working-set-fraction must be in "
                             "(0, 1], got "
                          << workingSetFraction;
      return signalPassFailure();
    }
    // Shared with the passes after: a target file's warnings are said once.
    FailureOr<const cgpt::target::WaferTargetModel *> model =
        cgpt::target::WaferTargetModel::loadShared(target, &getContext());
    if (failed(model))
      return signalPassFailure();
    CoreBudget budget{
        static_cast<int64_t>((*model)->getCoreSramBytes() * workingSetFraction),
        std::max<int64_t>(1, (*model)->getFlopsPerCycle() / 2)};
    if (budget.bytes < 16 * budget.lanes * kAccumulatorBytes) {
      program.emitError() << "target '" << (*model)->getName() << "' leaves "
                          << budget.bytes
                          << " bytes per core for a tile; at least "
                          << 16 * budget.lanes * kAccumulatorBytes
                          << " are needed";
      return signalPassFailure();
    }

    Builder builder(&getContext());
    // Record the target as it was named (a built-in or a file path), so the
    // passes that follow load the same machine.
    program.setTargetAttr(builder.getStringAttr(target));
    program.walk([&](KernelOpInterface kernel) {
      Operation *op = kernel.getOperation();
      SmallVector<int64_t> space = kernel.getTilingSpace();
      // Products tile [M, N, K]; everything else [rows, columns].
      SmallVector<int64_t> tile = space.size() == 3
                                      ? tileMatmul(kernel, space, budget)
                                      : tileRows(kernel, space, budget);
      op->setAttr("tile", TileAttr::get(&getContext(), tile));
    });
  }
};

} // namespace
