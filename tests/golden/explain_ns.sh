#!/bin/sh
# explain_ns.sh HEADROOM — `explain POD` looks in the kubeconfig context's
# namespace (like kubectl), -n and NS/POD win over it. The server is
# 127.0.0.1:1, which refuses: the message names the path that was asked.
set -u
hr=$1
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
fail=0
check() { # WANT-IN-STDERR ARGS...
  want=$1; shift
  "$hr" explain "$@" --kubeconfig "$work/kc" >/dev/null 2>"$work/err"
  rc=$?
  if [ "$rc" -ne 1 ] || ! grep -qF "$want" "$work/err"; then
    echo "explain $*: exit $rc, wanted 1 and \"$want\" in:"; cat "$work/err"; fail=1
  fi
}
check "GET /api/v1/namespaces/payments/pods/ledger-0:" ledger-0
check "GET /api/v1/namespaces/default/pods/ledger-0:" ledger-0 --context plain
check "GET /api/v1/namespaces/ops/pods/ledger-0:" ledger-0 -n ops
check "GET /api/v1/namespaces/ops/pods/ledger-0:" ops/ledger-0
check "GET /api/v1/namespaces/payments/pods/web:" pod/web
exit "$fail"
