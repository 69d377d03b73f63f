#!/usr/bin/env bash
# e2e_metrics_auth.sh — the secured /metrics on the real API server (design
# §9.3): HTTPS with a self-signed certificate until the serving certificate
# appears, then with that one; the bearer token reviewed with
# a TokenReview and access with a SubjectAccessReview (non-resource URL
# /metrics, verb get), verdicts cached. A ServiceAccount bound to
# kube-headroom-metrics-reader (charts/kube-headroom/templates/rbac.yaml) scrapes (200), another
# gets 403, no token 401; the reviews are counted in the API server's audit
# log, and a second round of scrapes makes none. A Deployment written for the
# Go implementation runs unchanged: its flags, /metrics with a pair of its
# own (--metrics-cert-path) apart from the webhook's. The daemon runs as a user
# bound to charts/kube-headroom/templates/rbac.yaml's kube-headroom role, so that role's review
# grants are what is exercised. The probes stay plain on their own port.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_METRICS_AUTH_PORT:-$(free_port)}
PPORT=${HEADROOM_E2E_METRICS_AUTH_PROBE_PORT:-$(free_port "$MPORT")}
WORK=$(mktemp -d /tmp/headroom-metrics-auth.XXXXXX)
ID=headroom-e2e-metrics
NS=hr-metrics-$S

cleanup() {
  stop_controller
  [ -n "${GO_PID:-}" ] && kill "$GO_PID" 2>/dev/null && wait "$GO_PID" 2>/dev/null
  k delete clusterrolebinding "hr-metrics-reader-$S" --ignore-not-found >/dev/null 2>&1
  k delete namespace "$NS" --ignore-not-found --wait=false >/dev/null 2>&1
  remove_identity "$ID"
  [ "$failed" -gt 0 ] && tail -n 30 "$WORK/controller.log"
  rm -rf "$WORK"
}
trap cleanup EXIT
require_cluster

install_identity "$ID"
can=$(KUBECONFIG=$USER_KC k auth can-i create tokenreviews.authentication.k8s.io)/$(KUBECONFIG=$USER_KC k auth can-i create subjectaccessreviews.authorization.k8s.io)
WHY="can-i create tokenreviews/subjectaccessreviews = $can"
check "charts/kube-headroom/templates/rbac.yaml lets the daemon create TokenReviews and SubjectAccessReviews" [ "$can" = yes/yes ]

mkdir -p "$WORK/certs" # empty: the daemon starts before its certificate exists
k create namespace "$NS" >/dev/null
k -n "$NS" create serviceaccount reader >/dev/null
k -n "$NS" create serviceaccount other >/dev/null
k create clusterrolebinding "hr-metrics-reader-$S" --clusterrole=kube-headroom-metrics-reader \
  --serviceaccount="$NS:reader" >/dev/null
READER=$(k -n "$NS" create token reader)
OTHER=$(k -n "$NS" create token other)

"$HEADROOM" run --kubeconfig "$USER_KC" --namespace kube-headroom --controller=false \
  --webhook-addr "" --metrics-addr "127.0.0.1:$MPORT" --probe-addr "127.0.0.1:$PPORT" \
  --webhook-cert-dir "$WORK/certs" -v >>"$WORK/controller.log" 2>&1 &
CTL_PID=$!
WHY="no 200 from http://127.0.0.1:$PPORT/readyz within 60 s"
check "without a certificate and with the webhook off, /readyz is 200 on the plain probe port" \
  wait_until 60 curl -sf "http://127.0.0.1:$PPORT/readyz"
WHY="$(curl -s "http://127.0.0.1:$PPORT/readyz" | tr '\n' ' ')"
check "/readyz does not wait for the serving certificate when the webhook is off" \
  sh -c "! curl -s 'http://127.0.0.1:$PPORT/readyz' | grep -q webhook-cert"
st=$(curl -s -o /dev/null -w '%{http_code}' -k "https://127.0.0.1:$MPORT/metrics")
WHY="status $st"
check "without a certificate the secured /metrics answers over TLS all the same (self-signed; no token: 401)" \
  [ "$st" = 401 ]
served=$(openssl s_client -connect "127.0.0.1:$MPORT" </dev/null 2>/dev/null | openssl x509 -noout -fingerprint -sha256 2>/dev/null | sed -n 's/^.*Fingerprint=//p')
WHY="served '$served'; log: $(grep -m1 'metrics certificate' "$WORK/controller.log" | cut -c1-300)"
check "the certificate served is the self-signed one the daemon logged (sha256)" \
  eval '[ -n "$served" ] && grep -q "metrics certificate: self-signed.*sha256=$served" "$WORK/controller.log"'
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
  -keyout "$WORK/certs/tls.key.new" -out "$WORK/certs/tls.crt" >/dev/null 2>&1
mv "$WORK/certs/tls.key.new" "$WORK/certs/tls.key"
hs() { [ "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$WORK/certs/tls.crt" "https://127.0.0.1:$MPORT/metrics")" = 401 ]; }
WHY="no TLS answer verified with the new certificate from https://127.0.0.1:$MPORT/metrics within 10 s of the pair appearing"
check "the certificate is picked up without a restart and replaces the self-signed one (/metrics answers over TLS)" wait_until 10 hs

scrape() { # token (may be empty) -> HTTP status; the body in $WORK/body
  local auth=()
  [ -n "$1" ] && auth=(-H "Authorization: Bearer $1")
  curl -s -o "$WORK/body" -w '%{http_code}' --cacert "$WORK/certs/tls.crt" "${auth[@]}" \
    "https://127.0.0.1:$MPORT/metrics"
}
reviews() { # mark resource -> how many creates the daemon made since mark
  audit_since "$1" "select(.user.username==\"$ID\" and .verb==\"create\" and .objectRef.resource==\"$2\")" | wc -l
}
settle() { sleep 1; } # the audit log is written once a request completes

m0=$(audit_mark)
st=$(scrape "$READER")
WHY="status $st"
check "a token of a ServiceAccount bound to kube-headroom-metrics-reader scrapes /metrics (200)" \
  [ "$st" = 200 ]
WHY="no headroom_webhook_requests_total in the page"
check "the page is the metrics page" grep -q '^headroom_webhook_requests_total' "$WORK/body"
leader=$(awk '$1 == "headroom_leader" {print $2}' "$WORK/body")
WHY="headroom_leader '$leader'"
check "headroom_leader is 0 on a replica that does not elect" [ "$leader" = 0 ]
st=$(scrape "$OTHER")
WHY="status $st"
check "another ServiceAccount's token gets 403" [ "$st" = 403 ]
st=$(scrape "")
WHY="status $st"
check "no token gets 401" [ "$st" = 401 ]
st=$(scrape "not-a-token-$S")
WHY="status $st"
check "a token the API server does not know gets 401" [ "$st" = 401 ]
st=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MPORT/metrics")
WHY="status $st"
check "plain HTTP on the metrics port gets no metrics" [ "$st" != 200 ]
settle
tr=$(reviews "$m0" tokenreviews) sar=$(reviews "$m0" subjectaccessreviews)
WHY="tokenreviews $tr, subjectaccessreviews $sar"
check "the audit log shows one TokenReview per token (3) and one SubjectAccessReview per authenticated one (2)" \
  test "$tr/$sar" = 3/2

m1=$(audit_mark)
s1=$(scrape "$READER") s2=$(scrape "$OTHER") s3=$(scrape "$READER")
settle
tr=$(reviews "$m1" tokenreviews) sar=$(reviews "$m1" subjectaccessreviews)
WHY="statuses $s1 $s2 $s3; tokenreviews $tr, subjectaccessreviews $sar"
check "scraping again is answered from the cache: same verdicts, no new review in the audit log" \
  test "$s1/$s2/$s3/$tr/$sar" = 200/403/200/0/0


# ------------------------------------------ the Go implementation's flags (docs/cli.md)
# Its Deployment's arguments as they are: /metrics on --metrics-bind-address with a pair of its own
# from --metrics-cert-path, apart from the webhook's (--webhook-cert-path); the probes off ("0");
# zap's flags for the logs.
M2=$(free_port "$MPORT" "$PPORT")
mkdir -p "$WORK/mcerts"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -subj /CN=metrics -addext subjectAltName=IP:127.0.0.1 \
  -keyout "$WORK/mcerts/metrics.key" -out "$WORK/mcerts/metrics.crt" >/dev/null 2>&1
"$HEADROOM" run --kubeconfig "$USER_KC" --namespace kube-headroom --controller=false \
  --webhook-addr "" --metrics-bind-address "127.0.0.1:$M2" --health-probe-bind-address 0 \
  --metrics-secure --metrics-cert-path "$WORK/mcerts" --metrics-cert-name metrics.crt \
  --metrics-cert-key metrics.key --webhook-cert-path "$WORK/certs" --zap-log-level debug \
  --zap-encoder json --zap-time-encoding iso8601 --enable-http2=false >"$WORK/go-flags.log" 2>&1 &
GO_PID=$!
go_scrape() { # CA -> HTTP status of a scrape with the reader's token
  curl -s -o /dev/null -w '%{http_code}' --cacert "$1" -H "Authorization: Bearer $READER" \
    "https://127.0.0.1:$M2/metrics"
}
go_up() { [ "$(go_scrape "$WORK/mcerts/metrics.crt")" = 200 ]; }
WHY="no 200 verified with --metrics-cert-path's certificate from 127.0.0.1:$M2 in 30 s; log: $(tail -c 600 "$WORK/go-flags.log")"
check "the Go implementation's flags: /metrics on --metrics-bind-address with --metrics-cert-path's pair (named by --metrics-cert-name, --metrics-cert-key)" \
  wait_until 30 go_up
st=$(go_scrape "$WORK/certs/tls.crt")
WHY="status $st"
check "--metrics-cert-path's pair, not the webhook's: the webhook's CA does not verify it" [ "$st" = 000 ]
listeners=$(jq -r 'select(.msg == "listening") | .listener' "$WORK/go-flags.log" 2>&1 | tr '\n' ' ')
WHY="listeners: '$listeners'; log: $(head -c 600 "$WORK/go-flags.log")"
check "--zap-encoder json logs JSON; --health-probe-bind-address 0: no probe listener" \
  [ "$listeners" = "metrics " ]
finish
