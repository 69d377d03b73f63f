# realnode.sh — what the real-node end-to-end scripts (e2e_realnode_*.sh) share, on top of
# common.sh: the real node's names (cluster.sh real-node env), burner pods that land only there, and
# reading a container's CFS quota, CPU usage and throttling straight from its cgroup (cgroup v1:
# cpu and cpuacct hierarchies under the node's own cgroup root). Sourced after common.sh.
# shellcheck shell=bash
eval "$("$CLUSTER" real-node env)"
REAL_CG_CPU=/sys/fs/cgroup/cpu$REAL_CGROUP_ROOT
REAL_CG_CPUACCT=/sys/fs/cgroup/cpuacct$REAL_CGROUP_ROOT

require_real_node() {
  require_cluster
  [ "$(k get node "$REAL_NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ] \
    || { echo "FAIL  real node $REAL_NODE is not Ready (tests/cluster/cluster.sh real-node up)"; echo "0 passed, 1 failed"; exit 1; }
}

# import_image WORK: the project's image (scripts/release/image.sh, of $HEADROOM) imported into
# the real node's containerd as a node would pull it, checked; sets ref, and repo and tag from it.
# Done once for the suite's real-node tests, not once per test: the archive image.sh built is
# remembered under a key over everything it reads (image_key), so the next test (of this run or
# of a later one) takes the same archive without building it again; and the import is skipped
# when the node's containerd already holds the archive's ref at the archive's manifest digest.
# Either way the check is the same: the node has this binary's image, by digest.
IMAGE_CACHE=${HEADROOM_CACHE:-$HOME/.cache/kube-headroom}/images
# image_key: a hash of image.sh's inputs: the binary, image.sh and the scripts it runs, the
# project's LICENSE and NOTICE (copied in), and the package database its libraries, their
# md5sums and os-release are taken from.
image_key() {
  sha256sum "$HEADROOM" "$ROOT"/scripts/release/{image,oci-archive,deblibs,containerd}.sh \
    "$ROOT/LICENSE" "$ROOT/NOTICE" /var/lib/dpkg/status | awk '{print $1}' | sha256sum | cut -c1-32
}
node_digest() { # ref -> the manifest digest the real node's containerd holds it at ("" if none)
  ctr --address "$REAL_SOCK" -n k8s.io images ls "name==$1" 2>/dev/null | awk 'NR == 2 {print $3}'
}
import_image() {
  local work=$1 memo archive="" digest="" have="" how=built imported=no
  memo=$IMAGE_CACHE/input-$(image_key) ref=""
  [ ! -f "$memo" ] || archive=$(cat "$memo")
  if [ -n "$archive" ] && [ -f "$archive" ]; then
    how="cached ($memo)"
    touch "$archive" # image.sh keeps the newest three archives: this one stays among them
  else
    archive=$("$ROOT/scripts/release/image.sh" --print --bin "$HEADROOM" 2>"$work/image.err")
    [ ! -f "$archive" ] || { echo "$archive" >"$memo.$$" && mv -f "$memo.$$" "$memo"; }
  fi
  if [ -f "$archive" ]; then
    ref=$(tar -xOf "$archive" index.json | jq -r '.manifests[0].annotations["io.containerd.image.name"] // ""')
    digest=$(tar -xOf "$archive" index.json | jq -r '.manifests[0].digest // ""')
  fi
  [ -z "$ref" ] || have=$(node_digest "$ref")
  if [ -n "$ref" ] && [ "$have" != "$digest" ]; then
    ctr --address "$REAL_SOCK" -n k8s.io images import "$archive" >>"$work/image.err" 2>&1
    have=$(node_digest "$ref") imported=yes
  fi
  WHY="archive '$archive' ($how), ref '$ref' at '$digest', the node's '$have': $(tail -n 2 "$work/image.err" 2>/dev/null)"
  local ok=0
  [ -z "$ref" ] || [ -z "$digest" ] || [ "$have" != "$digest" ] || ok=1
  check "the project's image is in the real node's containerd ($ref, archive $how, imported: $imported)" \
    [ "$ok" = 1 ]
  repo=${ref%:*}
  tag=${ref##*:}
}

# chart_machine_values METRICS_PORT: the chart values this machine forces on an install of the
# chart on the real node, and nothing else (e2e_webhook_certmodes.sh; tests/cluster/README.md):
# the project's image as import_image left it in $repo and $tag (pullPolicy Never: no registry);
# the CRD is the suite's (crds.install=false); pods with a network namespace of their own reach
# nothing, so hostNetwork on 127.0.0.1, on the real node (its selector and toleration); the
# replicas share the node's ports (hostNetworkReusePort); metrics on a free port of the host; the
# kubernetes Service has no kube-proxy behind it (KUBERNETES_SERVICE_HOST/PORT).
chart_machine_values() { # metrics-port
  local api_port
  api_port=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}' | sed 's#.*:##')
  cat <<YAML
image: {repository: "$repo", tag: "$tag", pullPolicy: Never}
crds: {install: false}
hostNetwork: true
hostNetworkReusePort: true
listenAddress: 127.0.0.1
nodeSelector: {$REAL_TAINT: "true"}
tolerations: [{key: $REAL_TAINT, operator: Exists, effect: NoSchedule}]
metrics: {port: $1}
extraEnv:
- {name: KUBERNETES_SERVICE_HOST, value: 127.0.0.1}
- {name: KUBERNETES_SERVICE_PORT, value: "$api_port"}
YAML
}

# burner_pod ns name cpu-request [cpu-limit] [threads] [kind: Pod|Job]: a burner that tolerates the
# real node's taint and selects it; threads default 2 (it can use the whole machine).
burner_pod() {
  local ns=$1 name=$2 req=$3 lim=${4:-} threads=${5:-2} limits=""
  [ -z "$lim" ] || limits="limits: {cpu: \"$lim\", memory: 64Mi}"
  k apply -f - >/dev/null <<POD
apiVersion: v1
kind: Pod
metadata: {name: $name, namespace: $ns}
spec:
$(burner_spec "$req" "$limits" "$threads")
POD
}
burner_spec() { # request limits-line threads: the pod spec body (2-space indented)
  cat <<SPEC
  nodeSelector: {$REAL_TAINT: "true"}
  tolerations: [{key: $REAL_TAINT, operator: Exists, effect: NoSchedule}]
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: $REAL_BURNER
    imagePullPolicy: Never
    args: ["$3"]
    resources:
      requests: {cpu: "$1", memory: 32Mi}
      $2
SPEC
}

container_id() { # ns pod -> the container's runtime ID (no scheme)
  local id
  id=$(k -n "$1" get pod "$2" -o jsonpath='{.status.containerStatuses[0].containerID}')
  echo "${id#containerd://}"
}
restart_count() { k -n "$1" get pod "$2" -o jsonpath='{.status.containerStatuses[0].restartCount}'; }
# cg_dir hierarchy-root ns pod: the container's cgroup directory, found through the pod's UID and
# the container ID under the node's cgroup root (kubepods[/burstable|/besteffort]/pod<uid>/<id>).
cg_dir() {
  local root=$1 uid cid d
  uid=$(k -n "$2" get pod "$3" -o jsonpath='{.metadata.uid}')
  cid=$(container_id "$2" "$3")
  [ -n "$uid" ] && [ -n "$cid" ] || return 1
  d=$(find "$root/kubepods" -maxdepth 3 -type d -name "pod$uid" 2>/dev/null | head -1)
  [ -n "$d" ] && [ -d "$d/$cid" ] || return 1
  echo "$d/$cid"
}
cg_quota() { cat "$(cg_dir "$REAL_CG_CPU" "$1" "$2")/cpu.cfs_quota_us"; }       # ns pod -> µs per period
cg_period() { cat "$(cg_dir "$REAL_CG_CPU" "$1" "$2")/cpu.cfs_period_us"; }
cg_usage() { cat "$(cg_dir "$REAL_CG_CPUACCT" "$1" "$2")/cpuacct.usage"; }      # ns pod -> ns of CPU
cg_throttled() { awk '$1 == "nr_throttled" {print $2}' "$(cg_dir "$REAL_CG_CPU" "$1" "$2")/cpu.stat"; }
cg_periods() { awk '$1 == "nr_periods" {print $2}' "$(cg_dir "$REAL_CG_CPU" "$1" "$2")/cpu.stat"; }
cg_throttled_ns() { awk '$1 == "throttled_time" {print $2}' "$(cg_dir "$REAL_CG_CPU" "$1" "$2")/cpu.stat"; }
quota_is() { [ "$(cg_quota "$1" "$2" 2>/dev/null)" = "$3" ]; }                  # ns pod µs
# millicores -> the quota the kubelet writes for it (period 100 ms; 1m = 100 µs)
quota_of_milli() { echo $(($1 * 100)); }
milli() { # a CPU quantity ("1500m", "2", "0.5") -> millicores
  case $1 in
    *m) echo "${1%m}" ;;
    *) awk -v q="$1" 'BEGIN {printf "%d\n", q * 1000 + 0.5}' ;;
  esac
}

# The machine's idle CPU over SECONDS, in millicores, from /proc/stat (idle + iowait jiffies):
# what "the CPU the machine can give" a new burner is at most, with other load running.
machine_idle_milli() {
  local s=$1 a b hz
  hz=$(getconf CLK_TCK)
  a=$(awk '/^cpu / {print $5 + $6}' /proc/stat)
  sleep "$s"
  b=$(awk '/^cpu / {print $5 + $6}' /proc/stat)
  echo $(((b - a) * 1000 / hz / s))
}
