{{/*
_helpers.tpl — names, labels and the checks every render runs
(kube-headroom.validate: a configuration that cannot work fails here, with
the value to set, instead of installing something that never gets ready).
*/}}

{{- define "kube-headroom.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "kube-headroom.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "kube-headroom.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kube-headroom.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "kube-headroom.labels" -}}
{{ include "kube-headroom.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- with omit .Values.commonLabels "app.kubernetes.io/name" "app.kubernetes.io/instance" "app.kubernetes.io/version" "app.kubernetes.io/managed-by" "helm.sh/chart" "app.kubernetes.io/component" }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "kube-headroom.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "kube-headroom.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create=false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- /* Where the serving certificate (webhook and secured /metrics) comes from, one word:
"cert-manager" (certmanager.enable: the chart's Issuer or certmanager.issuerRef), "secret"
(webhook.certSecretName: brought by the operator), "self-managed" (webhook.selfManaged.enable,
or webhook.enable with neither of those: the controller makes a CA and the certificate in <fullname>-webhook-tls and keeps the webhook
registration's caBundle current), or "ephemeral" (none: /metrics serves a self-signed
certificate each replica makes at start; no webhook possible). Every template asks this one
helper. */ -}}
{{- define "kube-headroom.certSource" -}}
{{- if .Values.certmanager.enable }}cert-manager
{{- else if .Values.webhook.certSecretName }}secret
{{- else if or .Values.webhook.selfManaged.enable .Values.webhook.enable }}self-managed
{{- else }}ephemeral
{{- end }}
{{- end }}

{{- define "kube-headroom.certSecretName" -}}
{{- default (printf "%s-webhook-tls" (include "kube-headroom.fullname" .)) .Values.webhook.certSecretName }}
{{- end }}

{{- /* webhook.url's host when it is an IP address (brackets of an IPv6 one dropped), else "": the
API server checks a webhook registered by URL against that address, so a serving certificate the
chart asks for must name it (https://127.0.0.1:9443/... for a hostNetwork pod). */ -}}
{{- define "kube-headroom.webhookURLIP" -}}
{{- with .Values.webhook.url }}
{{- $host := (urlParse .).hostname | default "" }}
{{- if regexMatch "^[0-9.]+$|:" $host }}{{ $host }}{{ end }}
{{- end }}
{{- end }}

{{- /* The image reference: [registry/]repository:tag, or [registry/]repository@digest when a
digest is set (the tag is then only a label and is dropped). The tag defaults to appVersion with
"+" replaced by "-": a version's build metadata ("0.1.0-dev.3+g1a2b3c4d5e6f") is not a valid OCI
tag, and the release tags the image with that spelling (docs/releasing.md). The registry is
global.imageRegistry, else image.registry; when one is set it replaces the registry host the
repository starts with (a first path element with a "." or ":", or "localhost"), so a mirror
needs only its host: registry "mirror.example.com" makes
mirror.example.com/kube-headroom/headroom of ghcr.io/kube-headroom/headroom. */ -}}
{{- define "kube-headroom.image" -}}
{{- $repo := .Values.image.repository }}
{{- $reg := default .Values.image.registry (.Values.global).imageRegistry }}
{{- if $reg }}
{{- $parts := splitList "/" $repo }}
{{- $host := first $parts }}
{{- if and (gt (len $parts) 1) (or (contains "." $host) (contains ":" $host) (eq $host "localhost")) }}
{{- $repo = join "/" (rest $parts) }}
{{- end }}
{{- $repo = printf "%s/%s" (trimSuffix "/" $reg) $repo }}
{{- end }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" $repo .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" $repo (replace "+" "-" (default .Chart.AppVersion .Values.image.tag)) }}
{{- end }}
{{- end }}

{{- /* The Secret holding the scraper's token (prometheus.authorization). */ -}}
{{- define "kube-headroom.scrapeTokenSecret" -}}
{{- default (printf "%s-metrics-token" (include "kube-headroom.fullname" .)) .Values.prometheus.authorization.secretName }}
{{- end }}

{{- /* The scrape endpoint's settings, the same for the ServiceMonitor's endpoints and the
PodMonitor's podMetricsEndpoints (servicemonitor.yaml). With metrics.secure: the token from
prometheus.authorization's Secret (the Operator's `authorization` field), or, with
prometheus.bearerTokenFile set, the deprecated file in Prometheus's own pod (ServiceMonitor only);
and a tlsConfig: prometheus.tlsConfig when given, else verification against the certificate
Secret's ca.crt and the metrics Service's name whenever the chart knows where the certificate
comes from (certSource cert-manager, secret, self-managed), else (ephemeral: each replica's own
self-signed certificate, no CA anywhere) insecureSkipVerify. */ -}}
{{- define "kube-headroom.scrapeEndpoint" -}}
{{- $v := .Values }}
{{- $p := $v.prometheus -}}
path: /metrics
scheme: {{ ternary "https" "http" $v.metrics.secure }}
interval: {{ $p.interval | default "30s" }}
{{- with $p.scrapeTimeout }}
scrapeTimeout: {{ . }}
{{- end }}
honorLabels: true
{{- if $v.metrics.secure }}
{{- if and $p.bearerTokenFile (not $p.podMonitor.enable) }}
bearerTokenFile: {{ $p.bearerTokenFile }}
{{- else }}
authorization:
  type: Bearer
  credentials: {name: {{ include "kube-headroom.scrapeTokenSecret" . }}, key: {{ $p.authorization.key }}}
{{- end }}
tlsConfig:
  {{- if $p.tlsConfig }}
  {{- toYaml $p.tlsConfig | nindent 2 }}
  {{- else if eq (include "kube-headroom.certSource" .) "ephemeral" }}
  # No certificate provided: each replica serves one it made itself at start,
  # which no CA vouches for. The token still authenticates the scraper; the
  # server is not authenticated (NOTES.txt says so). Provide a certificate
  # (cert-manager, webhook.certSecretName, webhook.selfManaged) to verify it.
  insecureSkipVerify: true
  {{- else }}
  serverName: {{ include "kube-headroom.fullname" . }}-metrics.{{ .Release.Namespace }}.svc
  ca:
    secret: {name: {{ include "kube-headroom.certSecretName" . }}, key: ca.crt}
  {{- end }}
{{- end }}
{{- with $p.relabelings }}
relabelings:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $p.metricRelabelings }}
metricRelabelings:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{- /* A probe's timing from probes.liveness or probes.readiness (.p); .timeout is the
chart's timeoutSeconds for that kind of probe, used when the value is 0. */ -}}
{{- define "kube-headroom.probeTiming" -}}
{{- with .p.initialDelaySeconds }}
initialDelaySeconds: {{ . }}
{{- end }}
periodSeconds: {{ .p.periodSeconds }}
timeoutSeconds: {{ .p.timeoutSeconds | default .timeout }}
failureThreshold: {{ .p.failureThreshold }}
{{- end }}

{{- define "kube-headroom.listen" -}}
{{- printf "%s:%d" .root.Values.listenAddress (int .port) }}
{{- end }}

{{/* The PDB only where it can let a drain through: more than one replica. */}}
{{- define "kube-headroom.pdbEnabled" -}}
{{- if and .Values.podDisruptionBudget.enable (gt (int .Values.replicas) 1) }}true{{ end }}
{{- end }}

{{- define "kube-headroom.validate" -}}
{{- $v := .Values }}
{{- if and $v.webhook.enable (eq (include "kube-headroom.certSource" .) "secret") (not $v.webhook.caBundle) }}
{{- fail "webhook.certSecretName (a certificate you bring) needs webhook.caBundle=<base64 PEM of its CA>; or leave both empty and the controller makes and rotates the certificate itself (webhook.selfManaged), or set certmanager.enable=true" }}
{{- end }}
{{- if and $v.metrics.certManagerTLS (not $v.certmanager.enable) }}
{{- fail "metrics.certManagerTLS=true needs certmanager.enable=true (the metrics certificate is cert-manager's)" }}
{{- end }}
{{- if and $v.hostNetworkReusePort (not $v.hostNetwork) }}
{{- fail "hostNetworkReusePort=true is for replicas sharing a node's network: set hostNetwork=true too (with pod networking each replica has its own ports)" }}
{{- end }}
{{- if and (gt (int $v.replicas) 1) (not $v.leaderElection.enable) }}
{{- fail (printf "replicas=%d needs leaderElection.enable=true: without the Lease every replica would write" (int $v.replicas)) }}
{{- end }}
{{- $pdb := $v.podDisruptionBudget }}
{{- if and (not (kindIs "invalid" $pdb.minAvailable)) (not (kindIs "invalid" $pdb.maxUnavailable)) }}
{{- fail "podDisruptionBudget: set minAvailable or maxUnavailable, not both (a PodDisruptionBudget takes one; set the other to null)" }}
{{- end }}
{{- if and (include "kube-headroom.pdbEnabled" .) (not (kindIs "invalid" $pdb.maxUnavailable)) (not (kindIs "string" $pdb.maxUnavailable)) (lt (int $pdb.maxUnavailable) 1) }}
{{- fail "podDisruptionBudget.maxUnavailable=0 would block every node drain: use 1 or more" }}
{{- end }}
{{- if and (include "kube-headroom.pdbEnabled" .) (not (kindIs "invalid" $pdb.minAvailable)) (not (kindIs "string" $pdb.minAvailable)) }}
{{- if ge (int $v.podDisruptionBudget.minAvailable) (int $v.replicas) }}
{{- fail (printf "podDisruptionBudget.minAvailable=%d with replicas=%d would block every node drain: use fewer than replicas" (int $v.podDisruptionBudget.minAvailable) (int $v.replicas)) }}
{{- end }}
{{- end }}
{{- if and $v.prometheus.podMonitor.enable $v.hostNetworkReusePort }}
{{- fail "prometheus.podMonitor.enable=true scrapes each pod's named metrics port, which hostNetworkReusePort=true does not declare (replicas share the node's): use the ServiceMonitor (prometheus.podMonitor.enable=false)" }}
{{- end }}
{{- end }}
