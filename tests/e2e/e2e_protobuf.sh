#!/usr/bin/env bash
# e2e_protobuf.sh — the controller talks protobuf to the real API server for the built-in kinds it
# lists and watches, and JSON for the HeadroomConfig (design §5 "Wire format"), as the
# encoding of every answer shows in the test proxy's log (tests/tools/faultproxy.c logs each
# response's status and Content-Type per request) — never the controller's own counters.
#
#  1. Default flags, through the proxy, as the chart's least-privilege user: the initial sync of
#     pods, nodes, namespaces, LimitRanges and ResourceQuotas is a streaming list answered
#     application/vnd.kubernetes.protobuf;stream=watch; no answer to a list or watch of those
#     kinds is JSON; the HeadroomConfig's watch is answered application/json. The pod made before
#     the start gets its limit, and so does one made after the sync (its ADDED came over the
#     protobuf pods watch, the only pods watch the proxy saw).
#     The controller's writes (the resize, the status annotation, the event) and its live Node
#     read ask for protobuf too: every answer to them is $PB (a whole Pod, Event or Node each,
#     of which the controller reads the resourceVersion or the Node's capacity and conditions).
#  2. --protobuf=false: every answer to those lists and watches, writes and Node reads is
#     application/json, and a new pod gets its limit.
#  3. A 406 Not Acceptable to the pods list (the proxy answers it: `respond 406 once`; the API
#     server itself always accepts our Accept, which offers JSON too): the controller asks for
#     pods in JSON from then on — never protobuf again for pods — while the other kinds stay
#     protobuf, and a new pod gets its limit.
#
# The frame bounds are unit-tested (tests/unit/test_watch_pb.c), the 406 there too; the cache
# being the same fed either way is e2e_protobuf_equal.sh's (tests/tools/cachedump.c). Prints
# PASS/FAIL per check and "N passed, N failed". Needs `tests/cluster/cluster.sh up`. About 40 s.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_PB_METRICS_PORT:-$(free_port)}
PROXY_PORT=${HEADROOM_E2E_PB_PROXY_PORT:-$(free_port "$MPORT")}
WORK=$(mktemp -d /tmp/headroom-e2e.XXXXXX)
ID=headroom-e2e-pb NS=e2e-pbw-$S NODE=e2e-pbw-n-$S
BUILTIN="pods nodes namespaces limitranges resourcequotas"
PB='application/vnd.kubernetes.protobuf'

cleanup() {
  [ "$failed" -eq 0 ] || { echo "--- proxy responses (tail)"; grep ': response ' "$WORK/proxy.log" | tail -n 30; }
  cleanup_common 30
}
trap cleanup EXIT
require_cluster

# The proxy's response lines after line MARK: "METHOD TARGET STATUS CONTENT-TYPE", one a line
# (CONTENT-TYPE "by-the-proxy" for an answer a respond rule gave).
answers() { # mark
  tail -n +"$(($1 + 1))" "$WORK/proxy.log" |
    sed -nE -e 's/.* req [0-9]+ ([A-Z]+) ([^ ]+): response ([0-9]+) content-type (.*)$/\1 \2 \3 \4/p' \
      -e 's/.* req [0-9]+ ([A-Z]+) ([^ ]+): answered ([0-9]+) .* itself .*/\1 \2 \3 by-the-proxy/p'
}
# The answers to lists and watches of one kind (the collection path, any namespace).
of_kind() { # mark kind
  answers "$1" | awk -v k="$2" '$1 == "GET" && $2 ~ ("^/api(s/[^/]+)?/v1[^/]*/" k "[?]") { print }'
}
initial_sync_pb() { # mark kind: its streaming list was answered in protobuf
  of_kind "$1" "$2" | matches "sendInitialEvents=true.* 200 $PB;stream=watch"
}
no_json() { # mark kind: no answer to a list or watch of it was JSON
  ! of_kind "$1" "$2" | matches ' application/json'
}
all_json() { # mark kind: answered, and every answer JSON
  local a
  a=$(of_kind "$1" "$2")
  [ -n "$a" ] && ! grep -qv ' application/json' <<<"$a"
}
# The answers to the controller's writes of one kind (resize, annotation, event) and to its live
# Node read ("node"): "METHOD TARGET STATUS CONTENT-TYPE" lines.
writes_of() { # mark kind
  answers "$1" | awk -v k="$2" '
    k == "resize" && $1 == "PATCH" && $2 ~ "^/api/v1/namespaces/[^/]+/pods/[^/?]+/resize[?]" { print }
    k == "annotation" && $1 == "PATCH" && $2 ~ "^/api/v1/namespaces/[^/]+/pods/[^/?]+$" { print }
    k == "event" && $1 == "POST" && $2 ~ "^/apis/events.k8s.io/v1/namespaces/[^/]+/events$" { print }
    k == "node" && $1 == "GET" && $2 ~ "^/api/v1/nodes/[^/?]+$" { print }'
}
writes_answered() { # mark kind content-type: answered, every answer 2xx in that content type
  local a
  a=$(writes_of "$1" "$2")
  [ -n "$a" ] && ! awk -v ct="$3" '!($3 ~ /^2/ && $4 == ct)' <<<"$a" | matches .
}
config_json() { # mark: the HeadroomConfig's watch was answered in JSON
  answers "$1" | matches "^GET /apis/kube-headroom.dev/v1alpha1/headroomconfigs?.*watch=1.* 200 application/json"
}

# The objects exist before the controller starts: its initial sync lists them.
manage_stage e2e-pb || { fail "setup" "$START_WHY"; finish; exit; }
mknode "$NODE" 8
k -n "$NS" create -f - >/dev/null <<YAML
apiVersion: v1
kind: LimitRange
metadata: {name: lr}
spec: {limits: [{type: Container, max: {cpu: "6"}}]}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: rq}
spec: {hard: {requests.cpu: "100"}}
YAML
mkpod "$NS" a "$NODE" 200m
proxy_start "$ID" || { fail "proxy start" "see above"; finish; exit; }

# ---- 1. protobuf by default
mark=$(wc -l <"$WORK/proxy.log")
start_controller --proxy || { fail "controller start" "$START_WHY"; finish; exit; }
for kind in $BUILTIN; do
  WHY="$(of_kind "$mark" "$kind" | head -3 | tr '\n' ';')"
  check "protobuf: the initial sync of $kind is a streaming list answered $PB;stream=watch" \
    initial_sync_pb "$mark" "$kind"
done
WHY="$(answers "$mark" | grep headroomconfigs | head -2 | tr '\n' ';')"
check "protobuf: the HeadroomConfig (a CRD) is watched in JSON" config_json "$mark"
check "protobuf: a pod made before the start gets its limit (200m on 8 cores: 2)" \
  wait_until 30 limit_is "$NS" a 2
mkpod "$NS" b "$NODE" 200m
check "protobuf: a pod made after the sync gets its limit over the protobuf pods watch" \
  wait_until 30 limit_is "$NS" b 2
mkpod "$NS" b-up "$NODE" 200m 300m # an increase: the live Node read comes first
check "protobuf: a pod's limit is raised (300m to 2) after a live Node read" wait_until 30 limit_is "$NS" b-up 2
k -n "$NS" delete pod b-up --grace-period=0 --force --timeout=30s >/dev/null 2>&1 # the node's share as before
for kind in $BUILTIN; do
  WHY="$(of_kind "$mark" "$kind" | grep ' application/json' | head -2 | tr '\n' ';')"
  check "protobuf: no answer to a list or watch of $kind is JSON" no_json "$mark" "$kind"
done
for w in resize annotation event node; do
  WHY="$(writes_of "$mark" "$w" | head -3 | tr '\n' ';')"
  check "protobuf: every answer to the controller's $w (a whole object) is $PB" \
    writes_answered "$mark" "$w" "$PB"
done
WHY="$(grep -c 'not decoded\|malformed\|406' "$WORK/controller.log") lines"
check "protobuf: the controller logged no decode failure and no 406" \
  bash -c "! grep -qE 'not decoded|is not an event|will not send protobuf' '$WORK/controller.log'"
stop_controller TERM

# ---- 2. --protobuf=false
mark=$(wc -l <"$WORK/proxy.log")
start_controller --proxy --protobuf=false || { fail "controller start (--protobuf=false)" "$START_WHY"; finish; exit; }
mkpod "$NS" c "$NODE" 200m
check "--protobuf=false: a new pod gets its limit" wait_until 30 limit_is "$NS" c 2
mkpod "$NS" c-up "$NODE" 200m 300m
check "--protobuf=false: a pod's limit is raised (300m to 2)" wait_until 30 limit_is "$NS" c-up 2
k -n "$NS" delete pod c-up --grace-period=0 --force --timeout=30s >/dev/null 2>&1
for kind in $BUILTIN; do
  WHY="$(of_kind "$mark" "$kind" | head -3 | tr '\n' ';')"
  check "--protobuf=false: every answer to a list or watch of $kind is application/json" \
    all_json "$mark" "$kind"
done
for w in resize annotation event node; do
  WHY="$(writes_of "$mark" "$w" | head -3 | tr '\n' ';')"
  check "--protobuf=false: every answer to the controller's $w is application/json" \
    writes_answered "$mark" "$w" application/json
done
stop_controller TERM

# ---- 3. a 406 to the pods list: JSON for pods from then on
proxy_rules "GET /api/v1/pods?* respond 406 once" || { fail "proxy rules (406)" "see above"; finish; exit; }
mark=$(wc -l <"$WORK/proxy.log")
start_controller --proxy || { fail "controller start (406)" "$START_WHY"; finish; exit; }
mkpod "$NS" d "$NODE" 200m
check "406: a new pod gets its limit" wait_until 30 limit_is "$NS" d 2
refused_once() { [ "$(of_kind "$1" pods | awk '$3 == 406' | wc -l)" -eq 1 ]; }
after_406_json() { # mark: every pods answer after the 406 is JSON, and there is one
  local a
  a=$(of_kind "$1" pods | awk 'f {print} $3 == 406 {f = 1}')
  [ -n "$a" ] && ! grep -qv ' application/json' <<<"$a"
}
WHY="$(of_kind "$mark" pods | head -4 | tr '\n' ';')"
check "406: the proxy answered the first pods request 406, once" refused_once "$mark"
check "406: every pods list and watch after it is answered application/json" after_406_json "$mark"
WHY="$(grep -c 'will not send protobuf' "$WORK/controller.log") lines"
check "406: the controller said it asks for pods in JSON from now on" \
  grep -q 'will not send protobuf (406' "$WORK/controller.log"
WHY="$(of_kind "$mark" nodes | head -2 | tr '\n' ';')"
check "406: nodes are still listed in protobuf (the fallback is per resource)" initial_sync_pb "$mark" nodes
finish
