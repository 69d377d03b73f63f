#!/usr/bin/env python3
"""check_crd.py CRD SAMPLE [HEADROOM] — the HeadroomConfig CRD reads well and
the sample agrees with it (design §1.1, §13), without a cluster.

Fails, naming each offence, when:
- a property of the schema (at any depth, array items included) has no
  non-empty description, or one that is not a sentence (ending in '.');
  `metadata` at the root is exempt: the API server forbids anything in it;
- a spec property with a schema default does not name it ("Default …");
- the dryRun default is not true (design §1.2);
- the printer columns are not Policy, DryRun, Pods, Nodes, Ready, Age, each
  described;
- the sample (docs/examples/headroomconfig.yaml) leaves out a spec field
  (as a key, or in a comment for the two without a default value), sets one
  to a value other than the schema default, or does not say dryRun;
- HEADROOM given: `headroom plan -f -` of the sample does not decode it or
  does not plan in dry-run, or the sample with any value of spec.policy's
  enum does not decode, or plan -o json does not name that policy.

Needs python3-yaml (scripts/setup.sh installs it).
"""
import json
import re
import subprocess
import sys

import yaml

EXEMPT = {"metadata"}  # root metadata: the API server allows no description there
COLUMNS = [("Policy", ".spec.policy"), ("DryRun", ".spec.dryRun"),
           ("Pods", ".status.managedPods"), ("Nodes", ".status.managedNodes"),
           ("Ready", '.status.conditions[?(@.type=="Ready")].status'),
           ("Age", ".metadata.creationTimestamp")]

errors = []


def err(msg):
    errors.append(msg)


def walk(schema, path):
    """Yield (path, schema) for every property below schema, items too."""
    for name, sub in (schema.get("properties") or {}).items():
        p = f"{path}.{name}" if path else name
        yield p, sub
        yield from walk(sub, p)
        items = sub.get("items")
        if isinstance(items, dict):
            yield from walk(items, p + "[]")


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: check_crd.py CRD SAMPLE [HEADROOM]")
    crd_path, sample_path = sys.argv[1], sys.argv[2]
    crd = yaml.safe_load(open(crd_path))
    versions = crd["spec"]["versions"]
    if len(versions) != 1:
        err(f"{crd_path}: expected one version, found {len(versions)}")
    v = versions[0]
    root = v["schema"]["openAPIV3Schema"]
    if not str(root.get("description", "")).strip():
        err("the schema's root has no description")

    n = 0
    for path, sub in walk(root, ""):
        n += 1
        if path in EXEMPT:
            continue
        d = str(sub.get("description", "")).strip()
        if not d:
            err(f"{path}: no description")
        elif not d.endswith("."):
            err(f"{path}: the description is not a sentence (no final '.'): {d!r}")
        # ({} on an object only lets the defaults below it apply.)
        if path.startswith("spec.") and "default" in sub and sub["default"] != {} \
                and "Default" not in d:
            err(f"{path}: has a default ({sub['default']!r}) its description does not name")
    if n < 40:
        err(f"only {n} properties found: is {crd_path} the HeadroomConfig CRD?")

    spec = root["properties"]["spec"]
    dry = spec["properties"]["dryRun"]
    if dry.get("default") is not True:
        err(f"spec.dryRun defaults to {dry.get('default')!r}, not true (design §1.2)")

    cols = v.get("additionalPrinterColumns") or []
    got = [(c.get("name"), c.get("jsonPath")) for c in cols]
    if got != COLUMNS:
        err(f"printer columns are {got}, expected {COLUMNS}")
    for c in cols:
        if not str(c.get("description", "")).strip():
            err(f"printer column {c.get('name')}: no description")

    # The sample: every spec field there, each at its schema default.
    text = open(sample_path).read()
    sample = yaml.safe_load(text)
    sspec = (sample or {}).get("spec") or {}
    if "dryRun" not in sspec:
        err(f"{sample_path}: does not say dryRun")
    for path, sub in walk(spec, ""):
        leaf = path.split(".")[-1].rstrip("[]")
        if not re.search(r"^\s*#?\s*-?\s*" + re.escape(leaf) + r":", text, re.M):
            err(f"{sample_path}: spec.{path} is not in the sample (neither set nor in a comment)")
        if "default" in sub and sub["default"] != {}:
            node = sspec
            for part in path.split("."):
                node = node.get(part) if isinstance(node, dict) else None
            if node is not None and node != sub["default"]:
                err(f"{sample_path}: spec.{path} is {node!r}, the schema default is {sub['default']!r}")

    if len(sys.argv) == 4:
        dump = json.dumps({"apiVersion": "v1", "kind": "List", "items": [sample]})
        r = subprocess.run([sys.argv[3], "plan", "-f", "-", "--by-node"], input=dump, capture_output=True,
                           text=True)
        if r.returncode != 0:
            err(f"headroom plan -f (the sample): exit {r.returncode}: {r.stderr.strip()}")
        elif 'Config: HeadroomConfig "cluster" (dryRun: would write nothing' not in r.stdout:
            err(f"headroom plan -f (the sample) does not plan it in dry-run: {r.stdout[:200]!r}")
        # Every policy the schema admits is one the decoder knows (and no other).
        for pol in spec["properties"]["policy"].get("enum") or []:
            one = json.loads(json.dumps(sample))
            one.setdefault("spec", {})["policy"] = pol
            d = json.dumps({"apiVersion": "v1", "kind": "List", "items": [one]})
            r = subprocess.run([sys.argv[3], "plan", "-f", "-", "-o", "json"], input=d,
                               capture_output=True, text=True)
            if r.returncode != 0:
                err(f"headroom plan -f (policy {pol}): exit {r.returncode}: {r.stderr.strip()}")
            elif json.loads(r.stdout).get("config", {}).get("policy") != pol:
                err(f"headroom plan -f -o json (policy {pol}) does not say policy {pol}")

    for e in errors:
        print(f"check_crd: {e}")
    if errors:
        print(f"check_crd: {len(errors)} problem(s) in {crd_path} / {sample_path}")
        return 1
    print(f"check_crd: {n} properties described, sample agrees, dryRun defaults to true")
    return 0


if __name__ == "__main__":
    sys.exit(main())
