#!/usr/bin/env python3
"""Checks reports against docs/tools/cgpt-run-report.schema.json, and the
schema against the manual.

    check-report-schema.py SCHEMA MANUAL REPORT.json...

Each report must validate (a step's report or a sweep's). Every key the
schema names must appear in the manual's description of `--report`, and
every section the manual lists (`name.{...}`, `name[]`) must be one the
schema has, so that the three say the same. Exits 1 listing what differs.
"""
import json
import re
import sys

import jsonschema


def schema_keys(node, defs, path=()):
    """(path, key) of every property the schema names."""
    if "$ref" in node:
        node = defs[node["$ref"].split("/")[-1]]
    for branch in ("then", "else"):
        if branch in node:
            yield from schema_keys(node[branch], defs, path)
    for key, child in node.get("properties", {}).items():
        yield path + (key,)
        yield from schema_keys(child, defs, path + (key,))
    if "items" in node:
        yield from schema_keys(node["items"], defs, path)


def main():
    schema_path, manual_path, reports = sys.argv[1], sys.argv[2], sys.argv[3:]
    schema = json.load(open(schema_path))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    problems = []
    for report in reports:
        for error in validator.iter_errors(json.load(open(report))):
            where = "/".join(str(p) for p in error.absolute_path)
            problems.append(f"{report}: at '{where}': {error.message[:300]}")

    manual = open(manual_path).read()
    start = manual.index("- `--report FILE` writes the JSON report")
    # Through the sweep's wrapper, which --num-csx's entry describes.
    section = manual[start:manual.index("\n- `--num-csx N` overrides", start)]
    section += manual[manual.index("- **Sweeps.**"):].split("\n")[0]
    words = set(re.findall(r"[a-z_]+", section))
    keys = set(schema_keys(schema, schema["$defs"]))
    for key in sorted(keys):
        if key[-1] not in words:
            problems.append(f"{manual_path}: the report's key "
                            f"'{'.'.join(key)}' is not described")
    top = {key[0] for key in keys}
    for name in re.findall(r"^\s+- `([a-z_]+)", section, re.MULTILINE):
        if name not in top:
            problems.append(f"{manual_path}: describes '{name}', which the "
                            f"schema does not have")
    for problem in problems:
        print(problem)
    print(f"{len(reports)} reports, {len(keys)} keys: "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
