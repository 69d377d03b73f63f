#!/bin/bash
# install.sh BUILD_DIR SOURCE_DIR — `cmake --install` into a scratch prefix
# installs headroom, the kubectl-headroom link and the three completions,
# and they work from there; the krew manifest template names the plugin
# archive's launcher, passes krew's manifest rules and carries the
# project's release number (the VERSION file; the binary's version is that
# number, or that number with -dev.N+g… between releases).
set -u
build=$1 src=$2
fail=0
bad() { echo "FAIL: $*"; fail=1; }
prefix=$(mktemp -d) || exit 1
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >"$prefix.log" 2>&1 || { cat "$prefix.log"; rm -f "$prefix.log"; exit 1; }
rm -f "$prefix.log"
hr=$prefix/bin/headroom
[ -x "$hr" ] || bad "no bin/headroom"
"$hr" version | head -1 | grep -q '^headroom ' || bad "bin/headroom version"
[ -L "$prefix/bin/kubectl-headroom" ] || bad "bin/kubectl-headroom is not a link"
[ "$(readlink "$prefix/bin/kubectl-headroom")" = headroom ] || bad "kubectl-headroom is not a relative link to headroom"
"$prefix/bin/kubectl-headroom" help plan | head -1 | grep -q '^usage: kubectl headroom plan' ||
  bad "kubectl-headroom does not answer as the plugin"
# kubectl (>= 1.26) completes `kubectl headroom …` with the executable
# kubectl_complete-headroom on PATH: beside the plugin, the binary's own.
kch=$prefix/bin/kubectl_complete-headroom
[ -f "$kch" ] && [ -x "$kch" ] || bad "no executable bin/kubectl_complete-headroom"
cmp -s "$kch" <("$hr" completion kubectl) || bad "the installed kubectl_complete-headroom is not the binary's"
[ "$("$kch" pla | tr '\n' ' ')" = "plan :4 " ] || bad "kubectl_complete-headroom pla: $("$kch" pla | tr '\n' ' ')"
bc=$prefix/share/bash-completion/completions
[ -f "$bc/headroom" ] || bad "no bash completion"
[ -L "$bc/kubectl-headroom" ] || bad "no bash completion under the plugin name"
cmp -s "$bc/headroom" <("$hr" completion bash) || bad "the installed bash completion is not the binary's"
# shellcheck disable=SC1091
( source "$bc/headroom" && complete -p headroom >/dev/null && COMP_WORDS=(headroom pla) COMP_CWORD=1 &&
  _headroom && [ "${COMPREPLY[*]}" = plan ] ) || bad "the installed bash completion does not complete"
head -1 "$prefix/share/zsh/site-functions/_headroom" | grep -q '^#compdef headroom' || bad "no zsh completion"
grep -q '^complete -c headroom ' "$prefix/share/fish/vendor_completions.d/headroom.fish" || bad "no fish completion"
# Nothing else: no tests or benchmarks under the prefix.
extra=$(cd "$prefix" && find . -type f -o -type l | grep -vE '^\./(bin/(headroom|kubectl-headroom|kubectl_complete-headroom)|share/bash-completion/completions/(headroom|kubectl-headroom)|share/zsh/site-functions/_headroom|share/fish/vendor_completions.d/headroom.fish)$')
[ -z "$extra" ] || bad "installed more: $extra"
# The krew manifest.
m=$src/plugins/headroom.yaml
release=$(tr -d ' \t\r\n' <"$src/VERSION")
version=$("$hr" version | awk 'NR == 1 {print $2}')
case "$version" in "$release" | "$release"[-+]*) ;; *) bad "bin/headroom version $version is not VERSION's $release" ;; esac
grep -q "^  version: v$release\$" "$m" || bad "plugins/headroom.yaml: spec.version is not v$release"
grep -q '^  name: headroom$' "$m" || bad "plugins/headroom.yaml: metadata.name"
# The template's platforms name the release archive's launcher (scripts/release/plugin.sh), and
# the template passes krew's manifest rules as the written manifest must.
[ "$(grep -c '^    bin: kubectl-headroom$' "$m")" -eq "$(grep -c '^  - selector:' "$m")" ] ||
  bad "plugins/headroom.yaml: a platform without bin: kubectl-headroom"
"$src/scripts/release/krew-manifest.sh" --check "$m" || bad "plugins/headroom.yaml breaks krew's manifest rules"
echo "install: $([ "$fail" -eq 0 ] && echo ok || echo FAILED)"
exit "$fail"
