#!/usr/bin/env python3
"""Times cgpt's functional mode against the same training step in PyTorch.

    bench/functional_vs_torch.py MODEL.yaml [--steps N] [--runs R]

cgpt: `cgpt-run MODEL --functional --steps N`, its own per-step time (the
loop of steps, compiling excluded). PyTorch (Debian's python3-torch, CPU,
float32, its default thread count): the model of
test/reference/check_against_torch.py with the weights cgpt trained, one
global batch forward and backward, clipping and AdamW, N steps after one
warm-up step. Medians of R
runs each; peak resident memory of the largest run. Run-all.py calls
`compare()`; run alone it prints the figures.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCH_PYTHON_CANDIDATES = [sys.executable, "/usr/bin/python3"]


def torch_python():
    """A Python that imports torch, numpy and yaml, or None."""
    for candidate in TORCH_PYTHON_CANDIDATES:
        if subprocess.run([candidate, "-c", "import torch, numpy, yaml"],
                          capture_output=True).returncode == 0:
            return candidate
    return None


def run_child(command):
    """The child's stdout + stderr and its peak RSS in MB."""
    child = subprocess.Popen(command, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(command)}\n{output}")
    return output, usage.ru_maxrss / 1024


def cgpt_step(run, model, steps, save_weights=None):
    command = [run, model, "--functional", f"--steps={steps}"]
    if save_weights:
        command.append(f"--save-weights={save_weights}")
    output, peak = run_child(command)
    seconds = float(re.search(r"\(([0-9.]+) s per step\)", output).group(1))
    return seconds, peak


def torch_step(python, model, weights, steps):
    output, peak = run_child([python, os.path.abspath(__file__),
                              "--torch-step", model, f"--weights={weights}",
                              f"--steps={steps}"])
    seconds, threads = output.split()
    return float(seconds), int(threads), peak


def time_torch_step(model_path, weights_path, steps):
    """Prints PyTorch's seconds per step and its thread count."""
    import time
    import torch
    import yaml
    sys.path.insert(0, os.path.join(ROOT, "test", "reference"))
    from check_against_torch import Model, read_safetensors
    with open(model_path) as f:
        params = yaml.safe_load(f)
    model = Model(model_path)
    torch.manual_seed(0)
    vocab = params["model"]["vocab_size"]
    seq = params["train_input"].get("max_sequence_length",
                                    params["model"]["max_position_embeddings"])
    batch = params["train_input"]["batch_size"]
    # The weights cgpt trained: every tensor the model has, by its name.
    p = {name: torch.from_numpy(array.copy()).requires_grad_()
         for name, array in read_safetensors(weights_path)[0].items()}
    optimizer = torch.optim.AdamW(model.param_groups(p, 1e-4), eps=1e-8)
    tokens = torch.randint(0, vocab, (batch, seq))
    labels = torch.randint(0, vocab, (batch, seq))

    def step():
        optimizer.zero_grad()
        model.loss(p, tokens, labels).backward()
        torch.nn.utils.clip_grad_norm_(list(p.values()), 1.0)
        optimizer.step()

    step()  # warm-up: allocations and first-call costs
    start = time.perf_counter()
    for _ in range(steps):
        step()
    print((time.perf_counter() - start) / steps, torch.get_num_threads())


def compare(run, model, steps, runs):
    """Median seconds per step of cgpt and PyTorch, their ratio, peaks."""
    python = torch_python()
    if python is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        weights = os.path.join(tmp, "weights.safetensors")
        ours = [cgpt_step(run, model, steps, weights if i == 0 else None)
                for i in range(runs)]
        theirs = [torch_step(python, model, weights, steps)
                  for _ in range(runs)]
    cgpt_seconds = statistics.median(s for s, _ in ours)
    torch_seconds = statistics.median(s for s, _, _ in theirs)
    return {"cgpt": cgpt_seconds, "torch": torch_seconds,
            "ratio": cgpt_seconds / torch_seconds,
            "threads": theirs[0][1],
            "cgpt_peak": max(p for _, p in ours),
            "torch_peak": max(p for _, _, p in theirs)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--torch-step", action="store_true",
                        help=argparse.SUPPRESS)
    parser.add_argument("--weights", help=argparse.SUPPRESS)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()
    if args.torch_step:
        time_torch_step(args.model, args.weights, args.steps)
        return 0
    result = compare(os.path.join(args.build, "bin", "cgpt-run"), args.model,
                     args.steps, args.runs)
    if result is None:
        print("python3-torch is missing; scripts/setup.sh installs it")
        return 2
    print(f"cgpt {result['cgpt']:.4f} s/step, PyTorch {result['torch']:.4f} "
          f"s/step ({result['threads']} threads): {result['ratio']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
