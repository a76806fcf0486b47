//===- LateRebuild.cpp - rebuilding recomputed tensors late ---------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Conversion/TransformerToDataflow/LateRebuild.h"

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace cgpt;
using namespace cgpt::dataflow;

namespace {

bool isAttentionKernel(Operation *op) {
  auto kernel = dyn_cast_or_null<KernelOpInterface>(op);
  return kernel && kernel.getKernelKind() == KernelKind::attention;
}

/// Whether `value` is made and read only by attention's fused kernels (its
/// scores, probabilities and their gradients, dropped or not): it never
/// leaves the cores that make it (docs/wafer.md).
bool isAttentionInternal(Value value) {
  Operation *producer = value.getDefiningOp();
  if (auto dropout = dyn_cast_or_null<DropoutOp>(producer))
    return isAttentionInternal(dropout.getInput());
  if (!isAttentionKernel(producer))
    return false;
  return llvm::all_of(value.getUsers(), [](Operation *user) {
    return isAttentionKernel(user) || isa<DropoutOp>(user);
  });
}

/// Bytes per sequence `value` holds while live: an activation's, 0 for a
/// weight, a statistic of the whole micro-batch or attention's own.
int64_t activationBytes(Value value) {
  auto stream = dyn_cast<StreamType>(value.getType());
  if (!stream || stream.getTensor().hasStaticShape() ||
      isAttentionInternal(value))
    return 0;
  return bytesPerSequence(stream.getTensor());
}

bool isRecomputed(Operation *op) {
  return op && isa<KernelOpInterface>(op) && op->hasAttr("recompute");
}

/// The stage's ops in order, with where each value is last read.
class StageView {
public:
  StageView(Block &body, Operation *after) {
    auto first = after ? std::next(after->getIterator()) : body.begin();
    for (Operation &op : llvm::make_range(first, body.end())) {
      position[&op] = static_cast<int64_t>(ops.size());
      ops.push_back(&op);
    }
  }

  /// Where `value` is last read in the stage (-1: not at all).
  int64_t lastUse(Value value) const {
    int64_t last = -1;
    for (Operation *user : value.getUsers())
      if (auto it = position.find(user); it != position.end())
        last = std::max(last, it->second);
    return last;
  }
  /// Whether `value` is read at or after `at`.
  bool readFrom(Value value, int64_t at) const { return lastUse(value) >= at; }
  /// The first read of `value` after `at` (-1: none).
  int64_t firstUseAfter(Value value, int64_t at) const {
    int64_t first = -1;
    for (Operation *user : value.getUsers())
      if (auto it = position.find(user); it != position.end() &&
                                         it->second > at &&
                                         (first < 0 || it->second < first))
        first = it->second;
    return first;
  }
  /// The position where the most activation bytes are live, by the
  /// intervals from each value's definition (or the stage's start) to its
  /// last read.
  int64_t peak() const {
    std::vector<int64_t> live(ops.size() + 1, 0);
    llvm::DenseSet<Value> seen;
    auto add = [&](Value value, int64_t from) {
      int64_t bytes = activationBytes(value);
      int64_t last = lastUse(value);
      if (!bytes || last < from || !seen.insert(value).second)
        return;
      live[from] += bytes;
      live[last + 1] -= bytes;
    };
    for (Operation *op : ops) {
      for (Value operand : op->getOperands())
        if (!position.count(operand.getDefiningOp()))
          add(operand, 0);
      for (Value result : op->getResults())
        add(result, position.lookup(op));
    }
    int64_t best = 0, running = 0, bestBytes = -1;
    for (size_t p = 0; p < ops.size(); ++p) {
      running += live[p];
      if (running > bestBytes) {
        bestBytes = running;
        best = static_cast<int64_t>(p);
      }
    }
    return best;
  }
  int64_t executedFlops() const {
    int64_t flops = 0;
    for (Operation *op : ops)
      if (auto kernel = dyn_cast<KernelOpInterface>(op))
        flops += kernel.getExecutedFlopsPerSequence();
    return flops;
  }

  std::vector<Operation *> ops;
  llvm::DenseMap<Operation *, int64_t> position;
};

/// One rebuild: the recomputed kernels to run again before the op at
/// `before`, their FLOPs and how many of them are products.
struct Rebuild {
  llvm::SetVector<Operation *> kernels;
  int64_t before = -1, flops = 0, products = 0;
};

/// Values already rebuilt once, each with the copy that replaced it.
using Rebuilt = SmallVector<std::pair<Value, Value>>;

/// The copy of `value` rebuilt before the op at `before`, if any.
Value rebuiltBefore(Value value, int64_t before, const StageView &stage,
                    const Rebuilt &rebuilt) {
  for (auto [from, to] : rebuilt)
    if (from == value && stage.position.lookup(to.getDefiningOp()) < before)
      return to;
  return {};
}

/// The kernels that must run again before `before` for `producer`'s
/// results: `producer`, and whatever recomputed kernel makes an operand no
/// longer read by then and not rebuilt before it already.
void collectChain(Operation *producer, const StageView &stage,
                  const Rebuilt &rebuilt, Rebuild &rebuild) {
  if (rebuild.kernels.contains(producer))
    return;
  for (Value operand : producer->getOperands()) {
    Operation *source = operand.getDefiningOp();
    if (isRecomputed(source) && stage.position.count(source) &&
        !stage.readFrom(operand, rebuild.before) &&
        !rebuiltBefore(operand, rebuild.before, stage, rebuilt))
      collectChain(source, stage, rebuilt, rebuild);
  }
  rebuild.kernels.insert(producer);
  rebuild.flops +=
      cast<KernelOpInterface>(producer).getExecutedFlopsPerSequence();
  rebuild.products += isa<MatmulOp, ExpertMatmulOp, RouteOp>(producer);
}

} // namespace

int64_t cgpt::rebuildLate(Block &body, Operation *after, OpBuilder &builder) {
  OpBuilder::InsertionGuard guard(builder);
  // Each recomputed kernel is rebuilt at most once, so this ends.
  llvm::DenseSet<Operation *> done;
  Rebuilt rebuilt;
  int64_t added = 0;
  // All of a stage's rebuilds together stay within the share of its FLOPs.
  double budget = kLateRebuildFlopsShare *
                  static_cast<double>(StageView(body, after).executedFlops());
  while (true) {
    StageView stage(body, after);
    int64_t peak = stage.peak();
    // The recomputed kernel whose results span the peak with the most
    // bytes, among those cheap enough to run again.
    std::optional<Rebuild> best;
    int64_t bestBytes = 0;
    for (Operation *op : stage.ops) {
      if (!isRecomputed(op) || done.contains(op) ||
          stage.position.lookup(op) >= peak)
        continue;
      int64_t bytes = 0, before = -1;
      for (Value result : op->getResults()) {
        int64_t late = stage.firstUseAfter(result, peak);
        bool readAtPeak = llvm::any_of(result.getUsers(), [&](Operation *u) {
          return stage.position.lookup(u) == peak;
        });
        if (late < 0 || readAtPeak)
          continue;
        bytes += activationBytes(result);
        before = before < 0 ? late : std::min(before, late);
      }
      if (bytes <= bestBytes)
        continue;
      Rebuild rebuild;
      rebuild.before = before;
      collectChain(op, stage, rebuilt, rebuild);
      // One product at most: a rebuild reruns a projection from what is
      // still live, not a chain of them.
      if (rebuild.products > 1 || static_cast<double>(rebuild.flops) > budget)
        continue;
      best = std::move(rebuild);
      bestBytes = bytes;
    }
    if (!best)
      return added;
    budget -= static_cast<double>(best->flops);

    // Run the chain again just before its first late reader, in stage
    // order, and let every reader from there on read the new results.
    Operation *reader = stage.ops[best->before];
    SmallVector<Operation *> chain = best->kernels.takeVector();
    llvm::sort(chain, [&](Operation *a, Operation *b) {
      return stage.position.lookup(a) < stage.position.lookup(b);
    });
    builder.setInsertionPoint(reader);
    IRMapping copies;
    for (Operation *original : chain)
      for (Value operand : original->getOperands())
        if (Value copy = rebuiltBefore(operand, best->before, stage, rebuilt))
          copies.map(operand, copy);
    for (Operation *original : chain) {
      Operation *copy = builder.clone(*original, copies);
      for (auto [from, to] :
           llvm::zip(original->getResults(), copy->getResults())) {
        from.replaceUsesWithIf(to, [&](OpOperand &use) {
          auto it = stage.position.find(use.getOwner());
          return it != stage.position.end() && it->second >= best->before;
        });
        copies.map(from, to);
        rebuilt.push_back({from, to});
      }
      done.insert(original);
      done.insert(copy);
      ++added;
    }
  }
}
