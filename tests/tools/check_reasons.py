#!/usr/bin/env python3
"""check_reasons.py ROOT [--list] — docs/reasons.md names every word the tools
print or write: the glossary of every status and reason.

The words are taken from the source, not from a list kept by hand:
enum-to-string tables (eligibility reasons, gates, caps, resize results,
write kinds, webhook outcomes, cache kinds), the event reasons and messages
the executor posts, the HeadroomConfig conditions, reasons and messages, the
status annotation's fields, `plan`/`node`'s WRITE column, notes and table
lines, every line `explain` prints, the webhook's log reasons, every
`preflight` line, the /readyz checks, the dump warnings and the exit codes.

A table word must appear in the glossary in backticks (`opted-out`). A
printf-style line must appear by its longest constant run (the text between
conversions, e.g. "increase skipped by the " of "increase skipped by the %s
gate"), so the glossary quotes every message a user can see. Fails naming
each word or line that is missing; --list prints what was extracted instead.
"""
import re
import sys
from pathlib import Path

CONV = re.compile(r"%[-+ #0']*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|z|j|t|L)?[diouxXeEfgGcspn]")
LIT = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def unescape(s):
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n == "x":
                m = re.match(r"[0-9a-fA-F]+", s[i + 2:])
                out.append(bytes([int(m.group(0), 16)]))
                i += 2 + len(m.group(0))
                continue
            out.append({"n": b"\n", "t": b"\t", '"': b'"', "\\": b"\\"}.get(n, n.encode()))
            i += 2
            continue
        out.append(c.encode())
        i += 1
    return b"".join(out).decode("utf-8", "replace")


class Src:
    """One C file with its string macros expanded."""

    def __init__(self, path, macros):
        self.path = path
        text = path.read_text()
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        self.text = re.sub(r"//[^\n]*", " ", text)
        self.macros = macros

    def string_at(self, pos):
        """The C string expression starting at pos: adjacent literals and
        macros concatenated (PRId64 and friends become a conversion); None
        when pos does not start one."""
        parts, i, t = [], pos, self.text
        while True:
            while i < len(t) and t[i] in " \t\n\\":
                i += 1
            m = LIT.match(t, i)
            if m:
                parts.append(unescape(m.group(1)))
                i = m.end()
                continue
            m = re.match(r"[A-Za-z_]\w*", t[i:])
            if m and parts or m and m.group(0) in self.macros:
                name = m.group(0)
                if name.startswith("PRI"):
                    parts.append("d")
                elif name in self.macros:
                    parts.append(self.macros[name])
                else:
                    break
                i += len(name)
                continue
            break
        return "".join(parts) if parts else None

    def args_of(self, call, argno, raw=False, first=None):
        """The string argument argno (0-based) of every call to `call` (raw:
        every literal in that argument, a ternary's both sides too; first:
        only calls whose first argument is that text)."""
        out = []
        for m in re.finditer(r"\b" + re.escape(call) + r"\s*\(", self.text):
            i, depth, arg, start = m.end(), 0, 0, m.end()
            while i < len(self.text):
                c = self.text[i]
                if c == '"':
                    i = LIT.match(self.text, i).end()
                    continue
                if c in "([{":
                    depth += 1
                elif c in ")]}":
                    if depth == 0:
                        break
                    depth -= 1
                elif c == "," and depth == 0:
                    if arg == argno:
                        break
                    arg += 1
                    start = i + 1
                i += 1
            if arg == argno:
                if first is not None and self.text[m.end():].split(",", 1)[0].strip() != first:
                    continue
                if raw:
                    out.extend(unescape(x) for x in LIT.findall(self.text[start:i]))
                    continue
                s = self.string_at(start)
                if s is not None:
                    out.append(s)
        return out

    def returns_in(self, func):
        """Every `return "…"` inside the function func."""
        m = re.search(r"\b" + re.escape(func) + r"\s*\([^;{]*\)\s*\{", self.text)
        if not m:
            sys.exit(f"check_reasons: {func} not found in {self.path}")
        body = self.text[m.end():self.text.index("\n}", m.end())]
        return re.findall(r'case\s+\w+:\s*return\s+"([^"]*)"', body)

    def table(self, name):
        """The string values of the array initialiser `name`."""
        m = re.search(r"\b" + re.escape(name) + r"\s*\[[^\]]*\]\s*=\s*\{(.*?)\};", self.text, re.S)
        if not m:
            sys.exit(f"check_reasons: table {name} not found in {self.path}")
        return [unescape(s) for s in LIT.findall(m.group(1))]


def key(fmt):
    """The longest constant run of a printf format, trimmed."""
    runs = [r.strip(" \n\t:;,.") for r in CONV.split(fmt.replace("%%", "%"))]
    runs = [r for r in runs if re.search(r"[A-Za-z]{2}", r)]
    return max(runs, key=len) if runs else None


def extract(root):
    src = root / "src"
    macros = {}
    for h in [src / "core/names.h", src / "controller/cfgstatus.h"]:
        for name, val in re.findall(r'#define\s+(\w+)\s+((?:\w+\s+)?"[^"]*"(?:\s+"[^"]*")*)', h.read_text()):
            parts = re.findall(r'(\w+)?\s*"([^"]*)"', val)
            macros[name] = "".join((macros.get(p[0], "") if p[0] else "") + p[1] for p in parts)

    def S(rel):
        return Src(src / rel, macros)

    words, lines = {}, {}

    def w(cat, values):
        words.setdefault(cat, []).extend(v for v in values if v)

    def ln(cat, fmts):
        lines.setdefault(cat, []).extend(k for k in (key(f) for f in fmts) if k)

    elig, gates, policy = S("core/eligibility.c"), S("core/gates.c"), S("core/policy.c")
    w("eligibility reasons (design §4)", elig.table("reason_names"))
    w("gates and holds (design §6)", gates.returns_in("hr_gate_str"))
    w("caps (design §2.3)", policy.returns_in("hr_cap_str"))
    ctl = S("controller/ctlmetrics.c")
    w("resize results (design §7)", ctl.table("result_names"))
    w("write kinds", ctl.table("write_names"))
    wh = S("webhook/admission.c")
    w("webhook results (design §8)", wh.returns_in("hr_wh_outcome_str"))
    ln("webhook log reasons", wh.args_of("why", 1))
    w("cache kinds (metrics resource label)",
      re.findall(r'"(\w+)"', re.search(r"hr_ckind_str\(hr_ckind k\)\s*\{(.*?)\n\}",
                                        S("cache/cache.c").text, re.S).group(1)))

    ex = S("controller/executor.c")
    w("event reasons and types", sorted(set(
        ex.args_of("report", 4, raw=True) + ex.args_of("report", 5, raw=True) +
        ex.args_of("post_event", 2, raw=True) + ex.args_of("post_event", 3, raw=True))))
    ln("event messages", ex.args_of("report", 6) + ex.table("why"))
    wr = S("controller/writes.c")
    ln("event messages", [f for f in wr.args_of("hr_buf_printf", 1) if "factor" in f and "cores" in f])
    # Every key the annotation's writers put: the JSON literals and put_milli's keys, from the
    # first of its helpers to hr_status_annotation's end.
    ann = re.search(r"static void put_milli\(.*?\nvoid hr_status_annotation\(.*?\n\}",
                    wr.path.read_text(), re.S).group(0)
    w("status annotation fields (design §9.1)",
      re.findall(r'\\"(\w+)\\":', ann) + re.findall(r'put_milli\(b, "(\w+)"', ann))

    cs = S("controller/cfgstatus.c")
    w("HeadroomConfig conditions and reasons (design §1.1)",
      [macros["HR_COND_READY"], macros["HR_COND_QUOTA"]] + re.findall(r'c->reason\s*=\s*"(\w+)"', cs.text))
    ln("HeadroomConfig condition messages", cs.args_of("hr_buf_puts", 1, first="&c->msg") +
       cs.args_of("hr_buf_printf", 1, first="&c->msg"))

    rd = S("plan/render.c")
    w("plan/node notes (JSON)", re.findall(r'yyjson_mut_arr_add_str\(doc,\s*notes,\s*"([^"]+)"\)', rd.text))
    wcol = re.search(r"const char \*write\s*=(.*?);", rd.text, re.S).group(1)
    w("plan/node WRITE column", LIT.findall(wcol))
    ln("plan/node table lines", [f for f in rd.args_of("hr_buf_puts", 1) + rd.args_of("hr_buf_printf", 1)
                                 if re.search(r"[A-Za-z]{3}", f) and "\"" not in f and not f.startswith("%")]
       + [s for s in LIT.findall(rd.text) if s.startswith(" (") or s.startswith(" [")])
    snap = S("plan/snapshot.c")
    w("dump warnings: missing kinds", re.findall(r'hr_snapshot_gap\)\{"(\w+)"', snap.text))
    ln("dump warnings: effects", [unescape(m) for m in re.findall(
        r'hr_snapshot_gap\)\{"\w+",\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\}', snap.text)
        for m in ["".join(LIT.findall(m))]])

    exp = S("cmd/explain.c")
    ln("explain lines", [f for f in exp.args_of("printf", 0)])
    ln("explain lines", [s for s in LIT.findall(exp.text) if s.startswith((" (", ", "))])
    what = re.search(r"\bwhat\[[^\]]*\]\s*=\s*\{(.*?)\};", exp.text, re.S)
    if what:
        ln("explain lines", [unescape(s) for s in LIT.findall(what.group(1))])

    pf = S("cmd/preflight.c")
    w("preflight verdicts", pf.table("tag"))
    ln("preflight lines", pf.args_of("line", 2))

    run = S("cmd/cmd_run.c")
    w("/readyz checks", run.args_of("hr_readiness_add", 1))
    exits = re.findall(r"#define\s+HR_EXIT_\w+\s+(\d+)", (src / "cmd/cmd.h").read_text())
    return words, lines, exits


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: check_reasons.py ROOT [--list]")
    root = Path(sys.argv[1])
    words, lines, exits = extract(root)
    if "--list" in sys.argv:
        for cat, vs in words.items():
            print(f"[{cat}]", " ".join(vs))
        for cat, vs in lines.items():
            print(f"[{cat}]")
            for v in vs:
                print("   ", v)
        print("[exit codes]", exits)
        return 0
    doc_path = root / "docs/reasons.md"
    doc = doc_path.read_text()
    flat = re.sub(r"\s+", " ", doc.replace("\\|", "|"))
    missing = []
    for cat, vs in words.items():
        if not vs:
            missing.append(f"{cat}: nothing extracted (has the source moved?)")
        for v in vs:
            if f"`{v}`" not in doc:
                missing.append(f"{cat}: `{v}`")
    for cat, vs in lines.items():
        if not vs:
            missing.append(f"{cat}: nothing extracted (has the source moved?)")
        for v in vs:
            if re.sub(r"\s+", " ", v) not in flat:
                missing.append(f"{cat}: \"{v}\"")
    for code in exits:
        if not re.search(r"^\|\s*`" + code + r"`\s*\|", doc, re.M):
            missing.append(f"exit status: no table row for `{code}`")
    n = sum(map(len, words.values())) + sum(map(len, lines.values())) + len(exits)
    for m in missing:
        print(f"check_reasons: docs/reasons.md lacks {m}")
    if missing:
        print(f"check_reasons: {len(missing)} of {n} words and lines missing from {doc_path}")
        return 1
    print(f"check_reasons: all {n} words and lines the tools print are in docs/reasons.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
