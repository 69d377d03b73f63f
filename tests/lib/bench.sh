# tests/lib/bench.sh — what the benchmarks against the real control plane share
# (bench/cluster/idle.sh, bench/cluster/limits.sh, bench/cluster/scale.sh): a live HeadroomConfig,
# a load of Burstable Deployments on fresh kwok nodes, a process's CPU
# ticks, wakeups, write calls and memory from /proc, and the audit record's timestamps and
# write kinds as jq definitions.
#
# Sourced after tests/lib/common.sh (which gives k, ROOT, CRD_FILE, $S, the
# daemon and audit helpers), not run. Written, like common.sh, for scripts
# without -e.
# shellcheck shell=bash

# ------------------------------------------------------------- the config
# bench_config: the CRD and a HeadroomConfig "cluster" with dryRun false when
# none exists (BENCH_MADE_CONFIG=1 then; bench_unconfig deletes only that).
# bench_config --fresh replaces whatever is there (an earlier test's rate
# limits would change the run) and always deletes it at the end.
BENCH_MADE_CONFIG=0
bench_config() { # [--fresh]
  install_crd # (tests/lib/common.sh: a CRD that does not install ends the script with a FAIL)
  if [ "${1:-}" = --fresh ]; then k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1 || return 1; fi
  k get headroomconfig cluster >/dev/null 2>&1 && return 0
  printf 'apiVersion: kube-headroom.dev/v1alpha1\nkind: HeadroomConfig\nmetadata: {name: cluster}\nspec: {dryRun: false}\n' |
    k create -f - >/dev/null || return 1
  BENCH_MADE_CONFIG=1
}
bench_unconfig() {
  [ "$BENCH_MADE_CONFIG" = 0 ] || k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1 || true
  BENCH_MADE_CONFIG=0
}

# ------------------------------------------------------------- the load
# bench_load PREFIX NODES PODS [MANAGED_PODS [WAIT_S]]: NODES fresh kwok
# nodes (8 CPU) PREFIX-0.., and PODS Burstable pods (Deployments of 10,
# limits twice the requests, no sidecars: every managed one has a target
# elsewhere), of which MANAGED_PODS (default all) in managed namespaces
# PREFIX-m-0.. and the rest in plain namespaces PREFIX-u-0.. (a namespace
# per 500 pods); waits until all run, at most WAIT_S (300) each. Prints
# mkload's last line (the time it took). bench_unload PREFIX deletes them.
bench_load() { # prefix nodes pods [managed [wait]]
  local pfx=$1 nodes=$2 pods=$3 managed=${4:-$3} wait_s=${5:-300}
  local common=(--cpu 8 --replicas 10 --mix 1:0:0 --sidecar-every 0 --wait "$wait_s")
  if [ $((pods - managed)) -gt 0 ]; then
    "$ROOT/tests/cluster/mkload.sh" --nodes "$nodes" --node-prefix "$pfx" "${common[@]}" \
      --workloads $(((pods - managed) / 10)) --namespaces $(((pods - managed + 499) / 500)) --ns-prefix "$pfx-u" >/dev/null || return 1
    nodes=0
  fi
  "$ROOT/tests/cluster/mkload.sh" --nodes "$nodes" --node-prefix "$pfx" "${common[@]}" \
    --workloads $((managed / 10)) --namespaces $(((managed + 499) / 500)) --managed --ns-prefix "$pfx-m" | tail -1
  [ "${PIPESTATUS[0]}" = 0 ]
}
bench_unload() { # prefix
  "$ROOT/tests/cluster/mkload.sh" --delete --ns-prefix "$1-u" --node-prefix "$1-none" >/dev/null 2>&1 || true
  "$ROOT/tests/cluster/mkload.sh" --delete --ns-prefix "$1-m" --node-prefix "$1" >/dev/null 2>&1 || true
}

# ------------------------------------------------------------- /proc
BENCH_HZ=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null; }        # utime + stime of PID
wakeups() { # voluntary context switches of all PID's threads
  cat /proc/"$1"/task/*/status 2>/dev/null | awk '$1 == "voluntary_ctxt_switches:" {s += $2} END {print s + 0}'
}
io_count() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/io" 2>/dev/null; } # PID FIELD (syscw: write calls, wchar)
thread_cpu() { # PID: CPU-s by thread name, numbered threads together ("hr-notes 0.41 hr-node 0.90 ...")
  local t
  for t in /proc/"$1"/task/*; do
    # comm may hold a space; stat's fields 14 and 15 count from its closing parenthesis
    printf '%s %s\n' "$(cat "$t/comm" 2>/dev/null)" "$(sed 's/.*) //' "$t/stat" 2>/dev/null | awk '{print $12 + $13}')"
  done | awk -v hz="$BENCH_HZ" 'NF >= 2 { n = $1; sub(/-[0-9]+$/, "", n); s[n] += $NF }
    END { for (n in s) printf "%s %.2f\n", n, s[n] / hz }' | sort -k2,2nr | awk '{printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2} END {print ""}'
}
proc_kb() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status" 2>/dev/null; } # PID FIELD (VmRSS, VmHWM)
ticks_s() { awk -v t="$1" -v hz="$BENCH_HZ" 'BEGIN {printf "%.2f", t / hz}'; }   # ticks -> "1.23"
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# ------------------------------------------------------------- the audit record
# jq definitions: t (tests/lib/common.sh) and kind (a write of the controller:
# resize, annotation, event, other).
JQ_KIND='def kind: if .objectRef.resource == "pods" and .objectRef.subresource == "resize" then "resize"
  elif .objectRef.resource == "pods" and (.objectRef.subresource // "") == "" and .verb == "patch" then "annotation"
  elif .objectRef.resource == "events" then "event" else "other" end;'

# pct P FILE: the P-th percentile (nearest rank) of FILE's numbers, one a line, as "1.23"; "-" when
# it has none.
pct() { # p file-of-numbers
  sort -g "$2" | awk -v p="$1" '{v[NR] = $1} END {if (!NR) {print "-"; exit} i = int((p * NR + 99) / 100); if (i < 1) i = 1; printf "%.2f", v[i]}'
}

# annotation_lag AUDIT_FILE: how long a pod's status annotation and its limit disagree (design §5
# "Limits first"), from a controller's audit entries (JSON): for every resize, the seconds between
# its stageTimestamp and that of the nearest status annotation patch of the same pod, before or
# after it (a controller may write the annotation first). For a run where each pod is resized
# once (a cold start). Prints "P99 MAX NONE": the 99th percentile and the largest (s, "-" when
# none), and how many resizes had no annotation of their pod at all.
annotation_lag() { # audit-file
  local lags
  lags=$(jq -r "$JQ_T$JQ_KIND"'
    map(select(kind == "resize" or kind == "annotation"))
    | group_by(.objectRef.namespace + "/" + .objectRef.name)[]
    | (map(select(kind == "annotation") | .stageTimestamp | t)) as $ann
    | map(select(kind == "resize") | .stageTimestamp | t)[] as $r
    | [ $ann[] | . - $r | fabs ] | min // "none"' --slurp "$1")
  echo "$(grep -v none <<<"$lags" | pct 99 /dev/stdin) $(grep -v none <<<"$lags" | pct 100 /dev/stdin)" \
    "$(grep -c none <<<"$lags")"
}
