#!/usr/bin/env bash
# e2e_metrics_review_slow.sh — token reviews off the serving path (design §9.3) on the
# real API server: the controller, electing a leader, runs through the fault proxy
# (tests/tools/faultproxy.c), which holds every TokenReview's answer back for 20 s. 50 clients,
# each from its own loopback address (127.0.0.2-51: the listener's per-address cap is not what
# acts), hammer the secured /metrics with random tokens, each a new review. Meanwhile:
#   1. a scrape whose token's verdict is cached answers 200 in < 100 ms, every time (the review
#      pool is full of hung reviews, new tokens are refused 429 at once, and no listener thread
#      waits on a review);
#   2. the refusals are counted (headroom_metrics_auth_refused_total) and the pool is full
#      (headroom_metrics_auth_reviews_in_flight 2);
#   3. SIGTERM with reviews hanging: the process exits, and the Lease is released (its
#      holderIdentity empty), within 2 s.
# The old code (a review on the listener's thread, joined at exit) fails all three.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_REVIEW_PORT:-$(free_port)}
PPORT=$(free_port "$MPORT")
PROXY_PORT=$(free_port "$MPORT" "$PPORT")
WORK=$(mktemp -d /tmp/headroom-review-slow.XXXXXX)
ID=headroom-e2e-review
NS=hr-review-$S
FLOOD_PID=""

cleanup() {
  [ -n "$FLOOD_PID" ] && kill "$FLOOD_PID" 2>/dev/null && wait "$FLOOD_PID" 2>/dev/null
  k delete clusterrolebinding "hr-review-reader-$S" --ignore-not-found >/dev/null 2>&1
  k delete namespace "$NS" --ignore-not-found --wait=false >/dev/null 2>&1
  k -n kube-headroom delete lease kube-headroom --ignore-not-found >/dev/null 2>&1
  cleanup_common 30
}
trap cleanup EXIT
require_cluster

install_crd
k create namespace kube-headroom >/dev/null 2>&1
k -n kube-headroom delete lease kube-headroom --ignore-not-found >/dev/null 2>&1
install_identity "$ID"
k create namespace "$NS" >/dev/null
k -n "$NS" create serviceaccount reader >/dev/null
k create clusterrolebinding "hr-review-reader-$S" --clusterrole=kube-headroom-metrics-reader \
  --serviceaccount="$NS:reader" >/dev/null
READER=$(k -n "$NS" create token reader)

proxy_start "$ID" || { fail "fault proxy" "did not start"; finish; exit; }
"$HEADROOM" run --kubeconfig "$PROXY_KC" --namespace kube-headroom --leader-elect \
  --webhook-addr "" --metrics-addr "127.0.0.1:$MPORT" --probe-addr "127.0.0.1:$PPORT" \
  --webhook-cert-dir "$WORK" -v >>"$WORK/controller.log" 2>&1 &
CTL_PID=$!
holder() { k -n kube-headroom get lease kube-headroom -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
leads() { [ -n "$(holder)" ]; }
WHY="no 200 from /readyz, or no Lease holder, within 60 s"
check "the controller is up behind the fault proxy and holds the Lease" \
  eval 'wait_until 60 curl -sf "http://127.0.0.1:$PPORT/readyz" && wait_until 30 leads'

scrape() { # token -> "status seconds"; the body in $WORK/body
  curl -sk -o "$WORK/body" -w '%{http_code} %{time_total}' -H "Authorization: Bearer $1" \
    --max-time 30 "https://127.0.0.1:$MPORT/metrics"
}
read -r st _ < <(scrape "$READER")
WHY="status $st"
check "the reader's scrape is allowed (its verdict is cached from now on)" [ "$st" = 200 ]

proxy_rules "POST /apis/authentication.k8s.io/v1/tokenreviews silent 20" ||
  { fail "proxy rules" "not loaded"; finish; exit; }

# The flood: 50 clients, each from its own address, a new random token per request, a pause of
# 100 ms after each answer (429 above all): up to 500 requests a second, each a TLS handshake and a
# new token, the review pool full many times over. Counts the statuses into $WORK/flood.out.
python3 - "$MPORT" "$WORK/flood.out" <<'PY' &
import http.client, os, ssl, sys, threading, time, collections
port, out = int(sys.argv[1]), sys.argv[2]
ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
stop, counts, lock = threading.Event(), collections.Counter(), threading.Lock()
def client(i):
    while not stop.is_set():
        try:
            c = http.client.HTTPSConnection("127.0.0.1", port, timeout=30, context=ctx,
                                            source_address=("127.0.0.%d" % (2 + i), 0))
            c.request("GET", "/metrics", headers={"Authorization": "Bearer r" + os.urandom(12).hex()})
            s = str(c.getresponse().status)
            c.close()
        except Exception as e:
            s = type(e).__name__
        with lock:
            counts[s] += 1
        time.sleep(0.1)
ts = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(50)]
for t in ts: t.start()
import signal
signal.signal(signal.SIGTERM, lambda *a: stop.set())
while not stop.is_set(): time.sleep(0.1)
with open(out, "w") as f:
    f.write(" ".join("%s:%d" % kv for kv in sorted(counts.items())) + "\n")
PY
FLOOD_PID=$!
sleep 3 # the flood fills the review pool

# 20 scrapes 0.1 s apart on one keep-alive connection, as Prometheus scrapes (curl reuses it): the
# time of each is its request and answer, not a TLS handshake competing with the flood's for CPU.
args=()
for _ in $(seq 1 20); do args+=(-o /dev/null "https://127.0.0.1:$MPORT/metrics"); done
timeout 60 curl -sk -H "Authorization: Bearer $READER" --max-time 10 --rate 600/m \
  -w '%{http_code} %{time_total} %{num_connects}\n' "${args[@]}" >"$WORK/scrapes"
worst=0 bad="" all="" conns=0
while read -r st t nc; do
  ms=$(awk -v t="$t" 'BEGIN { printf "%d", t * 1000 }')
  all="$all $ms" conns=$((conns + nc))
  [ "$ms" -gt "$worst" ] && worst=$ms
  [ "$st" = 200 ] || bad="$bad $st"
done <"$WORK/scrapes"
[ "$(wc -l <"$WORK/scrapes")" = 20 ] || bad="$bad (only $(wc -l <"$WORK/scrapes") answers)"
read -r _ _ < <(scrape "$READER") # the page, for the counters below
echo "cached scrapes under the flood (ms, $conns connection(s)):$all"
WHY="worst ${worst} ms; statuses other than 200:${bad:- none}"
check "1. under the flood, the cached scrape answers 200 in < 100 ms (20 scrapes, worst ${worst} ms)" \
  eval '[ -z "$bad" ] && [ "$worst" -lt 100 ]'
refused=$(awk '$1 == "headroom_metrics_auth_refused_total" {print $2}' "$WORK/body")
inflight=$(awk '$1 == "headroom_metrics_auth_reviews_in_flight" {print $2}' "$WORK/body")
WHY="refused '$refused', in flight '$inflight'"
check "2. new tokens beyond the queue are refused 429 and counted; the pool is full" \
  eval '[ "${refused:-0}" -gt 0 ] && [ "$inflight" = 2 ]'
WHY="$(grep -c 'tokenreviews.*rule 0' "$WORK/proxy.log") TokenReviews held by the proxy"
check "the proxy holds the TokenReviews back (reviews are hanging)" \
  grep -q 'POST /apis/authentication.k8s.io/v1/tokenreviews.*rule 0' "$WORK/proxy.log"

t0=$(date +%s%N)
kill -TERM "$CTL_PID"
exited="" released=""
since() { echo $(( ($(date +%s%N) - t0) / 1000000 )); }
while :; do # each time taken when its check has answered: an upper bound (kubectl takes ~0.1 s)
  [ -z "$exited" ] && ! kill -0 "$CTL_PID" 2>/dev/null && exited=$(since)
  [ -z "$released" ] && [ -z "$(holder)" ] && released=$(since)
  [ -n "$exited" ] && [ -n "$released" ] && break
  [ "$(since)" -gt 15000 ] && break
  sleep 0.05
done
wait "$CTL_PID" 2>/dev/null
rc=$?
CTL_PID=""
WHY="exited after ${exited:-never (15 s)} ms (status $rc), Lease released after ${released:-never (15 s)} ms"
check "3. SIGTERM with reviews hanging: exit (${exited:-?} ms) and Lease released (${released:-?} ms) within 2 s" \
  eval '[ -n "$exited" ] && [ "$exited" -lt 2000 ] && [ -n "$released" ] && [ "$released" -lt 2000 ] && [ "$rc" = 0 ]'
kill "$FLOOD_PID" 2>/dev/null
wait "$FLOOD_PID" 2>/dev/null
FLOOD_PID=""
echo "flood statuses: $(cat "$WORK/flood.out" 2>/dev/null)"
finish
