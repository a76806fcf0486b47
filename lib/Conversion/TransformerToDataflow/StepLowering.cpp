//===- StepLowering.cpp - lowering one training step to kernels -----------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Conversion/TransformerToDataflow/StepLowering.h"

#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace cgpt;
using namespace cgpt::dataflow;

void StepLowering::gradOutBias(Value bias, Value grad) {
  if (bias)
    gradOut(bias, kernel<SumBatchOp>(streamOf(bias.getType()), grad));
}

void StepLowering::eraseUnreadRecomputation(Operation *after, Operation *last) {
  if (!last || last == after)
    return;
  auto first = after ? std::next(after->getIterator()) : body->begin();
  SmallVector<Operation *> recomputed = llvm::to_vector(
      llvm::make_pointer_range(llvm::make_range(first, ++last->getIterator())));
  // Last first, so that a kernel read only by erased ones goes too.
  for (Operation *op : llvm::reverse(recomputed)) {
    bool rebuilt = op->hasAttr("recompute") || isa<WeightInOp>(op);
    if (rebuilt && op->use_empty())
      op->erase();
  }
}

void StepLowering::outlineStages() {
  SmallVector<Operation *> ops =
      llvm::to_vector(llvm::make_pointer_range(body->getOperations()));
  DenseMap<Operation *, size_t> position;
  for (auto [index, op] : llvm::enumerate(ops))
    position[op] = index;
  auto startOf = [&](const StageRun &run) -> size_t {
    return run.after ? position.lookup(run.after) + 1 : 0;
  };
  for (size_t r = 0; r < runs.size(); ++r) {
    size_t start = startOf(runs[r]);
    size_t end = r + 1 < runs.size() ? startOf(runs[r + 1]) : ops.size();
    if (start == end)
      continue;
    ArrayRef<Operation *> members(ops.begin() + start, ops.begin() + end);
    llvm::SmallPtrSet<Operation *, 32> inStage(members.begin(), members.end());
    SmallVector<Value> escaping;
    for (Operation *op : members)
      for (Value result : op->getResults())
        if (llvm::any_of(result.getUsers(), [&](Operation *user) {
              return !inStage.contains(user);
            }))
          escaping.push_back(result);

    builder.setInsertionPoint(members.front());
    auto stage =
        builder.create<StageOp>(loc, ValueRange(escaping).getTypes(),
                                runs[r].name, runs[r].phase, runs[r].layer);
    Block *block = new Block();
    stage.getBody().push_back(block);
    for (Operation *op : members)
      op->moveBefore(block, block->end());
    builder.setInsertionPointToEnd(block);
    builder.create<YieldOp>(loc, escaping);
    for (auto [i, value] : llvm::enumerate(escaping))
      value.replaceUsesWithIf(stage.getResult(i), [&](OpOperand &use) {
        return !stage->isAncestor(use.getOwner());
      });
  }
}
