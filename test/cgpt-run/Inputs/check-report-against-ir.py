#!/usr/bin/env python3
"""Checks a report's passes, accumulation and streamed bytes against each
other and against the placed IR of the same run.

    check-report-against-ir.py REPORT.json WAFER.mlir

The IR's device says the micro-batch and the accumulation; its ingress and
egress ops say what streams per pass. The report must say the same: one
figure for one thing. Exits 1 with the first disagreement.
"""
import json
import re
import sys


def main():
    report = json.load(open(sys.argv[1]))
    ir = open(sys.argv[2]).read()
    device = re.search(r"wafer\.device @\S+ target \"[^\"]+\" attributes "
                       r"\{(.*?)\} \{", ir).group(1)

    def attribute(name):
        return int(re.search(rf"\b{name} = (\d+) : i64", device).group(1))

    micro, accum = attribute("micro_batch"), attribute("grad_accum_steps")
    pipelined = "layer_pipelined" in device
    per_pass = sum(int(b) for b in re.findall(
        r"wafer\.(?:ingress|egress) .* bytes (\d+)", ir))
    batch, step = report["batch"], report["step"]
    name = report["model"]["name"]
    assert (batch["micro"], batch["grad_accum_steps"]) == (micro, accum), \
        (name, batch, micro, accum)
    # The passes split the batch evenly: as few as the micro-batch allows,
    # each of micro or micro - 1 sequences.
    per_system = batch["per_system"]
    assert accum == -(-per_system // micro), (name, batch)
    assert (micro - 1) * accum < per_system <= micro * accum, (name, batch)
    assert step["passes"] == accum, (name, step["passes"], accum)
    if "dataflow" in report:
        flow = report["dataflow"]
        assert flow["passes_per_system"] == accum, (name, flow)
        assert flow["streamed_bytes_per_pass"] == per_pass, \
            (name, flow["streamed_bytes_per_pass"], per_pass)
    expected = per_pass * (1 if pipelined else accum)
    assert step["streamed_bytes"] == expected, \
        (name, step["streamed_bytes"], expected)
    print(f"{name}: {accum} pass(es) of {micro}, "
          f"{step['streamed_bytes']} B streamed per step")


if __name__ == "__main__":
    main()
