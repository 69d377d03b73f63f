#!/usr/bin/env bash
# image-arm64.sh — the linux/arm64 runtime image: headroom cross-built for arm64, its image
# assembled from Debian's arm64 packages, and that image's files alone run it under user-mode qemu.
# label: image
#
#   tests/release/image-arm64.sh     (CTest: release_image_arm64; scripts/test.sh --tier image;
#                                     needs root: image.sh's emulated check)
#   environment: HEADROOM_BIN, HR_BUILD_DIR (set by tests/release/CMakeLists.txt; default
#   build/release), HR_ARM64_BUILD_DIR (default $HR_BUILD_DIR/arm64: the arm64 build this test
#   configures with cmake/aarch64-linux-gnu.cmake and -DHR_TESTS=OFF, and builds, incrementally)
#
# Checks:
#   - the arm64 build configures and builds (its time is printed), an AArch64 ELF;
#   - its `version -o json` (qemu-aarch64) is HEADROOM_BIN's (the amd64 build of the same tree):
#     version, commit, treeState, buildDate and build equal, platform linux/arm64;
#   - scripts/release/image.sh --arch arm64: the image builds and passes the emulated check
#     (version and the golden `plan -f` under qemu-aarch64 on the image's files alone, this
#     machine's arm64 libraries hidden) and the size goal; the sizes are printed;
#   - tests/release/image-reproducible.sh --arch arm64 (two builds, one sha256; config arm64,
#     labels, timestamps) and tests/release/image-dpkg.sh --arch arm64 (the package database);
#   - the checks fail when they should: image.sh --qemu-rootfs refuses a tree with a library
#     removed (libgnutls.so.30's file) or with its interpreter removed, and image.sh --arch arm64
#     refuses an amd64 binary.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
build=${HR_BUILD_DIR:-$ROOT/build/release}
bin=${HEADROOM_BIN:-$build/headroom}
arm=${HR_ARM64_BUILD_DIR:-$build/arm64}
IMAGE=$ROOT/scripts/release/image.sh
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "PASS: $*"; }
for t in aarch64-linux-gnu-gcc qemu-aarch64 cmake ninja unshare; do
  command -v "$t" >/dev/null || fail "$t not found (scripts/setup.sh installs it)"
done
[ "$(id -u)" -eq 0 ] || fail "needs root (image.sh's emulated check uses a private mount namespace)"
[ -x "$bin" ] || fail "no amd64 headroom at $bin"

work=$(mktemp -d "${TMPDIR:-/tmp}/hr-image-arm64.XXXXXX")
trap 'rm -rf "$work"' EXIT

t=$(date +%s)
if [ ! -f "$arm/build.ninja" ]; then
  cmake -S "$ROOT" -B "$arm" -G Ninja -Wno-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/aarch64-linux-gnu.cmake" -DHR_TESTS=OFF >"$work/cmake.log" 2>&1 ||
    { tail -30 "$work/cmake.log" >&2; fail "configuring the arm64 build in $arm failed"; }
fi
ninja -C "$arm" -j "$(nproc)" headroom >"$work/ninja.log" 2>&1 ||
  { grep -E -B2 -A6 'error|FAILED' "$work/ninja.log" | head -60 >&2; fail "building headroom for arm64 failed"; }
abin=$arm/headroom
[ "$(readelf -h "$abin" | sed -n 's/^ *Machine: *//p')" = AArch64 ] || fail "$abin is not an AArch64 ELF"
pass "headroom for arm64 built in $arm ($(($(date +%s) - t)) s)"

a=$(qemu-aarch64 "$abin" version -o json) || fail "qemu-aarch64 $abin version -o json failed"
n=$("$bin" version -o json)
for k in version commit treeState buildDate build; do
  [ "$(jq -r ".$k" <<<"$a")" = "$(jq -r ".$k" <<<"$n")" ] ||
    fail "arm64 and amd64 builds differ in $k: $(jq -r ".$k" <<<"$a") vs $(jq -r ".$k" <<<"$n") (rebuild $bin)"
done
[ "$(jq -r .platform <<<"$a")" = linux/arm64 ] || fail "the arm64 build says platform $(jq -r .platform <<<"$a")"
pass "arm64 version -o json = the amd64 build's but platform linux/arm64: $(jq -r .version <<<"$a")"

HEADROOM_CACHE=$work/cache "$IMAGE" --arch arm64 --bin "$abin" >"$work/image.out" 2>&1 ||
  { cat "$work/image.out" >&2; fail "image.sh --arch arm64 failed"; }
sed 's/^/  /' "$work/image.out"
pass "image.sh --arch arm64: built, run under qemu on its own files, within the size goal"

for t in image-reproducible image-dpkg; do
  HR_ARM64_BIN=$abin "$ROOT/tests/release/$t.sh" --arch arm64 | sed 's/^/  /' || fail "$t.sh --arch arm64"
done
pass "the arm64 archive is reproducible and its package database is dpkg's"

# The checks fail when they should.
r=$work/rootfs
"$IMAGE" --rootfs "$r" --arch arm64 --bin "$abin" >/dev/null
"$IMAGE" --qemu-rootfs "$r" --arch arm64 >/dev/null || fail "image.sh --qemu-rootfs refuses the tree it built"
red() { # what EDIT
  local c=$work/copy
  rm -rf "$c"
  cp -a "$r" "$c"
  (cd "$c" && eval "$2")
  if "$IMAGE" --qemu-rootfs "$c" --arch arm64 >"$work/red.out" 2>&1; then
    fail "image.sh --qemu-rootfs accepts a tree with $1"
  fi
  echo "  refused, $1: $(grep -v '^image:' "$work/red.out" | head -1)"
}
red "libgnutls.so.30's file removed" 'rm "$(readlink -f usr/lib/aarch64-linux-gnu/libgnutls.so.30)"'
red "the interpreter removed" 'rm usr/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1'
if "$IMAGE" --print --arch arm64 --bin "$bin" >"$work/red.out" 2>&1; then
  fail "image.sh --arch arm64 packs an amd64 binary"
fi
echo "  refused, an amd64 binary for arm64: $(tail -1 "$work/red.out")"
pass "the emulated check and the architecture check fail when they should"
