#!/usr/bin/env bash
# tidy.sh — clang-tidy (the checks in .clang-tidy) over every src/*.c,
# with the compile commands of a configured build. Silent and exit 0 when
# clean; the findings and exit 1 when not.
#
#   scripts/checks/tidy.sh [build-dir]     default build/release
#   scripts/checks/tidy.sh build/release src/kube/transport/client.c ...   only these
#
# Any CMake build of the tree will do (CMAKE_EXPORT_COMPILE_COMMANDS is on);
# gcc's flags are understood by clang-tidy. CLANG_TIDY overrides the binary,
# HR_TIDY_JOBS the parallelism (default: nproc).
set -euo pipefail
cd "$(dirname "$0")/../.."

build=${1:-build/release}
[ $# -gt 0 ] && shift
CLANG_TIDY=${CLANG_TIDY:-clang-tidy-14}
jobs=${HR_TIDY_JOBS:-$(nproc 2>/dev/null || echo 2)}

command -v "$CLANG_TIDY" >/dev/null ||
  { echo "check-tidy: $CLANG_TIDY not found (scripts/setup.sh installs it)" >&2; exit 2; }
[ -f "$build/compile_commands.json" ] ||
  { echo "check-tidy: no $build/compile_commands.json (configure the build first:" \
         "cmake -S . -B $build -G Ninja)" >&2; exit 2; }

if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files -- 'src/*.c')
fi

out=$(mktemp)
trap 'rm -f "$out"' EXIT
# One clang-tidy per file; each prints only its findings (--quiet, and the
# "N warnings generated" chatter on stderr is dropped unless it is an error).
rc=0
printf '%s\0' "${files[@]}" |
  xargs -0 -P "$jobs" -n 1 "$CLANG_TIDY" -p "$build" --quiet >"$out" 2>"$out.err" || rc=$?
if [ "$rc" -ne 0 ] || grep -q ': error:\|: warning:' "$out"; then
  cat "$out"
  grep -v ' warnings\? generated\.$\|^Error while processing\|treated as errors' "$out.err" >&2 || true
  n=$(grep -c ': error:\|: warning:' "$out" || true)
  echo "check-tidy: $n finding(s) in src/ (see .clang-tidy for the checks;" \
       "a NOLINT needs a reason)" >&2
  rm -f "$out.err"
  exit 1
fi
rm -f "$out.err"
