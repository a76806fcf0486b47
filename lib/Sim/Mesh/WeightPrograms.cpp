//===- WeightPrograms.cpp - the weight kernels' programs ------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "ProgramBuilder.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>

namespace cgpt::sim::mesh::programs {

namespace {

/// The router's f32 work rows on the chain's last core, a token each
/// element: the largest logit, then the largest mark; the exponential's
/// fraction (first the logit less the largest) and power of two; the
/// exponentials' sum; a reciprocal and its work; the experts already
/// chosen; the one an expert takes; a product; the chosen probabilities'
/// sum; the null expert's exponential (with one).
enum RouterRow : int {
  kRouterLargest,
  kRouterFraction,
  kRouterPower,
  kRouterSum,
  kRouterReciprocal,
  kRouterReciprocalWork,
  kRouterFound,
  kRouterTake,
  kRouterProduct,
  kRouterChosen,
  kRouterNull,
};

/// The router's constants, each at its place here; then the
/// exponential's.
enum RouterConstant : int {
  kRouterLog2E,
  kRouterMinusOne,
  kRouterThreeHalves,
  kRouterMinusHalf,
  kRouterSaturate,
  kRouterMinusSaturate,
  kRouterOne,
  kRouterMinusTwo,
  kRouterExpertCount,
  kRouterNullLogit,
  kRouterExponentialAt,
};

/// The router's choice (docs/runtime.md, "The router on the mesh") on the
/// chain's last core of a segment, once the last block of its logits is
/// in (`logits`, [expert][token] over its `tokens`): optionally rounded
/// to 16 bits; the softmax, the largest logit and the exponentials of the
/// logits less it (and the null expert's fixed logit less it) over their
/// sum's reciprocal; then, `k.choices` times, the largest of the marks (a
/// copy of the probabilities), and for each expert in order whether it
/// is that largest and none before it was (x 2^254 saturates any
/// difference), which adds its probability to the choice's weight,
/// counts toward its index (the experts up to the chosen one) and marks it
/// taken (less 2, below every probability); last, the weights over their
/// sum (with the null expert's share). Everything runs over the tokens,
/// one operation an expert: no branch, whatever the logits. Declares the
/// buffers past the sums (RouterBuffer) and returns the task.
int routerChoice(CoreProgram &p, const KernelShape &k, int64_t tokens,
                 int64_t logitsElements) {
  constexpr ElementType f32 = ElementType::f32;
  int64_t experts = k.columns, n = tokens;
  bool null = k.nullLogit.has_value();
  int logits = p.addBuffer("logits", logitsElements, f32);
  int rounded = p.addBuffer("rounded logits", k.roundLogits ? experts * n : 0,
                            ElementType::bf16);
  int probabilities = p.addBuffer("probabilities", experts * n, f32);
  int marks = p.addBuffer("choice marks", experts * n, f32);
  int weights = p.addBuffer("chosen weights", k.choices * n, f32);
  int indices = p.addBuffer("chosen experts", k.choices * n, f32);
  int work =
      p.addBuffer("router work rows", (kRouterNull + (null ? 1 : 0)) * n, f32);
  std::vector<float> values = {static_cast<float>(M_LOG2E),
                               -1.0f,
                               1.5f,
                               -0.5f,
                               0x1p127f,
                               -0x1p127f,
                               1.0f,
                               -2.0f,
                               static_cast<float>(experts),
                               static_cast<float>(k.nullLogit.value_or(0))};
  ExponentialConstants exp =
      appendExponentialConstants(values, kRouterMinusOne);
  int constants = p.addConstants("router constants", std::move(values));
  exp.buffer = constants;
  // Without a chain the sums are the logits.
  Dsd logitsAt = Dsd::memory(logitsElements > 0 ? logits : kProductSums);
  auto row = [&](RouterRow r) { return Dsd::memory(work, r * n); };
  auto constant = [&](RouterConstant c) { return scalar(constants, c); };
  int expert = p.addCursor({n, experts * n});
  int choice = p.addCursor({n, k.choices * n});
  auto perExpert = [&](int buffer) { return Dsd::memory(buffer, 0, expert); };
  auto perChoice = [&](int buffer) { return Dsd::memory(buffer, 0, choice); };
  auto eachExpert = [&](RowTask &task, const std::function<void()> &body) {
    repeated(task, experts, [&] {
      body();
      task.ops.push_back(Op::advanceOp(expert));
    });
  };
  auto eachChoice = [&](RowTask &task, const std::function<void()> &body) {
    repeated(task, k.choices, [&] {
      body();
      task.ops.push_back(Op::advanceOp(choice));
    });
  };
  Dsd largest = row(kRouterLargest), fraction = row(kRouterFraction),
      sum = row(kRouterSum), found = row(kRouterFound), take = row(kRouterTake),
      product = row(kRouterProduct), chosen = row(kRouterChosen);
  ExponentialRows rows{fraction, row(kRouterPower), Dsd()};

  RowTask task(p, 1, n);
  if (k.roundLogits) {
    task.vector(Op::Kind::fmov, Dsd::memory(rounded), logitsAt, Dsd(),
                experts * n, f32);
    task.vector(Op::Kind::fmov, logitsAt, Dsd::memory(rounded), Dsd(),
                experts * n, f32);
  }
  Dsd logit = logitsAt;
  logit.cursor = expert;
  // The softmax.
  task.vector(Op::Kind::fmov, largest, logitsAt, Dsd(), n, f32);
  eachExpert(task, [&] {
    task.vector(Op::Kind::fmax, largest, largest, logit, n, f32);
  });
  task.vector(Op::Kind::fmov, sum, Dsd::zero(), Dsd(), n, f32);
  eachExpert(task, [&] {
    rows.polynomial = perExpert(probabilities);
    task.fmac(fraction, logit, largest, constant(kRouterMinusOne), n, f32);
    exponential(task, fraction, constant(kRouterLog2E), n, rows, exp);
    task.vector(Op::Kind::fadd, sum, sum, rows.polynomial, n, f32);
  });
  if (null) {
    rows.polynomial = row(kRouterNull);
    task.fmac(fraction, constant(kRouterNullLogit), largest,
              constant(kRouterMinusOne), n, f32);
    exponential(task, fraction, constant(kRouterLog2E), n, rows, exp);
  }
  Dsd reciprocal = row(kRouterReciprocal);
  reciprocalOf(task, reciprocal, sum, row(kRouterReciprocalWork), n,
               constant(kRouterThreeHalves), constant(kRouterMinusHalf));
  eachExpert(task, [&] {
    task.vector(Op::Kind::fmul, perExpert(probabilities),
                perExpert(probabilities), reciprocal, n, f32);
    task.vector(Op::Kind::fmov, perExpert(marks), perExpert(probabilities),
                Dsd(), n, f32);
  });
  if (null)
    task.vector(Op::Kind::fmul, row(kRouterNull), row(kRouterNull), reciprocal,
                n, f32);
  // The choices, the largest first; equal ones, the lower index first.
  eachChoice(task, [&] {
    task.vector(Op::Kind::fmov, largest, Dsd::memory(marks), Dsd(), n, f32);
    eachExpert(task, [&] {
      task.vector(Op::Kind::fmax, largest, largest, perExpert(marks), n, f32);
    });
    for (Dsd cleared : {found, perChoice(weights), perChoice(indices)})
      task.vector(Op::Kind::fmov, cleared, Dsd::zero(), Dsd(), n, f32);
    eachExpert(task, [&] {
      // 1 where the mark is the largest, else 0; then 0 once one was.
      task.fmac(take, largest, perExpert(marks), constant(kRouterMinusOne), n,
                f32);
      task.vector(Op::Kind::fmul, take, take, constant(kRouterSaturate), n,
                  f32);
      task.vector(Op::Kind::fmul, take, take, constant(kRouterMinusSaturate), n,
                  f32);
      task.vector(Op::Kind::fmax, take, take, constant(kRouterMinusOne), n,
                  f32);
      task.vector(Op::Kind::fadd, take, take, constant(kRouterOne), n, f32);
      task.vector(Op::Kind::fmul, product, take, found, n, f32);
      task.fmac(take, take, product, constant(kRouterMinusOne), n, f32);
      task.vector(Op::Kind::fadd, found, found, take, n, f32);
      // The experts from the chosen one on count E - index in all.
      task.vector(Op::Kind::fadd, perChoice(indices), perChoice(indices), found,
                  n, f32);
      task.vector(Op::Kind::fmul, product, take, perExpert(probabilities), n,
                  f32);
      task.vector(Op::Kind::fadd, perChoice(weights), perChoice(weights),
                  product, n, f32);
      task.fmac(perExpert(marks), perExpert(marks), take,
                constant(kRouterMinusTwo), n, f32);
    });
    task.fmac(perChoice(indices), constant(kRouterExpertCount),
              perChoice(indices), constant(kRouterMinusOne), n, f32);
  });
  // The weights over the chosen probabilities' sum.
  task.vector(Op::Kind::fmov, chosen, null ? row(kRouterNull) : Dsd::zero(),
              Dsd(), n, f32);
  eachChoice(task, [&] {
    task.vector(Op::Kind::fadd, chosen, chosen, perChoice(weights), n, f32);
  });
  reciprocalOf(task, reciprocal, chosen, row(kRouterReciprocalWork), n,
               constant(kRouterThreeHalves), constant(kRouterMinusHalf));
  eachChoice(task, [&] {
    task.vector(Op::Kind::fmul, perChoice(weights), perChoice(weights),
                reciprocal, n, f32);
  });
  return p.addTask(Task{false, -1, std::move(task.ops)});
}

/// The tasks every core of a product against a stream has: the chain task
/// that the end of each block's columns activates, and the data task that
/// each wavelet of the stream starts.
struct ProductTasks {
  int chain, data;
};

/// What every core of a product against a stream declares first: its held
/// rows (`inputs`) and the f32 sums of a block (`sums`, at least
/// `sumsElements`: room for an epilogue's work rows), then its
/// ProductTasks. Each wavelet of the stream adds, for each element it
/// carries, one row of inputs times the element to one column's sums.
ProductTasks productCore(CoreProgram &p, int64_t rowsIn, int64_t perColumn,
                         int64_t blockColumns, int64_t packed, ElementType type,
                         int64_t sumsElements = 0) {
  int inputs = p.addBuffer("inputs", rowsIn * perColumn, type);
  int sums =
      p.addBuffer("sums", std::max(blockColumns * perColumn, sumsElements),
                  ElementType::f32);
  int chain = p.addTask({});
  int column = p.addCursor({perColumn, blockColumns * perColumn, -1, chain});
  int row = p.addCursor({perColumn, rowsIn * perColumn, column, -1});
  Task data{true, kStreamColor, {}};
  for (int64_t e = 0; e < packed; ++e) {
    data.body.push_back(Op::fmacOp(
        Dsd::memory(sums, 0, column), Dsd::memory(sums, 0, column),
        Dsd::memory(inputs, 0, row), Dsd::argument(e == 1), perColumn, type));
    data.body.push_back(Op::advanceOp(row));
  }
  return {chain, p.addTask(std::move(data))};
}

/// An asynchronous `op` that activates `onDone` when it ends.
Op async(Op op, int onDone) {
  op.async = true;
  op.onDone = onDone;
  return op;
}

/// A reduce-scattered weight matmul's epilogue on a core that owns
/// `columns` columns of each of `blocks` blocks of `blockColumns`, `tokens`
/// a column (docs/runtime.md, "The weight matmul's epilogue"): it declares
/// the buffers epilogueBuffers names, then the maps' constants and the
/// scale. The maps' f32 work rows lie in the block's sums, which are dead
/// once the part is stored (wafer::epilogueChunk).
class Epilogue {
public:
  Epilogue(CoreProgram &p, const KernelShape &k, int64_t blocks,
           int64_t blockColumns, int64_t columns, int64_t tokens,
           ElementType type)
      : p(p), k(k), buffers(epilogueBuffers(k)), blocks(blocks),
        columns(columns), tokens(tokens),
        chunk(wafer::epilogueChunk(k, blockColumns, tokens)), type(type) {
    int64_t part = columns * tokens;
    for (auto [index, map] : llvm::enumerate(k.epilogue)) {
      const EpilogueBuffers::Map &at = buffers.maps[index];
      std::string name = "epilogue map " + std::to_string(index);
      if (at.held >= 0) {
        int held = p.addBuffer(name + "'s other input", blocks * part, type);
        assert(held == at.held && "the buffers in epilogueBuffers' order");
        (void)held;
      }
      if (map.kept) {
        int result = p.addBuffer(name + "'s result", blocks * part, type);
        assert(result == at.result && "the buffers in epilogueBuffers' order");
        (void)result;
      }
    }
    for (auto [index, map] : llvm::enumerate(k.epilogue))
      constants.push_back(p.addConstants(
          "epilogue map " + std::to_string(index) + "'s constants",
          wafer::mapAlgorithm(map.kind).constants));
    if (k.scale)
      scale = p.addConstants("scale", {static_cast<float>(*k.scale)});
  }

  /// The part's f32 sums at `sums` times the scale into the outputs at
  /// `stored`, in the stored element.
  void scaled(std::vector<Op> &end, Dsd stored, Dsd sums) {
    end.push_back(Op::fmacOp(stored, Dsd::zero(), sums, scalar(scale, 0),
                             columns * tokens, ElementType::f32));
  }

  /// The maps, in order, over the core's part of the block: a loop over
  /// its columns, each a loop over its chunks of tokens and the rest.
  void maps(std::vector<Op> &end) {
    if (k.epilogue.empty())
      return;
    int at = p.addCursor({1, blocks * columns * tokens});
    int64_t full = tokens / chunk, rest = tokens % chunk;
    size_t columnLoop = end.size();
    end.push_back(Op::loopOp(0, columns));
    if (full > 0) {
      size_t chunkLoop = end.size();
      end.push_back(Op::loopOp(0, full));
      mapsOver(end, at, chunk);
      end[chunkLoop].target = static_cast<int>(end.size() - chunkLoop - 1);
    }
    if (rest > 0)
      mapsOver(end, at, rest);
    end[columnLoop].target = static_cast<int>(end.size() - columnLoop - 1);
  }

private:
  /// The maps over `n` tokens from cursor `at`, which then moves past them.
  void mapsOver(std::vector<Op> &end, int at, int64_t n) {
    for (auto [index, map] : llvm::enumerate(k.epilogue)) {
      const EpilogueBuffers::Map &where = buffers.maps[index];
      // The algorithms write input 0 in their last operation only
      // (MapAlgorithm.h): reads of it come before, from the value itself.
      auto dsd = [&](const wafer::MapOperand &operand, bool destination) {
        switch (operand.kind) {
        case wafer::MapOperand::Kind::input:
          if (destination)
            return Dsd::memory(where.result, 0, at);
          return Dsd::memory(
              operand.index == map.running ? where.source : where.held, 0, at);
        case wafer::MapOperand::Kind::work:
          return Dsd::memory(kProductSums, operand.index * chunk);
        case wafer::MapOperand::Kind::constant:
          return scalar(constants[index], operand.index);
        case wafer::MapOperand::Kind::zero:
          return Dsd::zero();
        case wafer::MapOperand::Kind::none:
          break;
        }
        return Dsd();
      };
      mapOps(end, wafer::mapAlgorithm(map.kind), dsd, n, type);
    }
    end.push_back(Op::advanceOp(at, n));
  }

  CoreProgram &p;
  const KernelShape &k;
  EpilogueBuffers buffers;
  int64_t blocks, columns, tokens, chunk;
  ElementType type;
  std::vector<int> constants;
  int scale = -1;
};

/// The reduce-scatter of a weight matmul's block along its segment of
/// `segment` cores, at place `s` (docs/runtime.md, "The weight matmul's
/// reduce-scatter"). Core s owns part s of the block's columns
/// (wafer::scatteredPart), which its sums hold in the stream's order
/// between the parts west of it and those east of it. Two chains run at
/// once, each a microthread on two alternating colors. West: the parts
/// west of the core come from the east, farthest first, and pass on, the
/// core adding its sums; then comes its own part, which it keeps apart.
/// East: its own part comes from the west first, into its sums; then the
/// parts east of it, nearest first, pass on. The router gives the
/// west-going chain the ramp first (it routes that color first), so the
/// west-going chain never waits, and the east-going one follows each core
/// as its west-going part ends (docs/runtime.md derives the time). The
/// stream's task is blocked meanwhile. Once both chains are done (a task
/// activated by the one and unblocked by the other), the core stores its
/// part, both halves summed, in the stored element at the block's place
/// among its outputs (scaled, and through the maps of `k`'s epilogue,
/// where it has them: Epilogue), clears the sums and unblocks the stream.
/// A bias is one more row of the stream, against inputs of ones
/// (wafer::biasRow).
void scatteredChain(Builder &b, const KernelShape &k, int x, int y, int s,
                    int64_t packed, ElementType type) {
  KernelProgram &out = b.out;
  int segment = out.segment;
  int64_t nb = out.blockColumns, tb = out.sums.perColumn;
  wafer::ScatteredPart own = wafer::scatteredPart(s, segment, nb);
  int64_t westward = own.first * tb, mine = own.count * tb;
  int64_t eastward = nb * tb - westward - mine;
  bool fromWest = s > 0, fromEast = s + 1 < segment;
  int eastOut = kChainColor + s % 2, eastIn = kChainColor + (s + 1) % 2;
  int westOut = kChainColor + 2 + s % 2, westIn = kChainColor + 2 + (s + 1) % 2;
  // The west-going chain's color first: the router takes it to the ramp
  // before the east-going one's.
  if (fromEast) {
    b.route(x, y, westIn, bit(east), bit(ramp));
    b.route(x, y, eastOut, bit(ramp), bit(east));
  }
  if (fromWest) {
    b.route(x, y, eastIn, bit(west), bit(ramp));
    b.route(x, y, westOut, bit(ramp), bit(west));
  }
  b.assign(x, y, s, [&] {
    constexpr ElementType f32 = ElementType::f32;
    CoreProgram p;
    auto [chain, data] = productCore(p, out.sums.streamed, tb, nb, packed, type,
                                     out.sums.blockSums(nb));
    int outputs = p.addBuffer("outputs", out.blocks * mine, type);
    int fromEastPart =
        p.addBuffer("own part from the east", fromEast ? mine : 0, f32);
    assert(outputs == kProductOutputs && fromEastPart == kProductFromEast &&
           "the buffers in ProductBuffer's order");
    Epilogue epilogue(p, k, out.blocks, nb, own.count, tb, type);
    auto storeOps = [&](std::vector<Op> &end) {
      if (mine > 0) {
        int block = p.addCursor({mine, out.blocks * mine});
        Dsd stored = Dsd::memory(outputs, 0, block);
        Dsd ownSums = Dsd::memory(kProductSums, westward);
        if (k.scale) {
          if (fromEast)
            end.push_back(Op::vector(Op::Kind::fadd, ownSums, ownSums,
                                     Dsd::memory(kProductFromEast), mine, f32));
          epilogue.scaled(end, stored, ownSums);
        } else {
          end.push_back(fromEast ? Op::vector(Op::Kind::fadd, stored, ownSums,
                                              Dsd::memory(kProductFromEast),
                                              mine, type)
                                 : Op::vector(Op::Kind::fmov, stored, ownSums,
                                              Dsd(), mine, type));
        }
        epilogue.maps(end);
        end.push_back(Op::advanceOp(block));
      }
      if (out.blocks > 1)
        end.push_back(Op::vector(Op::Kind::fmov, Dsd::memory(kProductSums),
                                 Dsd::zero(), Dsd(), nb * tb, f32));
    };
    // Alone in its segment, a core stores each block as it ends.
    if (segment == 1) {
      storeOps(p.tasks[chain].body);
      return p;
    }
    int ownFromWest = p.addTask({}), westPassed = p.addTask({}),
        westJoined = p.addTask({}), store = p.addTask({});
    p.startBlocked.push_back(store);
    Dsd westParts = Dsd::memory(kProductSums),
        ownSums = Dsd::memory(kProductSums, westward),
        eastParts = Dsd::memory(kProductSums, westward + mine);

    // Parts passed on: added to what comes, or sent from the chain's end.
    auto passOn = [&](bool comes, int in, int out, Dsd parts, int64_t n) {
      return comes ? Op::vector(Op::Kind::fadd, Dsd::out(out), Dsd::in(in),
                                parts, n, f32)
                   : Op::vector(Op::Kind::fmov, Dsd::out(out), parts, Dsd(), n,
                                f32);
    };
    std::vector<Op> &begin = p.tasks[chain].body;
    begin.push_back(Op::blockOp(data));
    if (westward > 0)
      begin.push_back(async(
          passOn(fromEast, westIn, westOut, westParts, westward), westPassed));
    else
      begin.push_back(Op::activateOp(westPassed));
    if (fromWest && mine > 0)
      begin.push_back(async(Op::vector(Op::Kind::fadd, ownSums, Dsd::in(eastIn),
                                       ownSums, mine, f32),
                            ownFromWest));
    else
      begin.push_back(Op::activateOp(ownFromWest));

    // After its own part from the west, the parts east of it pass on; then
    // the store may run.
    std::vector<Op> &east = p.tasks[ownFromWest].body;
    if (eastward > 0)
      east.push_back(
          async(passOn(fromWest, eastIn, eastOut, eastParts, eastward), store));
    else
      east.push_back(Op::activateOp(store));
    // After the parts west of it, its own part from the east; then the
    // store is unblocked.
    std::vector<Op> &west = p.tasks[westPassed].body;
    if (fromEast && mine > 0)
      west.push_back(async(Op::vector(Op::Kind::fmov, Dsd::memory(fromEastPart),
                                      Dsd::in(westIn), Dsd(), mine, f32),
                           westJoined));
    else
      west.push_back(Op::activateOp(westJoined));
    p.tasks[westJoined].body.push_back(Op::unblockOp(store));

    std::vector<Op> &end = p.tasks[store].body;
    storeOps(end);
    end.push_back(Op::blockOp(store));
    end.push_back(Op::unblockOp(data));
    return p;
  });
}

} // namespace

void streamedProduct(Builder &b, const KernelShape &k,
                     const SumBlockShape &sums, ElementType type,
                     bool chainAlongRows, bool chooses, bool scatters) {
  KernelProgram &out = b.out;
  int64_t perColumn = sums.perColumn, rowsIn = sums.streamed;
  int64_t nb = out.blockColumns;
  int64_t packed = streamPacking(rowsIn * nb, perWavelet(type));
  int64_t stream = out.blocks * (rowsIn * nb / packed);
  // The stream runs down the columns (weights) and the chain along the
  // rows, or the stream along the rows (output gradients) and the chain
  // down the columns.
  if (chainAlongRows)
    b.downColumns(kStreamColor, stream);
  else
    b.alongSegments(kStreamColor, stream);
  if (scatters) {
    b.forEachCore([&](int x, int y, int s) {
      scatteredChain(b, k, x, y, s, packed, type);
    });
    return;
  }
  // A weight gradient's chain runs through every column of segments.
  int stages = chainAlongRows ? out.segment : out.rows * out.segmentColumns;
  bool chained = stages > 1 || out.blocks > 1;
  b.forEachCore([&](int x, int y, int s) {
    int step = chainAlongRows ? s : x / out.segment * out.rows + y;
    bool choice = chooses && step + 1 == stages;
    std::pair<int, int> colors;
    int part;
    if (chainAlongRows) {
      colors = b.chainStep(x, y, step, stages, east, kChainColor,
                           /*leaves=*/!choice);
      part = chainPart(step, stages) + (choice ? kChainParts : 0);
    } else {
      if (chained)
        colors = b.columnsChainStep(x, y, kChainColor);
      part = columnsChainPart(step, colors);
    }
    b.assign(x, y, part, [&] {
      CoreProgram p;
      int chain = productCore(p, rowsIn, perColumn, nb, packed, type).chain;
      int sumsBuffer = kProductSums;
      if (choice) {
        // Each block's sums land in the logits, at the block's place; the
        // last block's start the choice.
        int64_t perBlock = nb * perColumn;
        int choose =
            routerChoice(p, k, perColumn, chained ? out.blocks * perBlock : 0);
        int block = p.addCursor({perBlock, out.blocks * perBlock, -1, choose});
        std::vector<Op> &body = p.tasks[chain].body;
        if (chained) {
          Dsd logits = Dsd::memory(kRouterLogits, 0, block);
          body.push_back(
              step == 0
                  ? Op::vector(Op::Kind::fmov, logits, Dsd::memory(sumsBuffer),
                               Dsd(), perBlock, ElementType::f32)
                  : Op::vector(Op::Kind::fadd, logits, Dsd::in(colors.first),
                               Dsd::memory(sumsBuffer), perBlock,
                               ElementType::f32));
          if (out.blocks > 1)
            body.push_back(Op::vector(Op::Kind::fmov, Dsd::memory(sumsBuffer),
                                      Dsd::zero(), Dsd(), perBlock,
                                      ElementType::f32));
        }
        body.push_back(Op::advanceOp(block));
        return p;
      }
      // Alone in its chain with one block, the core's sums are the outputs
      // and stay where they are.
      if (chained)
        chainOps(p.tasks[chain].body, step, sumsBuffer, nb * perColumn, colors,
                 out.blocks > 1);
      return p;
    });
  });
}

void residentWeightGrad(Builder &b, const KernelShape &k, const Layout &layout,
                        int64_t microBatch, ElementType type) {
  KernelProgram &out = b.out;
  int64_t epw = perWavelet(type);
  int64_t tokens = microBatch * k.contracted;
  int64_t kb = ceilDiv(k.rows, layout.featureGroups);
  int64_t nb = ceilDiv(k.columns, layout.tokenGroups);
  out.tokens = tokens;
  out.features = kb;
  int64_t packed = streamPacking(tokens * nb, epw);
  int inputColor = kStreamColor + 3;
  b.downColumns(inputColor, ceilDiv(tokens * kb, epw));
  b.alongSegments(kStreamColor, tokens * nb / packed);
  b.forEachCore([&](int x, int y, int) {
    b.assign(x, y, 0, [&] {
      CoreProgram p;
      int inputs = p.addBuffer("inputs", tokens * kb, type);
      int gradient = p.addBuffer("gradient", nb * kb, ElementType::f32);
      int token = p.addCursor({kb, tokens * kb, -1, -1});
      int column = p.addCursor({kb, nb * kb, token, -1});
      Task store{false, -1, {}};
      store.body.push_back(Op::vector(Op::Kind::fmov, Dsd::memory(inputs),
                                      Dsd::in(inputColor), Dsd(), tokens * kb,
                                      type));
      p.startActive.push_back(p.addTask(std::move(store)));
      Task data{true, kStreamColor, {}};
      for (int64_t e = 0; e < packed; ++e) {
        data.body.push_back(Op::fmacOp(
            Dsd::memory(gradient, 0, column), Dsd::memory(gradient, 0, column),
            Dsd::memory(inputs, 0, token), Dsd::argument(e == 1), kb, type));
        data.body.push_back(Op::advanceOp(column));
      }
      p.addTask(std::move(data));
      return p;
    });
  });
}

void tokenSum(Builder &b, const KernelShape &k, const Layout &layout,
              int64_t microBatch) {
  KernelProgram &out = b.out;
  int64_t tb = ceilDiv(microBatch * k.rows, layout.tokenGroups);
  int64_t nb = out.blockColumns;
  out.tokens = tb;
  out.features = out.sums.columns;
  int stages = out.rows;
  bool chained = stages > 1 || out.blocks > 1;
  b.forEachCore([&](int x, int y, int) {
    std::pair<int, int> colors =
        chained ? b.chainStep(x, y, y, stages, south, kChainColor)
                : std::pair<int, int>{};
    int part = chainPart(y, stages);
    b.assign(x, y, part, [&] {
      CoreProgram p;
      int data = p.addBuffer("data", out.blocks * tb * nb,
                             elementTypeOf(k.elementBytes));
      int sumsBuffer = p.addBuffer("sums", nb, ElementType::f32);
      int row = p.addCursor({nb});
      Task work{false, -1, {}};
      std::vector<Op> block;
      block.push_back(Op::loopOp(2, tb));
      // 16-bit data adds into f32 sums (@faddhs), at @fadds' width.
      block.push_back(Op::vector(
          Op::Kind::fadd, Dsd::memory(sumsBuffer), Dsd::memory(sumsBuffer),
          Dsd::memory(data, 0, row), nb, ElementType::f32));
      block.push_back(Op::advanceOp(row));
      if (chained)
        chainOps(block, y, sumsBuffer, nb, colors, out.blocks > 1);
      work.body.push_back(
          Op::loopOp(static_cast<int>(block.size()), out.blocks));
      work.body.insert(work.body.end(), block.begin(), block.end());
      p.startActive.push_back(p.addTask(std::move(work)));
      return p;
    });
  });
}

} // namespace cgpt::sim::mesh::programs

namespace cgpt::sim::mesh {

EpilogueBuffers epilogueBuffers(const wafer::KernelShape &k) {
  EpilogueBuffers out;
  int next = kProductFromEast + 1;
  int running = kProductOutputs;
  for (const wafer::EpilogueMap &map : k.epilogue) {
    EpilogueBuffers::Map &at = out.maps.emplace_back();
    if (dataflow::mapArity(map.kind) > 1)
      at.held = next++;
    at.source = running;
    at.result = map.kept ? next++ : running;
    running = at.result;
  }
  return out;
}

} // namespace cgpt::sim::mesh
