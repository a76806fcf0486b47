#!/usr/bin/env python3
"""Puts small deliberate bugs into the code, one at a time, and checks that
the test named for each fails.

    scripts/mutation-check.py [--build build] [--only NAME]

For each mutation: replace one snippet in one source file, rebuild
(ninja -C BUILD), run the named tests, restore the file. A test is a lit
test's path under test/, or `Unit/Suite.Name`, one GoogleTest case of the
unit tests. A mutation of
the analytic timing model also names the tests that must still pass: the
cycle-level engine's own cycles, which no term of the analytic model may
move. Prints a Markdown table (mutation, test, caught or not) for
docs/robustness.md.
Exits 1 if a mutation survives. Run it on a clean tree: it restores each
file from its own copy, but an interrupted run leaves the mutation in place
(`git checkout` puts it back).
"""
import argparse
import functools
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIT = "/usr/lib/llvm-19/build/utils/lit/lit.py"

# (name, file, original snippet, mutated snippet, tests that must fail[,
# tests that must still pass])
ENGINE = ["reference/mesh-engine.test"]
MUTATIONS = [
    ("a mesh queue holds one wavelet more than queue_wavelets",
     "lib/Sim/Mesh/MeshBand.h",
     "return s.size + s.arriving + s.reserved + s.freedNow < depth;",
     "return s.size + s.arriving + s.reserved + s.freedNow < depth + 1;",
     ["Unit/MeshQueues.HoldExactlyTheirDepth"]),
    ("a Hugging Face config's rms_norm_eps is no longer read",
     "lib/Frontend/HuggingFace.cpp",
     '{"layer_norm_epsilon", "layer_norm_eps", "rms_norm_eps"}',
     '{"layer_norm_epsilon", "layer_norm_eps"}',
     ["Frontend/norm-epsilon.test"]),
    ("the planner ignores a region's gradient accumulator",
     "lib/Dialect/Wafer/Analysis/MemoryModel.cpp",
     "ceilDiv(expertPass(region.shape, microBatch).accumulator, cores);",
     "0;",
     ["Dialect/Wafer/errors.test"]),
    ("--bf16 no longer rounds the streamed weights",
     "lib/Exec/Executor.cpp",
     "      roundToBF16(weight.data);",
     "      (void)weight;",
     ["cgpt-run/functional.test"]),
    ("the placement picture swaps the mesh's width and height",
     "lib/Report/Placement.cpp",
     "panelH = std::min(panelW * meshH / meshW, 2.0 * panelW);",
     "panelH = std::min(panelW * meshW / meshH, 2.0 * panelW);",
     ["cgpt-run/placement-picture.test"]),
    ("AdamW's weight decay halved",
     "lib/Exec/Executor.cpp",
     "w[i] * (1.0 - rate * decay)",
     "w[i] * (1.0 - rate * decay * 0.5)",
     ["reference/torch-reference.test"]),
    ("AdamW's weight decay removed",
     "lib/Exec/Executor.cpp",
     "w[i] * (1.0 - rate * decay)",
     "w[i] * (1.0)",
     ["reference/torch-reference.test"]),
    ("AdamW's first bias correction uses beta2",
     "lib/Exec/Executor.cpp",
     "double correction1 = 1.0 - std::pow(beta1, stepCount);",
     "double correction1 = 1.0 - std::pow(beta2, stepCount);",
     ["reference/torch-reference.test"]),
    ("the reduce tree is binary, not of fan-out 4",
     "lib/Dialect/Wafer/Analysis/Schedule.cpp",
     "reach *= t.getReduceFanout()",
     "reach *= 2",
     ["Unit/ScheduleTest.ReduceTreeDepthIsLogOfTheFanOut"]),
    ("the analytic model forgets the task activation",
     "lib/Dialect/Wafer/Analysis/KernelCost.cpp",
     "activation(static_cast<double>(target.getTaskActivationCycles())),",
     "activation(0),",
     ["reference/mesh-timing.test"], ENGINE),
    ("the analytic model's FMACs run twice as wide",
     "lib/Dialect/Wafer/Analysis/KernelCost.cpp",
     "int64_t lanes = fmacLanes(t, k.elementBytes);",
     "int64_t lanes = 2 * fmacLanes(t, k.elementBytes);",
     ["reference/mesh-timing.test"], ENGINE),
    ("the analytic model runs a map's bit operations in one pass",
     "lib/Dialect/Wafer/Analysis/KernelCost.cpp",
     "                    bitPasses ? 2 : 1);",
     "                    1);",
     ["reference/mesh-timing.test"], ENGINE),
    ("the analytic model streams a lookup's table rows unpadded",
     "lib/Dialect/Wafer/Analysis/KernelCost.cpp",
     "          wavelets(static_cast<double>(cb));",
     "          static_cast<double>(cb) / perWavelet;",
     ["reference/mesh-timing.test"], ENGINE),
    ("the analytic model compares each expert once for all the choices",
     "lib/Dialect/Wafer/Analysis/KernelCost.cpp",
     "  row(9 * choices * experts, ops, 2);",
     "  row(9 * experts, ops, 2);",
     ["reference/mesh-timing.test"], ENGINE),
    ("the analytic reduce-scatter's west-going parts never hold the "
     "east-going front back",
     "lib/Dialect/Wafer/Analysis/KernelCost.cpp",
     "bool clear = s + 1 == k || arrives + taking <= westFrom;",
     "bool clear = true;",
     ["reference/mesh-timing.test"], ENGINE),
    ("the analytic weight matmul's epilogue leaves out its maps",
     "lib/Dialect/Wafer/Analysis/KernelCost.cpp",
     "mapOperations(work, t, map.kind, columns * (sums.perColumn / chunk),",
     "mapOperations(work, t, map.kind, 0 * (sums.perColumn / chunk),",
     ["reference/mesh-timing.test"], ENGINE),
    ("the analytic model's SRAM ports never hold an operation",
     "lib/Dialect/Wafer/Analysis/KernelCost.cpp",
     "sram += count * std::max(simd, ports);",
     "sram += count * simd;",
     ["reference/mesh-timing.test", "reference/mesh-timing-targets.test"],
     ENGINE),
    ("chains lose their ramp crossings",
     "lib/Dialect/Wafer/Analysis/KernelCost.cpp",
     "2.0 * ramp * static_cast<double>(stages - 1)",
     "0.0 * ramp * static_cast<double>(stages - 1)",
     ["reference/mesh-timing.test"], ENGINE),
    ("a norm gradient's gain gradients fill no chain down the columns",
     "lib/Dialect/Wafer/Analysis/KernelCost.cpp",
     "time.fixed += chainFill(rows);",
     "time.fixed += 0.0;",
     ["reference/mesh-timing.test"], ENGINE),
    ("the mesh's norm gradient drops the term through the row's scale",
     "lib/Sim/Mesh/RowPrograms.cpp",
     "task.fmac(dyRow, dyRow, xRow, sumOfProducts, cb, type);",
     "",
     ["Unit/KernelValues.NormGradientsAreTheGradients"]),
    ("the exponential's power of two costs one integer pass",
     "lib/Dialect/Wafer/Analysis/KernelCost.cpp",
     "work.operations(count, n, f32Ops, 2 * f32, f32, /*passes=*/2);",
     "work.operations(count, n, f32Ops, 2 * f32, f32, /*passes=*/1);",
     ["reference/mesh-timing.test"], ENGINE),
    ("the mesh's loss and its gradient take the wrong logit for the label",
     "lib/Sim/Mesh/LossValues.cpp",
     "? t * cb + at",
     "? t * cb",
     ["Unit/KernelValues.LossGradientIsTheGradient",
      "Unit/KernelValues.LossIsTheLoss"]),
    ("the mesh's loss takes one Newton step for its logarithm",
     "lib/Sim/Mesh/RowPrograms.cpp",
     "step < dataflow::kLogarithmSteps; ++step",
     "step < 1; ++step",
     ["Unit/KernelValues.LossIsTheLoss", "reference/mesh-timing.test"]),
    ("the loss's second statistics chain fills for free",
     "lib/Dialect/Wafer/Analysis/KernelCost.cpp",
     "(loss ? 2 : 1) * (chainFill(gk) + multicastFill(gk))",
     "(loss ? 1 : 1) * (chainFill(gk) + multicastFill(gk))",
     ["reference/mesh-timing.test"], ENGINE),
    ("offloaded checkpoints come back for free",
     "lib/Dialect/Wafer/Analysis/Schedule.cpp",
     "inputBytes += microBatch * stage.forwardCheckpointBytes;",
     "inputBytes += 0.0 * stage.forwardCheckpointBytes;",
     ["Unit/ScheduleTest.CheckpointPoliciesCost"]),
    ("a value stops being live before its last use",
     "lib/Conversion/DataflowToWafer/DataflowToWafer.cpp",
     "if (first <= finish && begin <= last)",
     "if (first <= finish && begin < last)",
     ["Conversion/DataflowToWafer/regions.mlir"]),
    ("the mesh's multicast ignores a busy output link",
     "lib/Sim/Mesh/MeshBand.cpp",
     "        if (linkUsed[out]) {\n          clear = false;",
     "        if (false) {\n          clear = false;",
     ["Unit/MeshSimulator.ColorsShareALink"]),
    ("a weight gradient streams out no bytes",
     "lib/Conversion/DataflowToWafer/DataflowToWafer.cpp",
     "    r.weightBytes = staticBytes(gradient);\n",
     "",
     ["Conversion/DataflowToWafer/regions.mlir"]),
    ("RMS norm's input gradient loses the term through the row's scale",
     "lib/Exec/Kernels.cpp",
     "rstd.data[r] * (g - xh * meanGX);",
     "rstd.data[r] * g;",
     ["reference/torch-reference.test"]),
    ("the gate's gradient forgets the activation's derivative",
     "lib/Kernels/FeedForward.cpp",
     "Value dg = s.map(derivative, {g, s.map(MapKind::mul, {da, h})});",
     "Value dg = s.map(MapKind::mul, {da, h});",
     ["reference/torch-reference.test"]),
    ("grouped-query attention pairs query head h with key head h mod groups",
     "lib/Exec/Kernels.cpp",
     "std::copy_n(&input.data[(b * kvHeads + h / group) * headElements]",
     "std::copy_n(&input.data[(b * kvHeads + h % kvHeads) * headElements]",
     ["reference/torch-reference.test"]),
    ("ALiBi's heads past a power of two repeat the first slopes",
     "lib/Exec/Kernels.cpp",
     "static_cast<double>(2 * power)));",
     "static_cast<double>(power)));",
     ["reference/torch-reference.test"]),
    ("GELU's derivative is the tanh approximation's",
     "lib/Exec/Kernels.cpp",
     "    return static_cast<float>(y * geluDerivative(x));",
     "    return static_cast<float>(y * geluTanhDerivative(x));",
     ["reference/elementwise.test"]),
    ("softmax does not subtract the row's maximum",
     "lib/Exec/Kernels.cpp",
     "std::exp(logit(r, c) - rowMax[r])",
     "std::exp(logit(r, c))",
     ["reference/elementwise.test"]),
    ("cross-entropy does not subtract the row's maximum",
     "lib/Exec/Kernels.cpp",
     "return std::exp(x[r * vocab + c] - rowMax[r]);",
     "return std::exp(x[r * vocab + c]);",
     ["reference/elementwise.test"]),
    ("Model Zoo's share_embedding_weights defaults to false",
     "lib/Frontend/ModelZooModel.cpp",
     'src.readBool(model, "share_embedding_weights").value_or(true);',
     'src.readBool(model, "share_embedding_weights").value_or(false);',
     ["Frontend/model-keys.test"]),
    ("the layer norm gradient's FLOPs count 13 an element",
     "lib/Dialect/Dataflow/IR/DataflowOps.cpp",
     "return 14 * elementsPerSequence(getInput());",
     "return 13 * elementsPerSequence(getInput());",
     ["Unit/CostTerms.LayerNormFlopsPerElementByHand"]),
    ("vocabulary chunks rounded down",
     "lib/Conversion/DataflowToWafer/DataflowToWafer.cpp",
     "llvm::divideCeil(vocabulary, hidden)",
     "vocabulary / hidden",
     ["Conversion/DataflowToWafer/vocabulary-chunks.test"]),
    ("attention's buffers are not counted in SRAM",
     "lib/Dialect/Wafer/Analysis/MemoryModel.cpp",
     "memory.attention = block->bytes(placed.layout);",
     "memory.attention = 0 * block->bytes(placed.layout);",
     ["Unit/CostTerms.AttentionStageLiveBytesByHand"]),
    ("a weight streams in once per kernel that reads it",
     "lib/Conversion/DataflowToWafer/DataflowToWafer.cpp",
     "          first = user;\n      if (first)",
     "          builder.create<wafer::IngressOp>(\n              in.getLoc(), in.getName(), regionOf[user].getValue(),\n"
     "              in.getBytes(), DenseI64ArrayAttr());\n      if (false)",
     ["Unit/CostTerms.EachWeightEntersItsStageOnceAtItsFirstReader"]),
    ("a weight enters its stage at its last reader",
     "lib/Conversion/DataflowToWafer/DataflowToWafer.cpp",
     "(!first || user->isBeforeInBlock(first))",
     "(!first || first->isBeforeInBlock(user))",
     ["Unit/CostTerms.EachWeightEntersItsStageOnceAtItsFirstReader"]),
    ("the weight servers move 24 bytes a parameter, not 28",
     "lib/Dialect/Wafer/Analysis/Schedule.cpp",
     "constexpr double kOptimizerBytesPerParameter = 28;",
     "constexpr double kOptimizerBytesPerParameter = 24;",
     ["Unit/CostTerms.OptimizerTailByHand"]),
    ("the analytic attention charges half its scores' products",
     "lib/Dialect/Wafer/Analysis/KernelCost.cpp",
     "work.operations(count * static_cast<double>(headSize - 1), keys, lanes,",
     "work.operations(count * static_cast<double>(headSize - 1) / 2, keys, lanes,",
     ["reference/mesh-timing.test"], ENGINE),
    ("the analytic attention by key blocks forgets its statistics sweep",
     "lib/Dialect/Wafer/Analysis/KernelCost.cpp",
     "pair.repeat(statsChunk, perPairChunks);",
     "pair.repeat(statsChunk, 0);",
     ["reference/mesh-timing.test"], ENGINE),
    ("attention by key blocks does not rescale a partial output when the maximum moves",
     "lib/Sim/Mesh/AttentionPrograms.cpp",
     "            task.vector(Op::Kind::fmul, rowOutput, rowOutput, factor, headSize,\n                        f32);\n",
     "",
     ["Unit/KernelValues.AttentionIsTheSoftmaxOfTheScoresTimesTheValues"]),
    ("the analytic weight gradient forgets its chain's fill",
     "lib/Dialect/Wafer/Analysis/KernelCost.cpp",
     "multicastFill(1 + gk) + columnsChainFill;",
     "multicastFill(1 + gk) + 0.0;",
     ["reference/mesh-timing.test"], ENGINE),
    ("the analytic weight gradient's chain stops at its first column of segments",
     "lib/Dialect/Wafer/Analysis/KernelCost.cpp",
     "      chainFill(rows * columns) + static_cast<double>(columns - 1) *",
     "      chainFill(rows) + static_cast<double>(0) *",
     ["reference/mesh-timing.test"], ENGINE),
    ("the analytic weight gradient's crossings never share a link",
     "lib/Dialect/Wafer/Analysis/KernelCost.cpp",
     "      columns > 1 ? static_cast<double>(ceilDiv(gk, rows)) : 1.0;",
     "      1.0;",
     ["reference/mesh-timing.test"], ENGINE),
    ("the formulas charge the rows a layout leaves idle",
     "lib/Dialect/Wafer/Analysis/KernelCost.cpp",
     "int64_t rows = tokenRowsOn(query.rect, gt);",
     "int64_t rows = query.rect.h;",
     ["Unit/KernelCost.IdleRowsCostNothing"], ENGINE),
    ("the router sends a gradient out below its token groups' rows",
     "lib/Dialect/Wafer/Transforms/Route.cpp",
     "rect.getY() + tokenRowsOf(source) - 1}));",
     "rect.getY() + rect.getH() - 1}));",
     ["Dialect/Wafer/route.mlir"]),
]


def check_snippets():
    """Every snippet must stay findable as the code it mutates changes;
    a list that no longer applies would check nothing."""
    stale = 0
    for name, path, original, _, tests, *unmoved in MUTATIONS:
        with open(os.path.join(ROOT, path)) as f:
            count = f.read().count(original)
        if count != 1:
            print(f"{name}: the snippet is in {path} {count} times, not once",
                  file=sys.stderr)
            stale += 1
        for test in tests + sum(unmoved, []):
            if unit_case(test):
                if unit_case(test) not in unit_cases():
                    print(f"{name}: no unit test {test}", file=sys.stderr)
                    stale += 1
            elif not os.path.exists(os.path.join(ROOT, "test", test)):
                print(f"{name}: no test {test} under test/", file=sys.stderr)
                stale += 1
    print(f"{len(MUTATIONS)} mutations, {stale} stale")
    return 2 if stale else 0


def unit_case(test):
    """`Suite.Name` of a unit test named `Unit/Suite.Name`, else None."""
    return test[len("Unit/"):] if test.startswith("Unit/") else None


@functools.cache
def unit_cases():
    """Every `Suite.Name` the unit test sources define (read once)."""
    cases = set()
    folder = os.path.join(ROOT, "test", "Unit")
    for source in os.listdir(folder):
        if source.endswith(".cpp"):
            with open(os.path.join(folder, source)) as f:
                cases.update(f"{suite}.{case}" for suite, case in re.findall(
                    r"^TEST(?:_F|_P)?\((\w+),\s*(\w+)\)", f.read(), re.M))
    return cases


def build(build_dir):
    return subprocess.run(["ninja", "-C", build_dir], cwd=ROOT,
                          capture_output=True, text=True).returncode == 0


def tests_fail(build_dir, tests):
    cases = [unit_case(t) for t in tests if unit_case(t)]
    if cases:
        unit = os.path.join(build_dir, "test", "Unit", "CGPTUnitTests")
        run = subprocess.run([unit, "--gtest_filter=" + ":".join(
            # A parameterized case runs as Prefix/Suite.Name/N.
            f"{c}:*/{c}/*" for c in cases)], cwd=ROOT, capture_output=True,
            text=True)
        if run.returncode != 0 or "[  PASSED  ] 0 tests" in run.stdout:
            return True
    paths = [os.path.join(build_dir, "test", t) for t in tests
             if not unit_case(t)]
    if not paths:
        return False
    run = subprocess.run([sys.executable, LIT, "-q"] + paths, cwd=ROOT,
                         capture_output=True, text=True)
    return run.returncode != 0


def verdict_of(build_dir, tests, unmoved):
    """Whether the named tests catch the mutation, and the tests that must
    not notice it still pass."""
    if not build(build_dir):
        return "caught (does not build)", False
    if not tests_fail(build_dir, tests):
        return "**survived**", True
    if unmoved and tests_fail(build_dir, unmoved):
        return "**caught, but moved " + ", ".join(unmoved) + "**", True
    if unmoved:
        return "caught; " + ", ".join(unmoved) + " unmoved", False
    return "caught", False


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--only", help="run the mutations whose name "
                                       "contains this text")
    parser.add_argument("--check-snippets", action="store_true",
                        help="only check that each mutation's snippet is in "
                             "its file exactly once (the suite runs this)")
    args = parser.parse_args()
    if args.check_snippets:
        return check_snippets()
    rows, survivors = [], 0
    for name, path, original, mutated, tests, *unmoved in MUTATIONS:
        if args.only and args.only not in name:
            continue
        unmoved = sum(unmoved, [])
        source = os.path.join(ROOT, path)
        with open(source) as f:
            text = f.read()
        if text.count(original) != 1:
            print(f"{name}: the snippet is not in {path} exactly once",
                  file=sys.stderr)
            return 2
        try:
            with open(source, "w") as f:
                f.write(text.replace(original, mutated))
            verdict, failed = verdict_of(args.build, tests, unmoved)
            survivors += failed
        finally:
            with open(source, "w") as f:
                f.write(text)
        rows.append((name, path, ", ".join(tests), verdict))
        print(f"{name}: {verdict}", file=sys.stderr, flush=True)
    build(args.build)
    print("| mutation | file | test that must fail | result |")
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
