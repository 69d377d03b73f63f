#!/usr/bin/env bash
# e2e_completion.sh — completion from the live cluster (docs/cli.md, Completion): two
# namespaces with pods of their own and a simulated node, then `headroom completion bash`
# sourced into bash and driven as bash drives it (COMP_WORDS, COMP_CWORD, the -F function,
# as tests/golden/completion.sh does), `headroom` found on PATH as a user has it:
#   explain -n NS <TAB>  that namespace's pods only (also NS/<TAB>, pod/<TAB>);
#   -n <TAB>             the namespaces (also --namespace=<TAB>, split at '=' by bash);
#   node <TAB>           the nodes;
#   --context <TAB>      the kubeconfig's contexts, --kubeconfig and --context given
#                        earlier on the line honoured;
# kubectl's own completion of `kubectl headroom explain -n NS <TAB>` (kubectl_complete-headroom
# on PATH); a dead API server (a closed port) and a silent one (a listener that never answers)
# complete nothing, nothing on stderr, within the 3 s bound. zsh and fish: run when installed.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
require_cluster
WORK=$(mktemp -d /tmp/headroom-e2e-completion.XXXXXX)
SILENT_PID=
cleanup() {
  delete_objects
  [ -z "$SILENT_PID" ] || kill "$SILENT_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

A=compa-$S B=compb-$S NODE=compnode-$S
mknode "$NODE" 4
mkns_nowait "$A" plain && mkns_nowait "$B" plain
wait_until 90 k -n "$A" get serviceaccount default && wait_until 90 k -n "$B" get serviceaccount default
{ pod_manifest "$A" web-$S "$NODE" 100m; echo ---; pod_manifest "$A" db-$S "$NODE" 100m; echo ---
  pod_manifest "$B" other-$S "$NODE" 100m; } | k apply -f - >/dev/null
made() { k -n "$B" get pod other-$S && k -n "$A" get pod web-$S db-$S && k get node "$NODE"; } >/dev/null 2>&1
check "two namespaces, three pods, a node" made

# headroom on PATH as `headroom` and `kubectl-headroom`, kubectl's completion executable beside.
mkdir -p "$WORK/bin"
ln -s "$HEADROOM" "$WORK/bin/headroom" && ln -s "$HEADROOM" "$WORK/bin/kubectl-headroom"
"$HEADROOM" completion kubectl >"$WORK/bin/kubectl_complete-headroom" && chmod +x "$WORK/bin/kubectl_complete-headroom"
export PATH=$WORK/bin:$PATH
# shellcheck disable=SC1090
source <(headroom completion bash)

# tab WORD...: bash's candidates for the last word, sorted, one line.
tab() {
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _headroom
  printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}
is() { # name WANT WORD...: exactly WANT
  local name=$1 want=$2; shift 2
  local got; got=$(tab "$@")
  WHY="completing '$*': [$got], wanted [$want]"
  check "$name" [ "$got" = "$want" ]
}
has() { # name "WANT..." WORD...: each of WANT among the candidates
  local name=$1 want=$2 w; shift 2
  local got; got=" $(tab "$@") "
  WHY="completing '$*': [$got], wanted [$want] among them"
  for w in $want; do case $got in *" $w "*) ;; *) fail "$name" "$WHY"; WHY=; return ;; esac; done
  pass "$name"; WHY=
}

is "explain -n A <TAB>: A's pods only" "db-$S web-$S" headroom explain -n "$A" ''
is "explain -n B <TAB>: B's pod only" "other-$S" headroom explain -n "$B" ''
is "explain -n A w<TAB>: the prefix" "web-$S" headroom explain -n "$A" w
is "explain --namespace=B <TAB> (split at '=')" "other-$S" headroom explain --namespace = "$B" ''
is "explain A/<TAB>: NAMESPACE/POD" "$A/db-$S $A/web-$S" headroom explain "$A/"
is "explain -n B pod/<TAB>: pod/POD" "pod/other-$S" headroom explain -n "$B" pod/
got=" $(tab headroom explain -n "$A" web-$S '') "
WHY="[$got]"
check "explain -n A POD <TAB>: one pod only, then the flags" \
  [ "${got/db-$S/}" = "$got" -a "${got/ --namespace /}" != "$got" ]
has "plan -n <TAB>: the namespaces" "$A $B default kube-system" headroom plan -n ''
has "explain -n <TAB>: the namespaces" "$A $B default kube-system" headroom explain -n ''
is "explain -n compa-<TAB>: the prefix" "$A" headroom explain -n "$A"
is "plan --namespace=compb-<TAB>" "$B" headroom plan --namespace = "$B"
has "node <TAB>: the nodes" "$NODE" headroom node ''
is "node compnode-<TAB>: the prefix" "$NODE" headroom node compnode-$S
is "node NODE --context <TAB>: the contexts" "$(k config get-contexts -o name | sort | tr '\n' ' ' | sed 's/ $//')" \
  headroom node "$NODE" --context ''

# --kubeconfig and --context earlier on the line: a copy of the admin kubeconfig whose
# current context points at a closed port; the live context named by --context still answers.
KC=$WORK/two.kubeconfig
cp "$KUBECONFIG" "$KC"
LIVE=$(k config current-context)
USER_NAME=$(k config view -o jsonpath="{.contexts[?(@.name==\"$LIVE\")].context.user}")
k --kubeconfig "$KC" config set-cluster dead --server=https://127.0.0.1:1 >/dev/null
k --kubeconfig "$KC" config set-context dead --cluster=dead --user="$USER_NAME" >/dev/null
k --kubeconfig "$KC" config use-context dead >/dev/null
is "--kubeconfig F --context <TAB>: F's contexts" "dead $LIVE" headroom plan --kubeconfig "$KC" --context ''
is "--kubeconfig F (current context dead) -n <TAB>: nothing" "" headroom plan --kubeconfig "$KC" -n "$A"
is "--kubeconfig F --context LIVE -n <TAB>: honoured" "$A" headroom plan --kubeconfig "$KC" --context "$LIVE" -n "$A"
is "--kubeconfig F --context=LIVE explain -n A <TAB>" "db-$S web-$S" headroom explain --kubeconfig "$KC" --context = "$LIVE" -n "$A" ''
is "--kubeconfig F --user <TAB>: F's users" "$USER_NAME" headroom plan --kubeconfig "$KC" --user ''
is "--kubeconfig F --cluster <TAB>: F's clusters" "$(k --kubeconfig "$KC" config get-clusters | sed 1d | sort | tr '\n' ' ' | sed 's/ $//')" \
  headroom plan --kubeconfig "$KC" --cluster ''
# kubectl's other connection flags: --cluster picks the live cluster under the dead context.
LIVE_CLUSTER=$(k config view -o jsonpath="{.contexts[?(@.name==\"$LIVE\")].context.cluster}")
is "--kubeconfig F --cluster LIVE -n <TAB>: honoured" "$A" headroom plan --kubeconfig "$KC" --cluster "$LIVE_CLUSTER" -n "$A"

# kubectl's completion of the plugin: kubectl runs kubectl_complete-headroom.
got=$(k __complete headroom explain -n "$A" '' 2>/dev/null | grep -v '^:' | sort | tr '\n' ' ' | sed 's/ $//')
WHY="kubectl __complete headroom explain -n $A '': [$got]"
check "kubectl headroom explain -n A <TAB>: A's pods" [ "$got" = "db-$S web-$S" ]
got=$(k __complete headroom plan --namespace="$B" 2>/dev/null | grep -v '^:' | tr '\n' ' ' | sed 's/ $//')
WHY="kubectl __complete headroom plan --namespace=$B: [$got]"
check "kubectl headroom plan --namespace=compb-<TAB>: whole words" [ "$got" = "--namespace=$B" ]

# A dead API server and a silent one: nothing, nothing on stderr, within the bound.
DEAD=$WORK/dead.kubeconfig
sed "s|server: .*|server: https://127.0.0.1:1|" "$KUBECONFIG" >"$DEAD"
t0=$(now_ms)
out=$(headroom __complete plan --kubeconfig "$DEAD" -n '' 2>"$WORK/err")
ms=$(($(now_ms) - t0))
WHY="stdout [$out], stderr [$(cat "$WORK/err")], ${ms} ms"
check "__complete against a closed port: no candidate, ':1', no stderr" \
  [ "$out" = ":1" -a ! -s "$WORK/err" -a "$ms" -lt 3000 ]
is "plan --kubeconfig DEAD -n <TAB>: nothing" "" headroom plan --kubeconfig "$DEAD" -n ''
SERVER=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}')
is "plan --kubeconfig DEAD --server LIVE -n <TAB>: --server honoured" "$A" headroom plan --kubeconfig "$DEAD" --server "$SERVER" -n "$A"
PORT=$(free_port)
python3 -c 'import socket,sys,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8); time.sleep(120)' "$PORT" &
SILENT_PID=$!
listening() { ss -Htln "sport = :$PORT" | matches .; }
wait_until 5 listening
SILENT=$WORK/silent.kubeconfig
sed "s|server: .*|server: https://127.0.0.1:$PORT|" "$KUBECONFIG" >"$SILENT"
t0=$(now_ms)
got=$(tab headroom explain --kubeconfig "$SILENT" -n '')
ms=$(($(now_ms) - t0))
WHY="[$got] after ${ms} ms"
check "a silent API server: nothing, after the 3 s bound, well before 5 s" [ -z "$got" -a "$ms" -ge 2500 -a "$ms" -lt 5000 ]
echo "      (silent server: ${ms} ms)"

# zsh and fish, when installed (scripts/setup.sh does not install them).
if command -v zsh >/dev/null 2>&1; then
  out=$(zsh -c 'autoload -U compinit && compinit -u && source <(headroom completion zsh) && whence -w _headroom _headroom_live' 2>&1)
  WHY="$out"
  check "zsh: the script loads (bashcompinit) and defines both functions" grep -q '_headroom_live: function' <<<"$out"
else
  echo "SKIP  zsh: not installed"
fi
if command -v fish >/dev/null 2>&1; then
  got=$(fish -c "headroom completion fish | source; complete -C 'headroom explain -n $A '" 2>&1 | cut -f1 | sort | tr '\n' ' ' | sed 's/ $//')
  WHY="[$got]"
  check "fish: explain -n A <TAB>" [ "$got" = "db-$S web-$S" ]
else
  echo "SKIP  fish: not installed"
fi
finish
