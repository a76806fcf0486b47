#!/usr/bin/env python3
"""Compares the functional executor's elementwise kernels, softmax and
cross-entropy (cgpt-elementwise-values) with PyTorch's autograd in float64.

    cgpt-elementwise-values | check_elementwise.py [--tolerance T]

Each kernel's worst error is relative to the largest value of its
reference (so that the zeros of a derivative do not divide), printed one
line per kernel, with `FAIL` where it passes its tolerance. The kernels
compute in f32, so the clean tree stays within a few f32 roundings
(2^-24 = 6e-8): the maps and softmax within 1.8e-7, and the default
tolerance of 1e-6 is about 6 times that, and 1,000 times below what the
tanh approximation's derivative in place of GELU's would give (about
1e-3); a softmax without its maximum subtracted gives NaN near 1e3.

Cross-entropy carries one f32 statistic per row from the loss kernel to
its gradient, the log-sum-exp: near 1e3 it is rounded by up to half an
f32 spacing, 2^-24 |lse| (6e-5), and every probability exp(x - lse) of
the gradient carries that relative error, where PyTorch's log-softmax,
which keeps x - max and log(sum) apart, does not. Its tolerance is that
bound plus the default (the clean tree: 1.2e-5). Exits 1 on a failure.
"""
import argparse
import json
import math
import sys

import torch

torch.set_default_dtype(torch.float64)


def tensor(values, shape=None):
    t = torch.tensor(values, dtype=torch.float64)
    return t.reshape(shape) if shape else t


def derivative(function, x, dy):
    x = x.clone().requires_grad_(True)
    function(x).backward(dy)
    return x.grad


def map_references(maps):
    x, dy = tensor(maps["x"]), tensor(maps["dy"])
    f = torch.nn.functional
    activations = {
        "gelu": f.gelu,
        "gelu_tanh": lambda v: f.gelu(v, approximate="tanh"),
        "relu": torch.relu,
        "silu": f.silu,
    }
    out = {"add": x + dy, "mul": x * dy}
    for name, function in activations.items():
        out[name] = function(x)
        out[name + "_grad"] = derivative(function, x, dy)
    return out


def softmax_references(values, causal):
    scores = tensor(values["scores"], (2, 3, 7, 7))
    dp = tensor(values["dp"], (2, 3, 7, 7))
    scaled = scores.clone().requires_grad_(True)
    logits = values["scale"] * scaled
    if causal:
        hidden = torch.triu(torch.ones(7, 7, dtype=torch.bool), diagonal=1)
        logits = logits.masked_fill(hidden, -math.inf)
    probs = torch.softmax(logits, dim=-1)
    probs.backward(dp)
    return probs.detach(), scaled.grad


def cross_entropy_references(values):
    logits = tensor(values["logits"], (6, 11)).requires_grad_(True)
    labels = torch.tensor(values["labels"])
    loss = values["scale"] * torch.nn.functional.cross_entropy(
        logits, labels, reduction="sum")
    loss.backward()
    return loss.detach().reshape(1), logits.grad


def error(got, want):
    """The largest difference relative to the reference's largest value."""
    got = tensor(got).reshape(-1)
    want = want.reshape(-1)
    if not torch.isfinite(got).all():
        return math.inf
    return float((got - want).abs().max() / max(want.abs().max(), 1e-30))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tolerance", type=float, default=1e-6)
    args = parser.parse_args()
    values = json.load(sys.stdin)
    rows = []
    references = map_references(values["maps"])
    for name, got in values["maps"]["kernels"].items():
        rows.append(("map " + name, error(got, references[name])))
    for causal in (False, True):
        form = "causal" if causal else "full"
        probs, grad = softmax_references(values["softmax"], causal)
        got = values["softmax"][form]
        rows.append((f"softmax {form}, logits near 1e3",
                     error(got["probs"], probs)))
        rows.append((f"softmax gradient {form}", error(got["grad"], grad)))
    rows = [(name, worst, args.tolerance) for name, worst in rows]
    entropy = values["cross_entropy"]
    loss, grad = cross_entropy_references(entropy)
    lse_rounding = 2.0 ** -24 * max(abs(x) for x in entropy["logits"])
    rows.append(("cross-entropy, logits near 1e3",
                 error(entropy["loss"], loss),
                 args.tolerance + lse_rounding))
    rows.append(("cross-entropy gradient", error(entropy["grad"], grad),
                 args.tolerance + lse_rounding))
    failed = 0
    for name, worst, tolerance in rows:
        bad = not worst <= tolerance
        failed += bad
        print(f"{name:36} {worst:10.2e} of {tolerance:.1e}"
              f"{'  FAIL' if bad else ''}")
    worst = max(worst / tolerance for _, worst, tolerance in rows)
    print(f"{len(rows)} kernels, worst at {worst:.2f} of its tolerance: "
          f"{failed} over")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
