#!/usr/bin/env bash
# e2e_cli_identity.sh — kubectl's connection and identity flags on the real API server (flags.h,
# HR_CONN_FLAGS; kube/config/kubeconfig.h, hr_koverrides), each proven from the API server's own
# audit record, not from our output:
#
#   1. `headroom plan --as=U` (U bound to nothing) is refused: exit 1, the 403 names U; with
#      `--as-group=system:masters` too it reads; the audit record shows U as impersonatedUser on
#      those requests, with the group on the second.
#   2. A write refused for the impersonated user: `headroom run --as=R` (R bound to the chart's
#      ClusterRole minus pods/resize), dryRun false, one managed pod alone on a kwok node: the
#      audit record shows R's resize refused (403) and the pod's limit stays; the same with
#      `--as=W` (W bound to the whole ClusterRole): the resize is written.
#   3. No kubeconfig at all (HOME and KUBECONFIG pointing nowhere): --server, --token and
#      --certificate-authority read the cluster as the token's ServiceAccount;
#      --insecure-skip-tls-verify works without the CA; without either the certificate check
#      fails; --cluster and --user pick entries other than the context's; the kubeconfig's own
#      as: and as-groups: impersonate (audit).
#
# Prints PASS/FAIL per check and "N passed, N failed".
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_IDENTITY_METRICS_PORT:-$(free_port)}
WORK=$(mktemp -d /tmp/headroom-identity.XXXXXX)
ID=headroom-identity
NS=e2e-id-$S NODE=e2e-id-n-$S
TENANT=tenant-x-$S READER=reader-$S WRITER=$ID
cleanup() {
  k delete clusterrolebinding "e2e-id-r-$S" "e2e-id-sa-$S" --ignore-not-found >/dev/null 2>&1
  k delete clusterrole "e2e-id-r-$S" --ignore-not-found >/dev/null 2>&1
  cleanup_common 30
}
trap cleanup EXIT
require_cluster
t0=$(date +%s)

SERVER=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}')
CA=$WORK/ca.crt
k config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d >"$CA"
# the events after mark M for impersonated user $1 (and an extra jq condition); any_as: one at least
as_user() { audit_since "$M" "select(.impersonatedUser.username == \"$1\" and (${2:-true}))"; }
any_as() { as_user "$@" | matches .; }
MASTERS='(.impersonatedUser.groups // [] | index("system:masters"))'

# ------------------------------------------------------------ 1. --as, --as-group
M=$(audit_mark)
"$HEADROOM" plan --as="$TENANT" >"$WORK/plan1.out" 2>"$WORK/plan1.err"
rc=$?
WHY="exit $rc: $(head -c 300 "$WORK/plan1.err")"
check "plan --as=$TENANT (bound to nothing) exits 1" test "$rc" -eq 1
check "... with the API server's 403 naming the impersonated user" \
  grep -q "403 Forbidden.*User \"$TENANT\" cannot list" "$WORK/plan1.err"
"$HEADROOM" plan --as="$TENANT" --as-group=system:masters >"$WORK/plan2.out" 2>"$WORK/plan2.err"
rc=$?
WHY="exit $rc: $(head -c 300 "$WORK/plan2.err")"
check "plan --as=$TENANT --as-group=system:masters reads the cluster" test "$rc" -eq 0
# the audit record is written once a request completes: each audit check waits up to 10 s
WHY="$(as_user "$TENANT" | head -c 600)"
check "audit: $TENANT impersonated, refused (403) without the group" \
  wait_until 10 any_as "$TENANT" ".responseStatus.code == 403 and ($MASTERS | not)"
check "audit: $TENANT impersonated with system:masters, its lists answered (200)" \
  wait_until 10 any_as "$TENANT" ".responseStatus.code == 200 and $MASTERS and .verb == \"list\""

# ------------------------------------------------------------ 2. a write refused for --as
mknode "$NODE" 8
manage_stage e2e-identity || { fail "setup" "$START_WHY"; finish; exit; }
# R: the chart's ClusterRole without pods/resize; W ($ID): the whole of it (manage_stage binds it).
k get clusterrole kube-headroom -o json |
  jq --arg n "e2e-id-r-$S" '{apiVersion, kind, metadata: {name: $n},
      rules: [.rules[] | .resources |= map(select(. != "pods/resize")) | select(.resources | length > 0)]}' |
  k apply -f - >/dev/null
k create clusterrolebinding "e2e-id-r-$S" --clusterrole="e2e-id-r-$S" --user="$READER" >/dev/null
mkpod "$NS" p "$NODE" 200m 300m
can_resize() { k auth can-i patch pods --subresource=resize -n "$NS" --as="$1" >/dev/null 2>&1; }
rbac_as_set() { ! can_resize "$READER" && can_resize "$WRITER"; }
check "RBAC as set up: $READER may not patch pods/resize, $WRITER may" rbac_as_set
M=$(audit_mark)
run_as() { # user: the controller on the admin's kubeconfig, impersonating user
  "$HEADROOM" run --kubeconfig "$KUBECONFIG" --as "$1" --namespace kube-headroom \
    --metrics-addr "127.0.0.1:$MPORT" "${PLAIN_METRICS[@]}" --webhook-addr "" -v >>"$WORK/controller.log" 2>&1 &
  CTL_PID=$!
  wait_until 60 curl -sf "http://127.0.0.1:$MPORT/readyz"
}
resize_by() { # user code: a resize of p by the impersonated user answered with code
  any_as "$1" ".objectRef.subresource == \"resize\" and .objectRef.name == \"p\" and .responseStatus.code == $2"
}
run_as "$READER" || fail "controller as $READER" "not ready within 60 s"
WHY="no refused resize by $READER in the audit record: $(as_user "$READER" '.verb == "patch"' | head -c 400)"
check "audit: the controller as $READER — its resize of p refused (403)" wait_until 30 resize_by "$READER" 403
WHY="limit $(cpu_limit "$NS" p)"
check "... and p's limit is unchanged (300m)" limit_is "$NS" p 300m
stop_controller
M=$(audit_mark)
run_as "$WRITER" || fail "controller as $WRITER" "not ready within 60 s"
WHY="limit $(cpu_limit "$NS" p); $(as_user "$WRITER" '.objectRef.subresource == "resize"' | head -c 300)"
check "the controller as $WRITER: p resized to 2 (alone on 8 cores, 10 x 200m)" wait_until 30 limit_is "$NS" p 2
check "audit: that resize was $WRITER's, impersonated (200)" wait_until 10 resize_by "$WRITER" 200
stop_controller

# ------------------------------------------------------------ 3. no kubeconfig; --cluster, --user; as:
k create clusterrolebinding "e2e-id-sa-$S" --clusterrole=kube-headroom --serviceaccount="$NS:default" >/dev/null
TOKEN=$(k -n "$NS" create token default --duration=10m)
SA=system:serviceaccount:$NS:default
nokc() { env -u KUBECONFIG HOME="$WORK/nohome" "$HEADROOM" "$@"; }
M=$(audit_mark)
nokc plan --server="$SERVER" --token="$TOKEN" --certificate-authority="$CA" >"$WORK/p3.out" 2>"$WORK/p3.err"
rc=$?
WHY="exit $rc: $(head -c 300 "$WORK/p3.err")"
check "no kubeconfig: plan --server --token --certificate-authority reads the cluster" test "$rc" -eq 0
WHY="$(audit_since "$M" "select(.user.username == \"$SA\") | \"\\(.verb) \\(.objectRef.resource) \\(.responseStatus.code)\"" | tr '\n' ' ' | head -c 300)"
sa_listed() { audit_since "$M" "select(.user.username == \"$SA\" and .verb == \"list\" and .responseStatus.code == 200)" | matches .; }
check "audit: its lists were the token's ServiceAccount's ($SA)" wait_until 10 sa_listed
nokc plan -s "$SERVER" --token="$TOKEN" --insecure-skip-tls-verify >"$WORK/p4.out" 2>"$WORK/p4.err"
rc=$?
WHY="exit $rc: $(head -c 300 "$WORK/p4.err")"
check "no kubeconfig: -s --token --insecure-skip-tls-verify reads it too" test "$rc" -eq 0
nokc plan --server="$SERVER" --token="$TOKEN" >"$WORK/p5.out" 2>"$WORK/p5.err"
rc=$?
WHY="exit $rc: $(head -c 300 "$WORK/p5.err")"
check "no kubeconfig, neither CA nor --insecure-skip-tls-verify: exit 1 on the certificate" \
  grep -qi certificate "$WORK/p5.err"
WHY="exit $rc"
check "... (exit 1)" test "$rc" -eq 1

# A kubeconfig whose context names a dead cluster and a user without rights; the real ones beside.
ADMIN_CRT=$(k config view --minify --raw -o jsonpath='{.users[0].user.client-certificate-data}')
ADMIN_KEY=$(k config view --minify --raw -o jsonpath='{.users[0].user.client-key-data}')
cat >"$WORK/multi.kubeconfig" <<EOF
apiVersion: v1
kind: Config
current-context: dead
contexts:
- {name: dead, context: {cluster: dead, user: nobody}}
- {name: as, context: {cluster: real, user: admin-as}}
clusters:
- {name: dead, cluster: {server: "https://127.0.0.1:1"}}
- {name: real, cluster: {server: "$SERVER", certificate-authority: "$CA"}}
users:
- {name: nobody, user: {token: not-a-token}}
- {name: sa, user: {token: "$TOKEN"}}
- name: admin-as
  user:
    client-certificate-data: $ADMIN_CRT
    client-key-data: $ADMIN_KEY
    as: tenant-y-$S
    as-groups: [system:masters]
EOF
chmod 600 "$WORK/multi.kubeconfig"
nokc plan --kubeconfig "$WORK/multi.kubeconfig" >/dev/null 2>"$WORK/p6.err"
rc=$?
WHY="exit $rc: $(head -c 200 "$WORK/p6.err")"
check "the context's own cluster is dead (the control)" test "$rc" -eq 1
nokc plan --kubeconfig "$WORK/multi.kubeconfig" --cluster real --user sa >/dev/null 2>"$WORK/p7.err"
rc=$?
WHY="exit $rc: $(head -c 300 "$WORK/p7.err")"
check "--cluster real --user sa: entries other than the context's read the cluster" test "$rc" -eq 0
M=$(audit_mark)
nokc plan --kubeconfig "$WORK/multi.kubeconfig" --context as >/dev/null 2>"$WORK/p8.err"
rc=$?
WHY="exit $rc: $(head -c 300 "$WORK/p8.err")"
check "the kubeconfig's as: and as-groups: (context as) read the cluster" test "$rc" -eq 0
WHY="$(as_user "tenant-y-$S" | head -c 300)"
check "audit: the kubeconfig's as: impersonated tenant-y-$S with system:masters" \
  wait_until 10 any_as "tenant-y-$S" "$MASTERS and .responseStatus.code == 200"

echo "figures: $(($(date +%s) - t0)) s"
finish
