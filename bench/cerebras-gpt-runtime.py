#!/usr/bin/env python3
"""Predicted step time, utilization and scaling of the Cerebras-GPT family.

Runs build/bin/cgpt-run on each models/cerebras-gpt-*.yaml (the paper's
batch and sequence length) for 1, 2, 4, 8 and 16 systems and prints three
Markdown tables: one system in detail, samples/s and speed-up by systems,
and one system with each placer alone (the default plan weighs whole-mesh
and side-by-side; layer pipelining only when asked). Also times each
compile-and-simulate run (wall clock, this machine).
Usage: bench/cerebras-gpt-runtime.py [--target wse2] [--build build]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

MODELS = ["111m", "256m", "590m", "1.3b", "2.7b", "6.7b", "13b"]
SYSTEMS = [1, 2, 4, 8, 16]


PLACERS = ["whole-mesh", "side-by-side", "pipelined"]


def run(root, build, model, target, systems, placer=None):
    """One cgpt-run: the JSON report (None when the placer cannot place
    the model) and the wall-clock seconds it took."""
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "r.json")
        command = [os.path.join(build, "bin", "cgpt-run"),
                   os.path.join(root, "models", f"cerebras-gpt-{model}.yaml"),
                   "--target", target, "--num-csx", str(systems),
                   "--report", report]
        if placer:
            command += ["--placer", placer]
        start = time.perf_counter()
        done = subprocess.run(command, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            if placer:
                return None, seconds
            done.check_returncode()
        with open(report) as f:
            return json.load(f), seconds


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="wse2")
    parser.add_argument("--build", default=os.path.join(root, "build"))
    args = parser.parse_args()

    results = {(m, n): run(root, args.build, m, args.target, n)
               for m in MODELS for n in SYSTEMS}

    print(f"One {args.target} system:\n")
    print("| model | global batch | micro x accum | placer | step (s) "
          "| samples/s | utilization | bound stages | SRAM peak (B/core) "
          "| run (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for m in MODELS:
        r, wall = results[(m, 1)]
        step, batch = r["step"], r["batch"]
        bounds = {}
        for entry in r["breakdown"]:
            bounds[entry["bound"]] = bounds.get(entry["bound"], 0) + 1
        bound = ", ".join(f"{count} {name}"
                          for name, count in sorted(bounds.items()))
        print(f"| {m} | {batch['global']} | {batch['micro']} x "
              f"{batch['grad_accum_steps']} | {batch['placer']} | "
              f"{step['seconds']:.3f} | "
              f"{step['samples_per_second']:.1f} | "
              f"{100 * step['utilization']:.1f}% | {bound} | "
              f"{r['memory']['max_core_sram_bytes']:,} | {wall:.2f} |")

    print(f"\nSamples/s by systems ({args.target}; speed-up over one system "
          "in brackets):\n")
    print("| model | " + " | ".join(f"{n} system{'s' if n > 1 else ''}"
                                    for n in SYSTEMS) + " |")
    print("|---|" + "---|" * len(SYSTEMS))
    for m in MODELS:
        base = results[(m, 1)][0]["step"]["samples_per_second"]
        cells = []
        for n in SYSTEMS:
            rate = results[(m, n)][0]["step"]["samples_per_second"]
            cells.append(f"{rate:.1f} ({rate / base:.2f}x)")
        print(f"| {m} | " + " | ".join(cells) + " |")

    print(f"\nOne {args.target} system with each placer alone (samples/s, "
          "micro-batch; - where it cannot place or fit the model):\n")
    print("| model | " + " | ".join(PLACERS) + " |")
    print("|---|" + "---|" * len(PLACERS))
    for m in MODELS:
        cells = []
        for placer in PLACERS:
            r, _ = run(root, args.build, m, args.target, 1, placer)
            cells.append("-" if r is None else
                         f"{r['step']['samples_per_second']:.1f} "
                         f"({r['batch']['micro']})")
        print(f"| {m} | " + " | ".join(cells) + " |")

    slowest = max(results.items(), key=lambda item: item[1][1])
    print(f"\nSlowest compile-and-simulate run: {slowest[0][0]} on "
          f"{slowest[0][1]} systems, {slowest[1][1]:.2f} s wall clock.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
