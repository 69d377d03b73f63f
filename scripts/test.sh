#!/usr/bin/env bash
# test.sh — the one command that passes the tests on a new machine.
#
#   scripts/test.sh            everything: unit, property, golden, the same
#                              suites under ASan+UBSan, bounded fuzz runs, the
#                              runtime image (built and run in a container),
#                              and the end-to-end tests on a real control plane
#                              (simulated nodes, and one real node: kubelet,
#                              containerd, runc)
#   scripts/test.sh --quick    the same without the image and the control
#                              plane (a developer's inner loop; CI never uses it)
#
# It installs what it needs (scripts/setup.sh, then the pinned control plane
# through tests/cluster/cluster.sh build, cached outside the checkout).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
for a in "$@"; do
  case "$a" in
    --quick) quick=1 ;;
    *) echo "usage: scripts/test.sh [--quick]" >&2; exit 2 ;;
  esac
done

step() { printf '\n==> %s\n' "$*"; }
jobs=$(nproc 2>/dev/null || echo 2)
: "${HR_FUZZ_SECONDS:=20}"
: "${HR_FUZZ_SEED:=1}" # fixed: the same tree gets the same verdict (0 = a random seed)

step "installing build dependencies"
scripts/setup.sh

# The pinned control plane and kubelet (tests/cluster/cluster.sh build) take tens of minutes on a
# cold machine and nothing before the end-to-end step needs them, so they build beside the C steps
# (which leave a core idle while fuzzing and testing), in their own process group so a failed run
# stops them; the end-to-end step waits for them. Warm, this is a no-op that compares stamps.
cp_pid=""
cp_log=""
stop_cp_build() { [ -z "$cp_pid" ] || kill -TERM -- "-$cp_pid" 2>/dev/null || true; }
if [ "$quick" -eq 0 ]; then
  cp_log=$(mktemp /tmp/headroom-cp-build.XXXXXX)
  setsid -w tests/cluster/cluster.sh build >"$cp_log" 2>&1 &
  cp_pid=$!
  trap stop_cp_build EXIT
fi

configure() { # dir, extra cmake args...
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja -Wno-dev "$@" >/dev/null
}

configure build/release -DCMAKE_BUILD_TYPE=RelWithDebInfo

# Before anything is built: a formatting difference, a clang-tidy finding,
# an include that points up the layer order or a header declaring what its
# own .c does not define fails the run here. All run, each with its own
# message, so one run shows every problem; each also runs alone. Tidy reads
# build/release/compile_commands.json, which configuring just wrote.
step "style and structure checks: format, layers, headers, file size, clang-tidy"
checks_failed=()
scripts/checks/format.sh || checks_failed+=(check-format)
scripts/checks/layers.sh || checks_failed+=(check-layers)
scripts/checks/headers.sh || checks_failed+=(check-headers)
scripts/checks/size.sh || checks_failed+=(check-size)
HR_TIDY_JOBS=$jobs scripts/checks/tidy.sh build/release || checks_failed+=(check-tidy)
if [ "${#checks_failed[@]}" -gt 0 ]; then
  echo "style and structure checks failed: ${checks_failed[*]}"
  exit 1
fi

step "building: release (gcc), sanitizers (clang ASan+UBSan), fuzzers (clang libFuzzer)"
configure build/asan -DCMAKE_BUILD_TYPE=Debug -DHR_SANITIZE=ON -DCMAKE_C_COMPILER=clang-14
configure build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHR_FUZZ=ON -DCMAKE_C_COMPILER=clang-14 \
  -DHR_FUZZ_SECONDS="$HR_FUZZ_SECONDS" -DHR_FUZZ_SEED="$HR_FUZZ_SEED"
build() { # dir [targets...]: quiet when it works, the errors when it does not
  local dir=$1; shift
  if ! ninja -C "$dir" -j "$jobs" "$@" >"$dir/ninja.log" 2>&1; then
    grep -E -B2 -A6 'error|FAILED' "$dir/ninja.log" | head -80
    echo "build of $dir failed (full log: $dir/ninja.log)"
    exit 1
  fi
}
build build/release
build build/asan
build build/fuzz fuzzers

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

step "unit, property and golden tests (release)"
ctest --test-dir build/release -LE 'e2e|fuzz' --output-on-failure -j "$jobs"

step "unit, property and golden tests under ASan+UBSan"
ctest --test-dir build/asan -LE 'e2e|fuzz' --output-on-failure -j "$jobs"

# ThreadSanitizer (its own build: it cannot share a process with ASan):
# the unit tests and the stress program (tests/stress/: the real controller
# fed by real watch threads under churn). Any race fails the step.
step "unit tests and the stress program under ThreadSanitizer"
configure build/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHR_TSAN=ON -DCMAKE_C_COMPILER=clang-14
build build/tsan
TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
  ctest --test-dir build/tsan -L 'unit|stress' --output-on-failure -j "$jobs"

step "fuzzing each parser for ${HR_FUZZ_SECONDS}s (seed ${HR_FUZZ_SEED})"
ctest --test-dir build/fuzz -L fuzz --output-on-failure

if [ "$quick" -eq 1 ]; then
  echo "quick run: the runtime image and the end-to-end tests on the control plane not run"
  exit 0
fi

# The image users install (issue 13): built with no registry from Debian's
# packages, imported into a containerd of its own as a node would, then run
# with no network and a read-only root as 65532; prints its size.
step "runtime image: built without a registry, run in a container with no network"
scripts/release/image.sh

step "building the pinned control plane and the real node's kubelet (cached; a no-op when warm; began beside the C steps)"
t_wait=$(date +%s)
cp_rc=0
wait "$cp_pid" || cp_rc=$?
cp_pid=""
cat "$cp_log"
rm -f "$cp_log"
echo "waited $(($(date +%s) - t_wait)) s here for the control-plane build"
if [ "$cp_rc" -ne 0 ]; then
  echo "building the control plane failed (exit $cp_rc)"
  exit 1
fi

# e2e_soak is the longest (5 minutes of pod churn: the controller's RSS
# growth after warm-up against its 2 MB budget, design §16). The real node
# (tests/cluster/realnode.sh) is up only around e2e_realnode_* (CTest
# fixture realnode), and its teardown is checked (realnode_down_clean).
step "end-to-end tests on a real kube-apiserver with simulated nodes and one real node"
ctest --test-dir build/release -L e2e --output-on-failure

# The integration programs (tests/integration/) need the API server, so
# they run under ThreadSanitizer here; ctest brings the cluster fixture up
# and down around them.
step "integration programs under ThreadSanitizer on the real kube-apiserver"
TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
  ctest --test-dir build/tsan -R '^it_' --output-on-failure
