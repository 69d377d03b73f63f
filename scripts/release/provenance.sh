#!/usr/bin/env bash
# provenance.sh — the provenance statement of a release directory: an in-toto Statement (v1)
# whose predicate is SLSA Provenance v1 (https://slsa.dev/provenance/v1).
#
#   scripts/release/provenance.sh --dir DIR --commit SHA --command "CMD" --packages FILE > OUT.json
#
# - subject: every regular file of DIR (but SHA256SUMS and the statement itself), by name and
#   sha256 digest;
# - buildDefinition.externalParameters: the source (repository and commit) and the command that
#   built DIR; internalParameters: SOURCE_DATE_EPOCH, the one input that is not in the source;
# - buildDefinition.resolvedDependencies: the source commit, then every Debian package that went
#   into the artifacts or built them (FILE: lines "package version architecture", the release
#   script's list), as package URLs (pkg:deb/debian/NAME@VERSION?arch=ARCH), then the Go tools
#   that made artifacts (helm packs the charts, syft writes the SBOMs), by module version;
# - runDetails.builder.id names the script; no timestamps beyond the source's date, so two
#   builds of one commit write the same statement.
set -euo pipefail

die() { echo "provenance: $*" >&2; exit 1; }

dir="" commit="" command="" packages="" tools=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir=${2:?}; shift 2 ;;
    --commit) commit=${2:?}; shift 2 ;;
    --command) command=${2:?}; shift 2 ;;
    --packages) packages=${2:?}; shift 2 ;;
    --tool) tools+=("${2:?--tool needs NAME=MODULE@VERSION}"); shift 2 ;;
    *) die "unknown argument '$1' (see the header of $0)" ;;
  esac
done
[ -d "$dir" ] || die "--dir '$dir' is not a directory"
[[ "$commit" =~ ^[0-9a-f]{40}$ ]] || die "--commit must be a full sha1, got '$commit'"
[ -n "$command" ] || die "--command is required"
[ -f "$packages" ] || die "--packages '$packages' is not a file"

REPO=https://github.com/kube-headroom/kube-headroom

subjects=$(cd "$dir" && find . -maxdepth 1 -type f ! -name SHA256SUMS ! -name '*.intoto.json' \
  -printf '%f\n' | LC_ALL=C sort | while IFS= read -r f; do
    jq -n -c --arg n "$f" --arg d "$(sha256sum "$f" | cut -d' ' -f1)" '{name: $n, digest: {sha256: $d}}'
  done | jq -s -c .)
[ "$(jq length <<<"$subjects")" -gt 0 ] || die "$dir holds no artifact"

debs=$(LC_ALL=C sort -u "$packages" | while read -r name version arch; do
    [ -n "$name" ] || continue
    jq -n -c --arg n "$name" --arg v "$version" --arg a "$arch" \
      '{uri: "pkg:deb/debian/\($n)@\($v)?arch=\($a)", name: $n}'
  done | jq -s -c .)
gotools=$(for t in "${tools[@]}"; do
    name=${t%%=*} mod=${t#*=}
    jq -n -c --arg n "$name" --arg m "$mod" '{uri: "pkg:golang/\($m)", name: $n}'
  done | jq -s -c .)

jq -n --argjson subjects "$subjects" --argjson debs "$debs" --argjson tools "$gotools" \
  --arg repo "$REPO" --arg commit "$commit" --arg command "$command" \
  --arg epoch "${SOURCE_DATE_EPOCH:-}" '
  {_type: "https://in-toto.io/Statement/v1",
   subject: $subjects,
   predicateType: "https://slsa.dev/provenance/v1",
   predicate: {
     buildDefinition: {
       buildType: "\($repo)/blob/main/docs/releasing.md#provenance",
       externalParameters: {source: {uri: "git+\($repo)", digest: {gitCommit: $commit}},
                            command: $command},
       internalParameters: {SOURCE_DATE_EPOCH: $epoch},
       resolvedDependencies: ([{uri: "git+\($repo)@\($commit)", digest: {gitCommit: $commit}}]
                              + $debs + $tools)},
     runDetails: {builder: {id: "\($repo)/blob/\($commit)/scripts/release.sh"}}}}'
