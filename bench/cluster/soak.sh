#!/usr/bin/env bash
# soak.sh — the churn soak (design §16 "memory under churn"): does
# the controller's memory stay flat while pods come and go for ever?
#
# `headroom run` (the release build, as the least-privilege identity of
# charts/kube-headroom/templates/rbac.yaml, writing: a HeadroomConfig with dryRun false) watches a
# managed namespace on simulated kwok nodes of the real control plane while
# pods are created and deleted continuously, the two ways a real cluster
# churns them:
#   - Jobs (parallelism = completions = N, ttlSecondsAfterFinished 0) whose
#     pods kwok runs for 10-20 s and then completes (the pod-complete stage of
#     tests/cluster/kwok-stages.yaml); the TTL controller deletes the Job and
#     the garbage collector its pods;
#   - Deployment rollouts: `kubectl rollout restart` (a pod-template
#     annotation) of a few Deployments every tick, round robin.
# Every third Deployment and every fourth Job runs on a "kubelet" that
# refuses resizes (kwok.x-k8s.io/resize: Infeasible), so the back-off table
# and the "already reported" bits fill and empty too; and every --node-every
# seconds one node is replaced by a new one (the pod GC deletes the old one's
# pods, which the controller meanwhile holds as pods of an unknown node), so
# per-node buckets, queue entries and snapshots come and go as well.
# Every pod is Burstable with requests that leave most of each node unbooked,
# so every arrival and departure moves its neighbours' limits and the
# controller writes (resizes, status annotations, events) all the time.
#
# Every --interval seconds it prints the controller's RSS (VmRSS and RssAnon
# from /proc/PID/status), the pods churned so far (pods the API server
# created, from its own apiserver_request_total, minus those still there),
# the controller's writes (headroom_writes_total) and the API server's RSS.
# At the end: the RSS growth from the end of the warm-up to the end against
# the budget (2 MB), and the controller's requests as the API server's audit
# log recorded them.
#
#   bench/cluster/soak.sh [--minutes 30] [--warmup 5] [--rate 12] [--nodes 10]
#                 [--interval 60] [--node-every 60] [--budget-kb 2048] [--min-pods N]
#
# --rate is the pods per second the churn aims at (a third from Jobs, the rest
# from rollouts); --min-pods (default: half of rate x duration) is the least
# churn for the run to count; --node-every 0 keeps the nodes.
#
# The allocator's own in-use figure is not printed: calling malloc_stats()
# through gdb corrupts the target's interrupted system call on this kernel
# (gdb cannot restore the extended register state). For heap figures run a
# diagnostic soak with HEADROOM_BIN pointing at a script that execs
# `heaptrack -o FILE build/release/headroom "$@"` (RSS columns then show the
# wrapper, not the daemon) and read FILE with heaptrack_print (design §16).
#
# Verdict (PASS/FAIL lines, "N passed, N failed", exit 1 on a failure): the
# controller is alive at the end; it wrote; at least --min-pods pods churned;
# and no leak: RSS at the end, less RSS at the end of the warm-up, is within
# the budget, whatever its shape (the shape is printed, not judged). The
# budget is the noise allowance: the allocator's steps after warm-up (a new
# arena, a grown free list, each a one-off of tens to hundreds of kB) stayed
# under 800 kB in 5-minute CI soaks (740-776 kB with `headroom run`'s two
# malloc arenas, design §16), so 2 MB passes them with room and fails a leak
# of about 1 kB per pod churned in the measured window (a 5-minute CI soak
# churns about 2,000 pods after its 2-minute warm-up).
#
# Needs a cluster (tests/cluster/cluster.sh up; $HEADROOM_CLUSTER_DIR and the
# ports pick which) and build/release/headroom ($HEADROOM_BIN). Uses metrics
# port $HEADROOM_SOAK_METRICS_PORT (default: a free one, free_port). Every object carries the PID.
set -uo pipefail
# shellcheck source=../../tests/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib/common.sh"

minutes=30 warmup=5 rate=12 nnodes=10 interval=60 node_every=60 budget_kb=2048 min_pods=""
usage() { sed -n '/^#   bench\/soak.sh/,/^# churn for the run/p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --minutes) minutes=$2; shift ;;
    --warmup) warmup=$2; shift ;;
    --rate) rate=$2; shift ;;
    --nodes) nnodes=$2; shift ;;
    --interval) interval=$2; shift ;;
    --node-every) node_every=$2; shift ;;
    --budget-kb) budget_kb=$2; shift ;;
    --min-pods) min_pods=$2; shift ;;
    -h | --help) usage ;;
    *) echo "soak: unknown option $1" >&2; usage ;;
  esac
  shift
done
[ "$warmup" -lt "$minutes" ] || { echo "soak: --warmup must be shorter than --minutes" >&2; exit 2; }
duration=$((minutes * 60))
: "${min_pods:=$((rate * duration / 2))}"

MPORT=${HEADROOM_SOAK_METRICS_PORT:-$(free_port)}
WORK=$(mktemp -d /tmp/headroom-soak.XXXXXX)
NS=soak-$S
USER_NAME=headroom-soak-$S
TICK=2
# The churn per tick: one Job of job_size pods, and restarts of deploys_per_tick
# Deployments of REPLICAS pods; six ticks between two rollouts of one Deployment.
REPLICAS=8
per_tick=$((rate * TICK))
job_size=$(((per_tick + 2) / 3))
deploys_per_tick=$(((per_tick - job_size + REPLICAS / 2) / REPLICAS))
[ "$deploys_per_tick" -ge 1 ] || deploys_per_tick=1
ndeploys=$((deploys_per_tick * 6))

CTL_PID=""
cleanup() {
  [ -z "$CTL_PID" ] || { kill -TERM "$CTL_PID" 2>/dev/null; wait "$CTL_PID" 2>/dev/null; }
  k delete namespace "$NS" --ignore-not-found --wait=false >/dev/null 2>&1
  k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  remove_identity "$USER_NAME"
  # nodes last, once their pods are gone (kwok finalizes them)
  wait_until 120 sh -c "! $KUBECTL get namespace $NS >/dev/null 2>&1"
  [ ${#NODES[@]} -eq 0 ] || k delete node "${NODES[@]}" --ignore-not-found --wait=false >/dev/null 2>&1
  if [ "$failed" -gt 0 ]; then echo "--- controller log (tail)"; tail -n 40 "$WORK/controller.log"; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

require_cluster

# ------------------------------------------------------------------ setup
install_identity "$USER_NAME"
mkns "$NS" managed
addnode() { # generation
  mknode "soak-$S-$1" 8
  k label node "soak-$S-$1" "headroom-soak=$S" >/dev/null
}
for i in $(seq 0 $((nnodes - 1))); do addnode "$i"; done
# A fresh config: whatever an earlier test left (rate limits, say) would change the run.
k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
k create -f - >/dev/null <<EOF
apiVersion: kube-headroom.dev/v1alpha1
kind: HeadroomConfig
metadata: {name: cluster}
spec: {dryRun: false}
EOF

# Requests 50m..250m by index, limits twice that (Burstable): about a fifth of
# the nodes' CPU booked, so the controller has room to give and writes.
pod_spec() { # index -> the pod template's spec, indented 6 (inside a template)
  local cpu=$((50 + ($1 % 5) * 50))
  cat <<EOF
      nodeSelector: {headroom-soak: "$S"}
      tolerations: [{operator: Exists}]
      terminationGracePeriodSeconds: 0
      containers:
      - name: app
        image: registry.invalid/app:1
        resources:
          requests: {cpu: ${cpu}m, memory: 32Mi}
          limits: {cpu: $((cpu * 2))m, memory: 64Mi}
EOF
}
mkdeploys() {
  local i
  for i in $(seq 0 $((ndeploys - 1))); do
    cat <<EOF
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d$i, namespace: $NS}
spec:
  replicas: $REPLICAS
  revisionHistoryLimit: 2
  selector: {matchLabels: {app: d$i}}
  template:
    metadata:
      labels: {app: d$i}
      annotations: {kwok.x-k8s.io/resize: "$( [ $((i % 3)) = 0 ] && echo Infeasible || echo Accept)"}
    spec:
$(pod_spec "$i")
EOF
  done
}
mkjob() { # number
  cat <<EOF
apiVersion: batch/v1
kind: Job
metadata: {name: j$1, namespace: $NS}
spec:
  parallelism: $job_size
  completions: $job_size
  ttlSecondsAfterFinished: 0
  template:
    metadata:
      annotations:
        kwok.x-k8s.io/complete-after: 10s
        kwok.x-k8s.io/complete-jitter: 20s
        kwok.x-k8s.io/resize: "$( [ $(($1 % 4)) = 0 ] && echo Infeasible || echo Accept)"
    spec:
      restartPolicy: Never
$(pod_spec "$1")
EOF
}

# ------------------------------------------------------------ measuring
proc_kb() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status" 2>/dev/null; }
APISERVER_PID=$(cat "$STATE/pids/kube-apiserver" 2>/dev/null)
pods_created() { # the API server's own count of pods it created (201 on POST pods)
  k get --raw /metrics | awk '$1 ~ /^apiserver_request_total[{]/ && $1 ~ /resource="pods"/ &&
    $1 ~ /subresource=""/ && $1 ~ /verb="POST"/ && $1 ~ /code="201"/ {s += $2} END {print s + 0}'
}
live_pods() { k -n "$NS" get pods -o name 2>/dev/null | wc -l; }
writes_by_kind() { # "resize=N annotation=N event=N configstatus=N"
  curl -sf "http://127.0.0.1:$MPORT/metrics" | awk '$1 ~ /^headroom_writes_total[{]/ {
    k = $1; sub(/.*kind="/, "", k); sub(/".*/, "", k); printf "%s%s=%d", sep, k, $2; sep = " " }'
}

# ------------------------------------------------------------- the daemon
"$HEADROOM" run --kubeconfig "$USER_KC" --namespace kube-headroom \
  --metrics-addr "127.0.0.1:$MPORT" "${PLAIN_METRICS[@]}" --webhook-addr "" >"$WORK/controller.log" 2>&1 &
CTL_PID=$!
wait_until 60 curl -sf "http://127.0.0.1:$MPORT/readyz" || { fail "controller start" "not ready within 60 s"; finish; exit; }

mkdeploys | k create -f - >/dev/null || { fail "setup" "could not create the Deployments"; finish; exit; }
created0=$(pods_created)
echo "soak: ${minutes} min (warm-up ${warmup}), aiming at ${rate} pods/s: every ${TICK} s one Job of ${job_size} pods" \
  "and a rollout of ${deploys_per_tick} of ${ndeploys} Deployments x ${REPLICAS}; ${nnodes} nodes x 8 cpu;" \
  "controller PID ${CTL_PID}, RSS $(proc_kb "$CTL_PID" VmRSS) kB"
printf '%-6s %10s %10s %6s %9s %8s %12s  %s\n' min VmRSS_kB RssAnon_kB dRSS_kB churned live "apiserver_MB" "controller writes"

rss=() t0=$(date +%s) tick=0 job=0 next_dep=0 late=0 oldest=0 ngen=$nnodes
sample() { # minute label
  local r a c l
  r=$(proc_kb "$CTL_PID" VmRSS) a=$(proc_kb "$CTL_PID" RssAnon)
  l=$(live_pods)
  c=$(($(pods_created) - created0 - l))
  [ "$c" -ge 0 ] || c=0
  CHURNED=$c
  rss+=("${r:-0}")
  WRITES=$(writes_by_kind) || WRITES=$LAST_WRITES # the last figures a dead daemon gave
  LAST_WRITES=$WRITES
  printf '%-6s %10s %10s %6s %9s %8s %12s  %s\n' "$1" "${r:-dead}" "${a:-dead}" "$(( ${r:-0} - ${rss[0]} ))" "$c" "$l" \
    "$(($(proc_kb "$APISERVER_PID" VmRSS) / 1024))" "$WRITES"
}
LAST_WRITES=
CHURNED=0
sample 0
next_sample=$((t0 + interval)) minute=0 next_node=$((t0 + node_every))
while :; do
  now=$(date +%s)
  [ "$now" -lt $((t0 + duration)) ] || break
  kill -0 "$CTL_PID" 2>/dev/null || break
  mkjob "$job" | k create -f - >/dev/null 2>&1 || late=$((late + 1))
  job=$((job + 1))
  deps=()
  for _ in $(seq 1 "$deploys_per_tick"); do deps+=("deployment/d$next_dep"); next_dep=$(((next_dep + 1) % ndeploys)); done
  k -n "$NS" rollout restart "${deps[@]}" >/dev/null 2>&1 || late=$((late + 1))
  if [ "$node_every" -gt 0 ] && [ "$(date +%s)" -ge "$next_node" ]; then
    next_node=$((next_node + node_every))
    addnode "$ngen" || late=$((late + 1))
    k delete node "soak-$S-$oldest" --wait=false >/dev/null 2>&1 || late=$((late + 1))
    ngen=$((ngen + 1)) oldest=$((oldest + 1))
  fi
  if [ "$(date +%s)" -ge "$next_sample" ]; then
    minute=$((minute + 1)); next_sample=$((next_sample + interval))
    sample "$((minute * interval / 60)).$(((minute * interval % 60) * 10 / 60))"
  fi
  tick=$((tick + 1))
  sleep_s=$((t0 + tick * TICK - $(date +%s)))
  [ "$sleep_s" -le 0 ] || sleep "$sleep_s"
done
alive=1; kill -0 "$CTL_PID" 2>/dev/null || alive=0
[ "$alive" = 0 ] || sample end

# ------------------------------------------------------------- the figures
# Samples taken at the end of the warm-up and after it: the measured window.
w=$((warmup * 60 / interval))
n=${#rss[@]}
base=${rss[$w]:-0} last=${rss[$((n - 1))]}
growth=$((last - base)) max=$base steady=1
for ((i = w + 1; i < n; i++)); do
  [ "${rss[$i]}" -ge "${rss[$((i - 1))]}" ] || steady=0
  [ "${rss[$i]}" -le "$max" ] || max=${rss[$i]}
done
writes=$(writes_by_kind) || writes=$LAST_WRITES
resizes=$(echo "$writes" | tr ' ' '\n' | awk -F= '$1 == "resize" {print $2}')
shape="levelled off"
[ "$steady" = 0 ] || shape="rising at every sample"
verdict="within budget, ${shape}"
[ "$growth" -le "$budget_kb" ] || verdict="OVER BUDGET, ${shape}"
audit=$(grep -F "\"username\":\"$USER_NAME\"" "$AUDIT" 2>/dev/null | grep -o '"verb":"[a-z]*"' | sort | uniq -c |
  awk '{sub(/"verb":"/, "", $2); sub(/"/, "", $2); printf "%s%s=%s", sep, $2, $1; sep = " "}')
elapsed=$(($(date +%s) - t0))
echo "soak: ${elapsed} s, ${CHURNED} pods churned ($((CHURNED / (elapsed > 0 ? elapsed : 1))) /s; ${job} Jobs," \
  "$((tick * deploys_per_tick)) rollouts, ${oldest} nodes replaced, ${late} churn requests failed);" \
  "controller writes: ${writes}"
echo "soak: the API server's record of the controller's requests (audit log): ${audit:-none}"
echo "soak: controller RSS ${rss[0]} kB at start, ${base} kB after the ${warmup}-minute warm-up, ${last} kB at the end" \
  "(max ${max} kB after warm-up): growth ${growth} kB against a budget of ${budget_kb} kB — ${verdict}"

WHY="the controller exited during the soak (log tail above)"
check "the controller ran the whole soak" [ "$alive" = 1 ]
WHY="${resizes:-0} resize writes"
check "the controller wrote resizes under churn" [ "${resizes:-0}" -gt 0 ]
WHY="${CHURNED} pods churned, want at least ${min_pods} (the control plane did not sustain the rate)"
check "at least ${min_pods} pods churned (${CHURNED})" [ "$CHURNED" -ge "$min_pods" ]
WHY="growth ${growth} kB > ${budget_kb} kB over the $((n - w)) samples after warm-up (${shape})"
check "no leak: RSS growth after warm-up ${growth} kB (budget ${budget_kb} kB, ${verdict})" \
  [ "$growth" -le "$budget_kb" ]
finish
