#!/usr/bin/env python3
"""Predicted training speed of mixture-of-experts models, beside dense
models of the same active parameters.

Runs build/bin/cgpt-run on Model Zoo's three MoE files (unmodified, kept in
test/Frontend/Inputs/moe; their own batch, with the micro-batch left to
cgpt where the file's own does not fit) and on Mixtral 8x7B from Hugging
Face's config.json (models/mixtral-8x7b.yaml's batch of 256), for 1, 2, 4,
8 and 16 systems on a target, and on each a dense twin: the same file with
the `moe` section taken out and `filter_size` widened to what a token meets
(top_k routed experts plus the shared ones), so that the twin's parameters
equal the mixture's active ones (less the router). Prints Markdown tables:
samples/s and speed-up by systems, and for one system what bounds the MoE
layer's stages and where the time goes.
Usage: bench/moe-runtime.py [--target wse2] [--build build]
"""
import argparse
import json
import os
import subprocess
import tempfile

import yaml

SYSTEMS = [1, 2, 4, 8, 16]
INPUTS = [
    ("Model Zoo mixtral_8x7b", "test/Frontend/Inputs/moe/mz_mixtral_params_mixtral_8x7b.yaml",
     ["--micro-batch-size", "auto"]),
    ("Model Zoo mixtral_8x22b", "test/Frontend/Inputs/moe/mz_mixtral_params_mixtral_8x22b.yaml", []),
    ("Model Zoo moe_111M (shared expert)",
     "test/Frontend/Inputs/moe/mz_mixtral_params_moe_111M_with_shared_expert.yaml", []),
    ("Mixtral 8x7B, Hugging Face config", "test/Frontend/Inputs/moe/mixtral-8x7b.config.json",
     ["--batch-size", "256"]),
]


def dense_twin(path, tmp):
    """The file with its experts folded into one feed-forward block as wide
    as what a token meets, or None for a config.json (its twin is written
    the same way from its keys)."""
    with open(path) as f:
        text = f.read()
    if path.endswith(".json"):
        config = json.loads(text)
        config["model_type"] = "mistral"
        config["intermediate_size"] *= config.pop("num_experts_per_tok", 2)
        for key in ("num_local_experts", "router_aux_loss_coef",
                    "output_router_logits", "router_jitter_noise"):
            config.pop(key, None)
        twin = os.path.join(tmp, "dense.config.json")
        with open(twin, "w") as f:
            json.dump(config, f)
        return twin
    params = yaml.safe_load(text)
    model = (params["trainer"]["init"]["model"] if "trainer" in params
             else params["model"])
    moe = model.pop("moe")
    model["name"] = "llama" if model.get("name") == "mixtral" else model.get("name")
    width = moe.get("top_k", 1) + moe.get("num_shared_experts", 0)
    model["filter_size"] = model.get("filter_size", 4 * model["hidden_size"]) * width
    twin = os.path.join(tmp, "dense.yaml")
    with open(twin, "w") as f:
        yaml.safe_dump(params, f)
    return twin


def run(build, path, target, systems, extra):
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "r.json")
        done = subprocess.run(
            [os.path.join(build, "bin", "cgpt-run"), path, "--target", target,
             "--num-csx", str(systems), "--report", report] + extra,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            lines = [l for l in done.stderr.splitlines() if "error:" in l]
            return None, (lines[0].split("error: ", 1)[1] if lines else "failed")
        with open(report) as f:
            return json.load(f), None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", default="wse2")
    parser.add_argument("--build", default="build")
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    build = os.path.join(root, args.build)
    print(f"Target {args.target}: samples/s (speed-up over 1 system), "
          "mixture / dense twin of the same active parameters")
    print()
    print("| model | " + " | ".join(f"{n} system{'s' if n > 1 else ''}"
                                    for n in SYSTEMS) + " |")
    print("|---|" + "---|" * len(SYSTEMS))
    details = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, relative, extra in INPUTS:
            path = os.path.join(root, relative)
            twin = dense_twin(path, tmp)
            cells = []
            first = {}
            for systems in SYSTEMS:
                pair = []
                for kind, model in (("moe", path), ("dense", twin)):
                    report, error = run(build, model, args.target, systems, extra)
                    if report is None:
                        pair.append("does not fit" if "does not fit" in error
                                    else "fewer sequences than systems"
                                    if "at least one sequence" in error
                                    else "refused")
                        if systems == 1:
                            details.append((name, kind, None, error))
                        continue
                    rate = report["step"]["samples_per_second"]
                    first.setdefault(kind, rate)
                    pair.append(f"{rate:.3g} ({rate / first[kind]:.2f}x)")
                    if systems == 1:
                        details.append((name, kind, report, None))
                cells.append(" / ".join(pair))
            print(f"| {name} | " + " | ".join(cells) + " |")
    print()
    print("One system: micro-batch, step, utilization, and the bounds of "
          "the stages (count by bound)")
    print()
    print("| model | kind | micro-batch | step (s) | utilization | bounds |")
    print("|---|---|---|---|---|---|")
    for name, kind, report, error in details:
        if report is None:
            print(f"| {name} | {kind} | - | - | - | {error} |")
            continue
        bounds = {}
        for stage in report["breakdown"]:
            bounds[stage["bound"]] = bounds.get(stage["bound"], 0) + 1
        batch = report["batch"]
        print(f"| {name} | {kind} | {batch['micro']} x {batch['grad_accum_steps']}"
              f" | {report['step']['seconds']:.4g} | "
              f"{100 * report['step']['utilization']:.1f}% | "
              + ", ".join(f"{n} {b}" for b, n in sorted(bounds.items())) + " |")


if __name__ == "__main__":
    main()
