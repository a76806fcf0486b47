//===- Tile.cpp - dataflow-tile --------------------------------------------===//
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

/// Bytes of an accumulator element: products add up in f32.
constexpr int64_t kAccumulatorBytes = 4;

/// What a tile may use of one core.
struct CoreBudget {
  int64_t bytes;
  /// SIMD lanes: one FMAC (two FLOPs) per lane per cycle.
  int64_t lanes;
};

int64_t roundDownTo(int64_t value, int64_t multiple) {
  return std::max<int64_t>(multiple, value / multiple * multiple);
}

/// Storage bytes of the kernel's first stream operand (or result).
int64_t storageBytes(Operation *op) {
  auto floatBytes = [](Type type) -> int64_t {
    auto stream = dyn_cast<StreamType>(type);
    return stream && isa<FloatType>(stream.getElementType())
               ? elementBytes(stream.getElementType())
               : 0;
  };
  for (Type type : op->getOperandTypes())
    if (int64_t bytes = floatBytes(type))
      return bytes;
  for (Type type : op->getResultTypes())
    if (int64_t bytes = floatBytes(type))
      return bytes;
  return kAccumulatorBytes;
}

/// [t, t, t] for a matrix multiply: the largest multiple of the lanes
/// whose operand tiles and accumulator fit the budget.
SmallVector<int64_t> tileMatmul(ArrayRef<int64_t> space, int64_t bytes,
                                CoreBudget budget) {
  auto workingSet = [&](int64_t t) {
    int64_t m = std::min(t, space[0]), n = std::min(t, space[1]),
            k = std::min(t, space[2]);
    return (m * k + k * n) * bytes + m * n * kAccumulatorBytes;
  };
  int64_t largest = *std::max_element(space.begin(), space.end());
  int64_t t = budget.lanes;
  while (t < largest && workingSet(t + budget.lanes) <= budget.bytes)
    t += budget.lanes;
  return {std::min(t, space[0]), std::min(t, space[1]), std::min(t, space[2])};
}

/// [rows, columns] for a map or row reduction whose `streams` operands and
/// results each hold a tile of `bytes`-sized elements.
SmallVector<int64_t> tileRows(ArrayRef<int64_t> space, int64_t streams,
                              int64_t bytes, CoreBudget budget) {
  int64_t perColumn = std::max<int64_t>(1, streams) * bytes;
  int64_t fitting = budget.bytes / perColumn;
  int64_t columns = space[1] <= fitting
                        ? space[1]
                        : std::min(space[1], roundDownTo(fitting, budget.lanes));
  int64_t rows = std::clamp<int64_t>(budget.bytes / (perColumn * columns), 1,
                                     space[0]);
  return {rows, columns};
}

struct DataflowTile : cgpt::dataflow::impl::DataflowTileBase<DataflowTile> {
  using DataflowTileBase::DataflowTileBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!(workingSetFraction > 0 && workingSetFraction <= 1)) {
      module.emitError() << "dataflow-tile working-set-fraction must be in "
                            "(0, 1], got "
                         << workingSetFraction;
      return signalPassFailure();
    }
    FailureOr<cgpt::target::WaferTargetModel> model =
        cgpt::target::WaferTargetModel::load(target, &getContext());
    if (failed(model))
      return signalPassFailure();
    CoreBudget budget{
        static_cast<int64_t>(model->getCoreSramBytes() * workingSetFraction),
        std::max<int64_t>(1, model->getFlopsPerCycle() / 2)};
    if (budget.bytes < 16 * budget.lanes * kAccumulatorBytes) {
      module.emitError() << "target '" << model->getName() << "' leaves "
                         << budget.bytes
                         << " bytes per core for a tile; at least "
                         << 16 * budget.lanes * kAccumulatorBytes
                         << " are needed";
      return signalPassFailure();
    }

    Builder builder(&getContext());
    module.walk([&](ProgramOp program) {
      program.setTargetAttr(builder.getStringAttr(model->getName()));
    });
    module.walk([&](KernelOpInterface kernel) {
      Operation *op = kernel.getOperation();
      SmallVector<int64_t> space = kernel.getTilingSpace();
      int64_t bytes = storageBytes(op);
      SmallVector<int64_t> tile =
          isa<MatmulOp>(op)
              ? tileMatmul(space, bytes, budget)
              : tileRows(space, op->getNumOperands() + op->getNumResults(),
                         bytes, budget);
      op->setAttr("tile", TileAttr::get(&getContext(), tile));
    });
  }
};

} // namespace
