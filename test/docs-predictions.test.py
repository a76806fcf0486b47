"""Compares freshly written prediction tables with docs/runtime.md's."""
import sys


def rows(text):
    """The table rows, less the last cell of one-system rows (wall clock)."""
    out = []
    for line in text.splitlines():
        if not line.startswith("| ") or line.startswith("| model"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 10:  # the one-system table: run (s) varies
            cells = cells[:-1]
        out.append(cells)
    return out


fresh = [row for path in sys.argv[1:-1] for row in rows(open(path).read())]
documented = rows(open(sys.argv[-1]).read())
missing = [row for row in fresh if row not in documented]
if missing:
    print("docs/runtime.md lacks these predicted rows:")
    for row in missing:
        print("  | " + " | ".join(row) + " |")
    sys.exit(1)
print(f"{len(fresh)} predicted rows match docs/runtime.md")
