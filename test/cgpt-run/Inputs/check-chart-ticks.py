#!/usr/bin/env python3
"""Checks a chart's axis labels: each axis of class CLASS (y-tick, x-tick)
starts at 0 and steps evenly by 1, 2 or 5 times a power of ten.

    check-chart-ticks.py CHART.svg CLASS...
"""
import math
import sys
import xml.etree.ElementTree as ElementTree

SVG = "{http://www.w3.org/2000/svg}"


def main():
    root = ElementTree.parse(sys.argv[1]).getroot()
    for cls in sys.argv[2:]:
        labels = [float(t.text) for t in root.iter(SVG + "text")
                  if t.get("class") == cls]
        assert len(labels) >= 3, f"{cls}: too few ticks {labels}"
        assert labels[0] == 0, f"{cls}: does not start at zero: {labels}"
        step = labels[1] - labels[0]
        mantissa = step / 10 ** math.floor(math.log10(step))
        assert any(abs(mantissa - m) < 1e-9 for m in (1, 2, 5)), \
            f"{cls}: step {step} is not 1, 2 or 5 times a power of ten"
        for a, b in zip(labels, labels[1:]):
            assert abs(b - a - step) < 1e-9 * max(1, step), \
                f"{cls}: uneven ticks {labels}"
        print(f"{cls}: {len(labels)} ticks from 0 by {step:g}")


if __name__ == "__main__":
    main()
