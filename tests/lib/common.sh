# lib.sh — what the end-to-end scripts share: where the cluster and the
# binaries are, PASS/FAIL bookkeeping, waiting, and the few objects every
# test makes (simulated nodes, namespaces, single-container pods), plus the
# least-privilege identity the controller runs as (the chart's RBAC,
# charts/kube-headroom/templates/rbac.yaml, and its admission policy).
#
# Sourced, not run. Each script sets its own traps and ports; every object
# it makes carries $S (its PID), so reruns and parallel runs never collide.
# shellcheck shell=bash
HERE=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd) # from lib.sh itself: bench/cluster/soak.sh sources it too
CLUSTER=$ROOT/tests/cluster/cluster.sh
STATE=${HEADROOM_CLUSTER_DIR:-/tmp/kube-headroom-cluster}
export KUBECONFIG=${KUBECONFIG:-$STATE/admin.kubeconfig}
KUBECTL=${KUBECTL:-$("$CLUSTER" bin kubectl)}
HEADROOM=${HEADROOM_BIN:-$ROOT/build/release/headroom}
PROMCHECK=${PROMCHECK:-$(dirname "$HEADROOM")/tests/promcheck}
S=$$
k() { "$KUBECTL" "$@"; }
HELM=${HELM:-$("$CLUSTER" bin helm)}
CHART=$ROOT/charts/kube-headroom
CRD_FILE=$CHART/charts/crds/templates/headroomconfig.yaml
# The chart's objects as the one-file install names them (release kube-headroom
# in kube-headroom): chart_objects [helm template flags, e.g. --show-only FILE]
chart_objects() { "$HELM" template kube-headroom "$CHART" --namespace kube-headroom "$@"; }
# What the API server serves for the chart's admission policy (templates/admissionpolicy.yaml):
# `helm template` asks no server, so a render that wants the policy says so (--api-versions).
VAP_API=admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy

passed=0 failed=0
WHY=""
pass() { printf 'PASS  %s\n' "$1"; passed=$((passed + 1)); }
fail() { printf 'FAIL  %s%s\n' "$1" "${2:+: $2}"; failed=$((failed + 1)); } # name [why]
check() { # name, condition-as-command...
  local name=$1; shift
  if "$@"; then pass "$name"; else fail "$name" "${WHY:-condition false}"; fi
  WHY=""
}
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; }
# matches [grep flags] PATTERN: grep -q over stdin that reads all of it. grep -q stops at the
# first match, so under pipefail a producer still writing takes SIGPIPE and the pipeline
# fails (141) although the text matched; a negated test would pass. Counting reads to the end.
matches() { grep -c "$@" >/dev/null; }
# A port for a listener of the script's own: below the ephemeral range (an outgoing connection
# cannot take it between the look and the bind) and not listening. It runs in $(...), so it
# cannot remember what it gave: name the ports already taken. free_port [taken port...]
free_port() {
  local p
  for _ in $(seq 1 100); do
    p=$((20000 + RANDOM % 12000))
    case " $* " in *" $p "*) continue ;; esac
    ss -Htln "sport = :$p" | matches . && continue
    echo "$p"
    return 0
  done
  echo "FAIL  no free port in 20000-31999" >&2
  return 1
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
wait_until() { # seconds, cmd...
  local end=$(($(now_ms) + $1 * 1000)); shift
  until "$@" >/dev/null 2>&1; do
    [ "$(now_ms)" -lt "$end" ] || return 1
    sleep 0.2
  done
}
require_cluster() {
  k get --raw /readyz >/dev/null 2>&1 || { echo "FAIL  cluster: API server not ready"; echo "0 passed, 1 failed"; exit 1; }
  [ -f "$AUDIT" ] || {
    echo "FAIL  cluster: no audit record at $AUDIT: the suite asserts from it (start the cluster"
    echo "      with the default HEADROOM_AUDIT=on, tests/cluster/README.md)"
    echo "0 passed, 1 failed"
    exit 1
  }
  [ -x "$HEADROOM" ] || { echo "FAIL  no headroom binary at $HEADROOM"; echo "0 passed, 1 failed"; exit 1; }
  # No test passes while the shipped CRD would not install (design §13), even one that never
  # applies it: the API server checks it (schema, CEL rules) without storing anything.
  local out
  out=$(k apply --dry-run=server -f "$CRD_FILE" 2>&1 >/dev/null) || crd_failed "$CRD_FILE" "$out"
  # A test CTest runs beside others on this cluster (HEADROOM_E2E_SHARED, tests/e2e/CMakeLists.txt)
  # starts no controller and keeps to objects of its own: the suite's own controllers beside it
  # are expected, so it does not look for them.
  [ -z "${HEADROOM_E2E_SHARED:-}" ] || return 0
  local who
  if who=$(other_controller); then
    echo "FAIL  cluster: another kube-headroom controller acts on this cluster: $who."
    echo "      Its writes would mix with this test's. Stop it (the demo: scripts/demo.sh --down),"
    echo "      or run the tests on a cluster of their own (HEADROOM_CLUSTER_DIR: its ports follow)."
    echo "0 passed, 1 failed"
    exit 1
  fi
}
# Who else acts on this cluster, or nothing (exit 1). Two signs, each enough alone:
#  - a `headroom run` process with a TCP connection to this API server (ss -p: root sees every
#    process's sockets, as in CI) — whatever kubeconfig or flag pointed it here, that connection
#    is how a local controller acts; a PID file or a port guess would miss one started by hand;
#  - a Lease "kube-headroom" (any namespace) that its holder keeps renewing — a --leader-elect
#    controller that is not on this machine. A held Lease whose holder has died (a killed test
#    controller) is waited out, at most its duration, not refused.
other_controller() {
  local port pid exe
  port=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}' 2>/dev/null)
  port=${port##*:}; port=${port%%/*}
  for pid in $(ss -Htnp state established "( dport = :$port )" 2>/dev/null | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u); do
    exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || continue
    [ "$(basename "${exe% (deleted)}")" = headroom ] || continue
    [ "$(tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | sed -n 2p)" = run ] || continue
    echo "pid $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline" | cut -c1-200)) is connected to its API server 127.0.0.1:$port"
    return 0
  done
  local first left l
  first=$(fresh_leases)
  [ -n "$first" ] || return 1
  # Wait until each would have expired, then look again: one still fresh was renewed.
  left=$(awk '{print $3}' <<<"$first" | sort -n | tail -1)
  sleep "$((left > 30 ? 31 : left + 1))"
  while read -r l; do
    [ -n "$l" ] || continue
    echo "Lease $(awk '{print $1}' <<<"$l") is held and renewed by $(awk '{print $2}' <<<"$l")"
    return 0
  done <<<"$(fresh_leases)"
  return 1
}
fresh_leases() { # -> "ns/name holder seconds-left" of each Lease kube-headroom held and unexpired
  k get leases -A --field-selector metadata.name=kube-headroom -o json 2>/dev/null |
    jq -r '.items[] | select((.spec.holderIdentity // "") != "" and .spec.renewTime != null)
      | ((.spec.renewTime | sub("\\.[0-9]+"; "") | fromdateiso8601) + (.spec.leaseDurationSeconds // 15) - now) as $left
      | select($left > 0) | "\(.metadata.namespace)/\(.metadata.name) \(.spec.holderIdentity) \($left | ceil)"'
}

# ------------------------------------------------------------- the daemon
# metric and writes read the daemon on $MPORT over plain HTTP: every script
# that starts `headroom run` passes "${PLAIN_METRICS[@]}" (metrics without
# TLS or tokens, /healthz and /readyz beside them, no probe port of its own
# to collide on). e2e_metrics_auth.sh tests the secured default.
PLAIN_METRICS=(--metrics-secure=false --probe-addr=)
metric() { # 'name{labels}' -> value (0 when absent)
  curl -sf "http://127.0.0.1:$MPORT/metrics" | awk -v m="$1" '$1 == m {print $2; f=1} END {if (!f) print 0}'
}
writes() { # [port]: every write the daemon made, whatever its kind
  curl -sf "http://127.0.0.1:${1:-$MPORT}/metrics" | awk '$1 ~ /^headroom_writes_total[{]/ {s += $2} END {print s + 0}'
}
# quiet_for SECONDS LIMIT PORT...: waits until the daemons on PORT... have
# not written for SECONDS (and at least one wrote), at most LIMIT seconds;
# prints their writes. Exit 1 on the limit. A steady state is measured
# after it: the HeadroomConfig status settles last (its counts are written
# at most once per 10 s, cfgstatus.h).
quiet_for() { # seconds limit port...
  local want=$1 limit=$2 last=-1 now quiet=0 end p
  shift 2
  end=$(($(date +%s) + limit))
  while [ "$quiet" -lt "$want" ]; do
    sleep 1
    now=0
    for p in "$@"; do now=$((now + $(writes "$p"))); done
    if [ "$now" = "$last" ] && [ "$now" -gt 0 ]; then quiet=$((quiet + 1)); else quiet=0; fi
    last=$now
    [ "$(date +%s)" -lt "$end" ] || { echo "$now"; return 1; }
  done
  echo "$now"
}
# start_controller [--manage LABEL [--spec YAML]...] [--proxy] [flags...]: `headroom run` as
# $USER_KC, its metrics on $MPORT, logging to $WORK/controller.log, flags passed on; returns once
# /readyz answers (exit 1 after 60 s, or when a stage before it fails; START_WHY says why).
#   --manage LABEL  first manage_stage LABEL (below), each --spec YAML one more line of the spec
#   --proxy         through the fault proxy: proxy_start $ID (unless it runs already: a restart
#                   keeps the proxy and its log), the controller on $PROXY_KC
CTL_PID="" START_WHY=""
start_controller() {
  local label="" spec=() proxy=false kc
  while [ $# -gt 0 ]; do
    case $1 in
      --manage) label=$2; shift 2 ;;
      --spec) spec+=("$2"); shift 2 ;;
      --proxy) proxy=true; shift ;;
      *) break ;;
    esac
  done
  START_WHY="not ready within 60 s"
  if [ -n "$label" ]; then manage_stage "$label" "${spec[@]}" || return 1; fi
  kc=$USER_KC
  if $proxy; then
    [ -n "$PROXY_PID" ] || proxy_start "$ID" || { START_WHY="the fault proxy did not start (above)"; return 1; }
    kc=$PROXY_KC
  fi
  "$HEADROOM" run --kubeconfig "$kc" --namespace kube-headroom \
    --metrics-addr "127.0.0.1:$MPORT" "${PLAIN_METRICS[@]}" --webhook-addr "" -v "$@" >>"$WORK/controller.log" 2>&1 &
  CTL_PID=$!
  wait_until 60 curl -sf "http://127.0.0.1:$MPORT/readyz"
}
# manage_stage LABEL [YAML...]: the stage most scripts share, before their controller starts (by
# start_controller --manage, or by the script once its objects are made): the controller's identity
# $ID (install_identity: the chart's RBAC, sets USER_KC), the managed namespace $NS labelled
# LABEL=$S, and a HeadroomConfig that manages it alone (dryRun false; leftovers of other tests
# stay out of the counts), each YAML one more line of its spec (flow style), e.g.
# "rateLimits: {clientQPS: 1, clientBurst: 1}". Exit 1 with START_WHY on a failure.
manage_stage() { # label [spec line...]
  local label=$1 line lines=""
  shift
  for line in "$@"; do lines+="  $line"$'\n'; done
  install_identity "$ID"
  mkns "$NS" managed "$label=$S" || { START_WHY="namespace $NS not made"; return 1; }
  k apply -f - >/dev/null <<YAML || { START_WHY="the HeadroomConfig was refused"; return 1; }
apiVersion: kube-headroom.dev/v1alpha1
kind: HeadroomConfig
metadata: {name: cluster}
spec:
  dryRun: false
  namespaceSelector: {matchLabels: {$label: "$S"}}
$lines
YAML
}
stop_controller() { # signal
  [ -n "$CTL_PID" ] || return 0
  kill "-${1:-TERM}" "$CTL_PID" 2>/dev/null
  wait "$CTL_PID" 2>/dev/null
  CTL_PID=""
}
# The EXIT trap's common part, after a script's own: the controller killed, the proxy stopped, the
# objects, the HeadroomConfig and $ID's bindings removed; after a failure the tails of the logs;
# $WORK removed (kept with KEEP_WORK=1).
cleanup_common() { # [lines of the controller log to show]
  stop_controller KILL
  proxy_stop
  [ -z "${LOOSE_CRD:-}" ] || k apply -f "$CRD_FILE" >/dev/null 2>&1 # patch_past_schema's, cut short
  delete_objects
  k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  remove_identity "$ID"
  if [ "$failed" -gt 0 ]; then
    echo "--- controller log (tail)"; tail -n "${1:-40}" "$WORK/controller.log"
    [ -s "$WORK/proxy.log" ] && { echo "--- proxy log (tail)"; tail -n 30 "$WORK/proxy.log"; }
  fi
  [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"
}
mine() { # mark [extra jq condition]: the requests of the controller's user $ID after the mark
  audit_since "$1" "select(.user.username == \"$ID\" and (${2:-true}))"
}

# ------------------------------------------------------------- the CRD
# Every script that installs the HeadroomConfig CRD does it here: the shipped file
# ($CRD_FILE, or the one named) must be accepted and Established, or the script ends at
# once naming the file and the API server's answer. Never a fallback CRD: a test that
# passes on a stand-in proves nothing about what users install (design §13).
crd_failed() { # file why: the FAIL line, the closing count, exit 1 (the script's EXIT trap cleans up)
  fail "the CRD in ${1#"$ROOT"/} does not install" "$(printf '%s' "$2" | tr '\n' ' ' | cut -c1-600)"
  finish
  exit 1
}
install_crd() { # [file]
  local f=${1:-$CRD_FILE} out
  out=$(k apply -f "$f" 2>&1 >/dev/null) || crd_failed "$f" "$out"
  out=$(k wait --for condition=established crd/headroomconfigs.kube-headroom.dev --timeout=30s 2>&1) ||
    crd_failed "$f" "not Established within 30 s: $out"
}

# run_config: the HeadroomConfig "cluster" of a test whose controller writes and whose webhook
# answers: live, for the managed namespaces that also carry kube-headroom.dev/e2e-run=$RUN, so
# no other test's pods are its business.
run_config() {
  k apply -f - >/dev/null <<YAML
apiVersion: kube-headroom.dev/v1alpha1
kind: HeadroomConfig
metadata: {name: cluster}
spec:
  dryRun: false
  namespaceSelector:
    matchLabels: {kube-headroom.dev/mode: managed, kube-headroom.dev/e2e-run: "$RUN"}
  webhook: {enabled: true}
YAML
}

# A spec the shipped CRD refuses, stored as an object of an older CRD was: the controller's own
# check (Ready False, reason InvalidSpec: src/kube/decode/cfgspec.c) is the second line, for an
# object stored before the schema refused it, and this is how a test reaches it. The patch goes
# in under a looser CRD — the shipped one without its bounds, patterns and CEL rules, as an older
# release's might be — and the shipped CRD goes back at once (cleanup_common puts it back too, if
# the script ends in between). The API server never validates a stored object again; a later
# write of the object (the controller's status) passes by ratcheting, with a warning.
patch_past_schema() { # json-patch for HeadroomConfig "cluster" -> 0, or 1 with WHY
  local rc=0
  LOOSE_CRD=1
  python3 - "$CRD_FILE" >"$WORK/crd-loose.yaml" <<'PY'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
def strip(o):
    if isinstance(o, dict):
        for key in ("x-kubernetes-validations", "pattern", "minimum", "maximum", "minLength",
                    "maxLength", "maxItems"):
            o.pop(key, None)
        for v in o.values():
            strip(v)
    elif isinstance(o, list):
        for v in o:
            strip(v)
strip(doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"])
print(yaml.safe_dump(doc))
PY
  install_crd "$WORK/crd-loose.yaml"
  # The API server may go on serving the shipped schema for a moment after the update.
  if ! wait_until 20 k patch headroomconfig cluster --type json -p "$1"; then
    WHY="refused under the looser CRD: $(k patch headroomconfig cluster --type json -p "$1" 2>&1)"
    rc=1
  fi
  install_crd
  LOOSE_CRD=""
  return "$rc"
}

# The CRD, the chart's RBAC, and a user bound to its roles: sets USER_KC.
install_identity() { # user name
  install_crd
  # A namespace an earlier test deleted may still be terminating: it takes no new object.
  [ "$(k get namespace kube-headroom -o jsonpath='{.status.phase}' 2>/dev/null)" != Terminating ] ||
    k wait --for=delete namespace/kube-headroom --timeout=120s >/dev/null 2>&1
  k create namespace kube-headroom >/dev/null 2>&1
  chart_objects --show-only templates/serviceaccount.yaml --show-only templates/rbac.yaml | k apply -f - >/dev/null
  USER_KC=$("$CLUSTER" user-kubeconfig "$1")
  k create clusterrolebinding "$1" --clusterrole=kube-headroom --user="$1" >/dev/null 2>&1
  k -n kube-headroom create rolebinding "$1" --role=kube-headroom-leader-election --user="$1" >/dev/null 2>&1
  # The chart's admission policy confines this user as it confines the chart's ServiceAccount
  # (rbac.admissionPolicyUsers): every controller of the suite runs under it. One per user.
  chart_objects --show-only templates/admissionpolicy.yaml --api-versions "$VAP_API" \
    --set fullnameOverride="hr-user-$1" --set "rbac.admissionPolicyUsers={$1}" | k apply -f - >/dev/null
}
remove_identity() { # user name
  k delete clusterrolebinding "$1" >/dev/null 2>&1
  k -n kube-headroom delete rolebinding "$1" >/dev/null 2>&1
  k delete validatingadmissionpolicybinding,validatingadmissionpolicy "hr-user-$1-controller-writes" \
    --ignore-not-found >/dev/null 2>&1
}

# ------------------------------------------------------------- the webhook
# The webhook on 127.0.0.1, registered as the chart registers it (templates/webhook.yaml, by URL
# with a caBundle), for the managed namespaces that also carry kube-headroom.dev/e2e-run=RUN, so
# other tests' pods never reach it.
webhook_ca() { # dir: a throw-away CA, dir/ca.crt and dir/ca.key
  mkdir -p "$1"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -subj "/CN=headroom-e2e-ca" -keyout "$1/ca.key" -out "$1/ca.crt" 2>/dev/null
}
webhook_cert() { # dir ca-dir: dir/tls.key and dir/tls.crt (SAN IP:127.0.0.1) signed by the CA; prints the serial
  local d=$1
  mkdir -p "$d"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=127.0.0.1" \
    -keyout "$d/tls.key" -out "$d/req.csr" 2>/dev/null || return 1
  printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$d/ext.cnf"
  openssl x509 -req -in "$d/req.csr" -CA "$2/ca.crt" -CAkey "$2/ca.key" -set_serial "0x$(openssl rand -hex 8)" \
    -days 1 -extfile "$d/ext.cnf" -out "$d/tls.crt" 2>/dev/null || return 1
  openssl x509 -in "$d/tls.crt" -noout -serial | cut -d= -f2
}
webhook_register() { # name port ca-dir run -> the registration applied (exit 1 and why on stderr if not)
  local out
  out=$("$HELM" template e2e "$CHART" --namespace kube-headroom --show-only templates/webhook.yaml \
    --set fullnameOverride="$1" --set webhook.enable=true --set webhook.url="https://127.0.0.1:$2/mutate-pods" \
    --set webhook.caBundle="$(base64 -w0 "$3/ca.crt")" --set webhook.certSecretName=unused \
    --set-json "webhook.namespaceSelector={\"matchLabels\":{\"kube-headroom.dev/mode\":\"managed\",\"kube-headroom.dev/e2e-run\":\"$4\"}}" 2>&1) ||
    { echo "the chart's webhook registration does not render: $out" >&2; return 1; }
  grep -q "url: \"https://127.0.0.1:$2/mutate-pods\"" <<<"$out" || { echo "the chart's registration has no url" >&2; return 1; }
  grep -q 'failurePolicy: Ignore' <<<"$out" || { echo "the chart's registration lost failurePolicy: Ignore" >&2; return 1; }
  k apply -f - >/dev/null <<<"$out"
}

# The offline planner on what the cluster holds now: dump_cluster writes $WORK/dump.json (the kinds
# `headroom plan -f` reads: what `kubectl get ... -o json` gives a user); planned_targets prints
# "namespace/name=targetMilli" of each pod `plan -f` planned in it that the jq condition on the
# pod keeps ($node: its node's name), sorted; a script compares them with the limits it reads.
dump_cluster() { k get nodes,pods,namespaces,limitranges,resourcequotas,headroomconfigs -A -o json >"$WORK/dump.json"; }
planned_targets() { # [jq condition on a pod]
  "$HEADROOM" plan -f "$WORK/dump.json" -o json 2>/dev/null |
    jq -r '.nodes[] | .name as $node | .pods[] | select('"${1:-true}"') | "\(.namespace)/\(.name)=\(.targetMilli)"' |
    sort
}

# Converged: the planner, reading the live cluster, has nothing left to write on NODE, and every
# managed pod there has a limit (the plan is left in $WORK/plan.json for the failure message).
node_converged() { # node
  "$HEADROOM" node "$1" -o json >"$WORK/plan.json" 2>/dev/null &&
    jq -e '[.nodes[0].pods[] | select(.managed)] | length > 0 and all(.write == false and .limitMilli > 0)' \
      "$WORK/plan.json" >/dev/null
}

# ------------------------------------------------------------- the fault proxy
# tests/tools/faultproxy.c between the controller and the API server (its header has the rules):
# proxy_start USER starts it on $PROXY_PORT, serving TLS with a certificate of the cluster's CA and
# presenting USER's client certificate upstream (so the audit log still names USER), and writes
# $PROXY_KC, USER's kubeconfig pointed at the proxy, for the controller. proxy_rules TEXT loads
# the rules TEXT and returns once the proxy says they are in force (every open request matched
# again: an open watch gets the new rule at once). The log is $WORK/proxy.log.
FAULTPROXY=${FAULTPROXY:-$(dirname "$HEADROOM")/tests/faultproxy}
PROXY_PID="" PROXY_GEN=0
proxy_start() { # user
  local safe crt key up
  [ -x "$FAULTPROXY" ] || { echo "no fault proxy at $FAULTPROXY (ninja -C build/release faultproxy)" >&2; return 1; }
  safe=$(printf '%s' "$1" | tr -c 'A-Za-z0-9._-' '_')
  read -r crt key < <("$CLUSTER" serving-cert "faultproxy-$S") || return 1
  : >"$WORK/proxy.rules"
  up=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}')
  up=${up#https://}
  "$FAULTPROXY" --listen "127.0.0.1:$PROXY_PORT" --upstream "${up%%/*}" \
    --rules "$WORK/proxy.rules" --cert "$crt" --key "$key" --upstream-ca "$STATE/pki/ca.crt" \
    --upstream-cert "$STATE/users/user-$safe.crt" --upstream-key "$STATE/users/user-$safe.key" \
    >>"$WORK/proxy.log" 2>&1 &
  PROXY_PID=$!
  PROXY_GEN=1
  wait_until 10 grep -q 'rules loaded: generation 1,' "$WORK/proxy.log" || { cat "$WORK/proxy.log" >&2; return 1; }
  sed -E "s#server: https://127.0.0.1:[0-9]+#server: https://127.0.0.1:$PROXY_PORT#" \
    "$STATE/users/$safe.kubeconfig" >"$WORK/proxy.kubeconfig"
  PROXY_KC=$WORK/proxy.kubeconfig
}
proxy_rules() { # rules text
  printf '%s\n' "$1" >"$WORK/proxy.rules"
  PROXY_GEN=$((PROXY_GEN + 1))
  kill -HUP "$PROXY_PID"
  wait_until 10 grep -q "rules loaded: generation $PROXY_GEN," "$WORK/proxy.log" ||
    { echo "the proxy did not load rules generation $PROXY_GEN: $(tail -n 2 "$WORK/proxy.log")" >&2; return 1; }
}
proxy_stop() {
  [ -n "$PROXY_PID" ] || return 0
  kill "$PROXY_PID" 2>/dev/null
  wait "$PROXY_PID" 2>/dev/null
  PROXY_PID=""
}

# ------------------------------------------------------------- audit log
# The API server's own record (tests/cluster/README.md): count requests from
# it, not from the daemon's counters. audit_mark prints the current line
# count; audit_since MARK [jq filter] prints the events after it, one compact
# JSON object per line, optionally filtered (e.g. 'select(.verb=="patch")').
AUDIT=${HEADROOM_AUDIT_LOG:-$STATE/audit.log}
audit_mark() { [ -f "$AUDIT" ] && wc -l <"$AUDIT" || echo 0; }
# A jq definition: t, an audit timestamp ("2026-12-01T17:20:00.123456Z") in seconds since the epoch.
JQ_T='def t: (sub("\\.[0-9]+Z$"; "Z") | fromdate) + ((capture("\\.(?<f>[0-9]+)Z$").f // "0") | "0." + . | tonumber);'
audit_since() { # mark [jq filter]
  tail -n +"$(($1 + 1))" "$AUDIT" | jq -c "${2:-.}"
}
# The writes of USER after MARK, one line each: "time verb resource[/sub] ns/name code", in the
# order the API server received them; an optional jq condition on the event narrows them, e.g.
# '.objectRef.subresource == "resize"' or '.objectRef.namespace == "x"'. The audit record is
# written once a request completes: a write still in flight is not in it yet.
audit_writes() { # mark user [jq condition]
  audit_since "$1" "select(.user.username == \"$2\" and (.verb | test(\"^(create|update|patch|delete|deletecollection)$\")) and (${3:-true}))
    | \"\(.requestReceivedTimestamp) \(.verb) \(.objectRef.resource)\(if .objectRef.subresource then \"/\" + .objectRef.subresource else \"\" end) \(.objectRef.namespace // \"-\")/\(.objectRef.name // \"-\") \(.responseStatus.code)\"" |
    jq -r . | sort
}
# The same, counted.
audit_write_count() { audit_writes "$@" | wc -l; }
# Milliseconds from pod NS/NAME's create reaching the API server (requestReceivedTimestamp)
# to USER's first resize of it that the API server accepted (its stageTimestamp), both after
# MARK: the controller's reaction as the API server saw it, without the test's own kubectl
# start-up and polling. Prints nothing while either is not in the record yet.
audit_react_ms() { # mark ns name user
  audit_since "$1" "select(.objectRef.namespace == \"$2\" and .objectRef.name == \"$3\" and .objectRef.resource == \"pods\")" |
    jq -rs --arg u "$4" "$JQ_T"'
      ([.[] | select(.verb == "create" and (.objectRef.subresource // "") == "") | .requestReceivedTimestamp | t] | min) as $c
      | ([.[] | select(.user.username == $u and .objectRef.subresource == "resize"
                       and (.responseStatus.code // 0) >= 200 and (.responseStatus.code // 0) < 300)
          | .stageTimestamp | t] | min) as $r
      | if $c == null or $r == null then empty else (($r - $c) * 1000 | floor) end'
}

# ------------------------------------------------------------- objects
NODES=() NSS=()
delete_objects() {
  [ ${#NSS[@]} -eq 0 ] || k delete namespace "${NSS[@]}" --ignore-not-found --wait=false >/dev/null 2>&1
  [ ${#NODES[@]} -eq 0 ] || k delete node "${NODES[@]}" --ignore-not-found --wait=false >/dev/null 2>&1
}
mknode() { # name cpu
  NODES+=("$1")
  node_manifest "$1" "$2" | k apply -f - >/dev/null
}
node_manifest() { # name cpu: a simulated node's manifest (mknode applies one; a script may apply many in one call)
  cat <<NODE
apiVersion: v1
kind: Node
metadata:
  name: $1
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {type: kwok, kubernetes.io/hostname: $1}
status:
  allocatable: {cpu: "$2", memory: 64Gi, pods: "110"}
  capacity: {cpu: "$2", memory: 64Gi, pods: "110"}
NODE
}
mkns() { # name managed|plain [label=value...]: made, and its default ServiceAccount there
  # 90 s: right after a test restarts the API server (e2e_faults), the controller-manager's
  # ServiceAccount controller is still in its watches' back-off (CI: e2e_gang's setup, 30 s).
  mkns_nowait "$@" && wait_until 90 k -n "$1" get serviceaccount default
}
mkns_nowait() { # as mkns, without the wait (make several, then wait for each: the waits overlap)
  local name=$1 mode=$2 labels=()
  shift 2
  [ "$mode" = managed ] && labels+=(kube-headroom.dev/mode=managed)
  NSS+=("$name")
  k create namespace "$name" >/dev/null || return 1
  [ $# -eq 0 ] && [ ${#labels[@]} -eq 0 ] || k label namespace "$name" "${labels[@]}" "$@" >/dev/null
}
mkpod() { # ns name node cpu-request [cpu-limit] [extra metadata yaml]
  pod_manifest "$@" | k apply -f - >/dev/null
}
pod_manifest() { # as mkpod: the manifest only
  local lim=""
  [ -n "${5:-}" ] && lim="limits: {cpu: \"$5\"}"
  cat <<POD
apiVersion: v1
kind: Pod
metadata:
  name: $2
  namespace: $1
  ${6:-}
spec:
  nodeName: $3
  containers:
  - name: app
    image: registry.invalid/app:1
    resources:
      requests: {cpu: "$4", memory: 64Mi}
      $lim
POD
}
cpu_limit() { # ns pod [container]
  k -n "$1" get pod "$2" -o jsonpath="{.spec.containers[?(@.name==\"${3:-app}\")].resources.limits.cpu}" 2>/dev/null
}
limit_is() { [ "$(cpu_limit "$1" "$2" "${4:-app}")" = "$3" ]; }
running() { [ "$(k -n "$1" get pod "$2" -o jsonpath='{.status.phase}')" = Running ]; }
restarts() { # ns -> total container restarts in the namespace
  k -n "$1" get pods -o json | jq '[.items[].status.containerStatuses[]?.restartCount] | add // 0'
}
