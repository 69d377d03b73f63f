#!/usr/bin/env python3
"""check_doc_links.py — every relative link and anchor in the docs resolves.

Why: the operator docs are read from GitHub and from a checkout, and the
alerts of the PrometheusRule send an operator to `docs/runbook.md#<alert>`
at the worst moment; a renamed heading or a moved file must fail the test
suite, not the person on call.

What it checks, from the repository root given as the only argument:
- README.md and docs/*.md: every Markdown link `[text](target)` and every
  `<a href="target">` outside code (fenced blocks and `inline code`) whose
  target is not a URL (http:, https:, mailto:). The file must exist
  (relative to the linking file); an anchor (`#part`, alone or after a .md
  file) must be a heading of that file, as GitHub makes anchors of
  headings (lowercase, punctuation dropped, spaces to hyphens, `-1`, `-2`
  for repeats), or an explicit `<a id=…>`/`<a name=…>`.
- YAML under deploy/ and charts/: every `docs/NAME.md#anchor` or
  `docs/NAME.md` it mentions (runbook_url annotations of alerts, comments)
  must exist with that anchor, the path taken from the repository root.

Prints one line per broken link (file:line: target: why) and exits 1 if
there is any; exits 0 and prints a count otherwise. Needs python3 only.
"""

import os
import re
import sys

LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HREF = re.compile(r"<a\s[^>]*href=\"([^\"]+)\"", re.I)
ANCHOR_TAG = re.compile(r"<a\s[^>]*(?:id|name)=\"([^\"]+)\"", re.I)
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
YAML_REF = re.compile(r"docs/[A-Za-z0-9_./-]+\.md(?:#[A-Za-z0-9_-]+)?")
EXTERNAL = ("http://", "https://", "mailto:", "ftp://")


def strip_inline_code(line):
    """The line with `code spans` blanked (links in them are examples)."""
    return re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), line)


def slug(text):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links keep their text
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)  # punctuation goes, letters/digits/_/- stay
    return text.replace(" ", "-")


_anchor_cache = {}


def anchors_of(path):
    """Every anchor a Markdown file offers: its headings' slugs and <a id>."""
    if path in _anchor_cache:
        return _anchor_cache[path]
    seen = {}
    found = set()
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            for a in ANCHOR_TAG.findall(line):
                found.add(a)
            m = HEADING.match(line)
            if not m:
                continue
            s = slug(m.group(2))
            n = seen.get(s, 0)
            seen[s] = n + 1
            found.add(s if n == 0 else f"{s}-{n}")
    _anchor_cache[path] = found
    return found


def check_target(base_dir, target, where, errors):
    """One link target, relative to base_dir; appends to errors."""
    if target.startswith(EXTERNAL) or target.startswith("//"):
        return
    path, _, frag = target.partition("#")
    path = path.split("?", 1)[0]
    full = os.path.normpath(os.path.join(base_dir, path)) if path else where[0]
    if not os.path.exists(full):
        errors.append(f"{where[0]}:{where[1]}: {target}: no such file ({full})")
        return
    if not frag:
        return
    if os.path.isdir(full) or not full.endswith(".md"):
        errors.append(f"{where[0]}:{where[1]}: {target}: an anchor into a file that is not Markdown")
        return
    if frag not in anchors_of(full):
        errors.append(f"{where[0]}:{where[1]}: {target}: {os.path.relpath(full)} has no heading "
                      f"or <a id> whose anchor is #{frag}")


def check_markdown(path, errors):
    """Links of one Markdown file; returns how many were checked."""
    n = 0
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            text = strip_inline_code(line)
            for rx in (LINK, IMAGE, HREF):
                for target in rx.findall(text):
                    n += 1
                    check_target(os.path.dirname(path), target, (path, lineno), errors)
    return n


def check_yaml(path, root, errors):
    """docs/… references in one YAML file (runbook URLs); returns the count."""
    n = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            for ref in YAML_REF.findall(line):
                n += 1
                check_target(root, ref, (path, lineno), errors)
    return n


def main():
    if len(sys.argv) != 2:
        print("usage: check_doc_links.py REPO_ROOT", file=sys.stderr)
        return 2
    root = os.path.abspath(sys.argv[1])
    os.chdir(root)
    md = ["README.md"] + sorted(
        os.path.join("docs", f) for f in os.listdir("docs") if f.endswith(".md"))
    errors = []
    links = sum(check_markdown(p, errors) for p in md if os.path.exists(p))
    yaml_refs = 0
    for top in ("deploy", "charts"):
        for d, _, files in os.walk(top):
            for f in sorted(files):
                if f.endswith((".yaml", ".yml", ".tpl", ".txt")):
                    yaml_refs += check_yaml(os.path.join(d, f), root, errors)
    for e in errors:
        print(e)
    if errors:
        print(f"check_doc_links: {len(errors)} broken of {links} links in {len(md)} Markdown "
              f"files and {yaml_refs} docs/ references in deploy/ and charts/")
        return 1
    print(f"check_doc_links: {links} links in {len(md)} Markdown files and {yaml_refs} docs/ "
          f"references in deploy/ and charts/ resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
