#!/bin/bash
# completion.sh HEADROOM — `headroom completion bash` loaded into bash and
# driven as bash drives it (COMP_WORDS, COMP_CWORD, the -F function):
# subcommands, every flag each command's help lists (run's too), flag
# values, the --flag=value split, and the registration for both names. zsh
# and fish: the scripts are produced. kubectl: the kubectl_complete-headroom
# executable, driven as kubectl drives it.
set -u
hr=$1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# Offline: headroom on PATH under both names (the live words come from `headroom
# __complete`, run through the name being completed), and no kubeconfig that reaches a
# cluster — the offline kubeconfigs below point at 127.0.0.1:1, which refuses.
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
ln -s "$(cd "$(dirname "$hr")" && pwd)/$(basename "$hr")" "$bin/headroom"
ln -s "$bin/headroom" "$bin/kubectl-headroom"
export PATH=$bin:$PATH KUBECONFIG=$bin/none
unset KUBERNETES_SERVICE_HOST KUBERNETES_SERVICE_PORT
# shellcheck disable=SC1090
source <("$hr" completion bash) || { echo "FAIL: the bash script does not load"; exit 1; }

# complete WORD...: the last word is the one being completed.
complete_words() {
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _headroom
  printf '%s\n' "${COMPREPLY[@]}" | sort
}
offers() { # WANT WORD...: WANT is among the candidates
  want=$1; shift
  complete_words "$@" | grep -qxF -- "$want" || bad "completing '$*' does not offer $want: $(complete_words "$@" | tr '\n' ' ')"
}
exactly() { # "WANT..." WORD...: the candidates are exactly these
  want=$(printf '%s\n' $1 | sort); shift
  got=$(complete_words "$@")
  [ "$got" = "$want" ] || bad "completing '$*': got [$(echo $got)], wanted [$(echo $want)]"
}

complete -p headroom | grep -q -- '-F _headroom' || bad "headroom is not registered"
complete -p kubectl-headroom | grep -q -- '-F _headroom' || bad "kubectl-headroom is not registered"

# Subcommands.
commands=$("$hr" help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {exit}')
[ -n "$commands" ] || bad "headroom help lists no commands"
for c in $commands; do offers "$c" headroom ''; done
exactly "plan preflight probe" headroom p
exactly "completion" headroom com
exactly "explain" headroom help ex
exactly "bash" headroom completion ba
# Every flag that each command's help names.
for c in $commands; do
  for f in $("$hr" help "$c" | grep -oE -- '(^|[ ,])--[a-z][a-z0-9-]*' | tr -d ' ,' | grep -vx -- --flag | sort -u); do
    offers "$f" headroom "$c" --
  done
  for f in $("$hr" help "$c" | grep -oE -- '^  -[a-zA-Z],' | tr -d ' ,'); do
    offers "$f" headroom "$c" -
  done
done
# A prefix, values, files, the = split.
exactly "--output" headroom plan --out
exactly "--selector --server --set-request" headroom plan --se
# kubectl's connection flags, the same on every command that talks to a cluster (flags.h).
for c in plan node explain preflight verify run; do
  for f in as as-group as-uid certificate-authority client-certificate client-key cluster context \
    insecure-skip-tls-verify token tls-server-name user server; do
    offers "--$f" headroom "$c" --
  done
  exactly "--insecure-skip-tls-verify" headroom "$c" --ins
  exactly "--tls-server-name" headroom "$c" --tls
  exactly "--user" headroom "$c" --us
done
exactly "--as --as-group --as-uid" headroom explain --as
exactly "--certificate-authority --client-certificate --client-key --cluster --context" headroom preflight --c
exactly "table wide json yaml name bars" headroom plan -o ''
exactly "yaml" headroom node n1 --output y
exactly "json" headroom plan --output = j
exactly "table wide json yaml name bars" headroom plan --output =
exactly "json" headroom plan -o = j
exactly "logfmt json" headroom run --log-format ''
exactly "--log-format" headroom run --log
exactly "" headroom plan -n ''
dir=$(mktemp -d) && touch "$dir/dump.json"
exactly "$dir/dump.json" headroom plan -f "$dir/du"
exactly "$dir/dump.json" headroom explain web --filename "$dir/d"
exactly "$dir/dump.json" headroom plan --certificate-authority "$dir/du"
exactly "$dir/dump.json" headroom node n1 --client-key "$dir/du"
rm -rf "$dir"

# zsh and fish: produced, naming every command.
for sh in zsh fish; do
  out=$("$hr" completion $sh) || bad "completion $sh exited $?"
  for c in $commands; do
    grep -q -- "$c" <<<"$out" || bad "completion $sh does not name $c"
  done
done
"$hr" completion zsh | head -1 | grep -q '^#compdef headroom kubectl-headroom' || bad "zsh: no #compdef"
"$hr" completion fish | grep -q "complete -c headroom -n '__fish_seen_subcommand_from plan' -l output -s o -r -a 'table wide json yaml name bars'" || bad "fish: no -o for plan"
"$hr" completion tcsh >/dev/null 2>&1; [ $? -eq 2 ] || bad "completion tcsh: not a usage error"
"$hr" completion >/dev/null 2>&1; [ $? -eq 2 ] || bad "completion without a shell: not a usage error"

# kubectl's plugin completion (kubectl >= 1.26 runs kubectl_complete-headroom
# with the words after "kubectl headroom", the last one being completed, and
# reads one candidate a line and a ":DIRECTIVE" line): the same candidates as
# the bash function, --flag=value whole, and directive 4 (no file names
# besides those offered). tests/e2e/e2e_kubectl_plugin.sh drives it through
# kubectl itself.
kc=$(mktemp) && "$hr" completion kubectl >"$kc" && chmod +x "$kc" || bad "completion kubectl"
head -1 "$kc" | grep -qx '#!/usr/bin/env bash' || bad "kubectl_complete-headroom: no #! line"
plugin() { # "WANT..." WORD...: candidates exactly these (sorted), then :4
  want=$(printf '%s\n' $1 | sort); shift
  out=$("$kc" "$@")
  [ "$(tail -1 <<<"$out")" = ":4" ] || bad "kubectl_complete-headroom $*: last line '$(tail -1 <<<"$out")', not :4"
  got=$(sed '$d' <<<"$out" | sort)
  [ "$got" = "$want" ] || bad "kubectl_complete-headroom $*: got [$(echo $got)], wanted [$(echo $want)]"
}
plugin "$(complete_words headroom '')" ''
plugin "$(complete_words headroom '')"
plugin "plan preflight probe" p
plugin "table wide json yaml name bars" plan -o ''
plugin "--output=json" plan --output=j
plugin "--output=table --output=wide --output=json --output=yaml --output=name --output=bars" node n1 --output=
plugin "-o=yaml" plan -o=y
plugin "logfmt json" run --log-format ''
plugin "--selector --server --set-request" plan --se
plugin "" plan -n ''
for c in $commands; do
  plugin "$(complete_words headroom "$c" --)" "$c" --
done
dir=$(mktemp -d) && touch "$dir/dump.json"
plugin "$dir/dump.json" explain web -f "$dir/du"
rm -rf "$dir"

# The live words, offline: the kubeconfig's contexts (no cluster needed), --kubeconfig
# and $KUBECONFIG's merge (each name once) honoured; a cluster that refuses: nothing, no
# stderr, directive :1. `__complete` is hidden: not in help, not completed as a command.
cat >"$bin/a.kubeconfig" <<'KC'
apiVersion: v1
kind: Config
clusters:
- {name: c1, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}
users:
- {name: u1, user: {token: t}}
contexts:
- {name: alpha, context: {cluster: c1, user: u1, namespace: team-a}}
- {name: beta, context: {cluster: c1, user: u1}}
current-context: alpha
KC
cat >"$bin/b.kubeconfig" <<'KC'
apiVersion: v1
kind: Config
clusters:
- {name: c2, cluster: {server: "https://127.0.0.1:1"}}
users:
- {name: u2, user: {token: t}}
contexts:
- {name: beta, context: {cluster: c2, user: u2}}
- {name: gamma, context: {cluster: c2, user: u2}}
KC
a=$bin/a.kubeconfig b=$bin/b.kubeconfig
exactly "alpha beta" headroom plan --kubeconfig "$a" --context ''
exactly "beta" headroom explain web --kubeconfig "$a" --context b
exactly "alpha beta" headroom node --kubeconfig = "$a" --context = ''
exactly "" headroom plan --context ''
exactly "c1" headroom explain --kubeconfig "$a" --cluster ''
exactly "u1" headroom node --kubeconfig "$a" --user ''
merged=$(KUBECONFIG="$a:$b:$bin/missing" complete_words headroom preflight --context '' | tr '\n' ' ')
[ "$merged" = "alpha beta gamma " ] || bad "\$KUBECONFIG=a:b:missing: contexts [$merged], wanted [alpha beta gamma]"
out=$("$hr" __complete plan --kubeconfig "$a" --context '' 2>"$bin/err")
[ "$out" = "$(printf 'alpha\nbeta\n:4')" ] || bad "__complete plan --context '': [$out]"
out=$("$hr" __complete plan --kubeconfig "$a" --context=b 2>"$bin/err")
[ "$out" = "$(printf -- '--context=beta\n:4')" ] || bad "__complete plan --context=b: [$out]"
out=$("$hr" __complete plan --kubeconfig "$a" -n '' 2>"$bin/err")
[ "$out" = ":1" ] && [ ! -s "$bin/err" ] || bad "__complete -n against a refusing server: [$out], stderr [$(cat "$bin/err")]"
out=$(HEADROOM_COMPLETE_DEBUG=1 "$hr" __complete explain --kubeconfig "$a" '' 2>&1 >/dev/null)
grep -q '/api/v1/namespaces/team-a/pods' <<<"$out" || bad "__complete explain '': not the context's namespace's pods: [$out]"
exactly "" headroom plan --kubeconfig "$a" -n ''
[ "$("$hr" __complete nosuch '')" = ":4" ] || bad "__complete of an unknown command: not just :4"
[ "$("$hr" __complete plan -o '')" = ":4" ] || bad "__complete of a static flag: not just :4"
"$hr" help | grep -q __complete && bad "headroom help lists __complete"
complete_words headroom _ | grep -q . && bad "completing 'headroom _' offers $(complete_words headroom _)"
"$hr" help __complete >/dev/null 2>&1; [ $? -eq 2 ] || bad "headroom help __complete: not an unknown command"
plugin "alpha beta" plan --kubeconfig "$a" --context ''
plugin "--context=beta" explain --kubeconfig="$a" --context=b
# The scripts call __complete for exactly the live words.
"$hr" completion bash | grep -q -- '--namespace | -n) _headroom_live; return' || bad "bash: -n is not completed live"
"$hr" completion fish | grep -q "complete -c headroom -n '__fish_seen_subcommand_from explain' -a '(__headroom_live)'" || bad "fish: explain's POD is not completed live"
"$hr" completion fish | grep -q -- "-l context -r -a '(__headroom_live)'" || bad "fish: --context is not completed live"
rm -f "$kc"

echo "completion: $([ "$fail" -eq 0 ] && echo ok || echo FAILED)"
exit "$fail"
