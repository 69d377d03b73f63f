#!/bin/sh
# cli.sh HEADROOM — every command with every kubectl-style flag form
# (docs/cli.md): `--flag value`, `--flag=value`, `-f value`,
# `-f=value`, `-fvalue`; -o json|yaml|wide|name; -n/-A/-l; --context,
# --kubeconfig, --request-timeout; unknown flags named; help CMD and CMD
# --help on stdout with exit 0; a wrong command or flag exits 2. Each check
# compares the exit status and the output (against the golden files of
# this folder where there is one). Runs offline: the "cluster" is
# 127.0.0.1:1, which refuses, so a live command exits 1 with the path it
# asked for in the message.
set -u
hr=$1
cd "$(dirname "$0")" || exit 1
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cat >"$work/kc" <<'KC'
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: t}
contexts:
- name: pay
  context: {cluster: c, user: u, namespace: payments}
- name: plain
  context: {cluster: c, user: u}
current-context: pay
KC
fail=0 n=0
bad() { echo "FAIL: $*"; fail=1; }

# run WANT_RC ARGS...: run headroom, stdout in $work/out, stderr in $work/err.
run() {
  want=$1; shift
  n=$((n + 1))
  "$hr" "$@" >"$work/out" 2>"$work/err" </dev/null
  rc=$?
  [ "$rc" -eq "$want" ] || { bad "headroom $* exited $rc, wanted $want"; cat "$work/err"; }
}
same() { # GOLDEN ARGS...: exit 0, stdout byte for byte
  g=$1; shift
  run 0 "$@"
  cmp -s "$g" "$work/out" || { bad "headroom $*: stdout differs from $g"; diff "$g" "$work/out" | head -5; }
}
err_has() { # TEXT: stderr contains it
  grep -qF -- "$1" "$work/err" || { bad "stderr lacks \"$1\":"; cat "$work/err"; }
}
out_has() {
  grep -qF -- "$1" "$work/out" || { bad "stdout lacks \"$1\""; head -5 "$work/out"; }
}

# -f, every form.
for f in "-f cluster.json" "-fcluster.json" "-f=cluster.json" "--filename cluster.json" \
         "--filename=cluster.json"; do
  # shellcheck disable=SC2086
  same cluster.flat.txt plan $f
done
# -o, every form and every format.
for o in "-o json" "-ojson" "-o=json" "--output json" "--output=json"; do
  # shellcheck disable=SC2086
  same cluster.plan.json plan -f cluster.json $o
done
same cluster.plan.yaml plan -f cluster.json -o yaml
same cluster.plan.yaml plan -f cluster.json --output=yaml
same cluster.flat.txt plan -f cluster.json -o table
same cluster.table.txt plan -f cluster.json -o table --by-node
same cluster.table.txt plan -f cluster.json --by-node=true
same cluster.node-c.flat.txt node node-c -f cluster.json -otable
same cluster.node-c.flat.txt node -f cluster.json node-c
same cluster.node-c.txt node -f cluster.json node-c --by-node
# --no-headers: the same rows without the header row, table and wide alike (the columns are
# as wide as the rows alone need, as kubectl's).
for o in table wide; do
  run 0 plan -f cluster.json -o $o
  tail -n +2 "$work/out" | tr -s ' ' >"$work/rows"
  run 0 plan -f cluster.json -o $o --no-headers
  tr -s ' ' <"$work/out" | cmp -s - "$work/rows" || bad "-o $o --no-headers: not the same rows"
done
run 0 plan -f cluster.json -o wide
out_has "WRITE   CAP                           STATUS"
out_has "node-c      team-b        small-api-77d-p9      250m      500m    750m     held    LimitRange Container bounds   managed (held: pressure)"
run 0 plan -f cluster.json -o wide --by-node
out_has "WRITE  CAP                          NODE       STATUS"
out_has "team-b/small-api-77d-p9              250m       500m       750m  held   LimitRange Container bounds  node-c     managed"
# One set of columns for the whole table: every node's header is the same.
for o in table wide; do
  run 0 plan -f cluster.json -o $o --by-node
  [ "$(grep -c '^  POD ' "$work/out")" -eq 4 ] || bad "-o $o: not one header per node"
  [ "$(grep '^  POD ' "$work/out" | sort -u | wc -l)" -eq 1 ] || bad "-o $o: the columns move from node to node"
done
# -o name: exactly the pods the table marks "yes" (held is not a write).
run 0 plan -f cluster.json -o name
awk 'NR > 1 && $7 == "yes" { print "pod/" $3 }' cluster.flat.txt | sort >"$work/want"
sort "$work/out" >"$work/got"
cmp -s "$work/want" "$work/got" || { bad "-o name is not the table's yes rows"; diff "$work/want" "$work/got"; }
[ -s "$work/got" ] || bad "-o name printed nothing"
run 2 plan -f cluster.json -o xml
err_has '-o takes table, wide, json, yaml, name, bars, jsonpath=TEMPLATE or custom-columns=SPEC, not "xml"'
run 2 plan -f cluster.json -o
err_has "flag needs a value: -o"
# -o jsonpath= and -o custom-columns=, every form of -o (what they print: kubectl/check.py).
run 0 plan -f cluster.json -o 'jsonpath={.items[*].target}'
cp "$work/out" "$work/jp"
[ "$(cat "$work/jp")" = "2210m 1500m 5310m 3000m 2010m 1250m 750m 2290m" ] || bad "jsonpath: $(cat "$work/jp")"
same "$work/jp" plan -f cluster.json -o='jsonpath={.items[*].target}'
same "$work/jp" plan -f cluster.json --output 'jsonpath={.items[*].target}'
same "$work/jp" plan -f cluster.json '-ojsonpath={.items[*].target}'
run 0 node node-c -f cluster.json -o 'custom-columns=NODE:.node,POD:.name,TARGET:{.target}'
out_has "node-c   small-api-77d-p9   750m"
run 0 plan -f cluster.json -o 'custom-columns=POD:.name,LIMIT:.limit' --no-headers
out_has "api-0                 <none>"
grep -q LIMIT "$work/out" && bad "custom-columns --no-headers printed the header"
run 0 plan -f cluster.json -o 'jsonpath={.items[0].nope}'
[ -s "$work/out" ] && bad "a missing key printed something"
run 1 plan -f cluster.json -o 'jsonpath={.items[0].nope}' --allow-missing-template-keys=false
err_has 'Error executing template: nope is not found'
run 1 plan -f cluster.json -o 'jsonpath={.items[99].name}'
err_has 'array index out of bounds: index 99, length 20'
run 2 plan -f cluster.json -o 'jsonpath={.items[*'
err_has 'error parsing jsonpath {.items[*, unterminated array'
run 2 plan -f cluster.json -o jsonpath
err_has 'template format specified but no template given'
run 2 plan -f cluster.json -o custom-columns=BAD
err_has 'unexpected custom-columns spec: BAD, expected <header>:<json-path-expr>'

# -n / --namespace: only that namespace's pods, every form the same.
run 0 plan -f cluster.json -n team-b --by-node
cp "$work/out" "$work/ns"
grep -q '^  team-b/' "$work/ns" || bad "-n team-b lists no team-b pod"
if grep '^  [a-z0-9-]*/' "$work/ns" | grep -qv '^  team-b/'; then bad "-n team-b lists another namespace"; fi
grep -q 'pods listed' "$work/ns" || bad "-n: the summary does not say the list is narrowed"
for f in "-nteam-b" "-n=team-b" "--namespace team-b" "--namespace=team-b"; do
  # shellcheck disable=SC2086
  same "$work/ns" plan -f cluster.json $f --by-node
done
# -A wins over -n (kubectl's rule) and is the default.
same cluster.flat.txt plan -f cluster.json -n team-b -A
same cluster.flat.txt plan -f cluster.json --all-namespaces
same cluster.flat.txt plan -f cluster.json --all-namespaces=true
# -n in the flat table: the third column's namespace alone.
run 0 plan -f cluster.json -n team-b --no-headers
[ "$(awk '{print $2}' "$work/out" | sort -u)" = team-b ] || bad "-n team-b (flat): other namespaces listed"
run 2 plan -f cluster.json -A=maybe
err_has "--all-namespaces takes true or false"
run 2 plan -f cluster.json -n Team_B
err_has '"Team_B" is not a namespace name'

# -l / --selector.
run 0 plan -f cluster.json -l app.kubernetes.io/name=web -o name
[ "$(cat "$work/out")" = "pod/web-7d9f8b6c4-x2k9p" ] || bad "-l name=web: $(cat "$work/out")"
run 0 plan -f cluster.json -l 'app.kubernetes.io/name in (web,api)' -o json
cp "$work/out" "$work/sel"
[ "$(grep -c '"name": "[a-z]' "$work/sel")" -ge 2 ] || bad "-l in (web,api)"
grep -q '"name": "api-0"' "$work/sel" || bad "-l in (web,api) lacks api-0"
grep -q '"name": "postgres-0"' "$work/sel" && bad "-l in (web,api) lists postgres-0"
for f in "-lapp.kubernetes.io/name in (web,api)" "-l=app.kubernetes.io/name in (web,api)" \
         "--selector=app.kubernetes.io/name in (web,api)"; do
  same "$work/sel" plan -f cluster.json "$f" -o json
done
same "$work/sel" plan -f cluster.json --selector 'app.kubernetes.io/name in (web,api)' -o json
run 0 plan -f cluster.json -l '!app.kubernetes.io/name' -o json
grep -q '"name": "web-7d9f8b6c4-x2k9p"' "$work/out" && bad "-l !key lists a pod with the key"
run 2 plan -f cluster.json -l 'a b'
err_has 'selector: cannot read "a b"'

# --set-request, both forms.
same cluster.set-request.txt node node-a -f cluster.json --by-node --set-request team-a/api-0=2 \
  --set-request=team-a/web-7d9f8b6c4-x2k9p=600m

# Connection flags (live): --kubeconfig, --context, --request-timeout.
for kc in "--kubeconfig $work/kc" "--kubeconfig=$work/kc"; do
  # shellcheck disable=SC2086
  run 1 plan $kc
  err_has "127.0.0.1:1"
  # shellcheck disable=SC2086
  run 1 explain ledger-0 $kc
  err_has "GET /api/v1/namespaces/payments/pods/ledger-0:"
  # shellcheck disable=SC2086
  run 1 preflight $kc
  out_has "preflight of https://127.0.0.1:1"
done
for ctx in "--context plain" "--context=plain"; do
  # shellcheck disable=SC2086
  run 1 explain ledger-0 --kubeconfig "$work/kc" $ctx
  err_has "GET /api/v1/namespaces/default/pods/ledger-0:"
done
run 1 plan --kubeconfig "$work/kc" --context nope
err_has "nope"
for t in "--request-timeout 5s" "--request-timeout=5s" "--request-timeout=1m30s" "--request-timeout 0"; do
  for c in plan "node node-a" "explain web" preflight; do
    # shellcheck disable=SC2086
    run 1 $c --kubeconfig "$work/kc" $t
  done
done
for c in plan "node node-a" "explain web" preflight; do
  # shellcheck disable=SC2086
  run 2 $c --kubeconfig "$work/kc" --request-timeout soon
  err_has "--request-timeout takes"
done

# explain, every flag form, offline.
for f in "-n shop" "-nshop" "-n=shop" "--namespace shop" "--namespace=shop"; do
  # shellcheck disable=SC2086
  same explain.max-cpu.txt explain capped-0 $f -f explain.json
done
for f in "-fexplain.json" "-f=explain.json" "--filename explain.json" "--filename=explain.json"; do
  # shellcheck disable=SC2086
  same explain.max-cpu.txt explain shop/capped-0 $f
done
# preflight -n, every form (it reaches the server: exit 1, FAIL line).
for f in "-n ops" "-nops" "-n=ops" "--namespace ops" "--namespace=ops"; do
  # shellcheck disable=SC2086
  run 1 preflight --kubeconfig "$work/kc" $f
done
run 2 preflight -n Bad_NS
err_has '"Bad_NS" is not a namespace name'

# Unknown flags are named, with or without a value; exit 2.
for c in plan "node node-a" "explain web" preflight version help; do
  # shellcheck disable=SC2086
  run 2 $c --frobnicate
  err_has 'unknown flag "--frobnicate"'
  # shellcheck disable=SC2086
  run 2 $c --frobnicate=3
  err_has 'unknown flag "--frobnicate"'
  # shellcheck disable=SC2086
  run 2 $c -Z
  err_has 'unknown flag "-Z"'
done
run 2 run --frobnicate
err_has '"--frobnicate"'
# run's value flags take both forms too (a missing kubeconfig ends it with 1,
# after its flags were accepted); a bad --log-format value is named.
for f in "--log-format json" "--log-format=json" "--log-format logfmt"; do
  # shellcheck disable=SC2086
  run 1 run $f --kubeconfig "$work/none" --metrics-addr 127.0.0.1:1 --webhook-addr "" --probe-addr ""
  err_has "kubeconfig $work/none"
done
run 2 run --log-format yaml
err_has '"yaml" is neither logfmt nor json'
err_has 'usage: headroom run [flags]'
# run is on the shared parser (flags.c): every value flag in both forms (the
# kubeconfig named in the error is the one given, so the value was taken),
# every boolean as --flag, --flag=true and --flag=false, -v as klog writes it.
for f in "--kubeconfig $work/none" "--kubeconfig=$work/none"; do
  for v in "--metrics-addr 127.0.0.1:1" "--metrics-addr=127.0.0.1:1" "--webhook-addr=" \
           "--probe-addr=" "--webhook-cert-dir /nonexistent" "--webhook-cert-dir=/nonexistent" \
           "--context x" "--context=x" "--namespace kube-headroom" "--namespace=kube-headroom" \
           "--dry-run" "--dry-run=true" "--dry-run=false" "--leader-elect" "--leader-elect=false" \
           "--controller=false" "--controller=true" "--metrics-secure=false" "--metrics-secure" \
           "--streaming-lists=false" "--streaming-lists" "--node-workers 8" "--node-workers=32" \
           "--write-concurrency 1" "--write-concurrency=64" \
           "-v" "-v=1" "--v=1" "--v=0" "--log-format=logfmt"; do
    # shellcheck disable=SC2086
    run 1 run $f $v --metrics-addr 127.0.0.1:1 --webhook-addr "" --probe-addr ""
    err_has "kubeconfig $work/none"
  done
done
# The Go kube-headroom's manager flags are run's too (docs/cli.md), in both forms, in its help.
run 0 run --help
for g in metrics-bind-address health-probe-bind-address leader-elect metrics-secure \
         metrics-cert-path metrics-cert-name metrics-cert-key webhook-cert-path webhook-cert-name \
         webhook-cert-key enable-http2 zap-log-level zap-devel zap-encoder zap-stacktrace-level \
         zap-time-encoding; do
  out_has "  --$g"
done
for v in "--metrics-bind-address 127.0.0.1:1" "--metrics-bind-address=0" \
         "--health-probe-bind-address=0" "--health-probe-bind-address 0" \
         "--metrics-cert-path /nonexistent" "--webhook-cert-path=/nonexistent" \
         "--metrics-cert-name=tls.crt" "--metrics-cert-key tls.key" "--webhook-cert-name tls.crt" \
         "--webhook-cert-key=tls.key" "--enable-http2" "--enable-http2=false" \
         "--zap-log-level debug" "--zap-log-level=info" "--zap-log-level=3" "--zap-devel" \
         "--zap-encoder=json" "--zap-encoder console" "--zap-stacktrace-level=error" \
         "--zap-time-encoding=rfc3339nano"; do
  # shellcheck disable=SC2086
  run 1 run --kubeconfig "$work/none" $v --webhook-addr "" --probe-addr ""
  err_has "kubeconfig $work/none"
done
run 1 run --kubeconfig "$work/none" --metrics-cert-path=/a --webhook-cert-path=/b --probe-addr ""
err_has "kubeconfig $work/none"
run 2 run --metrics-cert-path=/a --metrics-cert-dir=/b
err_has '--metrics-cert-path "/a" and --metrics-cert-dir "/b" disagree'
run 1 run --kubeconfig "$work/none" --metrics-cert-name=cert.pem --webhook-cert-key=k.pem --probe-addr ""
err_has "kubeconfig $work/none"
run 2 run --metrics-cert-name=certs/cert.pem
err_has '--metrics-cert-name takes a file name in its directory, not "certs/cert.pem"'
run 2 run --zap-log-level=trace
err_has '--zap-log-level takes debug, info, error, panic or a number above 0, not "trace"'
run 2 run --metrics-addr=:1 --metrics-bind-address=:2
err_has '--metrics-bind-address ":2" and --metrics-addr ":1" disagree'
run 2 run --zap-encoder=json --log-format=logfmt
err_has '--zap-encoder and --log-format disagree'
# Wrong values and arguments: exit 2, the flag or argument named.
run 2 run --dry-run=maybe
err_has '--dry-run takes true or false, not "maybe"'
run 2 run --metrics-secure=no
err_has '--metrics-secure takes true or false, not "no"'
for bad_n in 0 33 -1 4x ""; do
  run 2 run "--node-workers=$bad_n"
  err_has "--node-workers: \"$bad_n\" is not a number from 1 to 32"
done
for bad_n in 0 65 9999999999999999999; do
  run 2 run "--write-concurrency=$bad_n"
  err_has "--write-concurrency: \"$bad_n\" is not a number from 1 to 64"
done
run 2 run -v=x
err_has '--v takes a level 0-99, not "x"'
run 2 run --kubeconfig
err_has 'flag needs a value: --kubeconfig'
run 2 run extra
err_has 'unexpected argument "extra"'
run 2 run --metrics
err_has 'unknown flag "--metrics"'
run 0 run -h
out_has 'usage: headroom run [flags]'
[ -s "$work/err" ] && bad "run -h wrote to stderr"
# Prefixes are not flags (no getopt abbreviations).
run 2 plan -f cluster.json --name team-b
err_has 'unknown flag "--name"'

# help CMD and CMD --help: that command's help, on stdout, exit 0.
for c in plan node explain preflight version help; do
  run 0 help "$c"
  head -1 "$work/out" | grep -q "^usage: headroom $c" || bad "help $c: $(head -1 "$work/out")"
  [ -s "$work/err" ] && bad "help $c wrote to stderr"
  cp "$work/out" "$work/help"
  same "$work/help" "$c" --help
  same "$work/help" "$c" -h
done
run 0 help run
head -1 "$work/out" | grep -q "^usage: headroom run" || bad "help run: $(head -1 "$work/out")"
cp "$work/out" "$work/help"
same "$work/help" run --help
# The kubectl plugin name shows in help.
ln -s "$(command -v "$hr" 2>/dev/null || echo "$hr")" "$work/kubectl-headroom" 2>/dev/null ||
  ln -s "$hr" "$work/kubectl-headroom"
"$work/kubectl-headroom" help plan | head -1 | grep -q '^usage: kubectl headroom plan' ||
  bad "kubectl-headroom help plan"
# A wrong command: exit 2, from help too.
run 2 help bogus
err_has 'unknown command "bogus"'
run 2 bogus
err_has 'unknown command "bogus"'
run 2
# The top level: every command, and the exit codes documented.
for top in help --help -h; do
  run 0 "$top"
  for c in plan node explain preflight run version help; do
    grep -q "^  $c " "$work/out" || bad "$top does not list $c"
  done
  out_has "exit status:"
  out_has "  0  done"
  out_has "  1  bad input"
  out_has "  2  usage"
  out_has "kubectl get nodes,pods,namespaces,limitranges,resourcequotas,headroomconfigs -A -o json"
done
# version: six lines, in this order; -o json (every form) the same values as one object with
# exactly six string fields; -o takes json alone.
run 0 version
[ "$(cut -d' ' -f1 "$work/out" | tr '\n' ' ')" = "headroom commit tree built build platform " ] ||
  bad "version: $(tr '\n' '|' <"$work/out")"
cut -d' ' -f2- "$work/out" >"$work/text"
grep -qE '^[0-9]+\.[0-9]+\.[0-9]+' "$work/text" || bad "version: $(head -1 "$work/text") is no version"
cp "$work/out" "$work/version.txt"
run 0 --version
cmp -s "$work/version.txt" "$work/out" || bad "--version differs from version"
for f in "-o json" "-ojson" "-o=json" "--output json" "--output=json"; do
  # shellcheck disable=SC2086
  run 0 version $f
  [ "$(wc -l <"$work/out")" -eq 1 ] || bad "version $f: not one line"
  jq -r '[.version, .commit, .treeState, .buildDate, .build, .platform] | .[]' "$work/out" \
    >"$work/json" 2>"$work/err" || bad "version $f: not JSON: $(cat "$work/out")"
  [ "$(jq -r 'keys_unsorted | join(" ")' "$work/out")" = "version commit treeState buildDate build platform" ] ||
    bad "version $f: keys $(jq -c keys_unsorted "$work/out")"
  [ "$(jq '[.[] | strings] | length' "$work/out")" -eq 6 ] || bad "version $f: a value is not a string"
  cmp -s "$work/text" "$work/json" || { bad "version $f: the JSON and the text differ"; diff "$work/text" "$work/json"; }
done
# -o yaml, jsonpath=, custom-columns=: the same object (cmd/output.h).
run 0 version -o yaml
[ "$(sed -n 's/^platform: "\(.*\)"$/\1/p' "$work/out")" = "$(sed -n 6p "$work/json")" ] ||
  bad "version -o yaml: $(cat "$work/out")"
run 0 version -o 'jsonpath={.version} {.platform}'
[ "$(cat "$work/out")" = "$(sed -n 1p "$work/json") $(sed -n 6p "$work/json")" ] ||
  bad "version -o jsonpath: $(cat "$work/out")"
run 0 version -o custom-columns=PLATFORM:.platform --no-headers
[ "$(cat "$work/out")" = "$(sed -n 6p "$work/json")" ] || bad "version -o custom-columns: $(cat "$work/out")"
run 2 preflight -o xml
err_has '-o takes table, text, json, yaml, jsonpath=TEMPLATE or custom-columns=SPEC, not "xml"'
run 2 version -o xml
err_has '-o takes table, text, json, yaml, jsonpath=TEMPLATE or custom-columns=SPEC, not "xml"'
run 2 version extra
err_has 'unexpected argument "extra"'
# Arguments: "-" is stdin, "--" ends the flags.
"$hr" plan -f - <cluster.json >"$work/out" 2>"$work/err" || bad "plan -f - exited $?"
cmp -s cluster.flat.txt "$work/out" || bad "plan -f - differs"
run 2 plan -f cluster.json extra
err_has 'unexpected argument "extra"'
run 2 node -f cluster.json -- -n
err_has '"-n" is not a node name'

echo "cli: $n runs, $([ "$fail" -eq 0 ] && echo ok || echo FAILED)"
exit "$fail"
