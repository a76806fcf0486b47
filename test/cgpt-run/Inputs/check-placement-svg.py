#!/usr/bin/env python3
"""Checks a placement picture against the placed IR it was drawn from.

    check-placement-svg.py PICTURE.svg WAFER.mlir STAGE WIDTH HEIGHT

- one mesh panel per wave of STAGE, each with the mesh's aspect (WIDTH x
  HEIGHT cores);
- every region of STAGE drawn once, in the panel of its wave, where its
  rectangle (`at`) sits, to scale; an arrow where weights enter for each
  region whose weights come from the north edge, and one along the axis
  of its partial sums for each region that reduces them;
- one table row per region, in the IR's order, each with a bar whose
  `data-sram` is the region's `sram_bytes` and whose width is in proportion
  to it, but never narrower than MIN_BAR pixels when it holds any SRAM;
- a legend swatch for each kernel the stage runs, and for no other.
Exits 1 with the first mismatch.
"""
import re
import sys
import xml.etree.ElementTree as ElementTree

SVG = "{http://www.w3.org/2000/svg}"
MIN_BAR = 2.0
REGION = re.compile(
    r'wafer\.region @(\S+) \w+ "([^"]+)" at <x = (\d+), y = (\d+), '
    r'w = (\d+), h = (\d+)> layout <token_groups = \d+, feature_groups = \d+, '
    r'weights = (\w+), partials = (\w+)(?:, sum_block = \d+)?> wave (\d+) '
    r'.*sram_bytes = (\d+)')


def stage_regions(ir, stage):
    """The regions of `stage`, in order: name, kernel, (x, y, w, h),
    weights, partials, wave, sram_bytes."""
    regions, inside = [], False
    for line in ir.splitlines():
        if line.strip().startswith("wafer.stage "):
            inside = f"wafer.stage @{stage} " in line
            continue
        match = REGION.search(line)
        if inside and match:
            name, kernel, x, y, w, h, weights, partials, wave, sram = \
                match.groups()
            regions.append({"name": name, "kernel": kernel,
                            "at": tuple(int(v) for v in (x, y, w, h)),
                            "weights": weights, "partials": partials,
                            "wave": int(wave), "sram": int(sram)})
    return regions


def main():
    picture, wafer, stage, width, height = sys.argv[1:6]
    width, height = int(width), int(height)
    root = ElementTree.parse(picture).getroot()
    rects = list(root.iter(SVG + "rect"))
    expected = stage_regions(open(wafer).read(), stage)
    assert expected, f"no regions of stage {stage} in {wafer}"

    panels = {int(r.get("data-mesh")): r for r in rects
              if "data-mesh" in r.attrib}
    waves = sorted({r["wave"] for r in expected})
    assert sorted(panels) == waves, (sorted(panels), waves)
    for wave, panel in panels.items():
        w, h = float(panel.get("width")), float(panel.get("height"))
        assert abs(w / h - width / height) < 1e-3 or h == 2 * w, \
            f"wave {wave}'s panel is {w} x {h}, not in the mesh's aspect"

    drawn = {r.get("data-kernel"): r for r in rects
             if "data-kernel" in r.attrib}
    assert sorted(drawn) == sorted(r["name"] for r in expected), \
        (sorted(drawn), [r["name"] for r in expected])
    for region in expected:
        rect, panel = drawn[region["name"]], panels[region["wave"]]
        assert tuple(int(v) for v in rect.get("data-at").split()) == \
            region["at"], (region["name"], rect.get("data-at"), region["at"])
        sx = float(panel.get("width")) / width
        sy = float(panel.get("height")) / height
        x, y, w, h = region["at"]
        for attribute, value in (("x", float(panel.get("x")) + x * sx),
                                 ("y", float(panel.get("y")) + y * sy),
                                 ("width", w * sx), ("height", h * sy)):
            assert abs(float(rect.get(attribute)) - value) <= 0.011, \
                (region["name"], attribute, rect.get(attribute), value)
    arrows = [p.get("data-weights") for p in root.iter(SVG + "path")
              if "data-weights" in p.attrib]
    assert arrows == [r["name"] for r in expected if r["weights"] == "north"], \
        arrows
    partials = [p.get("data-partials") for p in root.iter(SVG + "path")
                if "data-partials" in p.attrib]
    assert partials == [r["partials"] for r in expected
                        if r["partials"] != "none"], partials

    rows = [r.get("data-region") for r in rects if "data-region" in r.attrib]
    bars = [r for r in rects if "data-sram" in r.attrib]
    assert rows == [r["name"] for r in expected], rows
    assert [int(b.get("data-sram")) for b in bars] == \
        [r["sram"] for r in expected], "bars do not carry sram_bytes"
    held = [b for b in bars if int(b.get("data-sram")) > 0]
    assert all(float(b.get("width")) >= MIN_BAR for b in held), \
        "a bar of a region holding SRAM is narrower than the minimum"
    per_byte = [float(b.get("width")) / int(b.get("data-sram"))
                for b in held if float(b.get("width")) > MIN_BAR]
    assert max(per_byte) / min(per_byte) - 1 < 1e-3, \
        f"bar widths not in proportion: {per_byte}"

    kernels = []
    for region in expected:
        if region["kernel"] not in kernels:
            kernels.append(region["kernel"])
    legend = [r.get("data-legend") for r in rects if "data-legend" in r.attrib]
    assert legend == kernels, (legend, kernels)
    shared = len(expected) - len(waves)
    print(f"placement picture: {len(rows)} regions in {len(waves)} waves of "
          f"{stage} ({shared} beside another), mesh {width} x {height}")


if __name__ == "__main__":
    main()
