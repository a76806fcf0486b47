#!/usr/bin/env python3
"""The cycle-level engine on the whole WSE-2 mesh, over threads and MPI.

One weight-streamed matmul on all 750 x 994 cores (`cgpt-mesh-timing-check
--bench-whole-mesh --target wse2`), run once per configuration: 1 and 2
threads, and 1, 2 and 4 MPI processes (`mpirun --oversubscribe`; 4 on a
2-core machine share the cores). Prints wall time, core-cycles per second,
peak memory per process and parallel efficiency (the 1-worker time of the
same kind over N x the N-worker time) as a Markdown table; run-all.py puts
it in docs/benchmarks.md.

    bench/whole_mesh.py [--build build]
"""
import argparse
import os
import re
import shutil
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINE = re.compile(r"on (\d+) x (\d+): (\d+) cycles, ([0-9.e+]+) core-cycles "
                  r"in ([0-9.]+) s: ([0-9.e+]+) core-cycles/s on (\d+) .*; "
                  r"peak memory (\d+) MiB a process")
# Open MPI refuses root unless told, and busy-waits unless told to yield
# (which matters when processes outnumber cores).
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_mpi_yield_when_idle": "1"}


def run(command, env=None):
    out = subprocess.run(command, check=True, capture_output=True, text=True,
                         env={**os.environ, **(env or {})}).stdout
    match = LINE.search(out)
    if not match:
        raise SystemExit(f"unexpected output of {' '.join(command)}: {out}")
    width, height, cycles, core_cycles, seconds, rate, workers, peak = \
        match.groups()
    return {"mesh": f"{width} x {height}", "cycles": int(cycles),
            "core_cycles": float(core_cycles), "seconds": float(seconds),
            "rate": float(rate), "workers": int(workers), "peak": int(peak)}


def section(build):
    check = os.path.join(build, "bin", "cgpt-mesh-timing-check")
    bench = [check, "--bench-whole-mesh", "--target", "wse2"]
    rows = []
    for threads in (1, 2):
        rows.append(("thread(s)", threads,
                     run(bench + ["--mesh-threads", str(threads)])))
    mpirun = shutil.which("mpirun")
    if mpirun:
        for processes in (1, 2, 4):
            rows.append(("MPI process(es)", processes,
                         run([mpirun, "--oversubscribe", "-np",
                              str(processes)] + bench, MPI_ENV)))
    first = rows[0][2]
    lines = [
        "## The whole wafer at cycle level", "",
        f"`cgpt-mesh-timing-check --bench-whole-mesh --target wse2`: one "
        f"weight-streamed matmul on the whole {first['mesh']} mesh, "
        f"{first['cycles']:,} cycles, {first['core_cycles']:.2e} "
        f"core-cycles, timing only; one run per line. The cycle counts of "
        f"every line are the same (the tests check it bit for bit). "
        f"Efficiency: the one-worker time of the same kind over N x the "
        f"N-worker time. This machine has {os.cpu_count()} cores: the 4 "
        f"MPI processes share them.", "",
        "| workers | wall s | core-cycles/s | peak MiB a process | "
        "efficiency |", "|---|---|---|---|---|"]
    alone = {}
    for kind, count, result in rows:
        alone.setdefault(kind, result["seconds"])
        efficiency = alone[kind] / (count * result["seconds"])
        if result["cycles"] != first["cycles"]:
            raise SystemExit(f"{count} {kind}: {result['cycles']} cycles, "
                             f"not {first['cycles']}")
        lines.append(f"| {count} {kind} | {result['seconds']:.1f} | "
                     f"{result['rate']:.2e} | {result['peak']} | "
                     f"{100 * efficiency:.0f}% |")
    if not mpirun:
        lines += ["", "MPI: not measured, mpirun is missing."]
    lines += ["", "Targets: at least 80% efficiency from 1 to 2 workers; the "
              "whole-mesh kernel in under 10 minutes.", ""]
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()
    print("\n".join(section(args.build)))


if __name__ == "__main__":
    main()
