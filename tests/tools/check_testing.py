#!/usr/bin/env python3
"""check_testing.py ROOT — docs/testing.md, the map from the design's outcomes
and faults to the tests that prove them, stays true.

Three checks, from the repository root given as the only argument:
- every answer of the outcome table of docs/design.md §7 (its first column)
  has at least one row in docs/testing.md's "Resize outcomes" table, spelled
  the same, and one of its rows names an end-to-end test (`tests/e2e/...`):
  a new outcome cannot be added to the design without the test that proves it
  on the real API server;
- every fault of docs/testing.md's "Faults" table (its first column) has a
  row naming an end-to-end test, or the fuzz tier (`tests/fuzz/`) for bad
  input to the parsers: a fault is not "covered" by a unit test alone, unless
  a row of it says "no end-to-end test yet:" and why (the summary counts them);
- every test a row names (`tests/...` in backticks) exists as a file or
  directory, unless the row says "(in progress)": a renamed or
  deleted test cannot leave the map pointing at nothing.

Prints one line per problem and exits 1 if there is any; prints a count and
exits 0 otherwise. Needs python3 only.
"""
import re
import sys
from pathlib import Path

IN_PROGRESS = "(in progress)"
TEST_REF = re.compile(r"`(tests/[^`\s]+)`")
E2E = ("tests/e2e/",)
E2E_OR_FUZZ = ("tests/e2e/", "tests/fuzz/")
NO_E2E_YET = "no end-to-end test yet:"


def uncovered(rows, prefixes):
    """The first-column names none of whose rows names a test under one of prefixes."""
    names, covered = [], set()
    for r in rows:
        if r[0] not in names:
            names.append(r[0])
        line = " | ".join(r)
        if any(ref.startswith(prefixes) for ref in TEST_REF.findall(line)) or NO_E2E_YET in line:
            covered.add(r[0])
    return [n for n in names if n not in covered]


def section(text, heading_re):
    """The lines of the section whose heading matches, up to the next heading of its level."""
    lines = text.splitlines()
    out, level = None, None
    for line in lines:
        m = re.match(r"^(#+)\s+(.*)$", line)
        if m and out is not None and len(m.group(1)) <= level:
            break
        if m and out is None and re.search(heading_re, m.group(2)):
            out, level = [], len(m.group(1))
            continue
        if out is not None:
            out.append(line)
    return out or []


def table_rows(lines):
    """The cells of each body row of the first Markdown table in lines."""
    rows, seen_rule = [], False
    for line in lines:
        s = line.strip()
        if not s.startswith("|"):
            if seen_rule:
                break
            continue
        cells = [c.strip() for c in s.strip("|").split("|")]
        if all(re.fullmatch(r":?-+:?", c) for c in cells if c):
            seen_rule = True
            continue
        if seen_rule:
            rows.append(cells)
    return rows


def main():
    if len(sys.argv) != 2:
        print("usage: check_testing.py ROOT", file=sys.stderr)
        return 2
    root = Path(sys.argv[1])
    design = (root / "docs/design.md").read_text()
    testing = (root / "docs/testing.md").read_text()
    problems = []

    answers = [r[0] for r in table_rows(section(design, r"^7\. Resize outcomes"))]
    if not answers:
        problems.append("docs/design.md: no outcome table found under '## 7. Resize outcomes'")
    mapped = table_rows(section(testing, r"^Resize outcomes"))
    faults = table_rows(section(testing, r"^Faults"))
    if not mapped:
        problems.append("docs/testing.md: no table under '## Resize outcomes'")
    if not faults:
        problems.append("docs/testing.md: no table under '## Faults'")
    have = {r[0] for r in mapped}
    for a in answers:
        if a not in have:
            problems.append(f"docs/testing.md: the §7 answer {a} has no row (which test proves it?)")
    for a in sorted(have - set(answers)):
        problems.append(f"docs/testing.md: row {a} is not an answer of design §7's table")
    for a in uncovered(mapped, E2E):
        problems.append(f"docs/testing.md: the §7 answer {a} names no end-to-end test (tests/e2e/)")
    for f in uncovered(faults, E2E_OR_FUZZ):
        problems.append(f"docs/testing.md: the fault {f} names no end-to-end test (tests/e2e/, or tests/fuzz/)")

    named = 0
    for where, rows in (("Resize outcomes", mapped), ("Faults", faults)):
        for r in rows:
            line = " | ".join(r)
            for ref in TEST_REF.findall(line):
                named += 1
                if IN_PROGRESS in line:
                    continue
                if not (root / ref).exists():
                    problems.append(f"docs/testing.md ({where}, {r[0]}): {ref} does not exist")

    for p in problems:
        print(p)
    if problems:
        return 1
    waived = sum(NO_E2E_YET in " | ".join(r) for r in faults)
    print(f"check_testing: {len(answers)} outcomes mapped, {len(faults)} fault rows, {named} test references,"
          f" {waived} fault row(s) with no end-to-end test yet")
    return 0


if __name__ == "__main__":
    sys.exit(main())
