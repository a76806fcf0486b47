#!/usr/bin/env python3
"""Runs lit and ends with one 'N passed, M failed' line.

Usage: run-lit.py PYTHON LIT [lit arguments...]

lit's own summary lists each result kind on its own line; CI and people want
one line to read. The exit status is lit's, except that under CI (CI=true)
a skipped test fails the run: a machine without python3-torch must not pass
silently without the numerical check. The skipped tests are named.
"""
import os
import re
import subprocess
import sys


def main() -> int:
    command = sys.argv[1:]
    process = subprocess.Popen(command, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    counts = {}
    unsupported = []
    listing = False
    for line in process.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        # lit lists them after "Unsupported Tests (N):", one a line.
        if line.startswith("Unsupported Tests"):
            listing = True
            continue
        if listing:
            if line.startswith("  "):
                unsupported.append(line.strip())
                continue
            listing = False
        match = re.match(r"^\s+(Passed|Failed|Unsupported|Expectedly Failed|"
                         r"Unresolved|Timed Out|Unexpectedly Passed|Skipped|"
                         r"Excluded)\s*:\s+(\d+)", line)
        if match:
            counts[match.group(1)] = int(match.group(2))
    status = process.wait()
    passed = counts.get("Passed", 0) + counts.get("Expectedly Failed", 0)
    failed = (counts.get("Failed", 0) + counts.get("Unresolved", 0) +
              counts.get("Timed Out", 0) + counts.get("Unexpectedly Passed", 0))
    skipped = counts.get("Unsupported", 0) + counts.get("Skipped", 0)
    line = f"check-cgpt: {passed} passed, {failed} failed"
    if skipped:
        line += f", {skipped} skipped"
    print(line)
    if status == 0 and passed == 0:
        print("check-cgpt: no test ran", file=sys.stderr)
        return 1
    if skipped and os.environ.get("CI", "").lower() in ("true", "1"):
        names = ", ".join(unsupported) or f"{skipped} test(s)"
        print(f"check-cgpt: skipped under CI: {names}: a feature they "
              "REQUIRE is missing (lit's notes above say which; "
              "scripts/setup.sh installs python3-torch)", file=sys.stderr)
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
