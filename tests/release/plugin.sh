#!/usr/bin/env bash
# plugin.sh — the kubectl plugin's release archive runs where there is nothing else: its binary
# answers `version` and `plan -f` in an empty root, for linux/amd64 natively and linux/arm64
# under qemu-user, and the archive is the same bytes when built twice.
# label: image
#
#   tests/release/plugin.sh     (CTest: release_plugin; scripts/test.sh --tier image; needs root)
#   environment: HEADROOM_BIN, HR_BUILD_DIR (set by tests/release/CMakeLists.txt; default
#   build/release), HR_ARM64_BUILD_DIR (default $HR_BUILD_DIR/plugin-arm64: the arm64 build this
#   test configures with cmake/aarch64-linux-gnu.cmake and builds when it is missing or stale)
#
# Checks (scripts/release/plugin.sh makes the archives):
#   - amd64 and arm64: two builds of the archive are byte-identical; every entry is a regular file
#     or a directory, owned 0:0 numerically, dated SOURCE_DATE_EPOCH (the commit's time), in name
#     order; the launcher, libexec/headroom, the interpreter, libc, a copyright file per package
#     listed in share/kube-headroom/libraries, the completions, and LICENSE and NOTICE at the top
#     (the repository's, byte for byte) are there; NOTICE's package block lists every package of
#     share/kube-headroom/libraries and of share/doc/;
#   - amd64, as root, in an empty directory holding the archive's files and the dump alone (no
#     /proc, /etc, /usr, /dev): `chroot ROOT /kubectl-headroom version` prints what the build
#     tree's binary prints, `plan -f /input.json` (tests/golden/cluster.json) and its -o json the
#     same as the build tree's kubectl-headroom, `help plan` answers as the plugin; the same
#     through a symlink from another directory (krew's ~/.krew/bin link), and in a second root
#     where the archive sits in a krew-like store (not at /, so lib/ is not the system's /lib)
#     through the link and through a PATH search (argv[0] without a slash); on this machine
#     (with /proc) through a link as well; with libexec/headroom or the interpreter removed, the
#     launcher says which file is missing and exits 127;
#   - arm64, under qemu-aarch64 (no binfmt: an exec inside qemu runs nothing): the interpreter's
#     --list resolves every library inside the archive's lib/; the launcher's exec, read from
#     qemu's -strace, is <dir>/lib/ld-linux-aarch64.so.1 --library-path <dir>/lib --argv0
#     kubectl-headroom <dir>/libexec/headroom ARGS; that command, run under qemu, prints the
#     version the archive is named for and the amd64 build's `plan -f` output; with files
#     missing, the launcher's error and exit 127.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
build=${HR_BUILD_DIR:-$ROOT/build/release}
bin=${HEADROOM_BIN:-$build/headroom}
arm_build=${HR_ARM64_BUILD_DIR:-$build/plugin-arm64}
input=$ROOT/tests/golden/cluster.json

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "PASS: $*"; }

[ "$(id -u)" -eq 0 ] || fail "chroot needs root (scripts/test.sh runs the image tier as root)"
for t in chroot qemu-aarch64 aarch64-linux-gnu-gcc python3 cmake ninja; do
  command -v "$t" >/dev/null || fail "$t not found (scripts/setup.sh installs it)"
done
[ -x "$bin" ] || fail "no headroom binary at $bin"
[ -x "$build/kubectl-headroom-launcher" ] || fail "no $build/kubectl-headroom-launcher (ninja kubectl-headroom-launcher)"
t0=$(date +%s)
work=$(mktemp -d "${TMPDIR:-/tmp}/hr-plugin-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
sde=$(git -C "$ROOT" log -1 --format=%ct)

# archive ARCH BUILD -> path: built twice, compared, its entries checked.
archive() {
  local arch=$1 b=$2 a1 a2
  a1=$(SOURCE_DATE_EPOCH=$sde "$ROOT/scripts/release/plugin.sh" --arch "$arch" --build "$b" --out "$work/$arch-1") ||
    fail "scripts/release/plugin.sh --arch $arch failed"
  a2=$(SOURCE_DATE_EPOCH=$sde "$ROOT/scripts/release/plugin.sh" --arch "$arch" --build "$b" --out "$work/$arch-2") ||
    fail "scripts/release/plugin.sh --arch $arch failed the second time"
  [ "$(basename "$a1")" = "$(basename "$a2")" ] || fail "two builds name the archive differently: $a1 $a2"
  cmp -s "$a1" "$a2" || fail "two builds of $(basename "$a1") differ"
  python3 - "$a1" "$sde" "$arch" "$ROOT" <<'PY' || fail "$(basename "$a1"): its entries (above)"
import os, sys, tarfile
path, sde, arch, root = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
interp = {"amd64": "ld-linux-x86-64.so.2", "arm64": "ld-linux-aarch64.so.1"}[arch]
t = tarfile.open(path, "r:gz")
ms = t.getmembers()
errs = []
names = [m.name for m in ms]
if names != sorted(names, key=lambda n: n.rstrip("/").split("/")):
    errs.append("entries not in name order")
for m in ms:
    if not (m.isfile() or m.isdir()):
        errs.append("%s: neither a file nor a directory" % m.name)
    if (m.uid, m.gid, m.uname, m.gname) != (0, 0, "", ""):
        errs.append("%s: owner %d:%d %r:%r, not 0:0 numeric" % (m.name, m.uid, m.gid, m.uname, m.gname))
    if m.mtime != sde:
        errs.append("%s: mtime %d, not SOURCE_DATE_EPOCH %d" % (m.name, m.mtime, sde))
files = {m.name: m for m in ms if m.isfile()}
want = ["kubectl-headroom", "libexec/headroom", "lib/" + interp, "lib/libc.so.6",
        "share/kube-headroom/libraries", "share/doc/libc6/copyright",
        "share/kube-headroom/completions/headroom.bash", "share/kube-headroom/completions/headroom.zsh",
        "share/kube-headroom/completions/headroom.fish",
        "share/kube-headroom/completions/kubectl_complete-headroom", "LICENSE", "NOTICE"]
for w in want:
    if w not in files:
        errs.append("no %s" % w)
for x in ("kubectl-headroom", "libexec/headroom", "lib/" + interp):
    if x in files and not files[x].mode & 0o111:
        errs.append("%s is not executable" % x)
libs = t.extractfile("share/kube-headroom/libraries").read().decode().split("\n")
for line in filter(None, libs):
    lib, pkg, ver = line.split(" ")
    if lib not in files:
        errs.append("libraries names %s, which is not in the archive" % lib)
    if "share/doc/%s/copyright" % pkg not in files:
        errs.append("no copyright for %s (%s)" % (pkg, lib))
shipped = {n for n in files if n.startswith("lib/")}
listed = {l.split(" ")[0] for l in filter(None, libs)}
if shipped != listed:
    errs.append("lib/ and share/kube-headroom/libraries disagree: %s" % sorted(shipped ^ listed))
# LICENSE and NOTICE are the repository's; NOTICE's package block names every package shipped.
for top in ("LICENSE", "NOTICE"):
    if top in files and t.extractfile(top).read() != open(os.path.join(root, top), "rb").read():
        errs.append("%s is not the repository's %s" % (top, top))
if "NOTICE" in files:
    block, on, seen = set(), False, 0
    for line in t.extractfile("NOTICE").read().decode().split("\n"):
        if line == "--- packages ---":
            on, seen = True, seen + 1
        elif line == "--- end packages ---":
            on, seen = False, seen + 1
        elif on and line.split():
            block.add(line.split()[0])
    if seen != 2 or not block:
        errs.append("NOTICE has no package block")
    pkgs = {l.split(" ")[1] for l in filter(None, libs)}
    pkgs |= {n.split("/")[2] for n in files if n.startswith("share/doc/") and n.endswith("/copyright")}
    if pkgs - block:
        errs.append("NOTICE does not list %s" % " ".join(sorted(pkgs - block)))
for e in errs:
    print(path + ": " + e, file=sys.stderr)
sys.exit(1 if errs else 0)
PY
  echo "$a1"
}

# unpack ARCHIVE DIR
unpack() { mkdir -p "$2" && tar -xzf "$1" -C "$2" --no-same-owner; }

# ---- amd64 ------------------------------------------------------------------------------------
amd=$(archive amd64 "$build")
pass "amd64: $(basename "$amd") ($(stat -c %s "$amd") bytes) is the same twice; entries sorted, 0:0, dated $sde"

want_version=$("$bin" version)
want_plan=$("$build/kubectl-headroom" plan -f "$input") || fail "the build tree's plan -f failed"
want_json=$("$build/kubectl-headroom" plan -f "$input" -o json) || fail "the build tree's plan -f -o json failed"

# The empty root: the archive at its top, the dump, and nothing else.
A=$work/root-a
unpack "$amd" "$A"
cp "$input" "$A/input.json"
for d in proc etc usr dev sys tmp; do [ ! -e "$A/$d" ] || fail "the root has /$d"; done
CHROOT=$(command -v chroot)
in_root() { local r=$1; shift; env -i PATH=/nonexistent "$CHROOT" "$r" "$@"; }
got=$(in_root "$A" /kubectl-headroom version) || fail "chroot ROOT /kubectl-headroom version failed"
[ "$got" = "$want_version" ] || fail "version in the empty root printed '$got', not '$want_version'"
got=$(in_root "$A" /kubectl-headroom plan -f /input.json) || fail "plan -f in the empty root failed"
[ "$got" = "$want_plan" ] || { diff <(echo "$want_plan") <(echo "$got") >&2 || true; fail "plan -f in the empty root differs"; }
got=$(in_root "$A" /kubectl-headroom plan -f /input.json -o json) || fail "plan -f -o json in the empty root failed"
[ "$got" = "$want_json" ] || fail "plan -f -o json in the empty root differs"
in_root "$A" /kubectl-headroom help plan | head -1 | grep -q '^usage: kubectl headroom plan' ||
  fail "help plan in the empty root does not answer as the plugin (--argv0)"
mkdir -p "$A/home/user/.krew/bin"
ln -s /kubectl-headroom "$A/home/user/.krew/bin/kubectl-headroom"
got=$(in_root "$A" /home/user/.krew/bin/kubectl-headroom plan -f /input.json) || fail "plan -f through a link failed"
[ "$got" = "$want_plan" ] || fail "plan -f through a link in the empty root differs"
pass "amd64: version, plan -f (table, json) and help in an empty root (no /proc, /etc, /usr), also through a link"

# A krew-like store: the archive not at /, the link in another directory, no /lib of the root's.
B=$work/root-b
store=/store/headroom/$(basename "$amd" .tar.gz)
unpack "$amd" "$B$store"
cp "$input" "$B/input.json"
mkdir -p "$B/krew/bin"
ln -s "$store/kubectl-headroom" "$B/krew/bin/kubectl-headroom"
got=$(in_root "$B" /krew/bin/kubectl-headroom plan -f /input.json) || fail "plan -f from the store through the link failed"
[ "$got" = "$want_plan" ] || fail "plan -f from the store through the link differs"
got=$(env -i PATH=/nonexistent:/krew/bin "$CHROOT" "$B" kubectl-headroom version) ||
  fail "kubectl-headroom found on PATH (argv[0] without a slash) failed"
[ "$got" = "$want_version" ] || fail "version through a PATH search printed '$got'"
pass "amd64: from a store directory through a link and through a PATH search, no /proc"

# This machine, /proc mounted: the launcher reads /proc/self/exe.
mkdir -p "$work/elsewhere"
ln -s "$A/kubectl-headroom" "$work/elsewhere/kubectl-headroom"
got=$(env -i PATH=/usr/bin:/bin "$work/elsewhere/kubectl-headroom" version) || fail "the link on this machine failed"
[ "$got" = "$want_version" ] || fail "version through a link on this machine printed '$got'"
# Missing files: which one, and 127.
for gone in libexec/headroom lib/ld-linux-x86-64.so.2; do
  C=$work/broken-${gone//\//-}
  unpack "$amd" "$C"
  rm "$C/$gone"
  rc=0
  err=$("$C/kubectl-headroom" version 2>&1 >/dev/null) || rc=$?
  [ "$rc" -eq 127 ] || fail "without $gone the launcher exited $rc, not 127"
  grep -qF "$C/$gone: No such file or directory" <<<"$err" || fail "without $gone the launcher said: $err"
done
pass "amd64: through a link with /proc; a missing file is named, exit 127"

# ---- arm64 ------------------------------------------------------------------------------------
# The arm64 build: configured once with the cross toolchain file, rebuilt (incrementally) each run.
toolchain=$ROOT/cmake/aarch64-linux-gnu.cmake
if [ ! -f "$arm_build/build.ninja" ]; then
  [ -f "$toolchain" ] || fail "no $toolchain (the arm64 cross toolchain file)"
  cmake -S "$ROOT" -B "$arm_build" -G Ninja -Wno-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DHR_TESTS=OFF >"$work/arm64-cmake.log" 2>&1 ||
    { tail -20 "$work/arm64-cmake.log" >&2; fail "configuring the arm64 build in $arm_build failed"; }
fi
ninja -C "$arm_build" -j 2 headroom kubectl-headroom-launcher >"$work/arm64-ninja.log" 2>&1 ||
  { grep -E -A5 'error|FAILED' "$work/arm64-ninja.log" | head -40 >&2; fail "building arm64 in $arm_build failed"; }
arm=$(archive arm64 "$arm_build")
pass "arm64: $(basename "$arm") ($(stat -c %s "$arm") bytes) is the same twice; entries sorted, 0:0, dated $sde"

D=$work/arm64
unpack "$arm" "$D"
# qemu's own library prefix must not lend the guest anything: an empty one.
mkdir -p "$work/empty"
export QEMU_LD_PREFIX=$work/empty
listing=$(qemu-aarch64 "$D/lib/ld-linux-aarch64.so.1" --library-path "$D/lib" --list "$D/libexec/headroom") ||
  fail "ld.so --list of the arm64 archive failed: $listing"
outside=$(awk -v lib="$D/lib/" '$2 == "=>" && index($3, lib) != 1 {print}' <<<"$listing")
[ -z "$outside" ] || fail "arm64: libraries resolved outside the archive's lib/ (this machine's multiarch ones): $outside"
# What the launcher execs, from qemu's syscall log.
exec_line=$(qemu-aarch64 -strace "$D/kubectl-headroom" plan -f "$input" 2>&1 >/dev/null | grep -m1 '^[0-9]* execve(' || true)
[ -n "$exec_line" ] || fail "arm64: the launcher made no execve (qemu -strace)"
mapfile -t argv < <(sed -E 's/^[0-9]+ execve\("[^"]*",\{"(.*)",NULL\}\).*/\1/' <<<"$exec_line" | sed 's/","/\n/g')
want_argv=("$D/lib/ld-linux-aarch64.so.1" --library-path "$D/lib" --argv0 kubectl-headroom "$D/libexec/headroom" plan -f "$input")
[ "${argv[*]}" = "${want_argv[*]}" ] || fail "arm64: the launcher execs '${argv[*]}', not '${want_argv[*]}'"
got=$(qemu-aarch64 "${argv[@]}") || fail "arm64: the launcher's command under qemu failed"
[ "$got" = "$want_plan" ] || { diff <(echo "$want_plan") <(echo "$got") >&2 || true; fail "arm64: plan -f differs from amd64's"; }
got=$(qemu-aarch64 "${argv[@]:0:6}" version) || fail "arm64: version under qemu failed"
tag=$(basename "$arm" .tar.gz)
tag=${tag#kubectl-headroom-}
tag=${tag%-linux-arm64}
[ "$(head -1 <<<"$got" | awk '{print $1, $2}' | tr '+' '-')" = "headroom $tag" ] ||
  fail "arm64: version printed '$(head -1 <<<"$got")', the archive is named for $tag"
for gone in libexec/headroom lib/ld-linux-aarch64.so.1; do
  E=$work/arm64-broken-${gone//\//-}
  unpack "$arm" "$E"
  rm "$E/$gone"
  rc=0
  err=$(qemu-aarch64 "$E/kubectl-headroom" version 2>&1 >/dev/null) || rc=$?
  [ "$rc" -eq 127 ] || fail "arm64: without $gone the launcher exited $rc, not 127"
  grep -qF "$E/$gone: No such file or directory" <<<"$err" || fail "arm64: without $gone the launcher said: $err"
done
pass "arm64 under qemu: libraries all from the archive; the launcher's exec runs version and plan -f; missing files, 127"
echo "plugin: $(($(date +%s) - t0)) s"
