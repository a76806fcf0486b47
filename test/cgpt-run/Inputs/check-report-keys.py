"""Checks that a cgpt-run JSON report holds every key docs/tools/cgpt-run.md
promises, and that its step figures agree with each other."""
import json
import sys

REQUIRED = {
    "model": ["name", "parameters", "layers", "sequence_length"],
    "target": ["name", "cores", "clock_hz", "peak_flops"],
    "batch": ["global", "num_csx", "per_system", "micro", "grad_accum_steps"],
    "step": ["seconds", "steps_per_second", "samples_per_second",
             "tokens_per_second", "algorithmic_flops",
             "achieved_flops_per_second", "utilization", "passes",
             "reduce_seconds", "optimizer_seconds"],
    "memory": ["cores_used", "max_core_sram_bytes", "core_sram_limit_bytes"],
}
# Keys only a model file or transformer IR can give.
FROM_STEP = {"model": ["hidden_size"]}

report = json.load(open(sys.argv[1]))
wafer_input = len(sys.argv) > 2 and sys.argv[2] == "--wafer-input"
if not wafer_input:
    for section, keys in FROM_STEP.items():
        REQUIRED[section] = REQUIRED[section] + keys
for section, keys in REQUIRED.items():
    missing = [key for key in keys if key not in report.get(section, {})]
    assert not missing, f"{section} lacks {missing}"

step, batch, model = report["step"], report["batch"], report["model"]
assert step["seconds"] > 0
assert abs(step["steps_per_second"] * step["seconds"] - 1) < 1e-9
assert abs(step["samples_per_second"] -
           batch["global"] / step["seconds"]) < 1e-6 * step["samples_per_second"]
assert abs(step["tokens_per_second"] - step["samples_per_second"] *
           model["sequence_length"]) < 1e-6 * step["tokens_per_second"]
assert 0 < step["utilization"] <= 1
assert batch["micro"] * batch["grad_accum_steps"] == batch["per_system"]
assert step["passes"] == batch["grad_accum_steps"]
assert report["memory"]["max_core_sram_bytes"] <= \
    report["memory"]["core_sram_limit_bytes"]

breakdown = report["breakdown"]
assert breakdown, "breakdown is empty"
for entry in breakdown:
    assert set(entry) == {"name", "phase", "seconds", "bound"}, entry
    assert entry["seconds"] > 0
    assert entry["phase"] in ("forward", "backward", "loss", "recompute"), entry
    assert entry["bound"] in ("compute", "fabric", "sram", "weights in"), entry
assert batch["checkpoint"] in ("keep", "offload") or \
    batch["checkpoint"].startswith("every "), batch
