#!/usr/bin/env python3
"""Runs cgpt-run on many command lines: every option's values (right,
wrong and extreme, output paths included) alone, in a functional run and
in a sweep, then random inputs with up to five random options.

    scripts/fuzz-command-lines.py [--cgpt-run build-asan/bin/cgpt-run]
                                  [--runs 500] [--seed 1] [--jobs N]

Every run must exit with 0 or 1 and print no sanitizer report, assertion
or stack dump; each one that does not is printed with its command line,
and the script then exits 1. Meant for the sanitizer build
(scripts/check-sanitized.sh), where a use of freed memory in an option
check shows up (docs/robustness.md).
"""
import argparse
import concurrent.futures
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAILURE_SIGNS = ("Sanitizer", "runtime error", "Assertion", "Stack dump")


def option_values(work):
    """Each option with the values to try: right, wrong and extreme. A
    value of None is a flag given alone."""
    def outputs(*suffixes):
        # Fresh names (two options may pick the same), a missing folder, a
        # directory, a device, and an empty name.
        names = [os.path.join(work, f"out{index}{suffix}")
                 for index in range(2) for suffix in suffixes]
        return names + [os.path.join(work, "missing", "x" + suffixes[0]),
                        work, "/dev/null", ""]

    return [
        ("batch-semantics", ["global", "per-system", "x", ""]),
        ("batch-size", ["4", "0", "-1", "99999999999", "x", "", "4,8",
                        "8-4"]),
        ("cycle-level", [None]),
        ("cycle-level-limit", ["1s", "2min", "1e6", "0", "-1", "2y",
                               "1e19", "x", ""]),
        ("threads", ["1", "3", "0", "-1", "99999"]),
        ("memory-limit", ["1G", "1K", "0", "x"]),
        ("emit", ["transformer", "dataflow", "wafer", "summary", "x"]),
        ("emit-placement", outputs(".svg", ".png", ".txt")),
        ("compile-report", outputs(".txt", ".csv", ".json")),
        ("log-steps", ["0", "1", "-3", "1000000000000"]),
        ("micro-batch-size", ["1", "2", "auto", "explore", "explore:3", "0",
                              "-2", "x", "1,auto", "2,2"]),
        ("num-csx", ["1", "2", "16", "0", "-1", "1,2,4", "1,1", "3,2",
                     "99999999", "1-4", "4-2", "1-999999999999", "2-", "x"]),
        ("placement-stage", ["x", "h.0.forward", ""]),
        ("plot", outputs(".svg", ".png", ".pdf")),
        ("recompute", ["none", "layer", "tensor", "x"]),
        ("train-steps", ["1", "24322", "0", "-1", "1e3", "99999999999999999"]),
        ("train-tokens", ["1e6", "1", "0", "-5", "1e30", "nan", "x"]),
        ("price-per-system-hour", ["0", "100", "-1", "inf", "nan", "x"]),
        ("report", outputs(".json")),
        ("sequence-length", ["8", "0", "-1", "4096", "99999999999",
                             "8,16", "8-200"]),
        ("steps", ["0", "1", "3", "-1", "100000000000"]),
        ("table", outputs(".csv", ".json", ".txt")),
        ("target", ["wse2", "wse3", "mini", "x", "/dev/null", "",
                    "wse2,mini", "mini,x"]),
        ("trace", outputs(".json")),
        ("bf16", [None]),
        ("data", [os.path.join(ROOT, "README.md"), "/dev/null",
                  os.path.join(work, "none"), ""]),
        ("dump-step", outputs(".safetensors")),
        ("functional", [None]),
        ("init-weights", [os.path.join(work, "out0.safetensors"),
                          os.path.join(ROOT, "README.md"), ""]),
        ("loss-curve", outputs(".svg", ".png", ".txt")),
        ("save-weights", outputs(".safetensors")),
        ("seed", ["0", "7", "-1", "99999999999999999999"]),
        ("mlir-timing", [None]),
        ("mlir-print-ir-after-all", [None]),
    ]


def spelled(name, value):
    return [f"--{name}"] if value is None else [f"--{name}={value}"]


def command_lines(runs, work):
    """Every value of every option once alone, once in a functional run and
    once in a sweep, on the smallest model; then `runs` random lines of up
    to five options on any input."""
    reference = os.path.join(ROOT, "test", "reference", "Inputs")
    tiny = os.path.join(ROOT, "models", "tiny.yaml")
    inputs = [tiny, os.path.join(ROOT, "models", "cerebras-gpt-111m.yaml"),
              os.path.join(reference, "odd-gqa-swiglu.yaml"),
              os.path.join(reference, "odd-alibi.yaml"),
              os.path.join(reference, "tiny-llama.config.json"),
              os.path.join(work, "missing.yaml"), "-", "/dev/null"]
    options = option_values(work)
    for name, values in options:
        for value in values:
            for mode in ([], ["--functional"], ["--num-csx=1,2"]):
                line = [tiny] + mode + spelled(name, value)
                if finishes(line):
                    yield bounded(line)
    made = 0
    while made < runs:
        line = [random.choice(inputs)]
        for _ in range(random.randint(0, 5)):
            name, values = random.choice(options)
            line += spelled(name, random.choice(values))
        if finishes(line):
            made += 1
            yield bounded(line)


def finishes(line):
    """A simulation counts its steps rather than running each; a functional
    run trains every one on the host, so its huge counts are left out."""
    steps = [arg.split("=", 1)[1] for arg in line
             if arg.startswith("--steps=")]
    return "--functional" not in line or all(
        not count.isdigit() or int(count) <= 100 for count in steps)


def bounded(line):
    """A cycle-level run of a whole model takes minutes under the
    sanitizers (odd-alibi.yaml: 280 s, tiny.yaml on the whole WSE-2 mesh
    more than the 300 s a line may take): a line that asks for one without
    a limit gets a short one, so that the estimate refuses the big runs
    and the small ones run."""
    if "--cycle-level" in line and not any(
            arg.startswith("--cycle-level-limit") for arg in line):
        return line + ["--cycle-level-limit=10s"]
    return line


def outcome(command, env):
    """None for a run that exits 0 or 1 and prints no failure sign, else
    what to print; and the exit status (None if it timed out)."""
    try:
        run = subprocess.run(command, capture_output=True, text=True,
                             errors="replace", timeout=300, env=env,
                             stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return "timed out: " + " ".join(command), None
    if run.returncode not in (0, 1) or any(
            sign in run.stderr for sign in FAILURE_SIGNS):
        return (f"exit {run.returncode}: " + " ".join(command) + "\n"
                + run.stderr[-2000:]), run.returncode
    return None, run.returncode


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cgpt-run",
                        default=os.path.join(ROOT, "build-asan", "bin",
                                             "cgpt-run"))
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="command lines run at once (default: one a "
                        "host core)")
    args = parser.parse_args()
    random.seed(args.seed)
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "allow_user_poisoning=0:detect_leaks=0")
    exits, bad, total = {}, 0, 0
    # Each run is one process: run one a host core, the report in the
    # lines' order.
    with tempfile.TemporaryDirectory() as work, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        commands = [[args.cgpt_run] + line
                    for line in command_lines(args.runs, work)]
        for failure, status in pool.map(lambda c: outcome(c, env), commands):
            total += 1
            if status is not None:
                exits[status] = exits.get(status, 0) + 1
            if failure:
                print(failure)
                bad += 1
    print(f"{total} command lines, {bad} failed; exit statuses "
          + ", ".join(f"{code}: {count}" for code, count in
                      sorted(exits.items())))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
