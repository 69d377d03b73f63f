#!/usr/bin/env bash
# image.sh — build kube-headroom's runtime image with no container registry, then run it.
#
#   scripts/release/image.sh                 build the image archive and check it in a container
#   scripts/release/image.sh --print         build the archive (no check), print its path alone
#   scripts/release/image.sh --rootfs DIR    only assemble the root filesystem in DIR (the Dockerfile's
#                                    build stage uses this)
#   options: --bin PATH              the headroom binary (default $HEADROOM_BIN, else
#                                    build/release/headroom, built with CMake if missing)
#
# The image is ghcr.io/kube-headroom/headroom:<version>, <version> being what `headroom version`
# prints (the name the chart and deploy/install.yaml use). Its root filesystem is assembled here, daemonless:
#   - /usr/bin/headroom (stripped) and /usr/bin/kubectl-headroom -> headroom;
#   - exactly the shared libraries the binary links (ldd), plus the program interpreter, each
#     copied from this machine's installed Debian package with its symlink chain (the merged-/usr
#     links /lib, /lib64 included). Copying is equivalent to `apt-get download` + `dpkg-deb -x`
#     here because every file is checked against its package's md5sums (dpkg -S names the
#     package, /var/lib/dpkg/info/PKG.md5sums the bytes), and better for a test: it is the very
#     library the binary was built and tested with, and it needs no network. The packages'
#     copyright files come along;
#   - /etc/passwd and /etc/group naming root and nonroot (65532), /etc/nsswitch.conf, /tmp.
# No shell, no package manager, nothing else. The image runs as 65532:65532 and needs no
# writable path (a read-only root filesystem works). Nothing names an architecture: the
# libraries, the interpreter and the config's architecture all come from this machine.
# scripts/release/oci-archive.sh packs it (one uncompressed layer, OCI layout + docker-archive in one
# tar) into ${HEADROOM_CACHE:-~/.cache/kube-headroom}/images/headroom-<version>-<digest>.tar,
# <digest> the start of the manifest's digest (the newest three builds are kept).
#
# The check starts a standalone containerd from Debian's package (its own root, state and
# socket under a temporary directory, no CRI plugin, no TCP listener), imports the archive the
# way a cluster node does (ctr -n k8s.io images import), and runs the image:
#   - `headroom version` in a container with a read-only root and no network (a fresh network
#     namespace: lo alone), as the image's own user; the output must equal the binary's;
#   - a static probe (tests/cluster/images/probe/probe.c, bind-mounted) as the image's user: uid and gid
#     65532, no effective capability, / not writable, no shell or package manager, lo alone;
#   - the test images of tests/cluster/images/build.sh (pause, burner) import and run the same way.
# It prints the image's size (the layer uncompressed and gzip-compressed, as a registry would
# store it) and fails when the uncompressed size exceeds 30 MB. Everything it started (containers,
# containerd, its mounts and the cgroups named kube-headroom-image-PID) is removed at the end.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
IMAGES=${HEADROOM_CACHE:-$HOME/.cache/kube-headroom}/images
MAX_MB=30
UID_GID=65532:65532

die() { echo "image.sh: $*" >&2; exit 1; }
say() { echo "image: $*"; }

mode=check rootfs_only="" bin=${HEADROOM_BIN:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --print) mode=print; shift ;;
    --rootfs) mode=rootfs rootfs_only=${2:?--rootfs needs a directory}; shift 2 ;;
    --bin) bin=${2:?--bin needs a path}; shift 2 ;;
    *) die "unknown argument '$1' (see the header of $0)" ;;
  esac
done

if [ -z "$bin" ]; then
  bin=$ROOT/build/release/headroom
  if [ ! -x "$bin" ]; then
    echo "image.sh: building $bin" >&2
    cmake -S "$ROOT" -B "$ROOT/build/release" -G Ninja -Wno-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      >/dev/null
    ninja -C "$ROOT/build/release" headroom >/dev/null
  fi
fi
[ -x "$bin" ] || die "no headroom binary at $bin"
version=$("$bin" version | awk 'NR == 1 && $1 == "headroom" {print $2}')
[ -n "$version" ] || die "$bin version did not print 'headroom <version>'"
REF=ghcr.io/kube-headroom/headroom:$version

# ---- the root filesystem ------------------------------------------------------------------

# replicate R PATH: make PATH exist under R as it does here: every symlink on the way is
# recreated verbatim (and followed), the final file copied with its mode.
replicate() {
  local r=$1 path=$2 cur="" rest comp target
  rest=${path#/}
  while [ -n "$rest" ]; do
    comp=${rest%%/*}
    if [ "$comp" = "$rest" ]; then rest=""; else rest=${rest#*/}; fi
    cur=$cur/$comp
    if [ -L "$cur" ]; then
      target=$(readlink "$cur")
      [ -L "$r$cur" ] || { mkdir -p "$r$(dirname "$cur")"; ln -s "$target" "$r$cur"; }
      case "$target" in /*) ;; *) target=$(dirname "$cur")/$target ;; esac
      # The part of cur before this link has no link in it (it was walked), so lexical
      # normalisation of the target is exact.
      replicate "$r" "$(realpath -m -s "$target${rest:+/$rest}")"
      return
    elif [ -d "$cur" ]; then
      mkdir -p "$r$cur"
    elif [ -f "$cur" ]; then
      [ -e "$r$cur" ] || cp -p "$cur" "$r$cur"
    else
      die "$cur (on the way to $path) does not exist"
    fi
  done
}

# spellings PATH: the names dpkg may know PATH's file by. dpkg records a file under the name its
# package shipped (/lib/… or /usr/lib/… on merged /usr), whatever the links on the way.
spellings() {
  local p=$1 real
  real=$(realpath "$p")
  printf '%s\n' "$p" "/usr$p" "$real" "${real#/usr}" "$(realpath "$(dirname "$p")")/$(basename "$p")"
}

# owners PATH...: "PATH PACKAGE SPELLING" for each PATH, in one dpkg-query (it reads its whole
# database per call); a PATH no installed package owns is left out.
owners() {
  local p s
  declare -A pkg_of=()
  while IFS= read -r line; do
    case "$line" in *": "/*) pkg_of[${line#*: }]=${line%%: *} ;; esac
  done < <(for p in "$@"; do spellings "$p"; done | sort -u | xargs dpkg-query -S 2>/dev/null || true)
  for p in "$@"; do
    while IFS= read -r s; do
      if [ -n "${pkg_of[$s]:-}" ]; then
        echo "$p ${pkg_of[$s]} $s"
        break
      fi
    done < <(spellings "$p")
  done
}

# verify PKG DPKGPATH FILE: FILE's bytes (the file its symlinks end at) are the ones PKG shipped.
# md5sums lists regular files only, under the spelling the package used, so the final file is
# looked up under each spelling.
verify() {
  local pkg=$1 dpath=$2 file=$3 sums real cand want=""
  sums=/var/lib/dpkg/info/$pkg.md5sums
  [ -f "$sums" ] || sums=/var/lib/dpkg/info/${pkg%%:*}.md5sums
  [ -f "$sums" ] || die "no md5sums for package $pkg"
  real=$(realpath "$file")
  for cand in "$real" "${real#/usr}" "$(dirname "$dpath")/$(basename "$real")"; do
    want=$(awk -v f="${cand#/}" '$2 == f {print $1; exit}' "$sums")
    [ -z "$want" ] || break
  done
  [ -n "$want" ] || die "$pkg's md5sums do not list $real (for $file)"
  [ "$want" = "$(md5sum <"$real" | cut -d' ' -f1)" ] ||
    die "$real differs from what $pkg installed (dpkg --verify $pkg)"
}

assemble() {
  local r=$1 libs lib pkg dpath doc
  mkdir -p "$r/usr/bin" "$r/etc" "$r/tmp"
  chmod 1777 "$r/tmp"
  strip --strip-unneeded -o "$r/usr/bin/headroom" "$bin"
  chmod 0755 "$r/usr/bin/headroom"
  ln -s headroom "$r/usr/bin/kubectl-headroom"

  # The program interpreter (PT_INTERP) and every library ldd resolves; ldd also prints the
  # interpreter, with no "=>".
  libs=$(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' | sort -u)
  if ldd "$bin" | grep -q 'not found'; then
    die "ldd $bin: a library is not found: $(ldd "$bin" | grep 'not found')"
  fi
  declare -A pkgs=()
  local owned
  # shellcheck disable=SC2086 # $libs is a list of paths without spaces
  owned=$(owners $libs)
  for lib in $libs; do
    read -r _ pkg dpath < <(awk -v l="$lib" '$1 == l' <<<"$owned") ||
      die "$lib belongs to no installed Debian package"
    verify "$pkg" "$dpath" "$lib"
    replicate "$r" "$lib"
    pkgs[$pkg]=1
  done
  for pkg in "${!pkgs[@]}"; do
    doc=/usr/share/doc/${pkg%%:*}/copyright
    if [ -e "$doc" ]; then replicate "$r" "$doc"; fi
  done

  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin\n' \
    >"$r/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' >"$r/etc/group"
  printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$r/etc/nsswitch.conf"
  chmod 0644 "$r/etc/passwd" "$r/etc/group" "$r/etc/nsswitch.conf"

  # What must not be there, checked on the tree itself (the container check looks again).
  local bad
  bad=$(cd "$r" && find . \( -name sh -o -name bash -o -name dash -o -name busybox -o -name 'apt*' \
    -o -name 'dpkg*' \) -print)
  [ -z "$bad" ] || die "the root filesystem carries a shell or package manager: $bad"
}

work=$(mktemp -d "${TMPDIR:-/tmp}/hr-image.XXXXXX")
ctd_pid=""
NS=k8s.io
CG=kube-headroom-image-$$
sock=$work/containerd.sock
ctr_() { ctr --address "$sock" -n "$NS" "$@"; }

stop_engine() {
  [ -n "$ctd_pid" ] || return 0
  local c
  for c in $(ctr_ containers list -q 2>/dev/null); do
    ctr_ tasks kill -s SIGKILL "$c" >/dev/null 2>&1 || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      ctr_ tasks delete "$c" >/dev/null 2>&1 && break
      ctr_ tasks list -q 2>/dev/null | grep -qx "$c" || break
      sleep 0.2
    done
    ctr_ containers delete "$c" >/dev/null 2>&1 || true
  done
  kill "$ctd_pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$ctd_pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$ctd_pid" 2>/dev/null || true
  wait "$ctd_pid" 2>/dev/null || true
  ctd_pid=""
  # Mounts under the state directory (snapshots of a container that was not deleted), deepest
  # first, then the cgroups this run named.
  awk -v w="$work/" 'index($2, w) == 1 {print $2}' /proc/self/mounts | sort -r |
    while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" || true; done
  # Looked for at any depth, so a cgroup made elsewhere than meant is found (and said) too.
  local d ok=0
  while read -r d; do
    if [ "$(dirname "$(dirname "$d")")" != /sys/fs/cgroup ]; then
      echo "image.sh: cgroup $d was not made where meant (/sys/fs/cgroup/*/$CG)" >&2
      ok=1
    fi
    find "$d" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null || true
    rmdir "$d" 2>/dev/null || { echo "image.sh: could not remove cgroup $d" >&2; ok=1; }
  done < <(find /sys/fs/cgroup -type d -name "$CG" 2>/dev/null)
  return "$ok"
}

cleanup() {
  local rc=$?
  stop_engine || { [ "$rc" -ne 0 ] || rc=1; }
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$mode" = rootfs ]; then
  mkdir -p "$rootfs_only"
  assemble "$(realpath "$rootfs_only")"
  exit 0
fi

mkdir "$work/rootfs"
assemble "$work/rootfs"
"$ROOT/scripts/release/oci-archive.sh" --rootfs "$work/rootfs" --ref "$REF" --out "$work/image.tar" \
  --user "$UID_GID" --entrypoint '["/usr/bin/headroom"]' --cmd '["run","--leader-elect"]'
digest=$(tar -xOf "$work/image.tar" index.json | jq -r '.manifests[0].digest')
short=${digest#sha256:}
archive=$IMAGES/headroom-$version-${short:0:12}.tar
mkdir -p "$IMAGES"
if [ ! -f "$archive" ]; then
  cp "$work/image.tar" "$archive.tmp.$$"
  mv -f "$archive.tmp.$$" "$archive"
fi
touch "$archive"
# Keep the newest three builds (each commit stamps its binary, so each gets an archive).
ls -1t "$IMAGES"/headroom-*.tar 2>/dev/null | tail -n +4 | while read -r old; do rm -f "$old" "$old.gzsize"; done

if [ "$mode" = print ]; then
  echo "$archive"
  exit 0
fi

# ---- the check in a container -------------------------------------------------------------

for t in containerd ctr runc; do
  command -v "$t" >/dev/null || die "$t not found (scripts/setup.sh installs docker.io, which brings it)"
done
[ "$(id -u)" -eq 0 ] || die "the container check needs root (containerd and runc); --print builds without it"

cat >"$work/containerd.toml" <<EOF
version = 2
root = "$work/root"
state = "$work/state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$sock"
[ttrpc]
  address = ""
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$work/opt"
EOF
containerd --config "$work/containerd.toml" >"$work/containerd.log" 2>&1 &
ctd_pid=$!
for _ in $(seq 100); do
  ctr_ version >/dev/null 2>&1 && break
  kill -0 "$ctd_pid" 2>/dev/null || { tail -20 "$work/containerd.log" >&2; die "containerd exited"; }
  sleep 0.1
done
ctr_ version >/dev/null 2>&1 || { tail -20 "$work/containerd.log" >&2; die "containerd did not answer on $sock"; }

# run ID IMAGE ARGS...: run a container to completion (read-only root, no network, the image's
# user, a cgroup of this run's own name); its output on stdout. The cgroup path is absolute: runc
# puts a relative one under its own cgroup, which here is the machine's service cgroup in the
# memory hierarchy (/process_api/…), never to be touched.
run() {
  local id=$1 image=$2
  shift 2
  ctr_ run --rm --read-only --cgroup "/$CG/$id" "${extra[@]}" "$image" "$id" "$@" </dev/null
}

ctr_ images import "$archive" >/dev/null || die "ctr -n $NS images import $archive failed"
named=$(ctr_ images list -q | grep -Fx "$REF" || true)
[ -n "$named" ] || die "the import did not name the image $REF"

extra=()
want=$("$bin" version)
got=$(run version "$REF" /usr/bin/headroom version) || die "headroom version failed in the container"
[ "$got" = "$want" ] || die "headroom version in the container printed '$got', not '$want'"
say "headroom version in a container (read-only root, no network, user $UID_GID): $(head -1 <<<"$got")"

gcc -std=c17 -O2 -Wall -Wextra -Werror -static -s -o "$work/probe" "$ROOT/tests/cluster/images/probe/probe.c" ||
  die "compiling tests/cluster/images/probe/probe.c failed"
extra=(--mount "type=bind,src=$work/probe,dst=/kube-headroom-probe,options=rbind:ro")
probe=$(run probe "$REF" /kube-headroom-probe) || die "the probe failed in the container"
extra=()
fails=()
expect() { grep -qx -- "$1" <<<"$probe" || fails+=("$2 (probe: $(grep -E "^${1%%=*}=" <<<"$probe" || echo none))"); }
expect "uid=65532 euid=65532 gid=65532 egid=65532" "runs as 65532:65532"
expect "capeff=0000000000000000" "no effective capability"
expect "root_writable=no (Read-only file system)" "the root filesystem is read-only"
expect "interfaces=lo" "no network but loopback"
for p in /bin/sh /usr/bin/sh /bin/bash /usr/bin/bash /bin/dash /bin/busybox /usr/bin/apt \
  /usr/bin/apt-get /usr/bin/dpkg /usr/bin/perl; do
  expect "$p=absent" "no $p"
done
if [ "${#fails[@]}" -gt 0 ]; then
  printf 'image.sh: FAIL: %s\n' "${fails[@]}" >&2
  die "the image is not what it promises (probe output above)"
fi
say "probe in the container: uid/gid 65532, no capabilities, read-only /, no shell or package manager, lo alone"

for t in pause burner; do
  a=$("$ROOT/tests/cluster/images/build.sh" --print "$t")
  r=$("$ROOT/tests/cluster/images/build.sh" --ref "$t")
  ctr_ images import "$a" >/dev/null || die "ctr -n $NS images import $a failed"
  run "$t" "$r" "/$t" -v >/dev/null || die "$r does not run"
done
say "test images pause and burner import and run"

layer=$(tar -xOf "$archive" manifest.json | jq -r '.[0].Layers[0]')
raw=$(tar -xOf "$archive" "$layer" | wc -c)
# The compressed size takes seconds to measure: kept beside the archive, which never changes.
[ -s "$archive.gzsize" ] || tar -xOf "$archive" "$layer" | gzip -6 -n | wc -c >"$archive.gzsize"
gz=$(cat "$archive.gzsize")
mb() { awk -v b="$1" 'BEGIN {printf "%.1f MB", b / 1000000}'; }
say "$REF: $(mb "$raw") uncompressed, $(mb "$gz") gzip-compressed (goal: at most $MAX_MB MB)"
say "archive: $archive"
say "load it: ctr -n k8s.io images import $archive   (or docker load -i, kind load image-archive)"
[ "$raw" -le $((MAX_MB * 1000000)) ] || die "the image is $(mb "$raw"), over the $MAX_MB MB goal"
