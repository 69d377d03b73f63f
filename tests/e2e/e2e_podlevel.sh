#!/usr/bin/env bash
# e2e_podlevel.sh — pods with pod-level resources (design §2.13), per API server version.
#
# Two simulated kwok nodes of 4 CPUs: `decl` declares InPlacePodLevelResourcesVerticalScaling in
# status.declaredFeatures (as a kubelet that resizes pod-level resources does; the API server
# refuses such a resize on a node that does not), `bare` declares nothing. On each, one pod with
# pod-level resources (spec.resources: requests cpu 500m, memory 64Mi; limits cpu 1) and one
# container without any. The controller runs as the chart's least-privilege user.
#  - On an API server that resizes pod-level resources (1.36 and newer, KEP-5419 beta on by
#    default): the pod on `decl` gets its pod-level limit written through pods/resize (audit: 200),
#    to its share of the node (request 500m + slack 3500m = 4); its container gets no limit;
#    `explain` shows the pod level and the status annotation its podLimit. The pod on `bare` is
#    excluded (pod-level-resources) and nothing is written to it.
#  - On one that does not (1.35: it refuses any pod-level resize): both pods are excluded with
#    pod-level-resources, `explain` says what is missing, and no resize is sent.
# Prints PASS/FAIL per check and "N passed, N failed"; exits non-zero on a failure. Needs
# `tests/cluster/cluster.sh up`.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_PODLEVEL_PORT:-$(free_port)}
WORK=$(mktemp -d /tmp/headroom-e2e.XXXXXX)
ID=headroom-e2e-podlevel
NS=e2e-podlevel-$S DECL=e2e-pl-decl-$S BARE=e2e-pl-bare-$S

cleanup() { cleanup_common; }
trap cleanup EXIT

pod_limit() { k -n "$NS" get pod "$1" -o jsonpath='{.spec.resources.limits.cpu}'; }
ctr_limit() { k -n "$NS" get pod "$1" -o jsonpath='{.spec.containers[0].resources.limits.cpu}'; }
resizes() { # mark pod -> our resizes of the pod after the mark
  audit_writes "$1" "$ID" ".objectRef.resource == \"pods\" and .objectRef.name == \"$2\" and .objectRef.subresource == \"resize\""
}
mkplpod() { # name node
  k apply -f - >/dev/null <<POD
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS}
spec:
  nodeName: $2
  resources:
    requests: {cpu: 500m, memory: 64Mi}
    limits: {cpu: "1"}
  containers:
  - name: app
    image: registry.invalid/app:1
POD
}

require_cluster
[ -z "${KEEP_WORK:-}" ] || echo "work: $WORK"
MINOR=$(k get --raw /version | jq -r '.minor' | tr -d '+')
mknode "$DECL" 4
mknode "$BARE" 4
k patch node "$DECL" --subresource status --type merge \
  -p '{"status":{"declaredFeatures":["InPlacePodLevelResourcesVerticalScaling"]}}' >/dev/null
mark=$(audit_mark)
start_controller --manage kube-headroom.dev/e2e-podlevel --spec "debouncePeriod: 1s" ||
  { fail "controller start" "$START_WHY"; finish; exit; }
mkplpod pl-decl "$DECL"
mkplpod pl-bare "$BARE"
wait_until 30 running "$NS" pl-decl && wait_until 30 running "$NS" pl-bare

if [ "$MINOR" -ge 36 ]; then
  wait_until 20 eval '[ "$(pod_limit pl-decl)" = 4 ]'
  WHY="1.$MINOR: pod-level limit $(pod_limit pl-decl), container limit '$(ctr_limit pl-decl)'; resizes: $(resizes "$mark" pl-decl | tr '\n' ';')"
  check "1.$MINOR: the pod-level limit is written (1 -> 4, pods/resize 200); its container gets none" \
    eval '[ "$(pod_limit pl-decl)" = 4 ] && [ -z "$(ctr_limit pl-decl)" ] &&
          resizes "$mark" pl-decl | matches " 200$" && ! resizes "$mark" pl-decl | matches -v " 200$"'
  out=$("$HEADROOM" explain pl-decl -n "$NS" --kubeconfig "$USER_KC" 2>&1)
  ann=$(k -n "$NS" get pod pl-decl -o jsonpath='{.metadata.annotations.kube-headroom\.dev/status}')
  WHY="explain: $(echo "$out" | grep -E "pod level|^pod " | tr '\n' ';'); annotation: $ann"
  check "1.$MINOR: explain shows the pod level, the status annotation its podLimit" \
    eval 'echo "$out" | matches "on node $DECL: managed" && echo "$out" | matches "pod level (spec.resources)" &&
          [ "$(echo "$ann" | jq -r .podLimit 2>/dev/null)" = 4000m ]'
else
  sleep 3 # the controller has planned both nodes (debounce 1 s) by now
  WHY="1.$MINOR: pod-level limit $(pod_limit pl-decl); resizes: $(resizes "$mark" pl-decl | tr '\n' ';')"
  check "1.$MINOR: no pod-level resize is sent, even on a node that declares the feature" \
    eval '[ "$(pod_limit pl-decl)" = 1 ] && [ -z "$(resizes "$mark" pl-decl)" ]'
  out=$("$HEADROOM" explain pl-decl -n "$NS" --kubeconfig "$USER_KC" 2>&1)
  WHY="explain: $(echo "$out" | head -1); $(echo "$out" | grep "not managed")"
  check "1.$MINOR: excluded with pod-level-resources, and explain names the missing feature" \
    eval 'echo "$out" | matches "on node $DECL: pod-level-resources" &&
          echo "$out" | matches "needs an API server of 1.36 or newer"'
fi
out=$("$HEADROOM" explain pl-bare -n "$NS" --kubeconfig "$USER_KC" 2>&1)
WHY="explain: $(echo "$out" | head -1); limit $(pod_limit pl-bare); resizes: $(resizes "$mark" pl-bare | tr '\n' ';')"
check "1.$MINOR: on a node that does not declare it: pod-level-resources, nothing written" \
  eval 'echo "$out" | matches "on node $BARE: pod-level-resources" && [ "$(pod_limit pl-bare)" = 1 ] &&
        [ -z "$(resizes "$mark" pl-bare)" ]'
finish
