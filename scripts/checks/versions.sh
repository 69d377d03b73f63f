#!/usr/bin/env bash
# versions.sh — one release number: the top-level VERSION file is X.Y.Z, and every file that
# carries the release number says the same:
#   charts/kube-headroom/Chart.yaml             version, appVersion, and the version of its
#                                               dependency kube-headroom-crds
#   charts/kube-headroom/charts/crds/Chart.yaml version, appVersion
#   plugins/headroom.yaml                       spec.version, v-prefixed (krew's form)
# The tree keeps the release number; a build between releases is VERSION-dev.N+gSHA
# (scripts/release/version.sh), and the release script stamps that into packaged copies only.
# Bump VERSION and these files in one commit.
# And one supported Kubernetes range: the chart's kubeVersion (">=X.Y.0-0") is the minimum
# `headroom preflight` accepts, HR_KVERSION_MIN_MAJOR/MINOR in src/kube/kversion.h.
#
#   scripts/checks/versions.sh
#
# Silent and exit 0 when they agree; one line per disagreement and exit 1 when not.
set -euo pipefail
cd "$(dirname "$0")/../.."

fail=0
bad() { echo "check-versions: $*" >&2; fail=1; }

[ -f VERSION ] || { echo "check-versions: no VERSION file" >&2; exit 2; }
release=$(tr -d ' \t\r\n' <VERSION)
[[ $release =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$ ]] ||
  { echo "check-versions: VERSION holds '$release', not X.Y.Z" >&2; exit 1; }

# top FILE KEY: the value of a top-level "KEY: value" line (quotes and a comment dropped).
top() {
  sed -n "s/^$2:[[:space:]]*//p" "$1" | sed -e 's/[[:space:]]*#.*//' -e 's/^"\(.*\)"$/\1/' \
    -e "s/^'\(.*\)'\$/\1/" | head -1
}
want() { # FILE WHAT GOT WANTED
  [ "$3" = "$4" ] || bad "$1: $2 is '${3:-(none)}', not '$4' (VERSION)"
}

for chart in charts/kube-headroom/Chart.yaml charts/kube-headroom/charts/crds/Chart.yaml; do
  [ -f "$chart" ] || { bad "$chart is missing"; continue; }
  want "$chart" version "$(top "$chart" version)" "$release"
  want "$chart" appVersion "$(top "$chart" appVersion)" "$release"
done
# The parent chart's dependency on the CRD chart: its "version:" under "- name: kube-headroom-crds".
chart=charts/kube-headroom/Chart.yaml
dep=$(awk '/^dependencies:/ {on = 1; next} /^[^ #-]/ {on = 0}
  on && /-[[:space:]]*name:[[:space:]]*kube-headroom-crds[[:space:]]*$/ {d = 1; next}
  on && /-[[:space:]]*name:/ {d = 0}
  on && d && /^[[:space:]]+version:/ {sub(/^[[:space:]]+version:[[:space:]]*/, ""); gsub(/"/, ""); print; exit}' "$chart")
want "$chart" "dependency kube-headroom-crds's version" "$dep" "$release"

m=plugins/headroom.yaml
got=$(awk '/^spec:/ {on = 1; next} /^[^ #]/ {on = 0}
  on && /^  version:/ {sub(/^  version:[[:space:]]*/, ""); gsub(/"/, ""); print; exit}' "$m")
want "$m" spec.version "$got" "v$release"

# The chart's kubeVersion and preflight's minimum (src/kube/kversion.h) agree.
h=src/kube/kversion.h
kmin=$(awk '/^#define HR_KVERSION_MIN_MAJOR / {mj = $3} /^#define HR_KVERSION_MIN_MINOR / {mn = $3}
  END {if (mj != "" && mn != "") print mj "." mn}' "$h")
[ -n "$kmin" ] || bad "$h: no HR_KVERSION_MIN_MAJOR/HR_KVERSION_MIN_MINOR"
kv=$(top "$chart" kubeVersion)
[ "$kv" = ">=$kmin.0-0" ] || bad "$chart: kubeVersion is '${kv:-(none)}', not '>=$kmin.0-0' (headroom preflight's minimum, $h)"
exit "$fail"
