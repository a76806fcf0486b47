#!/usr/bin/env python3
"""Checks a placement picture against the placed IR it was drawn from.

    check-placement-svg.py PICTURE.svg WAFER.mlir STAGE WIDTH HEIGHT

- the mesh panel's rectangle has the mesh's aspect (WIDTH x HEIGHT cores);
- one table row per region of STAGE, in the IR's order, each with a bar
  whose `data-sram` is the region's `sram_bytes` and whose width is in
  proportion to it, but never narrower than MIN_BAR pixels when it holds
  any SRAM;
- a legend swatch for each kernel the stage runs, and for no other.
Exits 1 with the first mismatch.
"""
import re
import sys
import xml.etree.ElementTree as ElementTree

SVG = "{http://www.w3.org/2000/svg}"
MIN_BAR = 2.0


def stage_regions(ir, stage):
    """(name, sram_bytes) of each region of `stage`, in order."""
    regions, inside = [], False
    for line in ir.splitlines():
        if line.strip().startswith("wafer.stage "):
            inside = f"wafer.stage @{stage} " in line
            continue
        match = re.search(r"wafer\.region @(\S+) .*sram_bytes = (\d+)", line)
        if inside and match:
            regions.append((match.group(1), int(match.group(2))))
    return regions


def main():
    picture, wafer, stage, width, height = sys.argv[1:6]
    inside = False
    root = ElementTree.parse(picture).getroot()
    rects = list(root.iter(SVG + "rect"))
    mesh = [r for r in rects if "data-kernel" in r.attrib]
    assert len(mesh) == 1, f"expected one mesh panel, found {len(mesh)}"
    w, h = float(mesh[0].get("width")), float(mesh[0].get("height"))
    assert abs(w / h - int(width) / int(height)) < 1e-3, \
        f"mesh panel is {w} x {h}, not in the {width} x {height} aspect"
    rows = [r.get("data-region") for r in rects if "data-region" in r.attrib]
    bars = [r for r in rects if "data-sram" in r.attrib]
    expected = stage_regions(open(wafer).read(), stage)
    assert expected, f"no regions of stage {stage} in {wafer}"
    assert rows == [name for name, _ in expected], (rows, expected)
    assert [int(b.get("data-sram")) for b in bars] == \
        [sram for _, sram in expected], "bars do not carry sram_bytes"
    held = [b for b in bars if int(b.get("data-sram")) > 0]
    assert all(float(b.get("width")) >= MIN_BAR for b in held), \
        "a bar of a region holding SRAM is narrower than the minimum"
    per_byte = [float(b.get("width")) / int(b.get("data-sram"))
                for b in held if float(b.get("width")) > MIN_BAR]
    assert max(per_byte) / min(per_byte) - 1 < 1e-3, \
        f"bar widths not in proportion: {per_byte}"
    kernels = []
    for line in open(wafer).read().splitlines():
        if line.strip().startswith("wafer.stage "):
            inside = f"wafer.stage @{stage} " in line
            continue
        match = re.search(r'wafer\.region @\S+ \w+ "([^"]+)"', line)
        if match and inside and match.group(1) not in kernels:
            kernels.append(match.group(1))
    legend = [r.get("data-legend") for r in rects if "data-legend" in r.attrib]
    assert legend == kernels, (legend, kernels)
    print(f"placement picture: {len(rows)} regions of {stage}, "
          f"mesh {width} x {height}")


if __name__ == "__main__":
    main()
