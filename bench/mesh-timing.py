#!/usr/bin/env python3
"""The analytic kernel model against the cycle-level engine, every model.

    python3 bench/mesh-timing.py [--build build] [--update docs/runtime.md]
                                 [--jobs N]

Runs `cgpt-mesh-timing-check` on its hand-made table for WSE-2 and WSE-3
cores, then compiles every model in models/ for both targets
(`cgpt-run MODEL --target T --emit=wafer`) and runs the check on every
distinct kernel the planner placed (`--placed`). Prints markdown: the hand
table for both generations side by side, one line per model and target
(kernels compared, the worst error and where, the placed programs that do
not load), and the programs that do not load grouped by the buffer that
overflows; then the published programs (cgpt-published-programs) against
their authors' cost formulas or measured times. With --update, replaces the text between the markers
`<!-- mesh-timing:begin -->` and `<!-- mesh-timing:end -->` in the file.
Nothing is fitted: the engine's cycles come from the programs alone.
"""

import argparse
import collections
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = ("wse2", "wse3")
# "<case>  <w> x <h>  <analytic>  <simulated>  <error>%"
ROW = re.compile(r"^(.*\S)\s+(\d+ x \d+)\s+(\d+)\s+(\d+)\s+(-?\d+\.\d)%$")
UNLOADED = re.compile(r"^(\S+) on (\S+) (\S+) (@\S+)\s+(\d+ x \d+) does not "
                      r"load: .*buffer '([^']+)'")
SUMMARY = re.compile(r"^(\d+) cases, worst error (\d+\.\d)% \((.*)\), (\d+) "
                     r"over 10%; (\d+) placed programs do not fit a core"
                     r"(?:, (\d+) not simulated)?$")
SKIPPED = re.compile(r"^(\S+) on (\S+) (\S+) (@\S+)\s+(\d+ x \d+) not "
                     r"simulated: about (\S+) core-cycles")
# The costliest window simulated: about 10 minutes at the engine's speed
# (docs/benchmarks.md); larger ones are listed, not run.
MAX_CORE_CYCLES = "5e10"


def check(build, *args):
    tool = os.path.join(build, "bin", "cgpt-mesh-timing-check")
    run = subprocess.run([tool, *args], capture_output=True, text=True)
    if run.returncode == 2:
        sys.exit(f"cgpt-mesh-timing-check {' '.join(args)}:\n{run.stderr}")
    return run.stdout.splitlines()


def hand_tables(build):
    rows = collections.OrderedDict()
    summaries = {}
    for target in TARGETS:
        for line in check(build, "--target", target):
            if m := ROW.match(line):
                rows.setdefault(m[1], {"mesh": m[2]})[target] = (
                    int(m[3]), int(m[4]), float(m[5]))
            elif m := SUMMARY.match(line):
                summaries[target] = m
    lines = ["| case | mesh | wse2 analytic | wse2 engine | error | "
             "wse3 analytic | wse3 engine | error |",
             "|---|---|---|---|---|---|---|---|"]
    for case, row in rows.items():
        cells = [case, row["mesh"]]
        for target in TARGETS:
            analytic, engine, error = row[target]
            cells += [f"{analytic:,}", f"{engine:,}", f"{error:.1f}%"]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for target in TARGETS:
        m = summaries[target]
        lines.append(f"{target}: {m[1]} cases, worst error {m[2]}% "
                     f"({m[3]}), {m[4]} over 10%.")
    return lines


def placed_check(build, scratch, model, target):
    """Compiles `model` for `target` and checks its placed kernels: the
    table line's cells, or the first line of the compiler's error."""
    run = os.path.join(build, "bin", "cgpt-run")
    path = os.path.join(scratch, f"{model}.{target}.mlir")
    with open(path, "w") as out:
        compiled = subprocess.run(
            [run, os.path.join(ROOT, "models", model), "--target", target,
             "--emit=wafer"], stdout=out, stderr=subprocess.PIPE, text=True)
    if compiled.returncode != 0:
        return compiled.stderr.strip().splitlines()[0], None
    return None, check(build, "--placed", path, "--max-core-cycles",
                       MAX_CORE_CYCLES)


def placed_sweep(build, jobs):
    models = sorted(f for f in os.listdir(os.path.join(ROOT, "models"))
                    if f.endswith(".yaml"))
    pairs = [(model, target) for model in models for target in TARGETS]
    lines = ["| model | target | kernels compared | worst error | "
             "programs that do not load |", "|---|---|---|---|---|"]
    overflow = collections.Counter()
    totals = collections.Counter()
    worst = (0.0, "")
    skipped = []
    # Each check is one single-threaded process: run one a host core, the
    # table in the models' order.
    with tempfile.TemporaryDirectory() as scratch, \
            concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        results = pool.map(lambda pair: placed_check(build, scratch, *pair),
                           pairs)
        for (model, target), (failure, output) in zip(pairs, results):
            if failure is not None:
                lines.append(f"| {model[:-5]} | {target} | does not "
                             f"compile: {failure.split('error: ')[-1]} | | |")
                continue
            unloaded = [m for m in map(UNLOADED.match, output) if m]
            skipped += [m for m in map(SKIPPED.match, output) if m]
            for m in unloaded:
                overflow[m[6]] += 1
            summary = next(m for m in map(SUMMARY.match, output) if m)
            error = float(summary[2])
            if error >= worst[0]:
                worst = (error, summary[3])
            totals["cases"] += int(summary[1])
            totals["unloaded"] += len(unloaded)
            totals["over"] += int(summary[4])
            lines.append(f"| {model[:-5]} | {target} | {summary[1]} | "
                         f"{summary[2]}% | {len(unloaded)} |")
    lines += ["", f"In all: {totals['cases']} placed kernels compared, worst "
              f"error {worst[0]:.1f}% ({worst[1]}), {totals['over']} over "
              f"10%; {totals['unloaded']} placed programs do not load."]
    if skipped:
        lines += ["", f"Not simulated, over {float(MAX_CORE_CYCLES):.0e} "
                  "core-cycles by the analytic model:", ""]
        for m in skipped:
            lines.append(f"- {m[1]} on {m[2]}, {m[3]} {m[4]} ({m[5]} cores): "
                         f"about {float(m[6]):.1e} core-cycles")
    if overflow:
        lines += ["", "The buffers that overflow a core in the programs that "
                  "do not load:", ""]
        for buffer, count in overflow.most_common():
            lines.append(f"- '{buffer}': {count}")
    return lines


def published_table(build):
    """The Luczynski et al. programs against their formulas, the GEMV
    programs against WaferLLM's measurements, and the SDK's GEMM against
    the SGEMM measured on a CS-2, and WaferLLM's MeshGEMM against the SDK's
    GEMM: four tables."""
    tool = os.path.join(build, "bin", "cgpt-published-programs")
    run = subprocess.run([tool], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"cgpt-published-programs:\n{run.stderr}")
    reduces, gemvs, sgemms, gemms = run.stdout.split("\n\n")
    lines = ["| program | P | B | published | engine | error |",
             "|---|---|---|---|---|---|"]
    for line in reduces.splitlines()[1:]:
        *name, p, b, published, simulated, error = line.split()
        lines.append(f"| {' '.join(name)} | {p} | {b} | {int(published):,} | "
                     f"{int(simulated):,} | {error} |")
    lines += ["", "| GEMV K x K | N x N cores | tile | SDK GEMV (chain) | "
              "MeshGEMV | speed-up | MeshGEMV published | error |",
              "|---|---|---|---|---|---|---|---|"]
    for line in gemvs.splitlines()[1:]:
        _, k, n, m, chain, mesh, speedup, published, error = line.split()
        lines.append(f"| {int(k) // 1024}K | {n} x {n} | {m} x {m} | "
                     f"{int(chain):,} | {int(mesh):,} | {speedup} | "
                     f"{int(published):,} | {error} |")
    lines += ["", "| SGEMM (the SDK's SUMMA, f32) | P x P cores | tile | "
              "cycles | FLOP/cycle a core | TFLOP/s at 750 x 750 | "
              "published | error |",
              "|---|---|---|---|---|---|---|---|"]
    for line in sgemms.splitlines()[1:]:
        _, p, m, cycles, rate, tflops, published, error = line.split()
        n = f"{int(p) * int(m):,}"
        lines.append(f"| {n} x {n} | {p} x {p} | {m} x {m} | "
                     f"{int(cycles):,} | {rate} | {tflops} | {published} | "
                     f"{error} |")
    lines += ["", "| GEMM n x n, f32 | P x P cores | tile | SUMMA | MeshGEMM | "
              "speed-up |", "|---|---|---|---|---|---|"]
    for line in gemms.splitlines()[1:]:
        _, n, p, m, summa, mesh, speedup = line.split()
        lines.append(f"| {int(n):,} | {p} x {p} | {m} x {m} | "
                     f"{int(summa):,} | {int(mesh):,} | {speedup} |")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--update", help="file whose marked section to "
                        "replace")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="checks run at once (default: one a host core)")
    args = parser.parse_args()
    text = "\n".join(
        ["Hand-made table, WSE-2 and WSE-3 cores "
         "(`cgpt-mesh-timing-check --target T`):", ""] +
        hand_tables(args.build) +
        ["", "Every distinct kernel of every model in models/ as the planner "
         "placed it (`cgpt-mesh-timing-check --placed`; windows of at most "
         "2 x 8 groups, two blocks of sums, attention's block with two of "
         "its pairs):", ""] +
        placed_sweep(args.build, max(1, args.jobs)) +
        ["", "Published programs replayed (`cgpt-published-programs`, WSE-2 "
         "cores, T_R = 2 in the formulas; WaferLLM's times in cycles of "
         "850 MHz):", ""] +
        published_table(args.build)) + "\n"
    if not args.update:
        sys.stdout.write(text)
        return
    with open(args.update) as f:
        document = f.read()
    begin, end = "<!-- mesh-timing:begin -->", "<!-- mesh-timing:end -->"
    if begin not in document or end not in document:
        sys.exit(f"{args.update} has no {begin} ... {end} section")
    head, rest = document.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(args.update, "w") as f:
        f.write(head + begin + "\n" + text + end + tail)


if __name__ == "__main__":
    main()
