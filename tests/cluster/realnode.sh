#!/usr/bin/env bash
# realnode.sh — one REAL node beside kwok's simulated ones: a kubelet (built by `cluster.sh build`
# at the pinned Kubernetes version), containerd and runc from Debian's packages, and a CNI plugin
# that leaves the host's network untouched (cni/inpod-veth). Everything it makes lives under the
# cluster's state directory ($HEADROOM_CLUSTER_DIR/realnode) and one cgroup of its own
# (/kube-headroom-<node> in every hierarchy); `down` stops what `up` started by PID and removes
# exactly what it or the kubelet made. Called as `cluster.sh real-node up|down|status|check-clean`;
# see README.md ("The real node") for what it sets and why. Its ports (the kubelet's and its
# healthz) are the cluster's, from $HEADROOM_CLUSTER_DIR/ports.env (cluster.sh up chose them).
#
#   up            start containerd, import the test images, start the kubelet, wait for Ready
#   down          stop the kubelet, remove every pod sandbox over CRI, stop containerd, unmount
#                 what is left under the state dir, remove our cgroups, restore the sysctls
#   status        what runs
#   check-clean   exit 1, naming each, if anything `up` made is still there (the teardown test)
#   env           print shell assignments tests use (NODE, CGROUP_ROOT, SOCK, ...)
#
# The node is tainted kube-headroom.dev/real-node=true:NoSchedule and labelled
# kube-headroom.dev/real-node=true: only pods that tolerate the taint land there.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CLUSTER=$HERE/cluster.sh
STATE=${HEADROOM_CLUSTER_DIR:-/tmp/kube-headroom-cluster}
RN=$STATE/realnode
NODE=${HEADROOM_REAL_NODE:-kube-headroom-real}
# The cluster's ports (cluster.sh up, README.md "Ports"): KUBELET_PORT, KUBELET_HEALTHZ_PORT.
KUBELET_PORT="" KUBELET_HEALTHZ_PORT=""
if [ -f "$STATE/ports.env" ]; then
  # shellcheck disable=SC1091
  . "$STATE/ports.env"
fi
CGROUP_ROOT=/kube-headroom-$NODE
SOCK=$RN/containerd.sock
CONTAINERD=${HEADROOM_CONTAINERD:-/usr/bin/containerd}
CTR=${HEADROOM_CTR:-/usr/bin/ctr}
# What the kubelet rewrites at start (pkg/kubelet/cm setupKernelTunables): recorded before it
# starts, written back after it stops.
SYSCTLS=(vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys kernel/keys/root_maxbytes)
# Paths the kubelet creates whatever its --root-dir (compiled-in constants): removed by `down` only
# when `up` saw them absent.
HOST_DIRS=(/var/lib/kubelet/device-plugins /var/lib/kubelet /var/log/containers)
TAINT=kube-headroom.dev/real-node
READY_TIMEOUT=${HEADROOM_REAL_NODE_TIMEOUT:-120}
# The weight of the node's cgroup root against the host's other processes (cpu.shares, v1): every
# pod of the node shares this one weight, so with the default 1024 a node competes like a single
# busy host process. 32768 (32 busy processes' worth) lets its pods have most of the machine, as a
# node's pods would, beside other builds on a shared development machine, so quotas bind under
# load; it changes nothing on an idle machine (CI). 1024 turns it off.
CPU_SHARES=${HEADROOM_REAL_NODE_CPU_SHARES:-32768}

log() { printf 'real-node: %s\n' "$*" >&2; }
die() { printf 'real-node: ERROR: %s\n' "$*" >&2; exit 1; }
now_ms() { date +%s%3N; }
kc() { "$("$CLUSTER" bin kubectl)" --kubeconfig "$STATE/admin.kubeconfig" "$@"; }
pid_alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
pid_is() { # pid binary: the PID still runs that binary (PIDs get reused)
  local exe
  pid_alive "$1" || return 1
  exe=$(readlink "/proc/$1/exe" 2>/dev/null) || return 1
  [ "${exe% (deleted)}" = "$2" ]
}
port_listening() { [ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]; }
minor_of() { local v=${1#v1.}; echo "${v%%.*}"; } # v1.37.2 -> 37
# Every cgroup hierarchy mounted here (v1 controllers, name=systemd, the controller-less unified one).
hierarchies() { awk '$3 == "cgroup" || $3 == "cgroup2" {print $2}' /proc/self/mounts; }

# ------------------------------------------------------------------------------------------ up
write_containerd_config() {
  local pause=$1
  cat >"$RN/containerd.toml" <<EOF
# containerd for the real node (realnode.sh): its own root, state and socket; CRI with runc and
# cgroupfs; the sandbox image imported from tests/cluster/images; oom_score_adj left alone (root here
# lacks CAP_SYS_RESOURCE: a negative value makes runc fail).
version = 2
root = "$RN/containerd/root"
state = "$RN/containerd/state"
oom_score = 0
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$RN/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$pause"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$RN/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$RN/cni/bin"
    conf_dir = "$RN/cni/net.d"
    max_conf_num = 1
EOF
}

write_cni() {
  mkdir -p "$RN/cni/bin" "$RN/cni/net.d" "$RN/cni/data"
  ln -sf /usr/lib/cni/loopback "$RN/cni/bin/loopback"
  ln -sf "$HERE/cni/inpod-veth" "$RN/cni/bin/inpod-veth"
  cat >"$RN/cni/net.d/10-inpod-veth.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "kube-headroom-inpod",
 "plugins": [{"type": "inpod-veth", "dataDir": "$RN/cni/data"}]}
EOF
}

write_kubelet_config() {
  cat >"$RN/kubelet.yaml" <<EOF
# The real node's kubelet (realnode.sh). cgroup v1 here: failCgroupV1 false; containerd 1.6 has no
# RuntimeConfig call, so the driver is named; our own cgroup root; oomScoreAdj 0 (no
# CAP_SYS_RESOURCE); everything on 127.0.0.1; eviction and image GC thresholds out of the way of a
# shared test disk.
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: $CGROUP_ROOT
cgroupsPerQOS: true
enforceNodeAllocatable: [pods]
oomScoreAdj: 0
# The host's packet filter is not ours: without this the kubelet adds KUBE-FIREWALL (a DROP of
# non-loopback packets to 127.0.0.0/8 hooked into INPUT and OUTPUT) and its canary chains to the
# machine's iptables. check-clean compares the rule set with the one recorded before up.
makeIPTablesUtilChains: false
failSwapOn: false
containerRuntimeEndpoint: unix://$SOCK
imageServiceEndpoint: unix://$SOCK
address: 127.0.0.1
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
podLogsDir: $RN/pod-logs
hairpinMode: none
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $STATE/pki/ca.crt}
authorization:
  mode: Webhook
registerNode: true
registerWithTaints:
- {key: $TAINT, value: "true", effect: NoSchedule}
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
EOF
}

mk_cgroup_root() {
  local h
  for h in $(hierarchies); do
    mkdir -p "$h$CGROUP_ROOT"
    # cpuset starts empty in a new v1 cgroup: give ours the parent's CPUs and memory nodes.
    if [ -f "$h$CGROUP_ROOT/cpuset.cpus" ]; then
      cat "$h/cpuset.cpus" >"$h$CGROUP_ROOT/cpuset.cpus"
      cat "$h/cpuset.mems" >"$h$CGROUP_ROOT/cpuset.mems"
    fi
    if [ -f "$h$CGROUP_ROOT/cpu.shares" ]; then echo "$CPU_SHARES" >"$h$CGROUP_ROOT/cpu.shares"; fi
  done
}

start_bg() { # name binary args...
  local name=$1 bin=$2
  shift 2
  setsid "$bin" "$@" >"$RN/logs/$name.log" 2>&1 </dev/null &
  echo "$!" >"$RN/pids/$name"
  echo "$bin" >"$RN/pids/$name.bin"
}

wait_ok() { # what seconds process-name -- command...
  local what=$1 secs=$2 proc=$3 end
  shift 4
  end=$(($(date +%s) + secs))
  until "$@" >/dev/null 2>&1; do
    pid_alive "$(cat "$RN/pids/$proc")" || fail_up "$proc exited while waiting for $what"
    [ "$(date +%s)" -lt "$end" ] || fail_up "timed out after ${secs}s waiting for $what"
    sleep 0.5
  done
}

fail_up() {
  local f
  log "up FAILED: $*"
  for f in "$RN"/logs/*.log; do
    [ -s "$f" ] || continue
    printf '\n----- last 30 lines of %s -----\n' "$f" >&2
    tail -n 30 "$f" >&2
  done
  cp -r "$RN/logs" "$STATE/realnode-logs" 2>/dev/null || true
  log "logs copied to $STATE/realnode-logs; tearing down what was started"
  cmd_down >&2 || true
  exit 1
}

node_ready() {
  [ "$(kc get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}

cmd_up() {
  local t0 p d pause burner kubeconfig
  t0=$(now_ms)
  [ -f "$STATE/admin.kubeconfig" ] || die "the cluster is not up ($STATE has no admin.kubeconfig): run cluster.sh up first"
  [ ! -e "$RN" ] || die "$RN exists: the real node is up or was not torn down; run cluster.sh real-node down"
  [ "$(id -u)" -eq 0 ] || die "the real node needs root (containerd, runc, cgroups, mounts)"
  for p in "$CONTAINERD" "$CTR" /usr/sbin/runc /usr/lib/cni/loopback /usr/bin/containerd-shim-runc-v2; do
    [ -x "$p" ] || die "missing $p (scripts/setup.sh installs containerd, runc, containernetworking-plugins)"
  done
  "$CLUSTER" build >/dev/null
  local kubelet
  kubelet=$("$CLUSTER" bin kubelet)
  [ -x "$kubelet" ] || die "no kubelet at $kubelet (cluster.sh build)"
  [ -n "$KUBELET_PORT" ] && [ -n "$KUBELET_HEALTHZ_PORT" ] ||
    die "no kubelet ports in $STATE/ports.env: bring the cluster down and up again with this cluster.sh"
  for p in HEADROOM_KUBELET_PORT HEADROOM_KUBELET_HEALTHZ_PORT; do
    [ -z "${!p:-}" ] || die "$p is no longer read: the kubelet's ports are the cluster's ($STATE/ports.env)"
  done
  for p in "$KUBELET_PORT" "$KUBELET_HEALTHZ_PORT"; do
    port_listening "$p" && die "port $p on 127.0.0.1 (the cluster's, $STATE/ports.env) is in use"
  done
  # The version skew policy: a kubelet may not be newer than its API server. The kubelet is the
  # pinned version; a cluster of an older matrix version has no real node.
  local cv kv
  cv=$("$CLUSTER" version)
  kv=$(basename "$kubelet"); kv=${kv#kubelet-}
  [ "$(minor_of "$cv")" -ge "$(minor_of "$kv")" ] ||
    die "the cluster runs Kubernetes $cv; the real node's kubelet is $kv, and a kubelet may not be newer than its API server: the real node runs on a cluster of $kv (or newer) only"
  for d in $(hierarchies); do
    [ ! -e "$d$CGROUP_ROOT" ] || die "cgroup $d$CGROUP_ROOT exists already (left by an earlier run?): cluster.sh real-node down removes it"
  done
  pause=$("$ROOT/tests/cluster/images/build.sh" --ref pause)
  burner=$("$ROOT/tests/cluster/images/build.sh" --ref burner)

  mkdir -p "$RN"/{logs,pids,kubelet,pod-logs,containerd,runc}
  chmod 700 "$RN"
  for p in "${SYSCTLS[@]}"; do echo "$p $(cat "/proc/sys/$p")"; done >"$RN/sysctls.before"
  packet_filter >"$RN/iptables.before"
  for d in "${HOST_DIRS[@]}"; do [ -e "$d" ] || echo "$d"; done >"$RN/host-dirs.created"
  mk_cgroup_root
  write_cni
  write_containerd_config "$pause"
  write_kubelet_config

  start_bg containerd "$CONTAINERD" --config "$RN/containerd.toml"
  wait_ok "containerd's socket" 30 containerd -- "$CTR" --address "$SOCK" version
  for p in pause burner; do
    "$CTR" --address "$SOCK" -n k8s.io images import --no-unpack=false \
      "$("$ROOT/tests/cluster/images/build.sh" --print "$p")" >>"$RN/logs/import.log" 2>&1 \
      || fail_up "ctr images import of the $p image failed (see $RN/logs/import.log)"
  done
  "$CTR" --address "$SOCK" -n k8s.io images check >>"$RN/logs/import.log" 2>&1 || true

  # The node's identity: system:node:<name> in system:nodes, granted the system:node role (the
  # API server runs RBAC only, without the Node authorizer).
  kubeconfig=$("$CLUSTER" user-kubeconfig "system:node:$NODE" system:nodes)
  cp "$kubeconfig" "$RN/kubelet.kubeconfig"
  kc create clusterrolebinding "kube-headroom-real-node-$NODE" --clusterrole=system:node \
    --user="system:node:$NODE" >/dev/null 2>&1 || kc get clusterrolebinding "kube-headroom-real-node-$NODE" >/dev/null \
    || fail_up "cannot bind system:node for system:node:$NODE"

  start_bg kubelet "$kubelet" --config="$RN/kubelet.yaml" --kubeconfig="$RN/kubelet.kubeconfig" \
    --root-dir="$RN/kubelet" --cert-dir="$RN/kubelet/pki" --hostname-override="$NODE" \
    --node-ip=127.0.0.1 --node-labels="$TAINT=true" --v="${HEADROOM_KUBELET_V:-2}"
  echo "$kubelet" >"$RN/pids/kubelet.bin"
  wait_ok "the kubelet's /healthz" 60 kubelet -- curl -sf --max-time 2 "http://127.0.0.1:$KUBELET_HEALTHZ_PORT/healthz"
  wait_ok "node $NODE Ready" "$READY_TIMEOUT" kubelet -- node_ready
  log "up: node $NODE Ready in $(($(now_ms) - t0)) ms (containerd $SOCK, cgroup root $CGROUP_ROOT, images $pause $burner)"
}

# ---------------------------------------------------------------------------------------- down
stop_pid() { # name: SIGTERM, SIGKILL after 15 s; only if the PID still runs the binary we started
  local name=$1 pid bin n=0
  pid=$(cat "$RN/pids/$name" 2>/dev/null || true)
  bin=$(cat "$RN/pids/$name.bin" 2>/dev/null || true)
  [ -n "$pid" ] && pid_is "$pid" "$bin" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  while pid_alive "$pid" && [ $n -lt 150 ]; do sleep 0.1; n=$((n + 1)); done
  if pid_alive "$pid"; then
    log "down: $name ($pid) ignored SIGTERM for 15 s; SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    n=0
    while pid_alive "$pid" && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
  fi
  log "down: stopped $name (pid $pid)"
}

# The shims containerd started for our socket (they outlive containerd by design).
our_shims() {
  local p
  for p in $(pgrep -x containerd-shim 2>/dev/null; pgrep -f '^/usr/bin/containerd-shim-runc-v2 ' 2>/dev/null); do
    tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "-address $SOCK " && echo "$p"
  done
  return 0
}

ctr_k8s() { "$CTR" --address "$SOCK" -n k8s.io "$@"; }

# Every container and sandbox in our containerd: kill its task, delete it. The kubelet is stopped
# first, so nothing restarts them; network namespaces are unmounted afterwards.
remove_containers() {
  local id
  "$CTR" --address "$SOCK" version >/dev/null 2>&1 || return 0
  for id in $(ctr_k8s tasks ls -q 2>/dev/null); do ctr_k8s tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true; done
  for id in $(ctr_k8s tasks ls -q 2>/dev/null); do
    local n=0
    while [ $n -lt 50 ] && ! ctr_k8s tasks delete "$id" >/dev/null 2>&1; do sleep 0.1; n=$((n + 1)); done
  done
  for id in $(ctr_k8s containers ls -q 2>/dev/null); do ctr_k8s containers delete "$id" >/dev/null 2>&1 || true; done
}

our_mounts() { # mount points under the state dir, deepest first
  awk -v d="$RN/" 'index($2, d) == 1 {print $2}' /proc/self/mounts | awk '{print length, $0}' | sort -rn | cut -d' ' -f2-
}

# Processes still in our cgroups: containers whose shim died with the session that started them
# (a stopped session kills containerd and the kubelet but not always what runs in the pods).
# They are ours by construction (only our shims put processes there); they hold the rootfs
# mounts busy, so they go before the mounts do.
kill_cgroup_procs() {
  local h f p n=0
  for h in $(hierarchies); do
    [ -d "$h$CGROUP_ROOT" ] || continue
    while IFS= read -r f; do
      while read -r p; do [ -n "$p" ] && kill -KILL "$p" 2>/dev/null || true; done <"$f"
    done < <(find "$h$CGROUP_ROOT" -name cgroup.procs)
  done
  while [ $n -lt 50 ] && [ -n "$(cgroup_procs)" ]; do sleep 0.1; n=$((n + 1)); done
  [ -z "$(cgroup_procs)" ] || log "down: processes left in our cgroups: $(cgroup_procs | tr '\n' ' ')"
}
cgroup_procs() {
  local h
  for h in $(hierarchies); do
    [ -d "$h$CGROUP_ROOT" ] || continue
    find "$h$CGROUP_ROOT" -name cgroup.procs -exec cat {} + 2>/dev/null
  done | sort -u
}

rm_cgroups() { # our cgroup root in every hierarchy, children first (rmdir: only empty cgroups go)
  local h c
  for h in $(hierarchies); do
    [ -d "$h$CGROUP_ROOT" ] || continue
    while IFS= read -r c; do rmdir "$c" 2>/dev/null || log "down: cannot remove cgroup $c"; done \
      < <(find "$h$CGROUP_ROOT" -depth -type d)
  done
}

# The machine's packet-filter rules (IPv4 and IPv6), without counters or comments: what the real
# node must leave as it found it. Empty when iptables is not installed.
packet_filter() {
  local t
  for t in iptables-save ip6tables-save; do
    command -v "$t" >/dev/null 2>&1 || continue
    "$t" 2>/dev/null | sed -e '/^#/d' -e 's/\[[0-9]*:[0-9]*\]//'
  done
}

restore_sysctls() {
  local name val
  [ -f "$RN/sysctls.before" ] || return 0
  while read -r name val; do
    [ "$(cat "/proc/sys/$name")" = "$val" ] || { echo "$val" >"/proc/sys/$name" && log "down: restored $name = $val"; }
  done <"$RN/sysctls.before"
}

cmd_down() {
  [ -d "$RN" ] || { log "down: nothing to do ($RN does not exist)"; return 0; }
  local p d
  stop_pid kubelet
  remove_containers
  stop_pid containerd
  for p in $(our_shims); do kill -KILL "$p" 2>/dev/null || true; done
  kill_cgroup_procs
  # Container log links the kubelet made in the compiled-in /var/log/containers.
  if [ -d /var/log/containers ]; then
    find /var/log/containers -maxdepth 1 -type l -lname "$RN/*" -delete 2>/dev/null || true
  fi
  while IFS= read -r p; do umount "$p" 2>/dev/null || umount -l "$p" 2>/dev/null || log "down: cannot unmount $p"; done < <(our_mounts)
  rm_cgroups
  restore_sysctls
  if [ -f "$RN/host-dirs.created" ]; then
    while IFS= read -r d; do
      [ -n "$d" ] || continue
      # Only what the kubelet puts there: its device-plugin socket and checkpoint.
      rm -f "$d"/kubelet.sock "$d"/kubelet_internal_checkpoint 2>/dev/null || true
      rmdir "$d" 2>/dev/null || log "down: $d is not empty; left in place"
    done <"$RN/host-dirs.created"
  fi
  # The kubelet's device-plugin socket and checkpoint sit at compiled-in paths whatever its
  # --root-dir: once our kubelet ran, the ones there are its own (it replaces what it finds at
  # start), also where the directory was there before us (a run stopped without `down` left
  # it). Left in place only while something listens on the socket: then it is not ours.
  local dp=/var/lib/kubelet/device-plugins
  if [ -e "$dp/kubelet.sock" ] && ! ss -Hxl 2>/dev/null | awk '{print $5}' | grep -qxF "$dp/kubelet.sock"; then
    rm -f "$dp/kubelet.sock" "$dp/kubelet_internal_checkpoint"
  fi
  if [ -f "$STATE/admin.kubeconfig" ] && kc get --raw /readyz >/dev/null 2>&1; then
    kc delete node "$NODE" --ignore-not-found --wait=false >/dev/null 2>&1 || true
    kc delete clusterrolebinding "kube-headroom-real-node-$NODE" --ignore-not-found >/dev/null 2>&1 || true
  fi
  cp "$RN/sysctls.before" "$STATE/realnode-sysctls.before" 2>/dev/null || true
  cp "$RN/iptables.before" "$STATE/realnode-iptables.before" 2>/dev/null || true
  if [ -n "$(our_mounts)" ]; then die "down: mounts left under $RN; state kept"; fi
  rm -rf "$RN"
  log "down: done"
}

# ------------------------------------------------------------------------------- status, check
cmd_status() {
  local c
  [ -d "$RN" ] || { echo "real node: down (no $RN)"; return 3; }
  for c in containerd kubelet; do
    if pid_is "$(cat "$RN/pids/$c" 2>/dev/null)" "$(cat "$RN/pids/$c.bin" 2>/dev/null)"; then
      printf '%-12s running  pid %s\n' "$c" "$(cat "$RN/pids/$c")"
    else
      printf '%-12s DOWN\n' "$c"
    fi
  done
  node_ready && echo "node $NODE Ready" || echo "node $NODE not Ready"
}

# Everything `up` makes, looked for after `down`: processes, cgroups in every hierarchy, mounts
# and network namespaces under the state dir, the sysctls, the packet-filter rules, the host paths
# it created.
cmd_check_clean() {
  local left=() h p name val
  for p in $(our_shims); do left+=("process: shim $p"); done
  for p in $(pgrep -f "$RN/" 2>/dev/null); do [ "$p" = $$ ] || left+=("process: $p $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"); done
  for h in $(hierarchies); do [ ! -e "$h$CGROUP_ROOT" ] || left+=("cgroup: $h$CGROUP_ROOT"); done
  for p in $(our_mounts); do left+=("mount: $p"); done
  [ ! -e "$RN" ] || left+=("state: $RN")
  if [ -f "$STATE/realnode-sysctls.before" ]; then
    while read -r name val; do
      [ "$(cat "/proc/sys/$name")" = "$val" ] || left+=("sysctl: $name = $(cat "/proc/sys/$name"), was $val")
    done <"$STATE/realnode-sysctls.before"
  fi
  if [ -f "$STATE/realnode-iptables.before" ] && ! packet_filter | cmp -s - "$STATE/realnode-iptables.before"; then
    left+=("iptables: rules differ from before up: $({ packet_filter | diff "$STATE/realnode-iptables.before" - || true; } | grep '^[<>]' | head -5 | tr '\n' ' ' || true)")
  fi
  for p in /var/lib/kubelet/device-plugins/kubelet.sock; do [ ! -e "$p" ] || left+=("host path: $p"); done
  if [ ${#left[@]} -gt 0 ]; then
    printf 'left behind: %s\n' "${left[@]}"
    return 1
  fi
  echo "clean: no process, cgroup ($CGROUP_ROOT), mount, network namespace or state left; sysctls and packet-filter rules as before"
}

cmd_env() {
  cat <<EOF
REAL_NODE=$NODE
REAL_CGROUP_ROOT=$CGROUP_ROOT
REAL_SOCK=$SOCK
REAL_STATE=$RN
REAL_TAINT=$TAINT
REAL_BURNER=$("$ROOT/tests/cluster/images/build.sh" --ref burner)
EOF
}

case ${1:-} in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  check-clean) cmd_check_clean ;;
  env) cmd_env ;;
  *) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
