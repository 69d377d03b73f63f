#!/usr/bin/env bash
# e2e_kubectl_plugin.sh — `kubectl headroom` and `kubectl headroom <TAB>` through
# the real kubectl of the test cluster (docs/cli.md): `cmake --install` into a
# scratch prefix, that bin/ first on PATH, then kubectl finds the plugin
# (kubectl-headroom) and, for completion, runs kubectl_complete-headroom:
# `kubectl __complete headroom …` is exactly what kubectl's own bash/zsh/fish
# completion asks it. Talks to the cluster for `kubectl headroom plan` and for the
# namespaces `-n <TAB>` offers.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
PREFIX=$(mktemp -d /tmp/headroom-e2e-prefix.XXXXXX)
trap 'rm -rf "$PREFIX"' EXIT
require_cluster
BUILD=$(dirname "$HEADROOM")

cmake --install "$BUILD" --prefix "$PREFIX" >"$PREFIX.log" 2>&1
rc=$?
WHY="exit $rc: $(tail -3 "$PREFIX.log")"
rm -f "$PREFIX.log"
check "cmake --install into a scratch prefix" [ "$rc" -eq 0 ]
export PATH=$PREFIX/bin:$PATH

out=$(k headroom version 2>&1)
WHY="$out"
check "kubectl headroom version runs the installed plugin" grep -q '^headroom ' <<<"$out"
out=$(k headroom plan 2>&1)
rc=$?
WHY="exit $rc: $(head -3 <<<"$out")"
check "kubectl headroom plan reads the cluster" [ "$rc" -eq 0 ]

# tab WANT WORD...: kubectl's candidates, sorted (its directive line left out).
tab() {
  local want=$1; shift
  local got
  got=$(k __complete headroom "$@" 2>/dev/null | grep -v '^:' | sort | tr '\n' ' ')
  WHY="kubectl __complete headroom $*: [$got], wanted [$want]"
  check "kubectl headroom $* <TAB>" [ "$got" = "$want" ]
}
tab "plan preflight probe " p
tab "bars json name table wide yaml " plan -o ''
tab "--output=json " plan --output=j
tab "json logfmt " run --log-format ''
tab "--selector --server --set-request " plan --se
out=$(k __complete headroom plan -n '' 2>/dev/null)
ns_offered() { [ "$(tail -1 <<<"$out")" = ":4" ] && grep -qx default <<<"$out"; }
WHY="[$(tr '\n' ' ' <<<"$out")]"
check "kubectl headroom plan -n <TAB>: the namespaces (headroom __complete), no file names (:4)" ns_offered
finish
