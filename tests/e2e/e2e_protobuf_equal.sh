#!/usr/bin/env bash
# e2e_protobuf_equal.sh — the protobuf decoders give the cache the same records as the JSON ones,
# on objects the real API server stored (design §5 "Wire format"; src/kube/decode/pb.h).
#
# Creates, in a namespace of its own: pods with native sidecars (init containers with
# restartPolicy Always), plain init containers, a RuntimeClass's overhead, pod-level resources,
# resizePolicy RestartContainer, resize conditions as kwok's Stages give them (PodResizePending
# Infeasible and Deferred, after a resize of their limit by another field manager: design §4's
# foreign-writer, read from managedFields), a Deployment's pod (owner apps/ReplicaSet), an unbound Windows pod,
# a pod being deleted (held by a finalizer), max-cpu and mode annotations and labels, CPU and
# memory quantities of every form ("500m", "0.5", "1", "1e0", "1.5", "2Ki", "1.5Gi", "1e3", "0.5Ki"; "1e3m" is no quantity), two
# nodes (one with DiskPressure), a LimitRange and two ResourceQuotas. Then fetches each
# collection as JSON, and as protobuf at exactly the same resourceVersion, runs both through
# objdump (tests/tools/objdump.c: every field of every decoded view) and requires the two dumps to be
# byte-identical, and to show what was made (so an empty or partial dump cannot pass). Then the
# watch cache the informers fill (tests/tools/cachedump.c: the informers of `headroom run`, asking
# for protobuf, then for JSON): byte-identical too.
#
# With HEADROOM_PB_SEEDS=DIR it also leaves the protobuf bodies there (one object or list per
# file): how tests/fuzz/corpus/protobuf was taken. Prints PASS/FAIL per check and
# "N passed, N failed". Needs `tests/cluster/cluster.sh up`. About 20 s.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
OBJDUMP=${OBJDUMP:-$(dirname "$HEADROOM")/tests/objdump}
WORK=$(mktemp -d /tmp/headroom-e2e.XXXXXX)
NS=e2e-pb-$S
N1=e2e-pb-n1-$S
N2=e2e-pb-n2-$S
RC=e2e-pb-rc-$S

cleanup() {
  k -n "$NS" patch pod deleting --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1
  delete_objects
  k delete runtimeclass "$RC" --ignore-not-found --wait=false >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

require_cluster
[ -x "$OBJDUMP" ] || { echo "FAIL  no objdump at $OBJDUMP (ninja objdump)"; echo "0 passed, 1 failed"; exit 1; }
SERVER=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}')
api() { # accept path -> body on stdout
  curl -sSf --cacert "$STATE/pki/ca.crt" --cert "$STATE/pki/admin.crt" --key "$STATE/pki/admin.key" \
    -H "Accept: $1" "$SERVER$2"
}

mknode "$N1" 7500m
mknode "$N2" "3"
k patch node "$N2" --subresource status --type=merge -p \
  '{"status":{"conditions":[{"type":"DiskPressure","status":"True","reason":"e2e","message":"e2e"}]}}' >/dev/null
mkns "$NS" managed
k label namespace "$NS" e2e/pb=yes team=a >/dev/null
k apply -f - >/dev/null <<EOF
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: $RC}
handler: runc
overhead: {podFixed: {cpu: 250m, memory: 120Mi}}
---
apiVersion: v1
kind: Pod
metadata:
  name: forms
  namespace: $NS
  labels: {app: forms, kube-headroom.dev/mode: managed}
  annotations: {kube-headroom.dev/max-cpu: "1500m", kube-headroom.dev/status: '{"factor":"2.00"}'}
spec:
  nodeName: $N1
  containers:
  - {name: a, image: registry.invalid/a:1, resources: {requests: {cpu: 500m, memory: 2Ki}, limits: {cpu: "1", memory: 1.5Gi}}}
  - {name: b, image: registry.invalid/b:1, resources: {requests: {cpu: "0.5", memory: "1e3"}, limits: {cpu: "1e0"}}}
  - {name: c, image: registry.invalid/c:1, resources: {requests: {cpu: "1.5", memory: "0.5Ki"}}}
  - {name: d, image: registry.invalid/d:1, resources: {limits: {cpu: 250m, memory: 64Mi}}}
  - {name: e, image: registry.invalid/e:1}
---
apiVersion: v1
kind: Pod
metadata: {name: sidecars, namespace: $NS, labels: {app: sidecars}}
spec:
  nodeName: $N1
  initContainers:
  - {name: setup, image: registry.invalid/setup:1, resources: {requests: {cpu: 100m, memory: 32Mi}}}
  - name: envoy
    image: registry.invalid/envoy:1
    restartPolicy: Always
    resizePolicy: [{resourceName: cpu, restartPolicy: RestartContainer}, {resourceName: memory, restartPolicy: NotRequired}]
    resources: {requests: {cpu: 200m, memory: 64Mi}, limits: {cpu: 400m}}
  containers:
  - name: app
    image: registry.invalid/app:1
    resizePolicy: [{resourceName: cpu, restartPolicy: NotRequired}]
    resources: {requests: {cpu: 300m, memory: 128Mi}, limits: {cpu: 600m}}
---
apiVersion: v1
kind: Pod
metadata: {name: overhead, namespace: $NS, annotations: {kube-headroom.dev/max-cpu: "lots"}}
spec:
  nodeName: $N1
  runtimeClassName: $RC
  containers:
  - {name: app, image: registry.invalid/app:1, resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 200m}}}
---
apiVersion: v1
kind: Pod
metadata: {name: podlevel, namespace: $NS, labels: {kube-headroom.dev/mode: unmanaged}}
spec:
  nodeName: $N2
  resources: {requests: {cpu: 400m, memory: 256Mi}, limits: {cpu: 800m, memory: 256Mi}}
  containers:
  - {name: app, image: registry.invalid/app:1, resources: {requests: {cpu: 100m}}}
---
apiVersion: v1
kind: Pod
metadata: {name: windows, namespace: $NS, annotations: {kube-headroom.dev/mode: unmanaged}}
spec:
  os: {name: windows}
  nodeSelector: {e2e-pb-nowhere: "$S"}
  containers:
  - {name: app, image: registry.invalid/app:1, resources: {requests: {cpu: 100m}}}
---
apiVersion: v1
kind: Pod
metadata: {name: deleting, namespace: $NS, finalizers: [e2e.kube-headroom.dev/hold]}
spec:
  nodeName: $N2
  containers:
  - {name: app, image: registry.invalid/app:1, resources: {requests: {cpu: 100m}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: $NS}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeName: $N1
      containers:
      - {name: app, image: registry.invalid/app:1, resources: {requests: {cpu: 150m, memory: 100M}, limits: {cpu: 300m}}}
EOF
for r in Infeasible Deferred; do
  p=$(tr 'A-Z' 'a-z' <<<"$r")
  mkpod "$NS" "$p" "$N1" 200m 200m "annotations: {kwok.x-k8s.io/resize: $r}"
done

pod_phase() { [ "$(k -n "$NS" get pod "$1" -o jsonpath='{.status.phase}')" = "$2" ]; }
for p in forms sidecars overhead podlevel infeasible deferred deleting; do
  wait_until 30 pod_phase "$p" Running || echo "      (pod $p not Running yet)"
done
for p in infeasible deferred; do
  k -n "$NS" patch pod "$p" --subresource resize -p \
    '{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"400m"}}}]}}' >/dev/null
done
pending() { [ "$(k -n "$NS" get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodResizePending")].reason}')" = "$2" ]; }
wait_until 60 pending infeasible Infeasible || echo "      (no PodResizePending/Infeasible yet)"
wait_until 60 pending deferred Deferred || echo "      (no PodResizePending/Deferred yet)"
wait_until 60 k -n "$NS" get pod -l app=web -o name
k -n "$NS" delete pod deleting --wait=false >/dev/null
# After the pods: a LimitRange would give them default limits, a quota on limits.cpu refuse them.
k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: LimitRange
metadata: {name: bounds, namespace: $NS}
spec:
  limits:
  - {type: Container, max: {cpu: "2", memory: 4Gi}, maxLimitRequestRatio: {cpu: "4"}}
  - {type: Pod, max: {cpu: "3500m"}}
  - {type: PersistentVolumeClaim, max: {storage: 10Gi}}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: limits, namespace: $NS}
spec: {hard: {limits.cpu: "1e3", pods: "50"}}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: count, namespace: $NS}
spec: {hard: {pods: "40", requests.memory: 10Gi}}
EOF

# One snapshot per collection: JSON first, then protobuf at exactly its resourceVersion.
compare() { # name path expected-lines marker...
  local name=$1 path=$2 want=$3 rv sep; shift 3
  api application/json "$path" >"$WORK/$name.json" || { fail "$name: JSON list" "GET $path failed"; return; }
  rv=$(jq -r .metadata.resourceVersion "$WORK/$name.json")
  case $path in *\?*) sep='&' ;; *) sep='?' ;; esac
  api application/vnd.kubernetes.protobuf "$path${sep}resourceVersion=$rv&resourceVersionMatch=Exact" >"$WORK/$name.pb" ||
    { fail "$name: protobuf list" "GET $path at $rv failed"; return; }
  [ -z "${HEADROOM_PB_SEEDS:-}" ] || { mkdir -p "$HEADROOM_PB_SEEDS" && cp "$WORK/$name.pb" "$HEADROOM_PB_SEEDS/list-$name.pb"; }
  local rj=0 rp=0
  "$OBJDUMP" "$name" json "$WORK/$name.json" >"$WORK/$name.json.txt" 2>&1 || rj=$?
  "$OBJDUMP" "$name" protobuf "$WORK/$name.pb" >"$WORK/$name.pb.txt" 2>&1 || rp=$?
  WHY="objdump exited $rj (JSON) and $rp (protobuf): $(head -c 300 "$WORK/$name.pb.txt")"
  check "$name: both dumps decoded every object" test "$rj$rp" = 00
  WHY=$(diff "$WORK/$name.json.txt" "$WORK/$name.pb.txt" | head -6 | tr '\n' ' ')
  check "$name: JSON and protobuf give byte-identical records ($(wc -l <"$WORK/$name.pb.txt") objects, $(wc -c <"$WORK/$name.pb") B protobuf, $(wc -c <"$WORK/$name.json") B JSON)" \
    cmp -s "$WORK/$name.json.txt" "$WORK/$name.pb.txt"
  local n m
  n=$(grep -c . "$WORK/$name.pb.txt")
  WHY="$n records, want at least $want"
  check "$name: every object decoded" [ "$n" -ge "$want" ]
  for m in "$@"; do
    WHY="no record matches '$m'"
    check "$name: shows $m" grep -Eq -- "$m" "$WORK/$name.pb.txt"
  done
  WHY="$(grep -m1 ERROR "$WORK/$name.pb.txt")"
  check "$name: no decode error" bash -c "! grep -q ERROR '$WORK/$name.pb.txt'"
}
compare pods "/api/v1/namespaces/$NS/pods" 9 \
  'ctr\[envoy kind=1 req=200/67108864 lim=400/-1 restart=1\]' 'ctr\[setup kind=2 ' \
  'ctr\[b kind=0 req=500/1000 lim=1000/-1' 'ctr\[c kind=0 req=1500/512 lim=-1/-1' \
  'ctr\[a kind=0 req=500/2048 lim=1000/1610612736' 'overhead=250 ' 'podreq=400 podres=1' \
  'windows=1' 'optout=1' 'maxcpu=1500 maxcpu_invalid=0' 'maxcpu_invalid=1' 'deleting=1' \
  'owner=ReplicaSet/apps/web-' 'resize=2 ' 'resize=1 ' 'note=17/' 'node=- ' 'statusres=1' \
  'foreign=kubectl-patch' 'undec=0 foreign=-'
compare nodes "/api/v1/nodes" 2 "$N1/? .* alloc=7500 " "$N2 .* alloc=3000 .* disk=1"
compare namespaces "/api/v1/namespaces" 2 "/$NS uid=.* labels=\{e2e/pb=yes,"
compare limitranges "/api/v1/namespaces/$NS/limitranges" 1 'ctr_max=2000 ratio=4000 pod_max=3500'
compare resourcequotas "/api/v1/namespaces/$NS/resourcequotas" 2 'limits_cpu=1' 'limits_cpu=0'
# The watch cache itself: the informers `headroom run` starts, once asking for protobuf and once for
# JSON, give the same records for this test's objects (its pods, nodes, namespace, the quota and
# LimitRange bounds of its namespace; other tests' objects may change between the two syncs).
CACHEDUMP=${CACHEDUMP:-$(dirname "$HEADROOM")/tests/cachedump}
mine_only() { grep -E "^(pod $NS/|node ($N1|$N2) |namespace $NS |quota-bounded $NS\$)" | sort; }
if [ -x "$CACHEDUMP" ]; then
  rp=0 rj=0
  "$CACHEDUMP" protobuf "$KUBECONFIG" 2>"$WORK/cache-pb.err" >"$WORK/cache-pb.all" || rp=$?
  "$CACHEDUMP" json "$KUBECONFIG" 2>"$WORK/cache-json.err" >"$WORK/cache-json.all" || rj=$?
  mine_only <"$WORK/cache-pb.all" >"$WORK/cache-pb.txt"
  mine_only <"$WORK/cache-json.all" >"$WORK/cache-json.txt"
  WHY="cachedump exited $rp (protobuf) and $rj (JSON): $(tail -n 2 "$WORK/cache-pb.err" | tr '\n' ' ')"
  check "cache: the informers synced both ways" test "$rp$rj" = 00
  WHY="$(grep -E '^(pods|nodes) ' "$WORK/cache-pb.err" | tr '\n' ' ')"
  check "cache: the protobuf informers received their objects in protobuf" \
    grep -Eq '^pods protobuf=1 pb_objects=([1-9][0-9]*) ' "$WORK/cache-pb.err"
  WHY="$(grep -E '^pods ' "$WORK/cache-json.err")"
  check "cache: the JSON informers received none in protobuf" \
    bash -c "! grep -Eq 'pb_objects=[1-9]' '$WORK/cache-json.err'"
  WHY="$(grep -c "^pod $NS/" "$WORK/cache-pb.txt") pods of $NS in the protobuf-fed cache, want 9; $(grep -cE "^(node|namespace|quota-bounded) " "$WORK/cache-pb.txt") other records, want 4"
  holds_mine() { [ "$(grep -c "^pod $NS/" "$1")" -ge 9 ] && [ "$(grep -cE "^(node|namespace|quota-bounded) " "$1")" -ge 4 ]; }
  check "cache: it holds this test's pods, nodes, namespace and quota" holds_mine "$WORK/cache-pb.txt"
  WHY=$(diff "$WORK/cache-json.txt" "$WORK/cache-pb.txt" | head -6 | tr '\n' ' ')
  check "cache: fed by protobuf or by JSON, byte-identical ($(wc -l <"$WORK/cache-pb.txt") records)" \
    cmp -s "$WORK/cache-json.txt" "$WORK/cache-pb.txt"
else
  fail "cache: no cachedump at $CACHEDUMP (ninja cachedump)"
fi
if [ -n "${HEADROOM_PB_SEEDS:-}" ]; then # single objects and a watch stream's frames, too
  api application/vnd.kubernetes.protobuf "/api/v1/namespaces/$NS/pods/sidecars" >"$HEADROOM_PB_SEEDS/pod-sidecars.pb"
  api application/vnd.kubernetes.protobuf "/api/v1/nodes/$N2" >"$HEADROOM_PB_SEEDS/node-pressure.pb"
  curl -sS -N --max-time 3 --cacert "$STATE/pki/ca.crt" --cert "$STATE/pki/admin.crt" --key "$STATE/pki/admin.key" \
    -H 'Accept: application/vnd.kubernetes.protobuf;stream=watch' \
    "$SERVER/api/v1/namespaces/$NS/pods?watch=1&timeoutSeconds=2" >"$HEADROOM_PB_SEEDS/watch-pods.pb" || true
fi
finish
