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
exactly "--selector --set-request" headroom plan --se
exactly "table wide json yaml name" headroom plan -o ''
exactly "yaml" headroom node n1 --output y
exactly "json" headroom plan --output = j
exactly "table wide json yaml name" headroom plan --output =
exactly "json" headroom plan -o = j
exactly "logfmt json" headroom run --log-format ''
exactly "--log-format" headroom run --log
exactly "" headroom plan -n ''
dir=$(mktemp -d) && touch "$dir/dump.json"
exactly "$dir/dump.json" headroom plan -f "$dir/du"
exactly "$dir/dump.json" headroom explain web --filename "$dir/d"
rm -rf "$dir"

# zsh and fish: produced, naming every command.
for sh in zsh fish; do
  out=$("$hr" completion $sh) || bad "completion $sh exited $?"
  for c in $commands; do
    grep -q -- "$c" <<<"$out" || bad "completion $sh does not name $c"
  done
done
"$hr" completion zsh | head -1 | grep -q '^#compdef headroom kubectl-headroom' || bad "zsh: no #compdef"
"$hr" completion fish | grep -q "complete -c headroom -n '__fish_seen_subcommand_from plan' -l output -s o -r -a 'table wide json yaml name'" || bad "fish: no -o for plan"
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
plugin "table wide json yaml name" plan -o ''
plugin "--output=json" plan --output=j
plugin "--output=table --output=wide --output=json --output=yaml --output=name" node n1 --output=
plugin "-o=yaml" plan -o=y
plugin "logfmt json" run --log-format ''
plugin "--selector --set-request" plan --se
plugin "" plan -n ''
for c in $commands; do
  plugin "$(complete_words headroom "$c" --)" "$c" --
done
dir=$(mktemp -d) && touch "$dir/dump.json"
plugin "$dir/dump.json" explain web -f "$dir/du"
rm -rf "$dir" "$kc"

echo "completion: $([ "$fail" -eq 0 ] && echo ok || echo FAILED)"
exit "$fail"
