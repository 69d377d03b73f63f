#!/bin/sh
# schema.sh HEADROOM — `plan -o json` (and `node`, filtered, --set-request,
# -o yaml) for every golden input validates against docs/plan.schema.json.
# The schema forbids fields it does not name, so
# a field added to the output without the schema, or one dropped, fails.
# Needs python3-jsonschema (scripts/setup.sh installs it).
set -u
hr=$1
cd "$(dirname "$0")" || exit 1
schema=../../docs/plan.schema.json
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
i=0
out() { i=$((i + 1)); "$hr" "$@" 2>/dev/null >"$work/$i.out"; echo "$* -> $work/$i.out" >>"$work/list"; }
for f in cluster example quantities undecodable partial dryrun-default tenantfair gang gang-neighbour nodepools quota foreign-writer; do
  out plan -f $f.json -o json
  out plan -f $f.json -o yaml
done
for f in bad/*.json; do
  out plan -f "$f" -o json
done
out node node-b -f cluster.json -o json
out node node-gone -f cluster.json -o json
out node node-a -f cluster.json --set-request team-a/api-0=2 -o json
out plan -f cluster.json -n team-b -o json
out plan -f cluster.json -l 'app.kubernetes.io/name in (web,api)' -o json
out plan -f cluster.json -l nothing-has-this -o json
python3 - "$schema" "$work/list" <<'PY'
import json, sys
import jsonschema, yaml
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema)
fail = n = 0
for line in open(sys.argv[2]):
    args, path = line.rstrip("\n").rsplit(" -> ", 1)
    text = open(path).read()
    if not text:
        continue  # a dump that does not parse at all prints nothing
    doc = yaml.safe_load(text) if "-o yaml" in args else json.loads(text)
    n += 1
    errs = sorted(v.iter_errors(doc), key=lambda e: list(e.path))
    for e in errs[:3]:
        fail = 1
        print("FAIL: headroom %s: %s at %s" % (args, e.message, "/".join(map(str, e.path))))
print("schema: %d documents, %s" % (n, "FAILED" if fail else "ok"))
sys.exit(fail)
PY
