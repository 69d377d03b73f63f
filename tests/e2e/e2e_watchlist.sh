#!/usr/bin/env bash
# e2e_watchlist.sh — streaming lists (design §5), read from the API server's own audit
# record, never from the controller's counters.
#
#  1. The controller's initial sync is, for every kind it caches (pods, nodes, namespaces,
#     LimitRanges, ResourceQuotas, the HeadroomConfig), one watch with sendInitialEvents=true,
#     resourceVersionMatch=NotOlderThan and no resourceVersion; there is no LIST of anything, and
#     the pod gets its limit (the controller was ready and planned on what the streams showed).
#  2. --streaming-lists=false: every kind is LISTed by pages, no watch asks for initial events.
#  3. Against a second kube-apiserver on the same etcd started with --feature-gates=WatchList=false
#     (cluster.sh second-apiserver): each kind's streaming list is refused once (422, in that
#     server's audit record), then LISTed by pages and never asked to stream again, and the
#     controller converges (a new pod gets its limit).
#
# As the least-privilege user of the chart's RBAC. Prints PASS/FAIL per check and "N passed,
# N failed"; exits non-zero on a failure. Needs `tests/cluster/cluster.sh up`. The second API server
# listens on HEADROOM_E2E_WATCHLIST_API_PORT, the controller's metrics on
# HEADROOM_E2E_WATCHLIST_PORT (each a free port by default).
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_WATCHLIST_PORT:-$(free_port)}
API2_PORT=${HEADROOM_E2E_WATCHLIST_API_PORT:-$(free_port)}
WORK=$(mktemp -d /tmp/headroom-e2e.XXXXXX)
ID=headroom-e2e-wl NS=e2e-wl-$S NODE=e2e-wl-n-$S
KINDS="pods nodes namespaces limitranges resourcequotas headroomconfigs"
API2_UP=""

cleanup() {
  stop_controller KILL
  [ -z "$API2_UP" ] || "$CLUSTER" second-apiserver down >/dev/null 2>&1
  delete_objects
  k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  remove_identity "$ID"
  if [ "$failed" -gt 0 ]; then echo "--- controller log (tail)"; tail -n 40 "$WORK/controller.log"; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# Our user's requests after a mark, in one audit log, as {verb, resource, uri, code}: one line per
# request (a watch's ResponseStarted, refused ones too; the ResponseComplete of anything else).
requests() { # audit-file mark
  tail -n +"$(($2 + 1))" "$1" | jq -c --arg u "$ID" 'select(.user.username == $u and
      ((.verb == "watch" and .stage == "ResponseStarted") or (.verb != "watch" and .stage == "ResponseComplete")))
    | {verb, resource: .objectRef.resource, uri: .requestURI, code: .responseStatus.code}'
}
count() { # file jq-condition -> how many lines match
  jq -c "select($2)" "$1" | wc -l
}
STREAMED='.verb == "watch" and (.uri | test("[?&]sendInitialEvents=true(&|$)")) and
  (.uri | test("[?&]resourceVersionMatch=NotOlderThan(&|$)")) and (.uri | test("[?&]resourceVersion=") | not)'
per_kind() { # file jq-condition -> "kind=N ..." for every cached kind
  local r out=""
  for r in $KINDS; do out+="$r=$(count "$1" "(.resource == \"$r\") and ($2)") "; done
  echo "${out% }"
}
every_kind() { # "kind=N ..." want -> every kind has N == want
  [ "$1" = "$(for r in $KINDS; do printf '%s=%s ' "$r" "$2"; done | sed 's/ $//')" ]
}
every_kind_some() { # "kind=N ..." -> every kind has N >= 1 (a request refused with a passing
  ! grep -qE '(^| )[a-z]+=0( |$)' <<<"$1" #   429, e.g. a CRD's storage starting, is retried)
}
# Requests with sendInitialEvents made after that kind's first 422 (a refusal is remembered).
asked_after_refusal() { # file
  jq -s '[group_by(.resource)[] | . as $r
    | ($r | map(.code == 422 and (.uri | test("sendInitialEvents"))) | index(true)) as $i
    | if $i == null then 0 else ($r[$i + 1:] | map(select(.uri | test("sendInitialEvents"))) | length) end]
    | add // 0' "$1"
}
PAGED='.verb == "list" and (.uri | test("[?&]limit=500(&|$)")) and .code == 200'
has_limit() { [ -n "$(cpu_limit "$NS" "$1")" ]; }

require_cluster
install_identity "$ID"
mkns "$NS" managed
mknode "$NODE" 4
k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
printf 'apiVersion: kube-headroom.dev/v1alpha1\nkind: HeadroomConfig\nmetadata: {name: cluster}\nspec: {dryRun: false}\n' |
  k create -f - >/dev/null
mkpod "$NS" p1 "$NODE" 500m
wait_until 60 running "$NS" p1

# 1. streaming lists
m=$(audit_mark)
t0=$(now_ms)
start_controller || { fail "controller start" "not ready within 60 s"; finish; exit; }
ready_ms=$(($(now_ms) - t0))
wait_until 30 has_limit p1
requests "$AUDIT" "$m" >"$WORK/r1"
s1=$(per_kind "$WORK/r1" "$STREAMED and .code == 200") l1=$(count "$WORK/r1" '.verb == "list"')
WHY="streaming lists by kind: $s1"
check "initial sync: a watch with sendInitialEvents=true&resourceVersionMatch=NotOlderThan per kind" \
  every_kind_some "$s1"
WHY="$l1 LIST requests: $(jq -c 'select(.verb == "list") | .uri' "$WORK/r1" | head -3 | tr '\n' ' ')"
check "initial sync: no LIST (of pods or of anything)" [ "$l1" -eq 0 ]
WHY="limit '$(cpu_limit "$NS" p1)'"
check "ready in ${ready_ms} ms and the pod got its limit" has_limit p1
stop_controller TERM

# 2. --streaming-lists=false
m=$(audit_mark)
start_controller --streaming-lists=false || { fail "controller start (pages)" "not ready within 60 s"; finish; exit; }
requests "$AUDIT" "$m" >"$WORK/r2"
p2=$(per_kind "$WORK/r2" "$PAGED")
s2=$(count "$WORK/r2" '.uri | test("sendInitialEvents")')
WHY="LISTs by kind: $p2; $s2 requests with sendInitialEvents"
check "--streaming-lists=false: every kind LISTed by pages, nothing streamed" \
  eval 'every_kind_some "$p2" && [ "$s2" -eq 0 ]'
stop_controller TERM

# 3. an API server with the WatchList feature gate off
t_api=$(now_ms)
API2_UP=1 # cleanup stops it whatever happens next
if ! "$CLUSTER" second-apiserver up "$API2_PORT" --feature-gates=WatchList=false >"$WORK/api2.log" 2>&1; then
  fail "second API server" "$(tail -n 5 "$WORK/api2.log")"; finish; exit
fi
api_ms=$(($(now_ms) - t_api))
AUDIT2=$STATE/second-apiserver/audit.log
sed "s#https://127.0.0.1:[0-9]*#https://127.0.0.1:$API2_PORT#" "$USER_KC" >"$WORK/api2.kubeconfig"
mkpod "$NS" p2 "$NODE" 1000m
wait_until 60 running "$NS" p2
m2=$(audit_mark)
m=$( [ -f "$AUDIT2" ] && wc -l <"$AUDIT2" || echo 0)
USER_KC_1=$USER_KC USER_KC=$WORK/api2.kubeconfig
start_controller || { fail "controller start (WatchList=false)" "not ready within 60 s"; finish; exit; }
USER_KC=$USER_KC_1
wait_until 30 has_limit p2
sleep 2 # the watches after the lists are opened
requests "$AUDIT2" "$m" >"$WORK/r3"
refused=$(per_kind "$WORK/r3" '.verb == "watch" and (.uri | test("sendInitialEvents=true")) and .code == 422')
asked=$(asked_after_refusal "$WORK/r3")
paged=$(per_kind "$WORK/r3" "$PAGED")
WHY="refused (422) by kind: $refused; $asked requests with sendInitialEvents after a refusal"
check "WatchList=false: one streaming list refused with 422 per kind, never asked again" \
  eval 'every_kind "$refused" 1 && [ "$asked" -eq 0 ]'
WHY="LISTs by kind: $paged"
check "WatchList=false: every kind then LISTed by pages" every_kind_some "$paged"
WHY="$(count "$WORK/r3" '.verb == "watch" and .code != 422') watches after the lists"
check "WatchList=false: the watches follow from the lists' resourceVersion" \
  [ "$(count "$WORK/r3" '.verb == "watch" and (.uri | test("[?&]resourceVersion=[0-9]+"))')" -ge 6 ]
WHY="limit '$(cpu_limit "$NS" p2)'; the first API server saw $(requests "$AUDIT" "$m2" | wc -l) of our requests"
check "WatchList=false: the controller converges (the new pod got its limit)" has_limit p2
WHY="$(grep -c 'refused a streaming list' "$WORK/controller.log") log lines"
check "the controller says it falls back, once per kind" \
  [ "$(grep -c 'refused a streaming list (422' "$WORK/controller.log")" -eq 6 ]
echo "      (controller ready in ${ready_ms} ms with streaming lists; the second API server took ${api_ms} ms)"
finish
