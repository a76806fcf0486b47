#!/usr/bin/env python3
"""Runs every `$ command` shown in README.md and docs/tutorial.md and checks
that it prints what the page shows under it.

    docs-commands.test.py [--update] SOURCE_DIR BUILD_DIR FILE.md...

A command is an indented line starting with `$ ` (with `\\` continuation
lines); the output the page shows is the indented lines after it, up to a
blank line or the next command. Commands run in a scratch directory where
`models`, `test`, `scripts` and `bench` lead to the sources, `build` to
BUILD_DIR and `docs/images` is empty, so that the files they write
(scaling.svg, report.json, docs/images/tiny-loss.svg) land there; `cgpt-run` and `cgpt-opt` alone (as the manuals write them) are the
built ones. Standard output must match line for line; standard error is not
compared (it holds host timings). Exits 1 listing every mismatch; with
--update, writes what the commands print into the pages instead.
"""
import os
import re
import subprocess
import sys
import tempfile


def commands(path):
    """(line number, command, expected lines, (first, end) line indices of
    the shown output, indent) of each `$` command."""
    lines = open(path).read().splitlines()
    found, i = [], 0
    while i < len(lines):
        match = re.match(r"^(\s{4,})\$ (.*)$", lines[i])
        if not match:
            i += 1
            continue
        indent, command, start = len(match.group(1)), match.group(2), i + 1
        while command.endswith("\\") and i + 1 < len(lines):
            i += 1
            command = command[:-1] + " " + lines[i].strip()
        expected = []
        i += 1
        first = i
        while i < len(lines) and lines[i].strip() and \
                not re.match(r"^\s*\$ ", lines[i]):
            expected.append(lines[i][indent:].rstrip())
            i += 1
        found.append((start, command, expected, (first, i), indent))
    return found


def main():
    args = sys.argv[1:]
    update = args[:1] == ["--update"]
    if update:
        args = args[1:]
    # Absolute: the scratch directory's links must lead back from anywhere.
    source, build = os.path.abspath(args[0]), os.path.abspath(args[1])
    pages = args[2:]
    failures, count = [], 0
    with tempfile.TemporaryDirectory() as scratch:
        for name in ("models", "test", "scripts", "bench"):
            os.symlink(os.path.join(source, name), os.path.join(scratch, name))
        os.symlink(build, os.path.join(scratch, "build"))
        # Pictures the docs draw into docs/images land in the scratch copy.
        os.makedirs(os.path.join(scratch, "docs", "images"))
        env = dict(os.environ)
        env["PATH"] = os.path.join(build, "bin") + os.pathsep + env["PATH"]
        for page in pages:
            path = os.path.join(source, page)
            replacements = []
            for line, command, expected, span, indent in commands(path):
                count += 1
                run = subprocess.run(["bash", "-c", command], cwd=scratch,
                                     env=env,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
                actual = [l.rstrip() for l in run.stdout.splitlines()]
                if run.stderr.strip() and "Traceback" in run.stderr:
                    failures.append(f"{page}:{line}: `{command}` printed a "
                                    f"traceback:\n{run.stderr}")
                if actual != expected and update:
                    replacements.append((span, [" " * indent + a if a else ""
                                                for a in actual]))
                elif actual != expected:
                    diff = [f"  shown:  {e}\n  prints: {a}"
                            for e, a in zip(expected + [""] * len(actual),
                                            actual + [""] * len(expected))
                            if e != a]
                    failures.append(f"{page}:{line}: `{command}`:\n" +
                                    "\n".join(diff[:5]))
            if replacements:
                text = open(path).read().splitlines()
                for (first, end), new in reversed(replacements):
                    text[first:end] = new
                open(path, "w").write("\n".join(text) + "\n")
                print(f"{page}: updated {len(replacements)} outputs")
    for failure in failures:
        print(failure)
    print(f"{count} commands, {len(failures)} mismatched")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
