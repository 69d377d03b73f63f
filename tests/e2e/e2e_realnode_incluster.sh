#!/usr/bin/env bash
# e2e_realnode_incluster.sh — the controller installed as users install it (design §14,
# exit criterion (d) below): the chart (charts/kube-headroom) with the project's image
# (scripts/release/image.sh, imported into the real node's containerd), two replicas running as Pods on the
# real node with their ServiceAccount's projected token (in-cluster configuration), one holding
# the leader Lease; the admission webhook, registered by URL with the chart's bring-your-own
# certificate (webhook.certSecretName, webhook.caBundle), called by the API server for a pod of a
# managed namespace; /metrics scraped with a ServiceAccount token bound to the chart's
# <fullname>-metrics-reader (refused without a token, forbidden to a token without the binding);
# a managed burner resized by the in-cluster controller, its CFS quota following.
#
#   (d) the leader's Pod is killed in the middle of a write wave — SIGKILL of its container's
#       process, found through the pod's cgroup (a crash: nothing is released, the resizes it was
#       sending are cut off; the kubelet restarts the container in the same Pod): no workload
#       container restarts (same container IDs, restartCount 0), no version of any managed pod
#       the API server served during the wave has a limit below its request (a watch records
#       every one), the other replica takes the Lease and converges the node (every managed pod's
#       limit is the planner's target, `headroom node`), and the writes after the kill are the
#       other replica's (the audit record names the Pod of each ServiceAccount token).
#
# What this machine forces (tests/cluster/README.md, docs/install.md "Two replicas on one node"):
# pods with their own network namespace reach nothing (the CNI keeps them alone), so the
# controller runs hostNetwork on 127.0.0.1; the in-cluster address of the API server (the
# kubernetes Service) has no kube-proxy behind it, so KUBERNETES_SERVICE_HOST/PORT name
# 127.0.0.1 and the API server's port (chart value extraEnv); the two replicas share the one node's
# ports (chart value hostNetworkReusePort: webhook and metrics through SO_REUSEPORT, each
# replica's probe listener on a port of its own, exec probes).
# Needs `cluster.sh up` and `cluster.sh real-node up` (the CTest fixtures).
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
# shellcheck source=../lib/realnode.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/realnode.sh"
WORK=$(mktemp -d /tmp/headroom-e2e-rnic.XXXXXX)
REL=hr-ic
FULL=$REL-kube-headroom
CNS=hr-ic-$S
NS=e2e-rn-ic-$S
RUN=e2eric$S
API_PORT=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}' | sed 's#.*:##')
P_METRICS=${HEADROOM_E2E_RNIC_METRICS_PORT:-$(free_port)}
P_WEBHOOK=${HEADROOM_E2E_RNIC_WEBHOOK_PORT:-$(free_port "$P_METRICS")}
WATCH_PID=""

cleanup() {
  [ -z "$WATCH_PID" ] || kill "$WATCH_PID" 2>/dev/null
  "$HELM" uninstall "$REL" -n "$CNS" --wait --timeout 60s >/dev/null 2>&1
  # The next test must not see this controller still connected (common.sh require_cluster).
  k -n "$CNS" wait --for=delete pod -l app.kubernetes.io/instance=$REL --timeout=60s >/dev/null 2>&1
  k delete namespace "$CNS" --ignore-not-found --wait=false >/dev/null 2>&1
  k delete clusterrolebinding "$REL-scraper-$S" --ignore-not-found >/dev/null 2>&1
  k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  delete_objects
  rm -rf "$WORK"
}
trap cleanup EXIT
require_real_node

# ------------------------------------------------------------------ the image on the node
import_image "$WORK"

# ------------------------------------------------------------------ the serving certificate
# The chart's bring-your-own certificate: a kubernetes.io/tls Secret in the release namespace
# (webhook.certSecretName) and the CA that signed it (webhook.caBundle). The name the API server
# and the scraper dial is 127.0.0.1, so that is the certificate's IP SAN.
k create namespace "$CNS" >/dev/null
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj "/CN=headroom-e2e-rnic-ca" \
  -keyout "$WORK/ca.key" -out "$WORK/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=127.0.0.1" \
  -keyout "$WORK/tls.key" -out "$WORK/req.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$WORK/ext.cnf"
openssl x509 -req -in "$WORK/req.csr" -CA "$WORK/ca.crt" -CAkey "$WORK/ca.key" -set_serial 0x1 -days 1 \
  -extfile "$WORK/ext.cnf" -out "$WORK/tls.crt" 2>/dev/null
k -n "$CNS" create secret tls "$REL-tls" --cert "$WORK/tls.crt" --key "$WORK/tls.key" >/dev/null

# ------------------------------------------------------------------ helm install, two replicas
install_crd
run_config
# What this machine forces (realnode.sh chart_machine_values), then this test's own values.
chart_machine_values "$P_METRICS" >"$WORK/machine.yaml"
cat >"$WORK/values.yaml" <<YAML
replicas: 2
webhook:
  enable: true
  port: $P_WEBHOOK
  url: https://127.0.0.1:$P_WEBHOOK/mutate-pods
  certSecretName: $REL-tls
  caBundle: $(base64 -w0 "$WORK/ca.crt")
  namespaceSelector:
    matchLabels: {kube-headroom.dev/mode: managed, kube-headroom.dev/e2e-run: "$RUN"}
networkPolicy: {enable: false}
YAML
out=$("$HELM" install "$REL" "$CHART" -n "$CNS" -f "$WORK/machine.yaml" -f "$WORK/values.yaml" 2>&1)
rc=$?
WHY="$out"
check "helm install of the chart (hostNetwork, two replicas sharing the node's ports, webhook by URL)" [ "$rc" -eq 0 ]
ctl_pods() { k -n "$CNS" get pods -l app.kubernetes.io/instance=$REL -o json 2>/dev/null; }
n_ready() {
  ctl_pods | jq --arg n "$REAL_NODE" '[.items[] | select(.metadata.deletionTimestamp == null and .spec.nodeName == $n
    and any(.status.conditions[]?; .type == "Ready" and .status == "True"))] | length'
}
both_ready() { [ "$(n_ready)" = 2 ]; }
wait_until 120 both_ready
WHY="$(ctl_pods | jq -c '[.items[] | {name: .metadata.name, node: .spec.nodeName, phase: .status.phase,
  ready: ([.status.conditions[]? | select(.type == "Ready") | .status] | join(""))}]')
  $(k -n "$CNS" get events --field-selector reason=FailedScheduling -o jsonpath='{.items[-1:].message}' 2>/dev/null)"
check "two controller Pods are Running and Ready on the one real node" both_ready
mapfile -t CPS < <(ctl_pods | jq -r '.items[] | select(.metadata.deletionTimestamp == null) | .metadata.name' | sort)
sa=$(k -n "$CNS" get pod "${CPS[0]}" -o jsonpath='{.spec.serviceAccountName}')
tokvol=$(k -n "$CNS" get pod "${CPS[0]}" -o json | jq -r '[.spec.volumes[]? | select(.projected.sources[]?.serviceAccountToken)] | length')
WHY="serviceAccount '$sa', projected token volumes $tokvol"
check "they run as the chart's ServiceAccount with its projected token" eval '[ "$sa" = "$FULL" ] && [ "$tokvol" -ge 1 ]'
holder() { k -n "$CNS" get lease kube-headroom -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
held() { [ -n "$(holder)" ]; }
wait_until 30 held
LEADER="" FOLLOWER=""
for p in "${CPS[@]}"; do
  case $(holder) in "${p}_"*) LEADER=$p ;; *) FOLLOWER=$p ;; esac
done
WHY="lease holder '$(holder)', pods ${CPS[*]}"
check "one of them leads: the Lease names it (${LEADER:-none}), the other ($FOLLOWER) follows" \
  eval '[ -n "$LEADER" ] && [ -n "$FOLLOWER" ] && [ "${#CPS[@]}" = 2 ]'
logf() { ls "$REAL_STATE"/pod-logs/"${CNS}_${1}"_*/headroom/*.log 2>/dev/null | sort -V | tail -1; }
WHY="log $(logf "$LEADER"): $(grep -m1 'kubernetes client ready' "$(logf "$LEADER")" 2>/dev/null | cut -c1-160)"
check "they use the in-cluster configuration (log: client ready for https://127.0.0.1:$API_PORT)" \
  grep -q "kubernetes client ready.*server=https://127.0.0.1:$API_PORT" "$(logf "$LEADER")"

# Each replica's probe listener is its own: the port it wrote for its exec probe is listened on
# by a process in that Pod's cgroup, and the two ports differ.
pid_in_pod() { # pid pod -> the process is in that Pod's cgroup
  local uid
  uid=$(k -n "$CNS" get pod "$2" -o jsonpath='{.metadata.uid}')
  grep -q "pod$uid" "/proc/$1/cgroup" 2>/dev/null
}
listener_pids() { ss -Hltnp "sport = :$1" 2>/dev/null | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u; }
probe_ports=() ok=0
for p in "${CPS[@]}"; do
  port=$(grep 'probe address written' "$(logf "$p")" 2>/dev/null | tail -1 | sed -n 's/.* port=\([0-9]*\).*/\1/p')
  probe_ports+=("${port:-none}")
  for pid in $([ -n "$port" ] && listener_pids "$port"); do pid_in_pod "$pid" "$p" && ok=$((ok + 1)); done
done
WHY="probe ports ${probe_ports[*]}, owned by their own Pod: $ok of 2"
check "each replica's probes reach its own process (ports ${probe_ports[*]}, each listened on in its own Pod)" \
  eval '[ "$ok" = 2 ] && [ "${probe_ports[0]}" != "${probe_ports[1]}" ]'
wpids=$(listener_pids "$P_WEBHOOK" | tr '\n' ' ')
inpods=0
for pid in $wpids; do for p in "${CPS[@]}"; do pid_in_pod "$pid" "$p" && inpods=$((inpods + 1)); done; done
WHY="listeners on $P_WEBHOOK: pids $wpids; in the Pods: $inpods"
check "both replicas listen on the webhook's port $P_WEBHOOK (SO_REUSEPORT), and nothing else does" \
  eval '[ "$inpods" = 2 ] && [ "$(wc -w <<<"$wpids")" = 2 ]'

# ------------------------------------------------------------------ metrics with a token
k -n "$CNS" create serviceaccount scraper >/dev/null
k -n "$CNS" create serviceaccount stranger >/dev/null
k create clusterrolebinding "$REL-scraper-$S" --clusterrole="$FULL-metrics-reader" --serviceaccount="$CNS:scraper" >/dev/null
scrape() { # [token] -> the HTTP status; the body in $WORK/scrape
  curl -s --max-time 10 --cacert "$WORK/ca.crt" -o "$WORK/scrape" -w '%{http_code}' \
    ${1:+-H "Authorization: Bearer $1"} "https://127.0.0.1:$P_METRICS/metrics"
}
tok=$(k -n "$CNS" create token scraper --duration=10m)
st_tok=$(scrape "$tok")
WHY="status $st_tok: $(head -c 200 "$WORK/scrape")"
check "a scrape of /metrics with the token of a ServiceAccount bound to $FULL-metrics-reader: 200" \
  eval '[ "$st_tok" = 200 ] && grep -q "^headroom_leader" "$WORK/scrape"'
st_none=$(scrape "")
st_other=$(scrape "$(k -n "$CNS" create token stranger --duration=10m)")
WHY="without a token $st_none, with an unbound ServiceAccount's token $st_other"
check "without a token it is refused (401), an unbound ServiceAccount's token is forbidden (403)" \
  eval '[ "$st_none" = 401 ] && [ "$st_other" = 403 ]'

# ------------------------------------------------------------------ the webhook, called by the API server
mkns "$NS" managed
k label namespace "$NS" kube-headroom.dev/e2e-run="$RUN" >/dev/null
wh_mark=$(audit_mark)
# The create's answer is the pod as stored: what the webhook made of it, before any resize.
born=$(cat <<POD | k create -f - -o json
apiVersion: v1
kind: Pod
metadata: {name: born, namespace: $NS}
spec:
$(burner_spec 200m "" 1)
POD
)
born_gen=$(jq -r .metadata.generation <<<"$born")
born_lim=$(jq -r '.spec.containers[0].resources.limits.cpu // "none"' <<<"$born")
wh_ann=$(audit_since "$wh_mark" "select(.verb == \"create\" and .objectRef.resource == \"pods\" and .objectRef.name == \"born\" and .stage == \"ResponseComplete\") | .annotations | to_entries[] | select(.key | startswith(\"mutation.webhook\")) | .value | fromjson | select(.mutated) | .configuration" | head -1)
WHY="generation $born_gen limit $born_lim; audit: $wh_ann"
check "a pod created in the managed namespace is born with the webhook's limit (200m x 2 = 400m), mutated by the chart's webhook" \
  eval '[ "$born_gen" = 1 ] && [ "$born_lim" = 400m ] && [ "$wh_ann" = "\"$FULL\"" ]'
wait_until 90 running "$NS" born
# The controller may resize it meanwhile: the kubelet applies a new limit to the cgroup a moment
# after the API has it, so the quota is waited for (e2e_realnode_exit (b) measures that lag).
# The verdict is the wait's: re-reading both afterwards races the next resize (the rehearsal saw
# quota and limit agree, then a resize land between the wait and a second look).
born_seen=""
born_quota() {
  local q l
  q=$(cg_quota "$NS" born) && l=$(cpu_limit "$NS" born) || return 1
  born_seen="quota '$q', limit '$l'"
  [ "$q" != -1 ] && [ "$q" = "$(quota_of_milli "$(milli "$l")")" ]
}
born_ok=0
wait_until 15 born_quota && born_ok=1
WHY="last seen: $born_seen"
check "its container runs on the real node under a quota (the webhook's or the controller's that followed; $born_seen)" [ "$born_ok" = 1 ]
k -n "$NS" delete pod born --wait=true --timeout=60s >/dev/null 2>&1

# ------------------------------------------------------------------ it resizes a real pod
burner_pod "$NS" a 300m "" 1
wait_until 90 running "$NS" a
grown() {
  local l
  l=$(cpu_limit "$NS" a)
  [ -n "$l" ] && [ "$(milli "$l")" -gt 600 ] && quota_is "$NS" a "$(quota_of_milli "$(milli "$l")")"
}
grown_ok=0
wait_until 30 grown && grown_ok=1 # the wait's verdict (see born_quota)
lim=$(cpu_limit "$NS" a)
WHY="limit '$lim', quota '$(cg_quota "$NS" a 2>/dev/null)'"
check "the in-cluster controller raises a managed burner's limit ($lim) and its cgroup quota follows" [ "$grown_ok" = 1 ]
writer=$(k -n "$NS" get pod a --show-managed-fields -o json | jq -r '[.metadata.managedFields[]? | select(.subresource == "resize") | .manager] | join(",")')
WHY="resize field managers '$writer'"
check "the resize came from the controller's field manager (headroom)" grep -q headroom <<<"$writer"

# ------------------------------------------------------------------ (d) the leader killed mid-wave
# Every version of every pod of the namespace the API server serves from here on.
"$KUBECTL" -n "$NS" get pods --watch --output-watch-events -o json >"$WORK/watch.json" 2>/dev/null &  # not k: $! must be kubectl itself
WATCH_PID=$!
sleep 1
SAID="system:serviceaccount:$CNS:$FULL"
writes_by() { # mark -> "pod verb resource/subresource name" of each write by the chart's ServiceAccount
  audit_since "$1" "select(.user.username == \"$SAID\" and .stage == \"ResponseComplete\" and (.verb | test(\"create|update|patch|delete\")) and .objectRef.resource == \"pods\")
    | \"\(.user.extra[\"authentication.kubernetes.io/pod-name\"][0] // \"?\") \(.verb) \(.objectRef.resource)/\(.objectRef.subresource // \"\") \(.objectRef.name) \(.requestReceivedTimestamp)\"" | tr -d '"'
}
resizes_since() { writes_by "$1" | awk '$3 == "pods/resize"' | wc -l; }
d_mark=$(audit_mark)
# The wave: four neighbours landing 2 s apart, each changing every managed pod's target; the
# leader is killed at its first resize of the wave, so the landings after it are the next
# leader's to answer.
(for i in 1 2 3 4; do
  burner_pod "$NS" "w$i" "$((100 * i))m" "" 1
  sleep 2
done) &
WAVE_PID=$!
first_resize() { [ "$(resizes_since "$d_mark")" -ge 1 ]; }
wait_until 60 first_resize
# The leader's process, through its Pod's cgroup: the container's cgroup.procs under the node's
# root (kubepods/.../pod<uid>/<container id>).
luid=$(k -n "$CNS" get pod "$LEADER" -o jsonpath='{.metadata.uid}')
lcid=$(k -n "$CNS" get pod "$LEADER" -o jsonpath='{.status.containerStatuses[0].containerID}')
lcid=${lcid#containerd://}
ldir=$(find "$REAL_CG_CPU/kubepods" -maxdepth 3 -type d -name "pod$luid" 2>/dev/null | head -1)
lpids=$(cat "$ldir/$lcid/cgroup.procs" 2>/dev/null | tr '\n' ' ')
before=$(resizes_since "$d_mark")
kill_mark=$(audit_mark)
t_kill=$(now_ms)
for pid in $lpids; do kill -KILL "$pid" 2>/dev/null; done
# After the kill, in the audit record's timestamp format: the killed process sends nothing from
# here on, but what it sent before is still received for a moment (socket buffers, TLS, the
# server's queue): its writes received within IN_FLIGHT_MS of this are in flight. Its restarted
# container cannot write that soon (the kubelet notices the exit at its next relist, ~1 s, then
# starts the container, which lists before it does anything).
IN_FLIGHT_MS=1000
kill_at=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
fe=$(($(now_ms) + IN_FLIGHT_MS))
flight_end=$(date -u -d "@$((fe / 1000)).$(printf %03d $((fe % 1000)))" +%Y-%m-%dT%H:%M:%S.%6NZ)
WHY="cgroup $ldir/$lcid, pids '$lpids'"
check "(d) the leader ($LEADER) is killed by SIGKILL of its container's process ($lpids) after $before resize(s) of the wave" \
  eval '[ -n "$lpids" ] && [ "$before" -ge 1 ]'
wait "$WAVE_PID"
took_over() { case $(holder) in "${FOLLOWER}_"*) return 0 ;; esac; return 1; }
wait_until 90 took_over
t_took=$(now_ms)
WHY="holder '$(holder)'"
check "(d) the other replica ($FOLLOWER) takes the Lease ($(((t_took - t_kill) / 100 * 100)) ms after the kill)" took_over
# Converged: every managed pod on the node at the planner's target (the planner reads the same
# cluster), and every pod of the wave running.
plan() { "$HEADROOM" node "$REAL_NODE" -n "$NS" -o json 2>/dev/null; }
converged() {
  local j
  for p in a w1 w2 w3 w4; do running "$NS" "$p" || return 1; done
  j=$(plan) || return 1
  [ "$(jq '[.nodes[]?.pods[]? | select(.managed == true)] | length' <<<"$j")" = 5 ] &&
    [ "$(jq '[.nodes[]?.pods[]? | select(.managed == true and .limitMilli != .targetMilli)] | length' <<<"$j")" = 0 ]
}
wait_until 120 converged
t_conv=$(now_ms)
WHY="$(plan | jq -c '[.nodes[]?.pods[]? | {name, requestMilli, limitMilli, targetMilli, write, reason}]')"
check "(d) the node converges: every managed pod's limit is the planner's target ($(((t_conv - t_kill) / 100 * 100)) ms after the kill)" converged
sleep 2
kill "$WATCH_PID" 2>/dev/null
wait "$WATCH_PID" 2>/dev/null
WATCH_PID=""
below=$(jq -c 'def milli: if endswith("m") then .[:-1] | tonumber else tonumber * 1000 | round end;
  select(.object.kind == "Pod") | .object as $p | $p.spec.containers[] | .resources
  | select(.limits.cpu != null and (.limits.cpu | milli) < (.requests.cpu | milli))
  | {pod: $p.metadata.name, rv: $p.metadata.resourceVersion, request: .requests.cpu, limit: .limits.cpu}' "$WORK/watch.json")
nvers=$(jq -c 'select(.object.kind == "Pod")' "$WORK/watch.json" | wc -l)
WHY="below: $below"
check "(d) no version of a managed pod during the wave had a limit below its request ($nvers versions watched)" \
  eval '[ -z "$below" ] && [ "$nvers" -gt 5 ]'
restarts_wl=$(k -n "$NS" get pods -o json | jq '[.items[].status.containerStatuses[]?.restartCount] | add // 0')
ids_before=$(jq -r 'select(.object.kind == "Pod" and .object.metadata.name == "a") | .object.status.containerStatuses[0].containerID // empty' "$WORK/watch.json" | sort -u | tr '\n' ' ')
WHY="restarts $restarts_wl; burner a's container IDs seen: $ids_before"
check "(d) no workload container restarted: restartCount 0, the first burner's container the same all along" \
  eval '[ "$restarts_wl" = 0 ] && [ "$(wc -w <<<"$ids_before")" = 1 ] && [ "${ids_before% }" = "containerd://$(container_id "$NS" a)" ]'
# Received after the kill. The killed Pod's writes received by flight_end were sent before it
# died (in flight); any other write not the new leader's fails the check.
after=$(writes_by "$kill_mark" | awk -v t="$kill_at" '$5 > t')
inflight=$(writes_by "$kill_mark" | awk -v l="$LEADER" -v t="$flight_end" '$1 == l && $5 <= t' | grep -c . || true)
others=$(awk -v f="$FOLLOWER" -v l="$LEADER" -v t="$flight_end" '$1 != f && !($1 == l && $5 <= t)' <<<"$after" | grep -c . || true)
mine=$(awk -v f="$FOLLOWER" '$1 == f && $3 == "pods/resize"' <<<"$after" | grep -c . || true)
WHY="writes after the kill: $(head -c 600 <<<"$after")"
check "(d) by the audit record, the writes received after the kill are the new leader's ($mine resizes) and none is another Pod's ($inflight in flight at the kill)" \
  eval '[ "$mine" -ge 1 ] && [ "$others" = 0 ]'
lrestarts=$(k -n "$CNS" get pod "$LEADER" -o jsonpath='{.status.containerStatuses[0].restartCount}')
echo "      (d) killed at 0 ms; Lease taken at $((t_took - t_kill)) ms; converged at $((t_conv - t_kill)) ms; $before resizes before the kill, $mine after; the killed Pod's container restarted $lrestarts time(s)"

finish
