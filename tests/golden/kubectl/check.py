#!/usr/bin/env python3
"""check.py — `headroom plan -o jsonpath=` and `-o custom-columns=` print what kubectl prints.

    check.py HEADROOM

Runs every case of plan.recorded.json (kubectl's output on the same plan, recorded by record.py:
jsonpath on the plan's JSON, custom-columns on its items as objects of a real API server) as
`headroom plan -f ../cluster.json -o jsonpath=T` (T with ROOT removed; kubectl's had ROOT = .plan)
or `-o custom-columns=SPEC`, and compares stdout byte for byte. One line per difference; exit 1.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    headroom = sys.argv[1]
    dump = os.path.join(HERE, "..", "cluster.json")
    n = bad = 0
    with open(os.path.join(HERE, "plan.recorded.json"), encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            kind, arg = r["case"].split("=", 1)
            o = "jsonpath=" + arg.replace("ROOT", "") if kind == "jsonpath" else "custom-columns=" + arg
            p = subprocess.run([headroom, "plan", "-f", dump, "-o", o], capture_output=True)
            out = p.stdout.decode("utf-8", "replace")
            n += 1
            if (p.returncode == 0) != (r["rc"] == 0) or (r["rc"] == 0 and out != r["out"]):
                bad += 1
                print("differs: -o %s\n  kubectl (rc %d): %r\n  headroom (rc %d): %r %s" %
                      (o, r["rc"], r["out"] or r["err"], p.returncode, out, p.stderr.decode()[:200]))
    print("%d cases, %d differ from kubectl" % (n, bad))
    sys.exit(1 if bad or n == 0 else 0)


if __name__ == "__main__":
    main()
