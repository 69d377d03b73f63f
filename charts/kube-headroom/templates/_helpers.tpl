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
(webhook.certSecretName: brought by the operator), "self-managed" (webhook.selfManaged.enable:
the controller makes a CA and the certificate in <fullname>-webhook-tls and keeps the webhook
registration's caBundle current), or "ephemeral" (none: /metrics serves a self-signed
certificate each replica makes at start; no webhook possible). Every template asks this one
helper. */ -}}
{{- define "kube-headroom.certSource" -}}
{{- if .Values.certmanager.enable }}cert-manager
{{- else if .Values.webhook.certSecretName }}secret
{{- else if .Values.webhook.selfManaged.enable }}self-managed
{{- else }}ephemeral
{{- end }}
{{- end }}

{{- define "kube-headroom.certSecretName" -}}
{{- default (printf "%s-webhook-tls" (include "kube-headroom.fullname" .)) .Values.webhook.certSecretName }}
{{- end }}

{{- /* The image reference: repository:tag, or repository@digest when a digest is set (the
tag is then only a label and is dropped). The tag defaults to appVersion with "+" replaced by
"-": a version's build metadata ("0.1.0-dev.3+g1a2b3c4d5e6f") is not a valid OCI tag, and the
release tags the image with that spelling (docs/releasing.md). */ -}}
{{- define "kube-headroom.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (replace "+" "-" (default .Chart.AppVersion .Values.image.tag)) }}
{{- end }}
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
{{- if and $v.webhook.enable (not $v.certmanager.enable) (or (not $v.webhook.certSecretName) (not $v.webhook.caBundle)) }}
{{- fail "webhook.enable=true needs a serving certificate: set certmanager.enable=true (cert-manager issues it and injects the CA), or bring your own with webhook.certSecretName=<a kubernetes.io/tls Secret in the release namespace> and webhook.caBundle=<base64 PEM of its CA>; or set webhook.enable=false" }}
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
{{- if and (include "kube-headroom.pdbEnabled" .) (not (kindIs "string" $v.podDisruptionBudget.minAvailable)) }}
{{- if ge (int $v.podDisruptionBudget.minAvailable) (int $v.replicas) }}
{{- fail (printf "podDisruptionBudget.minAvailable=%d with replicas=%d would block every node drain: use fewer than replicas" (int $v.podDisruptionBudget.minAvailable) (int $v.replicas)) }}
{{- end }}
{{- end }}
{{- end }}
