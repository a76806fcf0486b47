"""Checks that a cgpt-run JSON report holds every key docs/tools/cgpt-run.md
promises, and that its step figures agree with each other."""
import json
import sys

REQUIRED = {
    "model": ["name", "parameters", "layers", "sequence_length"],
    "target": ["name", "cores", "clock_hz", "peak_flops"],
    "batch": ["global", "num_csx", "per_system", "micro", "grad_accum_steps",
              "placer"],
    "step": ["seconds", "steps_per_second", "samples_per_second",
             "tokens_per_second", "algorithmic_flops",
             "achieved_flops_per_second", "utilization", "passes",
             "reduce_seconds", "optimizer_seconds", "streamed_bytes"],
    "placement": ["placer", "execution", "stages"],
    "memory": ["cores_used", "max_core_sram_bytes", "core_sram_limit_bytes"],
}
# Keys only a model file or transformer IR can give.
FROM_STEP = {"model": ["hidden_size"]}

report = json.load(open(sys.argv[1]))
assert isinstance(report.get("warnings"), list), "no warnings[] list"
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

# One figure for one thing: the planned passes are the step's, and what
# streams per step follows them (once per step when the weights stay).
placement = report["placement"]
assert placement["placer"] == batch["placer"], (placement, batch)
assert placement["execution"] in ("weight_streaming", "layer_pipelined")
if "dataflow" in report:
    flow = report["dataflow"]
    assert flow["passes_per_system"] == batch["grad_accum_steps"], flow
    per_pass = flow["weight_bytes_in_per_pass"] + \
        flow["gradient_bytes_out_per_pass"]
    assert flow["streamed_bytes_per_pass"] == per_pass, flow
    times = 1 if placement["execution"] == "layer_pipelined" else step["passes"]
    assert step["streamed_bytes"] == per_pass * times, (step, flow)
for stage in placement["stages"]:
    for region in stage["regions"]:
        x, y, w, h = region["at"]
        assert w >= 1 and h >= 1 and region["wave"] >= 0, region
        assert region["token_groups"] * region["feature_groups"] <= w * h, \
            region
