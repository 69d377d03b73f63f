#!/usr/bin/env bash
# kube-headroom test control plane: a real etcd + kube-apiserver + kube-controller-manager +
# kube-scheduler, and kwok (simulated nodes and kubelets), all built from the official Go modules
# at pinned versions (versions.env) and run on 127.0.0.1; helm (the chart's tests) is built the same
# way, and so are the tools built only on demand (TOOLS: syft, the image's SBOM; cert-manager, the
# webhook's certificates in e2e_webhook_certmodes). See README.md in this directory.
#
#   cluster.sh build [--matrix]      build (or reuse) the binaries, cached by version: the pinned
#                                    ones (K8S_VERSION), the control plane of HEADROOM_K8S_VERSION
#                                    when set, and with --matrix that of every K8S_MATRIX version
#   cluster.sh build --tools         build (or reuse) the on-demand tools alone (TOOLS), each under
#                                    a lock of its own: never waits for a control plane's build
#   cluster.sh tool NAME             build (or reuse) one on-demand tool, print its path
#   cluster.sh up                    start everything, wait until ready (runs `build` first); the
#                                    control plane is HEADROOM_K8S_VERSION's (default K8S_VERSION);
#                                    every port comes from one base chosen free (ports.env)
#   cluster.sh down                  stop exactly the processes `up` started, remove the state
#   cluster.sh status                what runs, and whether the API server is ready
#   cluster.sh kubeconfig            print the admin kubeconfig path
#   cluster.sh env                   print `export KUBECONFIG=... PATH=...` (use with eval)
#   cluster.sh ports                 print the cluster's ports ($HEADROOM_CLUSTER_DIR/ports.env)
#   cluster.sh version               print the cluster's Kubernetes version (the control plane's)
#   cluster.sh user-kubeconfig NAME [GROUP...]
#                                    issue a client certificate for user NAME (groups = O=) and
#                                    print the path of a kubeconfig using it (no RBAC is granted)
#   cluster.sh serving-cert NAME     issue a serving certificate for 127.0.0.1 signed by the
#                                    cluster's CA (for a test's TLS listener: the fault proxy)
#                                    and print the paths of its certificate and key
#   cluster.sh kubectl ARGS...       run the cluster's kubectl with the admin kubeconfig
#   cluster.sh bin NAME [VERSION]    print the path of a built binary (kubectl, kwok, ...; the
#                                    control plane's at VERSION, default the cluster's)
#   cluster.sh restart-apiserver [SECONDS]
#                                    SIGKILL the API server, keep it down SECONDS (default 3),
#                                    start it again with the same flags, wait until ready
#   cluster.sh freeze-apiserver SECONDS
#                                    SIGSTOP the API server for SECONDS, then SIGCONT it (its
#                                    sockets stay open: clients hang instead of being refused)
#   cluster.sh audit                 print the audit log path (JSON lines, see README.md); exits 1
#                                    when the cluster was started with HEADROOM_AUDIT=off
#   cluster.sh second-apiserver up PORT [FLAG...] | down
#                                    another kube-apiserver on the same etcd (an HA pair) with the
#                                    first one's flags, PORT, its own audit log and FLAGs (e.g.
#                                    --feature-gates=WatchList=false); `down` stops it (so does
#                                    `cluster.sh down`)
#   cluster.sh real-node up|down|status|check-clean|env
#                                    one real node (kubelet, containerd, runc) beside kwok's:
#                                    realnode.sh; `down` takes it down first
#
# `up` while the cluster is already up and healthy prints the status and exits 0; `up` over a
# partly running cluster fails and asks for `down` (stale state with nothing running is removed).
# `down` when nothing runs exits 0.
#
# Ports: `up` takes a base B (HEADROOM_PORT_BASE, else the first of 15000, 15100, ... 19900 where
# none of B..B+99 listens and no live cluster holds a claim, /tmp/kube-headroom-ports/B), records
# every port in $HEADROOM_CLUSTER_DIR/ports.env and every other command reads them from there: so
# the suite's clusters, the demo's and a developer's never share one (README.md "Ports").
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
. "$HERE/versions.env"

CACHE_DIR=${HEADROOM_CACHE:-$HOME/.cache/kube-headroom}
BIN_DIR=$CACHE_DIR/bin
STATE=${HEADROOM_CLUSTER_DIR:-/tmp/kube-headroom-cluster}
# Port bases: B = 15000, 15100, ... 19900, ports B..B+99 (the layout is in write_ports). Below
# 20000, where the tests and scripts take ports for their own listeners (tests/lib/common.sh
# free_port: 20000-31999), and below the ephemeral range (32768-), so an outgoing connection never
# takes one. A claim /tmp/kube-headroom-ports/B names the state dir that holds B.
PORT_FIRST=15000 PORT_LAST=19900 PORT_STEP=100
CLAIMS=${HEADROOM_PORT_CLAIMS:-/tmp/kube-headroom-ports}
STAGES=${HEADROOM_KWOK_STAGES:-$HERE/kwok-stages.yaml}
GOFLAGS_P=${HEADROOM_GO_P:-2}
READY_TIMEOUT=${HEADROOM_READY_TIMEOUT:-90}
# The API server's audit record (write_audit_policy): on for the test suite, which asserts from it;
# off for the demo (scripts/demo.sh), which nobody audits. Read at `up` and kept in the state dir,
# so a restart-apiserver keeps what `up` chose.
AUDIT=${HEADROOM_AUDIT:-on}
case $AUDIT in on | off) ;; *) echo "cluster: ERROR: HEADROOM_AUDIT must be on or off, not '$AUDIT'" >&2; exit 2 ;; esac
# Start order; `down` stops in reverse.
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
K8S_BINS=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
# The control plane proper: built per Kubernetes version (the matrix). kubectl, the kubelet, etcd,
# kwok and helm are the pinned ones whatever the cluster's version.
CP_BINS=(kube-apiserver kube-controller-manager kube-scheduler)
# Built only when asked for (`tool NAME`, `build --tools`), never by `build` or `up`: nothing of a
# cluster needs them. syft: the SBOM of the runtime image (scripts/release/sbom.sh). cert-manager:
# its controller and CA injector and its CRDs, in one directory (tests/lib/certmanager.sh runs them).
# vpa-crd: the VerticalPodAutoscaler CRD, a file of its module (tests/e2e/e2e_foreign_writer.sh).
TOOLS=(syft cert-manager vpa-crd)

log() { printf 'cluster: %s\n' "$*" >&2; }
die() { printf 'cluster: ERROR: %s\n' "$*" >&2; exit 1; }
now_ms() { date +%s%3N; }
secs_since() { local s=$1 e; e=$(now_ms); printf '%d.%01d' $(((e - s) / 1000)) $((((e - s) % 1000) / 100)); }

# The supported range, stated once for the project in docs/design.md §12 (preflight refuses the
# same versions): 1.35 and newer, where in-place resize through pods/resize is GA. A version the
# scripts can run is the pinned one or one of K8S_MATRIX (each has a module under k8s/).
check_k8s_version() {
  local v=$1 minor
  [[ $v =~ ^v1\.([0-9]+)\.[0-9]+$ ]] || die "Kubernetes version '$v' is not of the form v1.MINOR.PATCH"
  minor=${BASH_REMATCH[1]}
  [ "$minor" -ge 35 ] || die "Kubernetes $v is not supported: kube-headroom supports 1.35 and newer, where in-place resize (pods/resize) is GA; 1.33 and 1.34 have it in beta, whose subresource and conditions differ (docs/design.md §12)"
  [ "$v" = "$K8S_VERSION" ] || [ -f "$HERE/k8s/$v/go.mod" ] ||
    die "no module for Kubernetes $v: add it to K8S_MATRIX (versions.env) and run tests/cluster/k8s/gen-gomod.sh $v"
}
# The cluster's Kubernetes version: what `up` recorded in the state dir; before `up`,
# HEADROOM_K8S_VERSION or the pinned one.
if [ -f "$STATE/k8s.version" ]; then
  KV=$(cat "$STATE/k8s.version")
else
  KV=${HEADROOM_K8S_VERSION:-$K8S_VERSION}
fi

version_of() { # name [k8s version]
  case $1 in
    etcd) echo "$ETCD_VERSION" ;;
    kwok) echo "$KWOK_VERSION" ;;
    helm) echo "$HELM_VERSION" ;;
    syft) echo "$SYFT_VERSION" ;;
    cert-manager) echo "$CERT_MANAGER_VERSION" ;;
    vpa-crd) echo "$VPA_VERSION" ;;
    kube-apiserver | kube-controller-manager | kube-scheduler) echo "${2:-$KV}" ;;
    *) echo "$K8S_VERSION" ;;
  esac
}
bin_path() { echo "$BIN_DIR/$1-$(version_of "$@")"; }

# ----------------------------------------------------------------------------------------- ports
# ports.env: PORT_BASE and every port of the cluster, written once by `up` (pick_ports) and read by
# every other command, realnode.sh, the demo and the tests. Offsets from the base:
#   +0 kube-apiserver   +1 etcd client   +2 etcd peer   +3 kube-controller-manager
#   +4 kube-scheduler   +5 kwok (also the fake nodes' kubelet port)
#   +10 the real node's kubelet   +11 its healthz
#   +50..+99 for the cluster's own users (scripts/demo.sh: its controller's metrics at +50)
write_ports() { # base
  local b=$1
  cat >"$STATE/ports.env" <<EOF
# The ports of this cluster (cluster.sh up): base $b, ports $b-$((b + 99)); claim $CLAIMS/$b.
PORT_BASE=$b
API_PORT=$b
ETCD_PORT=$((b + 1))
ETCD_PEER_PORT=$((b + 2))
KCM_PORT=$((b + 3))
SCHED_PORT=$((b + 4))
KWOK_PORT=$((b + 5))
KUBELET_PORT=$((b + 10))
KUBELET_HEALTHZ_PORT=$((b + 11))
USER_PORT_FIRST=$((b + 50))
EOF
}
PORT_BASE="" API_PORT="" ETCD_PORT="" ETCD_PEER_PORT="" KCM_PORT="" SCHED_PORT="" KWOK_PORT=""
KUBELET_PORT="" KUBELET_HEALTHZ_PORT=""
load_ports() {
  if [ -f "$STATE/ports.env" ]; then
    # shellcheck disable=SC1091
    . "$STATE/ports.env"
  elif [ -f "$STATE/admin.kubeconfig" ]; then
    # A cluster started before ports.env existed: its API port is in its kubeconfig.
    API_PORT=$(sed -n 's#^ *server: https://127.0.0.1:\([0-9]*\)$#\1#p' "$STATE/admin.kubeconfig" | head -1)
  fi
}
load_ports
need_ports() { [ -n "$API_PORT" ] || die "the cluster is not up (no $STATE/ports.env)"; }

listening_ports() { ss -Hltnu 2>/dev/null | awk '{n = split($5, a, ":"); print a[n]}' | sort -un; }
# A claim is live while the state dir it names records that base; else (the dir gone, or up
# again on another base) it is stale and may be taken.
claim_owner() { # base -> the live state dir holding it (exit 1 when none)
  local dir
  dir=$(cat "$CLAIMS/$1" 2>/dev/null) || return 1
  [ -n "$dir" ] && [ "$(sed -n 's/^PORT_BASE=//p' "$dir/ports.env" 2>/dev/null)" = "$1" ] || return 1
  echo "$dir"
}
base_busy() { # base listening-ports-file -> the ports of B..B+99 that listen (exit 1 when none)
  local out
  out=$(awk -v lo="$1" -v hi=$(($1 + 99)) '$1 >= lo && $1 <= hi' "$2" | tr '\n' ' ')
  [ -n "$out" ] && echo "$out"
}
# Under a lock (flock on $CLAIMS/.lock), so clusters coming up at once (the suite's main and
# matrix clusters) never take the same base: the claim and ports.env are written before it is let go.
pick_ports() {
  local b lk busy owner lp v
  for v in ETCD ETCD_PEER APISERVER KCM SCHEDULER KWOK KUBELET KUBELET_HEALTHZ; do
    v=HEADROOM_${v}_PORT
    [ -z "${!v:-}" ] ||
      die "$v is no longer read: every port derives from one base (HEADROOM_PORT_BASE, or chosen free at up; tests/cluster/README.md \"Ports\")"
  done
  mkdir -p "$CLAIMS"
  chmod 1777 "$CLAIMS" 2>/dev/null || true
  exec {lk}>>"$CLAIMS/.lock"
  flock -w 60 "$lk" || die "up: cannot lock $CLAIMS/.lock within 60 s"
  lp=$(mktemp)
  listening_ports >"$lp"
  if [ -n "${HEADROOM_PORT_BASE:-}" ]; then
    b=$HEADROOM_PORT_BASE
    [[ $b =~ ^[0-9]+$ ]] && [ "$b" -ge 1024 ] && [ $((b + 99)) -le 65535 ] ||
      { rm -f "$lp"; die "HEADROOM_PORT_BASE=$b: want a number, 1024 <= base, base + 99 <= 65535"; }
    [ $((b + 99)) -lt 20000 ] || [ "$b" -gt 31999 ] ||
      { rm -f "$lp"; die "HEADROOM_PORT_BASE=$b: ports $b-$((b + 99)) meet 20000-31999, where tests take ports for their own listeners (free_port)"; }
    if owner=$(claim_owner "$b") && [ "$owner" != "$STATE" ]; then
      rm -f "$lp"; die "up: port base $b is held by the cluster in $owner ($CLAIMS/$b)"
    fi
    if busy=$(base_busy "$b" "$lp"); then
      ss -Hltnup 2>/dev/null | awk -v lo="$b" -v hi=$((b + 99)) '{n = split($5, a, ":"); if (a[n] >= lo && a[n] <= hi) print}' >&2 || true
      rm -f "$lp"; die "up: port(s) ${busy% } on 127.0.0.1 already in use (HEADROOM_PORT_BASE=$b); free them or choose another base"
    fi
  else
    for ((b = PORT_FIRST; b <= PORT_LAST; b += PORT_STEP)); do
      if owner=$(claim_owner "$b") && [ "$owner" != "$STATE" ]; then continue; fi
      base_busy "$b" "$lp" >/dev/null && continue
      break
    done
    [ "$b" -le "$PORT_LAST" ] || { rm -f "$lp"; die "up: no free port base in $PORT_FIRST-$PORT_LAST (each one claimed or listening: ls $CLAIMS)"; }
  fi
  rm -f "$lp"
  mkdir -p "$STATE"
  chmod 700 "$STATE"
  write_ports "$b"
  echo "$STATE" >"$CLAIMS/$b"
  flock -u "$lk"
  exec {lk}>&-
  load_ports
}
release_ports() {
  [ -n "$PORT_BASE" ] && [ "$(cat "$CLAIMS/$PORT_BASE" 2>/dev/null)" = "$STATE" ] || return 0
  rm -f "$CLAIMS/$PORT_BASE"
}

# ----------------------------------------------------------------------------------------- build
# The stamp records the version and a hash of the module files it was built from; a warm build
# only compares stamps (no go command runs). The pinned version's binaries come from k8s/ (and
# kubelet/), a matrix version's control plane from k8s/<version>/ (k8s/gen-gomod.sh VERSION).
module_of() { # name [k8s version]
  case $1 in
    etcd | kwok | helm | kubelet | syft) echo "$1" ;;
    kubectl) echo k8s ;;
    *) if [ "$(version_of "$@")" = "$K8S_VERSION" ]; then echo k8s; else echo "k8s/$(version_of "$@")"; fi ;;
  esac
}
stamp_want() { # name [k8s version]
  local mod
  # cert-manager has no module here: its own go.mod and go.sum, in the version's module zip.
  if [ "$1" = cert-manager ] || [ "$1" = vpa-crd ]; then
    printf '%s %s%s\n' "$1" "$(version_of "$@")" "$(flags_stamp "$1")"
    return 0
  fi
  mod=$(module_of "$@")
  printf '%s %s %s%s\n' "$1" "$(version_of "$@")" \
    "$(cat "$HERE/$mod/go.mod" "$HERE/$mod/go.sum" | sha256sum | cut -c1-16)" \
    "$(flags_stamp "$1")"
}
# The part of a stamp that a build's own flags make: helm's ldflags, syft's ldflags and tags.
flags_stamp() { # name
  case $1 in
    helm) echo " $(helm_ldflags | sha256sum | cut -c1-16)" ;;
    syft) echo " $({ syft_ldflags; echo "$SYFT_TAGS"; } | sha256sum | cut -c1-16)" ;;
    cert-manager) echo " $(declare -f build_cert_manager | sha256sum | cut -c1-16)" ;;
  esac
}
is_built() { # name [k8s version]
  local b
  b=$(bin_path "$@")
  [ -x "$b" ] && [ -f "$b.stamp" ] && [ "$(cat "$b.stamp")" = "$(stamp_want "$@")" ]
}

# Release date of a module as the Go module proxy reports it: deterministic. `go list -m`, not `go
# mod download -json`, which (Go 1.26) prints no Time for a version asked for by name: the
# date was 1970-01-01 in every binary until then.
proxy_date() { # module version
  local date
  date=$(go list -m -json "$1@$2" | sed -n 's/^[[:space:]]*"Time": "\(.*\)",\{0,1\}$/\1/p' | head -1)
  [ -n "$date" ] || date=1970-01-01T00:00:00Z
  date=${date%%.*}; date=${date%Z}Z
  echo "$date"
}

k8s_ldflags() { # version
  local v=$1 maj min date pkg out="-s -w"
  maj=${v#v}; maj=${maj%%.*}
  min=${v#v*.}; min=${min%%.*}
  date=$(proxy_date k8s.io/kubernetes "$v")
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    out+=" -X $pkg.gitVersion=$v -X $pkg.gitMajor=$maj -X $pkg.gitMinor=$min"
    out+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date"
  done
  echo "$out"
}

# What helm's own Makefile stamps: the version it reports, a clean tree, and the Kubernetes
# version `helm template` and `helm lint` assume without a cluster (its client-go's minor: 1.<minor>).
helm_ldflags() {
  local cg minor p
  cg=$(sed -n 's#^[[:space:]]*k8s.io/client-go v0\.\([0-9]*\)\..*#\1#p' "$HERE/helm/go.mod")
  minor=${cg:-20}
  printf '%s' "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
  printf '%s' " -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  for p in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
    printf '%s' " -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$minor"
  done
  echo
}

# What syft's release build stamps (its .goreleaser.yaml: CGO_ENABLED=0, the tags below, -X
# main.version={{.Version}}, the tag without its v, main.buildDate, main.gitDescription, main.gitCommit).
# The date is the module's time on the Go module proxy (deterministic), passed at build time only:
# it follows from the version, which the stamp holds. The proxy does not say the commit, so
# `syft version` reports its GitCommit as "[not provided]".
SYFT_TAGS=containers_image_openpgp,exclude_graphdriver_btrfs
syft_ldflags() { # [build date]
  printf '%s' "-s -w -X main.version=${SYFT_VERSION#v} -X main.gitDescription=$SYFT_VERSION"
  echo " -X main.buildDate=${1:-}"
}

# cert-manager CERT_MANAGER_VERSION into DIR: bin/controller and bin/cainjector, and crds.yaml (its
# CRDs). Its root module is the newest whose zip holds cmd/controller and cmd/cainjector (v1.11.5:
# later ones moved them into modules of their own that are not published), and `go install
# pkg@version` refuses it (its go.mod has replace directives), so its module directory is copied
# from the module cache and built there, with its own go.mod and go.sum. Its CRDs in deploy/crds
# are Helm templates of its chart: the templated label lines go (the CRDs are the same without).
build_cert_manager() { # dir
  local out=$1 src mod
  mod=$(go mod download -json "github.com/cert-manager/cert-manager@$CERT_MANAGER_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
  [ -n "$mod" ] && [ -d "$mod/cmd/controller" ] || die "build: no cert-manager $CERT_MANAGER_VERSION module with cmd/controller"
  src=$out/src
  cp -r "$mod" "$src"
  chmod -R u+w "$src"
  mkdir -p "$out/bin"
  (cd "$src" && CGO_ENABLED=0 go build -p "$GOFLAGS_P" -trimpath -ldflags="-s -w" -o "$out/bin/" ./cmd/controller ./cmd/cainjector)
  for f in "$src"/deploy/crds/crd-*.yaml; do
    echo ---
    grep -v -e '{{' -e '^  labels:$' "$f"
  done >"$out/crds.yaml"
  rm -rf "$src"
}

# The VPA CRD as its module ships it (nothing is built): vpa-crd/crd.yaml.
fetch_vpa_crd() { # dir
  local out=$1 mod
  mod=$(go mod download -json "k8s.io/autoscaler/vertical-pod-autoscaler@$VPA_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
  [ -n "$mod" ] && [ -f "$mod/deploy/vpa-v1-crd-gen.yaml" ] ||
    die "build: no vertical-pod-autoscaler $VPA_VERSION module with deploy/vpa-v1-crd-gen.yaml"
  cp "$mod/deploy/vpa-v1-crd-gen.yaml" "$out/crd.yaml"
  chmod u+w "$out/crd.yaml"
}

go_build() { # module-dir output(file, or dir/ for several packages) ldflags pkgs...
  local dir=$1 out=$2 ldf=$3
  shift 3
  (cd "$HERE/$dir" && go build -p "$GOFLAGS_P" -trimpath -ldflags="$ldf" -o "$out" "$@")
}

BUILD_TMP=""
trap '[ -z "$BUILD_TMP" ] || rm -rf "$BUILD_TMP"' EXIT

# The pinned binaries: etcd, kwok, helm, the control plane and kubectl at K8S_VERSION, the kubelet.
build_pinned() {
  local todo=() c
  for c in etcd kwok helm "${K8S_BINS[@]}" kubelet; do is_built "$c" "$K8S_VERSION" || todo+=("$c"); done
  if [ ${#todo[@]} -eq 0 ]; then
    log "build: all binaries up to date in $BIN_DIR (k8s $K8S_VERSION, etcd $ETCD_VERSION, kwok $KWOK_VERSION, helm $HELM_VERSION)"
    return 0
  fi
  log "build: building ${todo[*]} (go build -p $GOFLAGS_P; a cold build takes tens of minutes on 2 cores)"
  local t0 tmp k8s_todo=()
  t0=$(now_ms)
  tmp=$(mktemp -d "$BIN_DIR/.build.XXXXXX")
  BUILD_TMP=$tmp
  for c in "${todo[@]}"; do
    case $c in
      etcd) go_build etcd "$tmp/etcd" "-s -w" go.etcd.io/etcd/server/v3 ;;
      kwok) go_build kwok "$tmp/kwok" "-s -w" sigs.k8s.io/kwok/cmd/kwok ;;
      helm) go_build helm "$tmp/helm" "$(helm_ldflags)" helm.sh/helm/v3/cmd/helm ;;
      kubelet) ;; # after the control plane: it reuses most of its build cache
      *) k8s_todo+=("k8s.io/kubernetes/cmd/$c") ;;
    esac
  done
  if [ ${#k8s_todo[@]} -gt 0 ]; then
    go_build k8s "$tmp/" "$(k8s_ldflags "$K8S_VERSION")" "${k8s_todo[@]}"
  fi
  if [[ " ${todo[*]} " == *" kubelet "* ]]; then
    local t1
    t1=$(now_ms)
    go_build kubelet "$tmp/kubelet" "$(k8s_ldflags "$K8S_VERSION")" k8s.io/kubernetes/cmd/kubelet
    log "build: kubelet took $(secs_since "$t1") s"
  fi
  install_built "$tmp" "$K8S_VERSION" "${todo[@]}"
  log "build: built ${todo[*]} in $(secs_since "$t0") s -> $BIN_DIR"
}

# install_built TMP VERSION NAME...: each built binary into the cache with its stamp; TMP removed.
install_built() {
  local tmp=$1 v=$2 c
  shift 2
  for c in "$@"; do
    [ -x "$tmp/$c" ] || die "build: $c ($v) was not produced"
    mv -f "$tmp/$c" "$(bin_path "$c" "$v")"
    stamp_want "$c" "$v" >"$(bin_path "$c" "$v").stamp"
  done
  rm -rf "$tmp"
  BUILD_TMP=""
}

# One matrix version's control plane (kube-apiserver, kube-controller-manager, kube-scheduler)
# from k8s/<version>/, into <name>-<version> beside the pinned binaries.
build_cp() { # version
  local v=$1 todo=() c t0 tmp pkgs=()
  check_k8s_version "$v"
  [ "$v" != "$K8S_VERSION" ] || return 0 # build_pinned's
  for c in "${CP_BINS[@]}"; do is_built "$c" "$v" || todo+=("$c"); done
  if [ ${#todo[@]} -eq 0 ]; then
    log "build: the $v control plane is up to date"
    return 0
  fi
  for c in "${todo[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  log "build: building the $v control plane: ${todo[*]} (go build -p $GOFLAGS_P; cold: 10-20 min of CPU)"
  t0=$(now_ms)
  tmp=$(mktemp -d "$BIN_DIR/.build.XXXXXX")
  BUILD_TMP=$tmp
  go_build "k8s/$v" "$tmp/" "$(k8s_ldflags "$v")" "${pkgs[@]}"
  install_built "$tmp" "$v" "${todo[@]}"
  log "build: built the $v control plane (${todo[*]}) in $(secs_since "$t0") s -> $BIN_DIR"
}

# One on-demand tool (TOOLS) into <name>-<version> beside the pinned binaries. A build that has
# something to do waits for another build of the same tool (flock on $BIN_DIR/.build-<name>.lock),
# not for the control plane's, which may take tens of minutes: the image tier builds syft while
# the end-to-end tier's control plane builds beside it. Warm, only the stamp is compared.
build_tool() { # name
  local c=$1 lk t0 tmp
  case " ${TOOLS[*]} " in *" $c "*) ;; *) die "no tool '$c' (tools: ${TOOLS[*]})" ;; esac
  is_built "$c" && return 0
  command -v go >/dev/null || die "go is not on PATH (expected Go >= 1.26 at /usr/local/go/bin)"
  mkdir -p "$BIN_DIR"
  exec {lk}>>"$BIN_DIR/.build-$c.lock"
  if ! flock -n "$lk"; then
    log "build: another build of $c runs (lock $BIN_DIR/.build-$c.lock); waiting for it"
    flock "$lk"
  fi
  if ! is_built "$c"; then
    log "build: building $c $(version_of "$c") (go build -p $GOFLAGS_P; cold: about 5 min on 2 cores)"
    t0=$(now_ms)
    tmp=$(mktemp -d "$BIN_DIR/.build.XXXXXX")
    BUILD_TMP=$tmp
    case $c in
      syft)
        # As its release: static (CGO_ENABLED=0) with its build tags; the tags ride in the
        # package list (go build reads flags up to the first package).
        CGO_ENABLED=0 go_build syft "$tmp/syft" "$(syft_ldflags "$(cd "$HERE/syft" && proxy_date github.com/anchore/syft "$SYFT_VERSION")")" \
          "-tags=$SYFT_TAGS" github.com/anchore/syft/cmd/syft ;;
      cert-manager)
        # A directory, not one binary: the one that was there goes first (mv would move into it).
        mkdir "$tmp/cert-manager"
        build_cert_manager "$tmp/cert-manager"
        rm -rf "$(bin_path cert-manager)" ;;
      vpa-crd)
        # A directory holding the one file (install_built moves what is executable).
        mkdir "$tmp/vpa-crd"
        fetch_vpa_crd "$tmp/vpa-crd"
        rm -rf "$(bin_path vpa-crd)" ;;
    esac
    install_built "$tmp" "$(version_of "$c")" "$c"
    log "build: built $c $(version_of "$c") in $(secs_since "$t0") s -> $(bin_path "$c")"
  fi
  flock -u "$lk"
  exec {lk}>&-
}

# build [--matrix]: the pinned binaries, HEADROOM_K8S_VERSION's control plane when set, and with
# --matrix every K8S_MATRIX version's, one after the other (each timed). A build that has something
# to do waits for any other (flock on $BIN_DIR/.build.lock), so clusters coming up at once build
# once; when every stamp matches, no lock is taken and no go command runs.
cmd_build() {
  local matrix=0 v lk versions=() c todo=0
  case ${1:-} in
    "") ;;
    --matrix) matrix=1 ;;
    --tools)
      for c in "${TOOLS[@]}"; do build_tool "$c"; done
      log "build: tools up to date in $BIN_DIR (syft $SYFT_VERSION, cert-manager $CERT_MANAGER_VERSION, vpa-crd $VPA_VERSION)"
      return 0 ;;
    *) die "usage: cluster.sh build [--matrix | --tools]" ;;
  esac
  [ -z "${HEADROOM_K8S_VERSION:-}" ] || { check_k8s_version "$HEADROOM_K8S_VERSION"; versions+=("$HEADROOM_K8S_VERSION"); }
  if [ "$matrix" = 1 ]; then
    for v in $K8S_MATRIX; do check_k8s_version "$v"; versions+=("$v"); done
  fi
  for c in etcd kwok helm "${K8S_BINS[@]}" kubelet; do is_built "$c" "$K8S_VERSION" || todo=1; done
  for v in ${versions[@]+"${versions[@]}"}; do
    for c in "${CP_BINS[@]}"; do is_built "$c" "$v" || todo=1; done
  done
  if [ "$todo" = 0 ]; then
    log "build: all binaries up to date in $BIN_DIR (k8s $K8S_VERSION${versions[*]:+, control plane ${versions[*]}}, etcd $ETCD_VERSION, kwok $KWOK_VERSION, helm $HELM_VERSION)"
    return 0
  fi
  command -v go >/dev/null || die "go is not on PATH (expected Go >= 1.26 at /usr/local/go/bin)"
  mkdir -p "$BIN_DIR"
  exec {lk}>>"$BIN_DIR/.build.lock"
  if ! flock -n "$lk"; then
    log "build: another build runs (lock $BIN_DIR/.build.lock); waiting for it"
    flock "$lk"
  fi
  build_pinned
  for v in ${versions[@]+"${versions[@]}"}; do build_cp "$v"; done
  flock -u "$lk"
  exec {lk}>&-
}

# ----------------------------------------------------------------------------------- processes
pid_alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
# A recorded PID only counts if it still runs the binary we started (PIDs get reused).
pid_is_ours() {
  local pid=$1 bin=$2 exe
  pid_alive "$pid" || return 1
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
  [ "${exe% (deleted)}" = "$bin" ]
}
port_listening() { [ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]; }
# The ports the cluster's processes listen on (none known for a cluster without ports.env).
all_ports() { echo "$ETCD_PORT $ETCD_PEER_PORT $API_PORT $KCM_PORT $SCHED_PORT $KWOK_PORT $KUBELET_PORT $KUBELET_HEALTHZ_PORT"; }

dump_logs() {
  local c f
  for c in "${COMPONENTS[@]}"; do
    f=$STATE/logs/$c.log
    [ -s "$f" ] || continue
    printf '\n----- last 25 lines of %s -----\n' "$f" >&2
    tail -n 25 "$f" >&2
  done
}

fail_up() {
  log "up FAILED: $*"
  dump_logs
  log "logs are in $STATE/logs; stopping what was started"
  HEADROOM_KEEP_LOGS=1 cmd_down >/dev/null 2>&1 || true
  exit 1
}

start() { # name args...
  local name=$1 bin
  shift
  bin=$(bin_path "$name")
  # setsid: own session, so the processes outlive the calling shell/ctest and get no terminal
  # signals. In a non-interactive shell setsid execs in place, so $! is the component's PID.
  setsid "$bin" "$@" >"$STATE/logs/$name.log" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$STATE/pids/$name"
  echo "$bin" >"$STATE/pids/$name.bin"
}

check_running() {
  local c
  for c in "$@"; do
    pid_alive "$(cat "$STATE/pids/$c" 2>/dev/null)" || fail_up "$c exited early"
  done
}

wait_for() { # description timeout-seconds components-that-must-stay-alive -- command...
  local what=$1 timeout=$2 deadline
  shift 2
  local alive=()
  while [ "$1" != -- ]; do alive+=("$1"); shift; done
  shift
  deadline=$(($(date +%s) + timeout))
  until "$@" >/dev/null 2>&1; do
    [ ${#alive[@]} -eq 0 ] || check_running "${alive[@]}"
    [ "$(date +%s)" -lt "$deadline" ] || fail_up "timed out after ${timeout}s waiting for $what"
    sleep 0.2
  done
}

# -------------------------------------------------------------------------------------- certs
ossl() { openssl "$@" 2>>"$STATE/logs/openssl.log"; }
make_ca() {
  local d=$STATE/pki
  ossl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 -keyout "$d/ca.key" -out "$d/ca.crt" \
    -subj "/CN=kube-headroom-test-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
}
# sign NAME SUBJECT EXTKU [SAN]
sign_cert() {
  local d=$STATE/pki name=$1 subj=$2 eku=$3 san=${4:-}
  ossl req -newkey rsa:2048 -nodes -sha256 -keyout "$d/$name.key" -out "$d/$name.csr" -subj "$subj"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"
    [ -z "$san" ] || echo "subjectAltName=$san"
  } >"$d/$name.ext"
  ossl x509 -req -sha256 -days 3650 -in "$d/$name.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" \
    -CAcreateserial -out "$d/$name.crt" -extfile "$d/$name.ext"
  rm -f "$d/$name.csr" "$d/$name.ext"
}
# write_kubeconfig FILE USER CERT KEY
write_kubeconfig() {
  local f=$1 user=$2 crt=$3 key=$4
  cat >"$f" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: kube-headroom-test
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority-data: $(base64 -w0 <"$STATE/pki/ca.crt")
users:
- name: $user
  user:
    client-certificate-data: $(base64 -w0 <"$crt")
    client-key-data: $(base64 -w0 <"$key")
contexts:
- name: $user@kube-headroom-test
  context:
    cluster: kube-headroom-test
    user: $user
current-context: $user@kube-headroom-test
EOF
  chmod 600 "$f"
}
# subject for a user cert: CN=name, one O= per group (escape '/' and ',' which openssl treats specially)
user_subject() {
  local s="/CN=$1" g
  shift
  for g in "$@"; do s+="/O=$g"; done
  echo "$s"
}

cmd_user_kubeconfig() {
  [ $# -ge 1 ] || die "usage: cluster.sh user-kubeconfig NAME [GROUP...]"
  [ -f "$STATE/pki/ca.key" ] || die "cluster is not up (no CA in $STATE/pki)"
  local name=$1 safe
  safe=$(printf '%s' "$name" | tr -c 'A-Za-z0-9._-' '_')
  mkdir -p "$STATE/users"
  sign_cert "user-$safe" "$(user_subject "$@")" clientAuth
  mv -f "$STATE/pki/user-$safe.crt" "$STATE/pki/user-$safe.key" "$STATE/users/"
  write_kubeconfig "$STATE/users/$safe.kubeconfig" "$name" "$STATE/users/user-$safe.crt" "$STATE/users/user-$safe.key"
  echo "$STATE/users/$safe.kubeconfig"
}

cmd_serving_cert() {
  [ $# -eq 1 ] || die "usage: cluster.sh serving-cert NAME"
  [ -f "$STATE/pki/ca.key" ] || die "cluster is not up (no CA in $STATE/pki)"
  local safe
  safe=$(printf '%s' "$1" | tr -c 'A-Za-z0-9._-' '_')
  mkdir -p "$STATE/serving"
  sign_cert "serving-$safe" "/CN=$1" serverAuth "IP:127.0.0.1,DNS:localhost"
  mv -f "$STATE/pki/serving-$safe.crt" "$STATE/pki/serving-$safe.key" "$STATE/serving/"
  echo "$STATE/serving/serving-$safe.crt $STATE/serving/serving-$safe.key"
}

# ----------------------------------------------------------------------------------------- up
curl_api() { curl -sS --max-time 5 --cacert "$STATE/pki/ca.crt" --cert "$STATE/pki/admin.crt" --key "$STATE/pki/admin.key" "https://127.0.0.1:$API_PORT$1"; }
api_ready() { [ "$(curl_api /readyz 2>/dev/null)" = ok ]; }
kc() { "$(bin_path kubectl)" --kubeconfig "$STATE/admin.kubeconfig" "$@"; }

state_running() { # 0 if every component recorded in the state runs
  local c
  [ -d "$STATE/pids" ] || return 1
  for c in "${COMPONENTS[@]}"; do
    pid_is_ours "$(cat "$STATE/pids/$c" 2>/dev/null)" "$(cat "$STATE/pids/$c.bin" 2>/dev/null)" || return 1
  done
}
state_any_running() {
  local c
  [ -d "$STATE/pids" ] || return 1
  for c in "${COMPONENTS[@]}"; do
    pid_is_ours "$(cat "$STATE/pids/$c" 2>/dev/null)" "$(cat "$STATE/pids/$c.bin" 2>/dev/null)" && return 0
  done
  return 1
}

# The API server's own record of requests (design §14): every request of a client that is not a
# control-plane component, at Metadata level (user, verb, object, response code, timestamps), one
# JSON object per line, written before the response (blocking mode). Tests count our reads and
# writes from it rather than from our own counters. The first Metadata rule names the writes the
# suite asserts on — pods and their subresources (resize, status), events (core and
# events.k8s.io), Leases, HeadroomConfigs — so they stay recorded whatever later rules drop; the
# components' own traffic is left out to keep the file small (kwok alone writes every pod's status).
write_audit_policy() {
  cat >"$STATE/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
# The scheduler's binds, for the time from bind to resize (bench/cluster/scale.sh): one line per pod.
- level: Metadata
  users: [system:kube-scheduler]
  verbs: [create]
  resources: [{group: "", resources: [pods/binding]}]
- level: None
  users: [system:kube-controller-manager, system:kube-scheduler, kwok-controller, system:apiserver]
- level: None
  userGroups: [system:serviceaccounts:kube-system, system:nodes]
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
  resources:
  - {group: "", resources: [pods, pods/resize, pods/status, events]}
  - {group: events.k8s.io, resources: [events]}
  - {group: coordination.k8s.io, resources: [leases]}
  - {group: kube-headroom.dev, resources: [headroomconfigs, headroomconfigs/status]}
- level: None
  nonResourceURLs: [/healthz*, /readyz*, /livez*, /version, /openapi*]
- level: Metadata
EOF
}
# The audit flags of the API server (none when `up` ran with HEADROOM_AUDIT=off).
# The log is never rotated: the suites and benchmarks mark it by line count
# (tests/lib/common.sh audit_mark), and a rotation (the API server's default is
# every 100 MB, which a cluster that ran a few 3,000-pod benchmarks reaches)
# would leave every mark past the new file's end and lose what followed.
audit_args() {
  [ "$(cat "$STATE/audit.mode" 2>/dev/null || echo on)" = on ] || return 0
  echo "--audit-policy-file=$STATE/audit-policy.yaml --audit-log-path=$STATE/audit.log" \
    "--audit-log-format=json --audit-log-mode=blocking --audit-log-maxbackup=0" \
    "--audit-log-maxsize=1048576"
}

cmd_up() {
  local t0 want=${HEADROOM_K8S_VERSION:-$K8S_VERSION}
  t0=$(now_ms)
  if state_running && api_ready; then
    [ "$KV" = "$want" ] || die "up: the cluster in $STATE is up with Kubernetes $KV, not $want; run '$0 down' first"
    log "up: already up (state $STATE); nothing to do"
    cmd_status
    return 0
  fi
  if state_any_running; then
    die "up: a partly running cluster is recorded in $STATE; run '$0 down' first"
  fi
  if [ -e "$STATE" ]; then
    log "up: removing stale state $STATE (no recorded process runs)"
    # A run stopped without `down` can leave the real node's mounts, shims and cgroups behind:
    # they go first, or the state dir cannot be removed.
    if [ -d "$STATE/realnode" ]; then "$HERE/realnode.sh" down || die "up: the stale real node in $STATE/realnode did not come down"; fi
    release_ports
    rm -rf "$STATE" || die "up: cannot remove the stale state $STATE"
  fi
  KV=$want
  check_k8s_version "$KV"
  cmd_build
  for c in "${COMPONENTS[@]}" kubectl helm; do [ -x "$(bin_path "$c")" ] || die "missing binary $(bin_path "$c")"; done
  [ -f "$STAGES" ] || die "kwok stages file $STAGES not found"
  pick_ports
  echo "$KV" >"$STATE/k8s.version"

  mkdir -p "$STATE"/{pki,logs,pids,etcd,bin}
  chmod 700 "$STATE/etcd"
  ln -sf "$(bin_path kubectl)" "$STATE/bin/kubectl"
  ln -sf "$(bin_path kwok)" "$STATE/bin/kwok"
  ln -sf "$(bin_path helm)" "$STATE/bin/helm"
  local d=$STATE/pki
  make_ca
  sign_cert apiserver "/CN=kube-apiserver" serverAuth "IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
  sign_cert admin "/O=system:masters/CN=kube-headroom-admin" clientAuth
  sign_cert controller-manager "/CN=system:kube-controller-manager" clientAuth
  sign_cert scheduler "/CN=system:kube-scheduler" clientAuth
  sign_cert kwok "/CN=kwok-controller" clientAuth
  ossl genrsa -out "$d/sa.key" 2048
  ossl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub"
  write_kubeconfig "$STATE/admin.kubeconfig" kube-headroom-admin "$d/admin.crt" "$d/admin.key"
  write_kubeconfig "$STATE/controller-manager.kubeconfig" system:kube-controller-manager "$d/controller-manager.crt" "$d/controller-manager.key"
  write_kubeconfig "$STATE/scheduler.kubeconfig" system:kube-scheduler "$d/scheduler.crt" "$d/scheduler.key"
  write_kubeconfig "$STATE/kwok.kubeconfig" kwok-controller "$d/kwok.crt" "$d/kwok.key"

  start etcd --name=kube-headroom --data-dir="$STATE/etcd" \
    --listen-client-urls="http://127.0.0.1:$ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster="kube-headroom=http://127.0.0.1:$ETCD_PEER_PORT" \
    --unsafe-no-fsync=true --quota-backend-bytes=8589934592 --log-level=warn
  wait_for "etcd /health" 30 etcd -- curl -sf --max-time 2 "http://127.0.0.1:$ETCD_PORT/health"

  write_audit_policy
  echo "$AUDIT" >"$STATE/audit.mode"
  # shellcheck disable=SC2086
  start kube-apiserver \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$API_PORT" \
    --endpoint-reconciler-type=none \
    --tls-cert-file="$d/apiserver.crt" --tls-private-key-file="$d/apiserver.key" \
    --client-ca-file="$d/ca.crt" \
    --service-account-issuer="https://127.0.0.1:$API_PORT" \
    --service-account-key-file="$d/sa.pub" --service-account-signing-key-file="$d/sa.key" \
    --service-cluster-ip-range=10.96.0.0/16 \
    --authorization-mode=RBAC \
    --enable-admission-plugins=LimitRanger,ResourceQuota \
    --allow-privileged=true \
    --max-requests-inflight=1000 --max-mutating-requests-inflight=500 \
    --profiling=false \
    $(audit_args) \
    ${HEADROOM_APISERVER_ARGS:-}
  wait_for "kube-apiserver /readyz" "$READY_TIMEOUT" etcd kube-apiserver -- api_ready

  # kwok only needs what a kubelet + node lease holder needs; cluster-admin keeps it simple here.
  kc create clusterrolebinding kube-headroom-kwok --clusterrole=cluster-admin --user=kwok-controller >/dev/null \
    || fail_up "cannot create the kwok ClusterRoleBinding"

  # shellcheck disable=SC2086
  start kube-controller-manager \
    --kubeconfig="$STATE/controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$KCM_PORT" \
    --controllers='*' --leader-elect=false \
    --use-service-account-credentials=true \
    --service-account-private-key-file="$d/sa.key" --root-ca-file="$d/ca.crt" \
    --cluster-signing-cert-file="$d/ca.crt" --cluster-signing-key-file="$d/ca.key" \
    --kube-api-qps=1000 --kube-api-burst=2000 \
    --concurrent-deployment-syncs=10 --concurrent-replicaset-syncs=10 \
    --concurrent-gc-syncs=30 --concurrent-namespace-syncs=10 \
    --profiling=false \
    ${HEADROOM_KCM_ARGS:-}

  cat >"$STATE/scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $STATE/scheduler.kubeconfig
  qps: 1000
  burst: 2000
leaderElection:
  leaderElect: false
EOF
  # shellcheck disable=SC2086
  start kube-scheduler --config="$STATE/scheduler.yaml" \
    --bind-address=127.0.0.1 --secure-port="$SCHED_PORT" --profiling=false \
    ${HEADROOM_SCHEDULER_ARGS:-}

  # shellcheck disable=SC2086
  start kwok --kubeconfig="$STATE/kwok.kubeconfig" --config="$STAGES" \
    --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --node-lease-duration-seconds=40 \
    --node-ip=127.0.0.1 --node-port="$KWOK_PORT" --server-address="127.0.0.1:$KWOK_PORT" \
    --cidr=10.128.0.1/14 --v=WARN \
    ${HEADROOM_KWOK_ARGS:-}

  wait_for "kube-controller-manager /healthz" 60 "${COMPONENTS[@]}" -- \
    curl -skf --max-time 2 "https://127.0.0.1:$KCM_PORT/healthz"
  wait_for "kube-scheduler /healthz" 60 "${COMPONENTS[@]}" -- \
    curl -skf --max-time 2 "https://127.0.0.1:$SCHED_PORT/healthz"
  wait_for "kwok /healthz" 60 "${COMPONENTS[@]}" -- curl -sf --max-time 2 "http://127.0.0.1:$KWOK_PORT/healthz"
  wait_for "the default ServiceAccount" 60 "${COMPONENTS[@]}" -- kc -n default get serviceaccount default
  wait_for "the kube-root-ca.crt ConfigMap" 60 "${COMPONENTS[@]}" -- kc -n default get configmap kube-root-ca.crt
  check_running "${COMPONENTS[@]}"
  echo "$(now_ms)" >"$STATE/up.timestamp"

  cat <<EOF
kube-headroom test cluster is up (Kubernetes $KV, etcd $ETCD_VERSION, kwok $KWOK_VERSION) in $(secs_since "$t0") s
  API server:   https://127.0.0.1:$API_PORT   (state and logs: $STATE)
  ports:        $PORT_BASE-$((PORT_BASE + 99)) (etcd $ETCD_PORT/$ETCD_PEER_PORT, controller-manager $KCM_PORT, scheduler $SCHED_PORT, kwok $KWOK_PORT; $STATE/ports.env)
  use it:       export KUBECONFIG=$STATE/admin.kubeconfig PATH=$STATE/bin:\$PATH
                kubectl get nodes,pods -A
  fake node:    a Node annotated kwok.x-k8s.io/node=fake (see tests/cluster/README.md, mkload.sh)
  least-priv:   $0 user-kubeconfig NAME [GROUP...]
  stop:         $0 down
EOF
}

# --------------------------------------------------------------------------------------- down
stop_component() { # name: SIGTERM (SIGKILL after 10 s) the recorded process if it is ours; 1 if it survives
  local c=$1 pid bin n=0
  pid=$(cat "$STATE/pids/$c" 2>/dev/null || true)
  bin=$(cat "$STATE/pids/$c.bin" 2>/dev/null || true)
  [ -n "$pid" ] || return 0
  pid_is_ours "$pid" "$bin" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  while pid_alive "$pid" && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
  if pid_alive "$pid"; then
    log "down: $c ($pid) ignored SIGTERM for 10s; SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    n=0
    while pid_alive "$pid" && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
  fi
  pid_alive "$pid" && { log "down: $c (pid $pid) still runs"; return 1; }
  log "down: stopped $c (pid $pid)"
}

cmd_down() {
  if [ ! -d "$STATE" ]; then
    log "down: nothing to do ($STATE does not exist)"
    return 0
  fi
  # The real node first: its mounts and cgroups must go before the state dir does.
  if [ -d "$STATE/realnode" ]; then "$HERE/realnode.sh" down || die "down: the real node did not come down"; fi
  local i left=()
  stop_component second-apiserver || left+=(second-apiserver)
  for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do
    stop_component "${COMPONENTS[$i]}" || left+=("${COMPONENTS[$i]}")
  done
  [ ${#left[@]} -eq 0 ] || die "down: still running: ${left[*]} (state kept in $STATE)"
  local p busy=()
  [ -f "$STATE/ports.env" ] && for p in $(all_ports); do port_listening "$p" && busy+=("$p"); done
  [ ${#busy[@]} -eq 0 ] || die "down: port(s) ${busy[*]} still listening after stopping our processes"
  release_ports
  if [ -n "${HEADROOM_KEEP_LOGS:-}" ]; then
    find "$STATE" -mindepth 1 -maxdepth 1 ! -name logs -exec rm -rf {} +
    log "down: done (logs kept in $STATE/logs)"
  else
    rm -rf "$STATE"
    log "down: done; removed $STATE"
  fi
}

# ------------------------------------------------------------------------------------- status
cmd_status() {
  local c pid bin rc=0
  if [ ! -d "$STATE/pids" ]; then
    echo "down (no state in $STATE)"
    return 3
  fi
  for c in "${COMPONENTS[@]}"; do
    pid=$(cat "$STATE/pids/$c" 2>/dev/null || true)
    bin=$(cat "$STATE/pids/$c.bin" 2>/dev/null || true)
    if pid_is_ours "$pid" "$bin"; then
      printf '%-24s running  pid %s\n' "$c" "$pid"
    else
      printf '%-24s DOWN     (pid %s)\n' "$c" "${pid:-?}"
      rc=1
    fi
  done
  printf '%-24s %s\n' "Kubernetes" "$KV"
  [ -z "$PORT_BASE" ] || printf '%-24s %s-%s (%s)\n' "ports" "$PORT_BASE" "$((PORT_BASE + 99))" "$STATE/ports.env"
  if [ -n "$API_PORT" ] && api_ready; then
    printf '%-24s ready    https://127.0.0.1:%s\n' "API /readyz" "$API_PORT"
    printf '%-24s %s nodes, %s pods\n' "objects" \
      "$(kc get nodes --no-headers 2>/dev/null | wc -l)" "$(kc get pods -A --no-headers 2>/dev/null | wc -l)"
  else
    printf '%-24s NOT ready\n' "API /readyz"
    rc=1
  fi
  echo "KUBECONFIG=$STATE/admin.kubeconfig"
  return $rc
}

# For fault tests: the same command line the running API server was started with, read back
# from /proc so that nothing about its flags is repeated here.
cmd_restart_apiserver() {
  local down=${1:-3} pid bin args=()
  pid=$(cat "$STATE/pids/kube-apiserver" 2>/dev/null) || die "no API server recorded in $STATE"
  bin=$(cat "$STATE/pids/kube-apiserver.bin")
  pid_is_ours "$pid" "$bin" || die "the recorded API server (pid $pid) is not running"
  mapfile -d '' -t args <"/proc/$pid/cmdline"
  kill -KILL "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  log "kube-apiserver killed; down for ${down}s"
  sleep "$down"
  setsid "${args[@]}" >>"$STATE/logs/kube-apiserver.log" 2>&1 </dev/null &
  echo "$!" >"$STATE/pids/kube-apiserver"
  local t0 deadline
  t0=$(now_ms)
  deadline=$(($(date +%s) + READY_TIMEOUT))
  until api_ready; do
    [ "$(date +%s)" -lt "$deadline" ] || die "kube-apiserver not ready ${READY_TIMEOUT}s after the restart"
    sleep 0.2
  done
  log "kube-apiserver ready again in $(secs_since "$t0")s"
}

# For tests of what an API server flag changes (tests/e2e/e2e_watchlist.sh: WatchList=false): a
# second kube-apiserver on the same etcd, as in an HA control plane, serving the same objects. Its
# command line is the running one's, read back from /proc as restart-apiserver does, with another
# --secure-port, its own audit log ($STATE/second-apiserver/audit.log) and the FLAGs added last
# (a later flag wins). kwok, the scheduler and the controller manager stay on the first one.
cmd_second_apiserver() {
  local what=${1:-}
  [ $# -eq 0 ] || shift
  case $what in
    up) second_apiserver_up "$@" ;;
    down) stop_component second-apiserver || die "second-apiserver: did not stop" ;;
    *) die "usage: cluster.sh second-apiserver up PORT [FLAG...] | down" ;;
  esac
}
second_apiserver_up() {
  local port=${1:-} pid bin a args=() out=() t0 deadline
  [[ $port =~ ^[0-9]+$ ]] || die "usage: cluster.sh second-apiserver up PORT [FLAG...]"
  shift
  pid_is_ours "$(cat "$STATE/pids/second-apiserver" 2>/dev/null)" "$(cat "$STATE/pids/second-apiserver.bin" 2>/dev/null)" &&
    die "second-apiserver: already running; run '$0 second-apiserver down' first"
  pid=$(cat "$STATE/pids/kube-apiserver" 2>/dev/null) || die "no API server recorded in $STATE"
  bin=$(cat "$STATE/pids/kube-apiserver.bin")
  pid_is_ours "$pid" "$bin" || die "the recorded API server (pid $pid) is not running"
  port_listening "$port" && die "second-apiserver: port $port on 127.0.0.1 is already in use"
  mapfile -d '' -t args <"/proc/$pid/cmdline"
  mkdir -p "$STATE/second-apiserver"
  for a in "${args[@]:1}"; do
    case $a in
      --secure-port=*) out+=("--secure-port=$port") ;;
      --audit-log-path=*) out+=("--audit-log-path=$STATE/second-apiserver/audit.log") ;;
      *) out+=("$a") ;;
    esac
  done
  t0=$(now_ms)
  setsid "$bin" "${out[@]}" "$@" >"$STATE/logs/second-apiserver.log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$STATE/pids/second-apiserver"
  echo "$bin" >"$STATE/pids/second-apiserver.bin"
  deadline=$(($(date +%s) + READY_TIMEOUT))
  until [ "$(curl -sS --max-time 5 --cacert "$STATE/pki/ca.crt" --cert "$STATE/pki/admin.crt" \
    --key "$STATE/pki/admin.key" "https://127.0.0.1:$port/readyz" 2>/dev/null)" = ok ]; do
    pid_alive "$pid" || { tail -n 25 "$STATE/logs/second-apiserver.log" >&2; die "second-apiserver exited"; }
    if [ "$(date +%s)" -ge "$deadline" ]; then
      stop_component second-apiserver || true
      die "second-apiserver not ready after ${READY_TIMEOUT}s (stopped; log $STATE/logs/second-apiserver.log)"
    fi
    sleep 0.2
  done
  log "second kube-apiserver (pid $pid) ready on 127.0.0.1:$port in $(secs_since "$t0")s; audit log $STATE/second-apiserver/audit.log"
}

# For fault tests: the API server stops answering but keeps its sockets (a hung process, a
# stalled node), unlike restart-apiserver where connections are refused.
cmd_freeze_apiserver() {
  local secs=${1:?usage: cluster.sh freeze-apiserver SECONDS} pid bin
  pid=$(cat "$STATE/pids/kube-apiserver" 2>/dev/null) || die "no API server recorded in $STATE"
  bin=$(cat "$STATE/pids/kube-apiserver.bin")
  pid_is_ours "$pid" "$bin" || die "the recorded API server (pid $pid) is not running"
  kill -STOP "$pid"
  log "kube-apiserver (pid $pid) frozen for ${secs}s"
  sleep "$secs"
  kill -CONT "$pid"
  log "kube-apiserver (pid $pid) thawed"
}

main() {
  local cmd=${1:-}
  [ $# -eq 0 ] || shift
  case $cmd in
    build) cmd_build "$@" ;;
    up) cmd_up ;;
    down) cmd_down ;;
    status) cmd_status ;;
    kubeconfig) echo "$STATE/admin.kubeconfig" ;;
    env) echo "export KUBECONFIG=$STATE/admin.kubeconfig PATH=$STATE/bin:\$PATH" ;;
    ports) need_ports; grep -v '^#' "$STATE/ports.env" ;;
    version) echo "$KV" ;;
    user-kubeconfig) cmd_user_kubeconfig "$@" ;;
    serving-cert) cmd_serving_cert "$@" ;;
    kubectl) exec "$(bin_path kubectl)" --kubeconfig "$STATE/admin.kubeconfig" "$@" ;;
    tool) [ $# -eq 1 ] || die "usage: cluster.sh tool NAME (tools: ${TOOLS[*]})"; build_tool "$1"; bin_path "$1" ;;
    bin) [ $# -ge 1 ] && [ $# -le 2 ] || die "usage: cluster.sh bin NAME [K8S-VERSION]"; echo "$(bin_path "$@")" ;;
    restart-apiserver) cmd_restart_apiserver "$@" ;;
    freeze-apiserver) cmd_freeze_apiserver "$@" ;;
    audit)
      [ "$(cat "$STATE/audit.mode" 2>/dev/null || echo on)" = on ] ||
        die "audit: this cluster runs without an audit record (HEADROOM_AUDIT=off at up)"
      echo "$STATE/audit.log" ;;
    second-apiserver) cmd_second_apiserver "$@" ;;
    real-node) exec "$HERE/realnode.sh" "$@" ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; [ -n "$cmd" ] && [ "$cmd" != help ] && [ "$cmd" != -h ] && exit 2; return 0 ;;
  esac
}
main "$@"
