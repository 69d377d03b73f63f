#!/usr/bin/env bash
# dockerfile.sh — the Dockerfile builds with no registry, and the image says the version the
# checkout's own build says.
#
#   tests/release/dockerfile.sh [--bin PATH]   PATH: the checkout's headroom (default
#                                               $HEADROOM_BIN, else build/release/headroom)
#
# Runs Debian's Docker engine by hand (docker.io: /usr/sbin/dockerd, /usr/bin/docker — not the
# newer CLI on PATH) as root, everything under a temporary directory: its own containerd (own
# root, state and socket, no CRI plugin), dockerd with --bridge=none --iptables=false
# --ip-masq=false --ip-forward=false (the host's networking is left alone) and an absolute
# cgroup parent of this run's own name. No registry is reachable, so:
#   - the base is made here: `mmdebstrap --variant=minbase bookworm` + `docker import`, kept as a
#     `docker save` archive in ${HEADROOM_CACHE:-~/.cache/kube-headroom}/dockerfile/ (key: the
#     suite, variant and architecture), passed as the build argument BASE;
#   - the Dockerfile's deps stage (its apt-get reaches Debian's mirror: `docker build
#     --network=host`, which changes nothing on the host) is kept there too, keyed by the base and
#     the stage's text, and given back to the builder with --cache-from;
#   - the build arguments VERSION, COMMIT, BUILD_DATE, SOURCE_DATE_EPOCH are
#     scripts/release/version.sh's for the checkout.
# Then it proves:
#   - `headroom version -o json` in the image (docker run --network=none --read-only) reports the
#     version, commit, tree state, build date and platform that PATH reports and
#     scripts/release/version.sh computes (PATH built from another commit or tree state than the
#     checkout's now fails, naming both: rebuild it); the build is RelWithDebInfo;
#   - the image's OCI labels: version, revision, created from the arguments; source, licenses,
#     title, description, url, documentation;
#   - the image scripts/release/image.sh builds from PATH (the one users load) says the same,
#     when image.sh can build one (SKIP with its reason otherwise).
# Everything it started is stopped by its PID (dockerd, containerd), its mounts, cgroups and
# temporary directory removed. Prints PASS/FAIL lines, its timings and "N passed, N failed".
# label: image
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/release/containerd.sh
. "$ROOT/scripts/release/containerd.sh"
CACHE=${HEADROOM_CACHE:-$HOME/.cache/kube-headroom}/dockerfile
DOCKER=/usr/bin/docker
SUITE=bookworm

bin=${HEADROOM_BIN:-$ROOT/build/release/headroom}
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=${2:?--bin needs a path}; shift 2 ;;
    *) echo "dockerfile.sh: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done

die() { echo "dockerfile.sh: $*" >&2; exit 1; }
pass=0 failed=0
ok() { echo "PASS: $*"; pass=$((pass + 1)); }
ko() { echo "FAIL: $*"; failed=$((failed + 1)); }
eq() { if [ "$2" = "$3" ]; then ok "$1: $2"; else ko "$1: got '$2', wanted '$3'"; fi; }
t0=$(date +%s)
say() { echo "dockerfile: [$(($(date +%s) - t0)) s] $*"; }

[ "$(id -u)" -eq 0 ] || die "needs root (dockerd, containerd, mmdebstrap)"
DOCKERD=""
for d in /usr/sbin/dockerd /usr/bin/dockerd; do [ -x "$d" ] && { DOCKERD=$d; break; }; done
[ -n "$DOCKERD" ] && [ -x "$DOCKER" ] || die "Debian's docker.io is not installed (scripts/setup.sh installs it)"
for t in containerd runc mmdebstrap jq; do
  command -v "$t" >/dev/null || die "$t not found (scripts/setup.sh installs it)"
done
[ -x "$bin" ] || die "no headroom binary at $bin (ninja -C build/release headroom)"

# ---- what the checkout and its binary say ------------------------------------------------------
eval "$("$ROOT/scripts/release/version.sh")" # version commit tree date epoch tag
want=$("$bin" version -o json) || die "$bin version -o json failed"
jf() { jq -r --arg k "$2" '.[$k]' <<<"$1"; }
if [ "$(jf "$want" version)/$(jf "$want" commit)" != "$version/$commit" ]; then
  die "$bin is version $(jf "$want" version) (commit $(jf "$want" commit)), the checkout is now" \
    "$version ($commit): rebuild it"
fi
say "the checkout: $version (commit $commit, tree $tree, built $date); image tag $tag"

# ---- the engine ---------------------------------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/hr-dockerfile.XXXXXX")
CG=kube-headroom-dockerfile-$$
ctd_pid="" dkd_pid=""
sock=$work/docker.sock
dk() { "$DOCKER" -H "unix://$sock" "$@"; }

stop_pid() { # PID: TERM, up to 20 s, then KILL
  local p=$1
  kill "$p" 2>/dev/null || return 0
  for _ in $(seq 200); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$p" 2>/dev/null || true
  wait "$p" 2>/dev/null || true
}
cleanup() {
  local rc=$? d
  if [ -n "$dkd_pid" ]; then
    dk ps -aq 2>/dev/null | xargs -r "$DOCKER" -H "unix://$sock" rm -f >/dev/null 2>&1 || true
    stop_pid "$dkd_pid"
  fi
  [ -z "$ctd_pid" ] || stop_pid "$ctd_pid"
  [ -z "$dkd_pid" ] || say "dockerd and containerd stopped"
  # Mounts under the temporary directory (overlays of a container not removed), deepest first.
  awk -v w="$work/" 'index($2, w) == 1 {print $2}' /proc/self/mounts | sort -r |
    while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" || true; done
  while read -r d; do
    find "$d" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null || true
    rmdir "$d" 2>/dev/null || { echo "dockerfile.sh: could not remove cgroup $d" >&2; [ "$rc" -ne 0 ] || rc=1; }
  done < <(find /sys/fs/cgroup -maxdepth 2 -type d -name "$CG" 2>/dev/null)
  rm -rf "$work"
  [ -z "$dkd_pid" ] || say "their directories removed"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$work/ctd" "$CACHE"
containerd_config "$work/ctd" >"$work/containerd.toml"
containerd --config "$work/containerd.toml" >"$work/containerd.log" 2>&1 &
ctd_pid=$!
echo '{}' >"$work/daemon.json"
"$DOCKERD" --config-file "$work/daemon.json" --containerd "$work/ctd/containerd.sock" \
  --data-root "$work/data" --exec-root "$work/exec" --pidfile "$work/dockerd.pid" -H "unix://$sock" \
  --bridge=none --iptables=false --ip-masq=false --ip-forward=false --cgroup-parent "/$CG" \
  --storage-driver overlay2 --log-level warn >"$work/dockerd.log" 2>&1 &
dkd_pid=$!
for _ in $(seq 300); do
  dk version >/dev/null 2>&1 && break
  kill -0 "$dkd_pid" 2>/dev/null || { tail -20 "$work/dockerd.log" >&2; die "dockerd exited"; }
  sleep 0.1
done
dk version >/dev/null 2>&1 || { tail -20 "$work/dockerd.log" >&2; die "dockerd did not answer on $sock"; }
say "dockerd $(dk version -f '{{.Server.Version}}') up (pid $dkd_pid, $work)"

# ---- the base: made here once, kept ---------------------------------------------------------
arch=$(dpkg --print-architecture)
base_key=$SUITE-minbase-$arch-1
BASE=kube-headroom.local/debian:$base_key
base_tar=$CACHE/base-$base_key.tar
if [ -s "$base_tar" ]; then
  dk load -q -i "$base_tar" >/dev/null || die "docker load -i $base_tar failed"
  say "base $BASE loaded from $base_tar"
else
  say "making the base: mmdebstrap --variant=minbase $SUITE (once; kept in $base_tar)"
  mmdebstrap --quiet --variant=minbase "$SUITE" "$work/base-rootfs.tar" ||
    die "mmdebstrap --variant=minbase $SUITE failed"
  dk import "$work/base-rootfs.tar" "$BASE" >/dev/null || die "docker import failed"
  rm -f "$work/base-rootfs.tar"
  dk save -o "$base_tar.tmp.$$" "$BASE" && mv -f "$base_tar.tmp.$$" "$base_tar" ||
    die "docker save $BASE failed"
  say "base $BASE made"
fi
for old in "$CACHE"/base-*.tar; do [ "$old" = "$base_tar" ] || rm -f "$old"; done

# ---- the build tools (the deps stage): kept, keyed by the base and the stage's text --------------
base_id=$(dk image inspect -f '{{.Id}}' "$BASE")
stage=$(awk '/^FROM .* AS deps$/ {on = 1} on && /^FROM / && !/ AS deps$/ {exit} on' "$ROOT/Dockerfile")
[ -n "$stage" ] || die "the Dockerfile has no stage 'deps'"
deps_key=$(printf '%s\n%s\n' "$base_id" "$stage" | sha256sum | cut -c1-16)
DEPS=kube-headroom.local/dockerfile-deps:$deps_key
deps_tar=$CACHE/deps-$deps_key.tar
if [ -s "$deps_tar" ]; then
  dk load -q -i "$deps_tar" >/dev/null || die "docker load -i $deps_tar failed"
  say "build tools $DEPS loaded from $deps_tar"
fi
build=(build --network=host --build-arg "BASE=$BASE" --cache-from "$DEPS")
if ! DOCKER_BUILDKIT=0 dk "${build[@]}" --target deps -t "$DEPS" "$ROOT" >"$work/deps.log" 2>&1; then
  tail -30 "$work/deps.log" >&2
  die "docker build --target deps failed"
fi
if [ ! -s "$deps_tar" ]; then
  dk save -o "$deps_tar.tmp.$$" "$DEPS" && mv -f "$deps_tar.tmp.$$" "$deps_tar" || die "docker save $DEPS failed"
  say "build tools (the deps stage) built, kept in $deps_tar"
fi
for old in "$CACHE"/deps-*.tar; do [ "$old" = "$deps_tar" ] || rm -f "$old"; done

# ---- the image ----------------------------------------------------------------------------------
REF=ghcr.io/kube-headroom/headroom:$tag
if ! DOCKER_BUILDKIT=0 dk "${build[@]}" --build-arg "VERSION=$version" --build-arg "COMMIT=$commit" \
  --build-arg "BUILD_DATE=$date" --build-arg "SOURCE_DATE_EPOCH=$epoch" -t "$REF" "$ROOT" \
  >"$work/build.log" 2>&1; then
  tail -40 "$work/build.log" >&2
  die "docker build of the Dockerfile failed"
fi
grep -q "Using cache" "$work/build.log" && say "the deps stage came from the cache"
say "built $REF from the Dockerfile"

got=$(dk run --rm --network=none --read-only "$REF" version -o json) || die "headroom version -o json failed in the image"
echo "image:  $got"
echo "binary: $want"
for k in version commit treeState buildDate platform; do
  eq "the image's $k is the binary's" "$(jf "$got" "$k")" "$(jf "$want" "$k")"
done
eq "the image's version/commit/tree/date are version.sh's" \
  "$(jf "$got" version)/$(jf "$got" commit)/$(jf "$got" treeState)/$(jf "$got" buildDate)" \
  "$version/$commit/$tree/$date"
eq "the image's build" "$(jf "$got" build)" RelWithDebInfo
eq "the image's text version" "$(dk run --rm --network=none --read-only "$REF" version | head -1)" "headroom $version"

labels=$(dk image inspect -f '{{json .Config.Labels}}' "$REF")
label() { jq -r --arg k "org.opencontainers.image.$1" '.[$k] // "(none)"' <<<"$labels"; }
eq "label version" "$(label version)" "$version"
eq "label revision" "$(label revision)" "$commit"
eq "label created" "$(label created)" "$date"
eq "label source" "$(label source)" https://github.com/kube-headroom/kube-headroom
eq "label licenses" "$(label licenses)" Apache-2.0
for l in title description url documentation; do
  if [ "$(label "$l")" != "(none)" ] && [ -n "$(label "$l")" ]; then ok "label $l: $(label "$l")"; else ko "no label $l"; fi
done
eq "user" "$(dk image inspect -f '{{.Config.User}}' "$REF")" 65532:65532

say "checked the image"

# ---- the image users load: scripts/release/image.sh's, from the same binary ----------------------
if archive=$(HEADROOM_BIN=$bin "$ROOT/scripts/release/image.sh" --print 2>"$work/imagesh.err") &&
  loaded=$(dk load -i "$archive" 2>&1); then
  ref2=$(sed -n 's/^Loaded image: //p' <<<"$loaded" | head -1)
  got2=$(dk run --rm --network=none --read-only "$ref2" version -o json) || got2="(failed)"
  eq "image.sh's image ($ref2) says what the Dockerfile's says" "$got2" "$got"
else
  echo "SKIP: comparing with scripts/release/image.sh's image: $(tail -1 "$work/imagesh.err" 2>/dev/null) ${loaded:-}"
fi

say "done"
echo "$pass passed, $failed failed"
[ "$failed" -eq 0 ]
