#!/usr/bin/env bash
# test.sh — the one command that passes the tests on a new machine, by tier.
#
#   scripts/test.sh                    every tier, as CI runs it
#   scripts/test.sh --tier T [--tier T ...]   only those tiers (also --tier unit,fuzz)
#   scripts/test.sh --only NAME        one CTest test with its fixtures (the cluster brought up and
#                                      down around it as CTest does), e.g. --only e2e_controller,
#                                      --only e2e_outcomes@v1.35.4, --only test_policy
#   scripts/test.sh --list             the tiers, and every test --only can name
#
# The tiers (what each proves and how long it takes: tests/README.md):
#   unit      style and structure checks; the release build; unit, property, golden, server and
#             docs tests; the stress program
#   sanitize  the same tests under ASan+UBSan, and the unit tests and the stress program under
#             ThreadSanitizer
#   fuzz      every parser fuzzed for HR_FUZZ_SECONDS (20) from a fixed seed
#   image     the runtime image built without a registry and run in a container with no network;
#             the Dockerfile's build, the arm64 image under qemu, the SBOM, the portable plugin
#             (tests/release/, label image)
#   release   the release command from two fresh clones: every artifact, byte-identical twice
#             (tests/release/reproducible.sh, label release)
#   e2e       the end-to-end suite on a real control plane of the pinned Kubernetes version
#             (simulated nodes and one real node), the policy scenarios, the benchmarks' CI-sized
#             runs, and the integration programs under valgrind and under ThreadSanitizer
#   matrix    the core of the end-to-end suite on every other supported Kubernetes version
#             (tests/cluster/versions.env K8S_MATRIX), each on a cluster of its own
# e2e and matrix run in one CTest run, side by side.
#
# It installs what it needs (scripts/setup.sh; the control plane through tests/cluster/cluster.sh
# build, cached by version outside the checkout, built beside the C steps, with cert-manager for
# the end-to-end tier; for the image tier, syft through cluster.sh tool syft, cached the same way).
set -euo pipefail
cd "$(dirname "$0")/.."

ALL_TIERS=(unit sanitize fuzz image release e2e matrix)
usage() {
  echo "usage: scripts/test.sh [--tier unit|sanitize|fuzz|image|release|e2e|matrix]... [--only NAME] [--list]" >&2
  exit 2
}
tiers=() only="" list=0
while [ $# -gt 0 ]; do
  case $1 in
    --tier) [ $# -ge 2 ] || usage; IFS=, read -r -a t <<<"$2"; tiers+=("${t[@]}"); shift 2 ;;
    --tier=*) IFS=, read -r -a t <<<"${1#--tier=}"; tiers+=("${t[@]}"); shift ;;
    --only) [ $# -ge 2 ] || usage; only=$2; shift 2 ;;
    --only=*) only=${1#--only=}; shift ;;
    --list) list=1; shift ;;
    *) usage ;;
  esac
done
for t in "${tiers[@]}"; do
  case " ${ALL_TIERS[*]} " in *" $t "*) ;; *) echo "test.sh: no tier '$t' (tiers: ${ALL_TIERS[*]})" >&2; exit 2 ;; esac
done
[ -z "$only" ] || [ ${#tiers[@]} -eq 0 ] || { echo "test.sh: --only and --tier do not mix" >&2; exit 2; }
[ ${#tiers[@]} -gt 0 ] || tiers=("${ALL_TIERS[@]}")
want() { [ -z "$only" ] && case " ${tiers[*]} " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

jobs=$(nproc 2>/dev/null || echo 2)
: "${HR_FUZZ_SECONDS:=20}"
: "${HR_FUZZ_SEED:=1}" # fixed: the same tree gets the same verdict (0 = a random seed)
# Tests on different clusters (the main one, each matrix version's) run side by side; on one
# cluster the locks of tests/e2e/CMakeLists.txt keep apart what must be.
: "${HR_E2E_JOBS:=3}"

t_start=$(date +%s)
t_step=$t_start
times=()
step() {
  local now
  now=$(date +%s)
  [ -z "${step_name:-}" ] || times+=("$(printf '%-58s %5d s' "$step_name" $((now - t_step)))")
  step_name=$*
  t_step=$now
  [ -z "$*" ] || printf '\n==> %s\n' "$*"
}
summary() {
  step ""
  if [ -n "$only" ]; then printf '\n==> times (--only %s)\n' "$only"; else printf '\n==> times (tiers: %s)\n' "${tiers[*]}"; fi
  printf '%s\n' "${times[@]}"
  printf '%-58s %5d s\n' "total" $(($(date +%s) - t_start))
}

configure() { # dir, extra cmake args...
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja -Wno-dev "$@" >/dev/null
}
build() { # dir [targets...]: quiet when it works, the errors when it does not
  local dir=$1; shift
  if ! ninja -C "$dir" -j "$jobs" "$@" >"$dir/ninja.log" 2>&1; then
    grep -E -B2 -A6 'error|FAILED' "$dir/ninja.log" | head -80
    echo "build of $dir failed (full log: $dir/ninja.log)"
    exit 1
  fi
}
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
TSAN_ENV=(env "TSAN_OPTIONS=halt_on_error=1 exitcode=66 second_deadlock_stack=1")

# The suite runs the integration programs of the ThreadSanitizer tree too (it_NAME_tsan,
# tests/e2e/CMakeLists.txt): that tree is built before any of them runs (tsan_tree).
configure_release() { configure build/release -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHR_IT_TSAN_DIR="$PWD/build/tsan"; }
tsan_tree() {
  [ -f build/tsan/build.ninja ] ||
    configure build/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHR_TSAN=ON -DCMAKE_C_COMPILER=clang-14
  build build/tsan "$@"
}

if [ "$list" -eq 1 ]; then
  configure_release
  echo "tiers: ${ALL_TIERS[*]}"
  echo "tests (--only NAME):"
  ctest --test-dir build/release -N | sed -n 's/^ *Test *#[0-9]*: /  /p'
  exit 0
fi

step "installing build dependencies"
scripts/setup.sh

# The control plane (and the real node's kubelet) take tens of minutes to build on a cold machine
# and nothing before the end-to-end step needs them, so they build beside the C steps (which leave
# a core idle while fuzzing and testing), in their own process group so a failed run stops them;
# the end-to-end step waits for them. Warm, this is a no-op that compares stamps.
cp_pid="" cp_log="" cp_need=0 cp_args=()
if [ -n "$only" ]; then
  case $only in e2e_* | it_* | bench_* | cluster_* | k8s-* | release_reproducible) cp_need=1 ;; esac
  case $only in *@* | k8s-*) cp_args=(--matrix) ;; esac
else
  want e2e && cp_need=1
  want release && cp_need=1 # helm packs the charts
  want matrix && { cp_need=1; cp_args=(--matrix); }
fi
# On the way out, whatever the outcome: a control-plane build still running is stopped, and the
# time of each step so far is printed (so a red run says where its time went too).
on_exit() {
  local rc=$?
  [ -z "$cp_pid" ] || kill -TERM -- "-$cp_pid" 2>/dev/null || true
  [ "$rc" -eq 0 ] || [ -z "${step_name:-}" ] || summary
  return "$rc"
}
trap on_exit EXIT
if [ "$cp_need" -eq 1 ]; then
  cp_log=$(mktemp /tmp/headroom-cp-build.XXXXXX)
  # cert-manager too (cluster.sh tool): e2e_webhook_certmodes runs it; 2 min cold, a stamp warm.
  setsid -w bash -c 'tests/cluster/cluster.sh build "$@" && tests/cluster/cluster.sh tool cert-manager >/dev/null' \
    build "${cp_args[@]}" >"$cp_log" 2>&1 &
  cp_pid=$!
fi
wait_cp() {
  [ -n "$cp_pid" ] || return 0
  step "the control plane's build (cached by version; began beside the C steps)"
  local rc=0
  wait "$cp_pid" || rc=$?
  cp_pid=""
  cat "$cp_log"
  rm -f "$cp_log"
  [ "$rc" -eq 0 ] || { echo "building the control plane failed (exit $rc)"; exit 1; }
}

configure_release

if [ -n "$only" ]; then
  ctest --test-dir build/release -N -R "^${only}\$" | grep "^ *Test *#" >/dev/null ||
    { echo "test.sh: no test named '$only' (scripts/test.sh --list)"; exit 2; }
  step "building: release"
  build build/release
  case $only in it_*_tsan) step "building: ThreadSanitizer (clang)"; tsan_tree ;; esac
  [ "$cp_need" -eq 0 ] || wait_cp
  step "$only, with its fixtures"
  rc=0
  ctest --test-dir build/release -R "^${only}\$" --output-on-failure || rc=$?
  summary
  exit $rc
fi

if want unit; then
  # Before anything is built: a formatting difference, a clang-tidy finding, an include that points
  # up the layer order, a header declaring what its own .c does not define, a name defined twice,
  # the test tree's shape, a release number that is not VERSION's or a commit subject over 72
  # characters fails the run here. All run, each with its own message, so one run shows every
  # problem; each also runs alone (scripts/checks/).
  step "style and structure checks: scripts/checks/"
  checks_failed=()
  for c in format layers headers size names tree versions commits; do
    [ -x "scripts/checks/$c.sh" ] || continue
    "scripts/checks/$c.sh" || checks_failed+=("$c")
  done
  HR_TIDY_JOBS=$jobs scripts/checks/tidy.sh build/release || checks_failed+=(tidy)
  if [ "${#checks_failed[@]}" -gt 0 ]; then
    echo "style and structure checks failed: ${checks_failed[*]}"
    exit 1
  fi
fi

step "building: release (gcc)"
build build/release

if want unit; then
  step "unit: unit, property, golden, server and docs tests, the stress program (release)"
  ctest --test-dir build/release -LE 'e2e|matrix|fuzz|image|release' --output-on-failure -j "$jobs"
fi

if want sanitize; then
  step "sanitize: building with ASan+UBSan (clang)"
  configure build/asan -DCMAKE_BUILD_TYPE=Debug -DHR_SANITIZE=ON -DCMAKE_C_COMPILER=clang-14
  build build/asan
  step "sanitize: the unit tier under ASan+UBSan"
  ctest --test-dir build/asan -LE 'e2e|matrix|fuzz|image|release' --output-on-failure -j "$jobs"
  # ThreadSanitizer (its own build: it cannot share a process with ASan): the unit tests and the
  # stress program (tests/stress/: the real controller fed by real watch threads under churn).
  step "sanitize: building with ThreadSanitizer (clang)"
  tsan_tree
  step "sanitize: unit tests and the stress program under ThreadSanitizer"
  "${TSAN_ENV[@]}" ctest --test-dir build/tsan -L 'unit|stress' --output-on-failure -j "$jobs"
fi

if want fuzz; then
  step "fuzz: building the fuzzers (clang libFuzzer)"
  configure build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHR_FUZZ=ON -DCMAKE_C_COMPILER=clang-14 \
    -DHR_FUZZ_SECONDS="$HR_FUZZ_SECONDS" -DHR_FUZZ_SEED="$HR_FUZZ_SEED"
  build build/fuzz fuzzers
  # Each fuzzer is one process on one core for a fixed wall time, with its own work directory:
  # side by side, one per core.
  step "fuzz: each parser for ${HR_FUZZ_SECONDS}s (seed ${HR_FUZZ_SEED}), -j $jobs"
  ctest --test-dir build/fuzz -L fuzz --output-on-failure -j "$jobs"
fi

if want image; then
  # The image users install: built with no registry from Debian's packages, imported into a
  # containerd of its own as a node would, then run with no network and a read-only root as 65532.
  step "image: built without a registry, run in a container with no network"
  scripts/release/image.sh
  # The scanner of the SBOM test (release_sbom), pinned and cached by version like the control
  # plane: 5 min cold, a stamp check warm. Its own step, so its time is not a test's.
  step "image: syft for the SBOM (tests/cluster/cluster.sh tool syft)"
  tests/cluster/cluster.sh tool syft >/dev/null
fi

# The image tier's tests and the release tier's (tests/release/): one CTest run when both are
# wanted, one test per core. Each test works in a directory of its own (its own dockerd and
# containerd for the Dockerfile's, fresh clones for the release's), and the shared caches are
# written by rename; release_sbom waits for release_image_arm64's arm64 build
# (tests/release/CMakeLists.txt). Side by side, the release's two builds fill the core the arm64
# build leaves while the other image tests are done.
release_labels=()
want image && release_labels+=(image)
want release && release_labels+=(release)
if [ ${#release_labels[@]} -gt 0 ]; then
  want release && wait_cp # helm packs the charts
  step "$(IFS=+; echo "${release_labels[*]}"): tests/release/ (the Dockerfile, arm64 under qemu, the SBOM, the plugin; the release twice, byte-identical) (-j $jobs)"
  ctest --test-dir build/release -L "^($(IFS='|'; echo "${release_labels[*]}"))\$" --output-on-failure -j "$jobs"
fi

if want e2e; then
  # The integration programs need the API server, so they run under ThreadSanitizer in the suite
  # (it_NAME_tsan), beside its other tests; the sanitize tier has built them already.
  step "e2e: building the integration programs with ThreadSanitizer (clang)"
  tsan_tree
fi

if want e2e || want matrix; then
  wait_cp
  labels=()
  want e2e && labels+=(e2e)
  want matrix && labels+=(matrix)
  # The real node is up only around e2e_realnode_* (fixture cluster-realnode), and its teardown is
  # checked (cluster_realnode_down_clean).
  step "$(IFS=+; echo "${labels[*]}"): the end-to-end suite on real control planes (-j $HR_E2E_JOBS)"
  ctest --test-dir build/release -L "^($(IFS='|'; echo "${labels[*]}"))\$" --output-on-failure -j "$HR_E2E_JOBS"
fi

summary
