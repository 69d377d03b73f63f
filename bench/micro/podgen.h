/*
 * podgen.h — synthetic but realistic Pod JSON for the benchmarks.
 *
 * Shaped like what a Deployment's pod looks like on a 1.35+ API server:
 * labels, a few annotations, an owner reference, three managedFields
 * entries (controller-manager, scheduler, kubelet status), containers with
 * env, ports, probes and volume mounts, a service-account volume,
 * tolerations, conditions and container statuses with resources. About
 * 8 KB compact, as design §16 asks. Deterministic from its inputs, so runs
 * compare.
 */
#ifndef HR_BENCH_PODGEN_H
#define HR_BENCH_PODGEN_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct podgen {
    char *buf;
    size_t len, cap;
} podgen;

static void pg_put(podgen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void pg_put(podgen *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(g->buf + g->len, g->cap - g->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        g->len += (size_t)n < g->cap - g->len ? (size_t)n : g->cap - g->len - 1;
}

static const char *const PG_CTR[] = {"app", "istio-proxy", "log-shipper"};

/* Pod number i: namespace ns_i, ReplicaSet rs_i (10 pods each), node
 * node_i; n_ctr app containers (1–3, the second a sidecar-like proxy). */
static size_t podgen_pod(podgen *g, unsigned i, unsigned n_ns, unsigned n_nodes, unsigned n_ctr,
                         unsigned rv)
{
    unsigned ns = i % n_ns, rs = i / 10, node = (i * 2654435761u) % n_nodes;
    char name[96], rsname[80];
    snprintf(rsname, sizeof rsname, "svc-%u-api-%08x", rs % 997, rs * 2246822519u);
    snprintf(name, sizeof name, "%s-%05x", rsname, (i * 374761393u) & 0xfffff);
    pg_put(
        g,
        "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s\","
        "\"generateName\":\"%s-\",\"namespace\":\"team-%u\","
        "\"uid\":\"%08x-1c2d-4e5f-8a9b-%012x\",\"resourceVersion\":\"%u\","
        "\"generation\":1,\"creationTimestamp\":\"2026-11-30T07:12:44Z\","
        "\"labels\":{\"app.kubernetes.io/name\":\"svc-%u-api\","
        "\"app.kubernetes.io/part-of\":\"shop\",\"pod-template-hash\":\"%08x\","
        "\"security.istio.io/tlsMode\":\"istio\",\"version\":\"v3\"},"
        "\"annotations\":{\"kubectl.kubernetes.io/restartedAt\":\"2026-11-29T22:01:03Z\","
        "\"checksum/config\":\"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\","
        "\"checksum/secrets\":\"60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752\","
        "\"ci.example.com/pipeline\":\"https://ci.example.com/shop/svc-api/-/pipelines/"
        "184467?ref=main&sha=3f2c9a1\","
        "\"ci.example.com/owner\":\"team-payments@example.com\","
        "\"prometheus.io/scrape\":\"true\",\"prometheus.io/port\":\"9102\","
        "\"sidecar.istio.io/status\":\"{\\\"initContainers\\\":null,\\\"containers\\\":"
        "[\\\"istio-proxy\\\"],\\\"volumes\\\":[\\\"istio-envoy\\\",\\\"istio-data\\\","
        "\\\"istio-podinfo\\\",\\\"istio-token\\\",\\\"istiod-ca-cert\\\"],"
        "\\\"imagePullSecrets\\\":null,\\\"revision\\\":\\\"default\\\"}\"},"
        "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
        "\"name\":\"%s\",\"uid\":\"%08x-aaaa-4bbb-8ccc-%012x\",\"controller\":true,"
        "\"blockOwnerDeletion\":true}],",
        name, rsname, ns, i, i * 7u, rv, rs % 997, rs * 2246822519u, rsname, rs, rs * 3u);
    pg_put(
        g,
        "\"managedFields\":[{\"manager\":\"kube-controller-manager\",\"operation\":"
        "\"Update\",\"apiVersion\":\"v1\",\"time\":\"2026-11-30T07:12:44Z\","
        "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:generateName\":{},"
        "\"f:labels\":{\".\":{},\"f:app.kubernetes.io/name\":{},\"f:app.kubernetes.io/part-of\":{},"
        "\"f:pod-template-hash\":{},\"f:version\":{}},\"f:ownerReferences\":{\".\":{},"
        "\"k:{\\\"uid\\\":\\\"%08x-aaaa-4bbb-8ccc-%012x\\\"}\":{}}},\"f:spec\":{"
        "\"f:containers\":{\"k:{\\\"name\\\":\\\"app\\\"}\":{\".\":{},\"f:env\":{\".\":{},"
        "\"k:{\\\"name\\\":\\\"LOG_LEVEL\\\"}\":{\".\":{},\"f:name\":{},\"f:value\":{}}},"
        "\"f:image\":{},\"f:imagePullPolicy\":{},\"f:name\":{},\"f:ports\":{\".\":{},"
        "\"k:{\\\"containerPort\\\":8080,\\\"protocol\\\":\\\"TCP\\\"}\":{\".\":{},"
        "\"f:containerPort\":{},\"f:name\":{},\"f:protocol\":{}}},\"f:readinessProbe\":{"
        "\".\":{},\"f:httpGet\":{\".\":{},\"f:path\":{},\"f:port\":{},\"f:scheme\":{}}},"
        "\"f:resources\":{\".\":{},\"f:limits\":{\".\":{},\"f:memory\":{}},\"f:requests\":"
        "{\".\":{},\"f:cpu\":{},\"f:memory\":{}}},\"f:terminationMessagePath\":{},"
        "\"f:terminationMessagePolicy\":{}}},\"f:dnsPolicy\":{},\"f:enableServiceLinks\":{},"
        "\"f:restartPolicy\":{},\"f:schedulerName\":{},\"f:securityContext\":{},"
        "\"f:terminationGracePeriodSeconds\":{}}}},"
        "{\"manager\":\"kube-scheduler\",\"operation\":\"Update\",\"apiVersion\":\"v1\","
        "\"time\":\"2026-11-30T07:12:44Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":"
        "{\"f:status\":{\"f:conditions\":{\".\":{},\"k:{\\\"type\\\":\\\"PodScheduled\\\"}\":"
        "{\".\":{},\"f:lastProbeTime\":{},\"f:lastTransitionTime\":{},\"f:status\":{},"
        "\"f:type\":{}}}}},\"subresource\":\"status\"},"
        "{\"manager\":\"kubelet\",\"operation\":\"Update\",\"apiVersion\":\"v1\","
        "\"time\":\"2026-11-30T07:12:51Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":"
        "{\"f:status\":{\"f:conditions\":{\"k:{\\\"type\\\":\\\"ContainersReady\\\"}\":"
        "{\".\":{},\"f:lastProbeTime\":{},\"f:lastTransitionTime\":{},\"f:status\":{},"
        "\"f:type\":{}},\"k:{\\\"type\\\":\\\"Initialized\\\"}\":{\".\":{},"
        "\"f:lastProbeTime\":{},\"f:lastTransitionTime\":{},\"f:status\":{},\"f:type\":{}},"
        "\"k:{\\\"type\\\":\\\"Ready\\\"}\":{\".\":{},\"f:lastProbeTime\":{},"
        "\"f:lastTransitionTime\":{},\"f:status\":{},\"f:type\":{}}},"
        "\"f:containerStatuses\":{},\"f:hostIP\":{},\"f:hostIPs\":{},\"f:phase\":{},"
        "\"f:podIP\":{},\"f:podIPs\":{\".\":{},\"k:{\\\"ip\\\":\\\"10.244.%u.%u\\\"}\":"
        "{\".\":{},\"f:ip\":{}}},\"f:startTime\":{}}},\"subresource\":\"status\"}]},",
        rs, rs * 3u, (i >> 8) & 255, i & 255);
    pg_put(g,
           "\"spec\":{\"volumes\":[{\"name\":\"kube-api-access-%05x\",\"projected\":"
           "{\"sources\":[{\"serviceAccountToken\":{\"expirationSeconds\":3607,\"path\":"
           "\"token\"}},{\"configMap\":{\"name\":\"kube-root-ca.crt\",\"items\":[{\"key\":"
           "\"ca.crt\",\"path\":\"ca.crt\"}]}},{\"downwardAPI\":{\"items\":[{\"path\":"
           "\"namespace\",\"fieldRef\":{\"apiVersion\":\"v1\",\"fieldPath\":"
           "\"metadata.namespace\"}}]}}],\"defaultMode\":420}}],\"containers\":[",
           i & 0xfffff);
    for (unsigned c = 0; c < n_ctr; c++) {
        unsigned cpu = 50 + ((i * 31u + c * 17u) % 20) * 50;
        pg_put(g,
               "%s{\"name\":\"%s\",\"image\":\"registry.example.com/shop/%s:v3.14.%u\","
               "\"ports\":[{\"name\":\"http\",\"containerPort\":%u,\"protocol\":\"TCP\"}],"
               "\"env\":[{\"name\":\"LOG_LEVEL\",\"value\":\"info\"},"
               "{\"name\":\"OTEL_EXPORTER_OTLP_ENDPOINT\",\"value\":\"http://"
               "otel-collector.observability:4317\"},"
               "{\"name\":\"DB_HOST\",\"value\":\"postgres-primary.data.svc.cluster.local\"},"
               "{\"name\":\"CACHE_URL\",\"value\":\"redis://"
               "redis-master.data.svc.cluster.local:6379/0\"},"
               "{\"name\":\"FEATURE_FLAGS\",\"value\":\"checkout-v2,new-pricing,async-inventory\"},"
               "{\"name\":\"GOMAXPROCS\",\"valueFrom\":{\"resourceFieldRef\":{\"resource\":"
               "\"limits.cpu\",\"divisor\":\"1\"}}},"
               "{\"name\":\"POD_NAME\","
               "\"valueFrom\":{\"fieldRef\":{\"apiVersion\":\"v1\",\"fieldPath\":"
               "\"metadata.name\"}}}],\"resources\":{\"limits\":{\"memory\":\"%uMi\"},"
               "\"requests\":{\"cpu\":\"%um\",\"memory\":\"%uMi\"}},\"resizePolicy\":"
               "[{\"resourceName\":\"cpu\",\"restartPolicy\":\"NotRequired\"},"
               "{\"resourceName\":\"memory\",\"restartPolicy\":\"NotRequired\"}],"
               "\"volumeMounts\":[{\"name\":\"kube-api-access-%05x\",\"readOnly\":true,"
               "\"mountPath\":\"/var/run/secrets/kubernetes.io/serviceaccount\"}],"
               "\"readinessProbe\":{\"httpGet\":{\"path\":\"/healthz\",\"port\":%u,"
               "\"scheme\":\"HTTP\"},\"timeoutSeconds\":1,\"periodSeconds\":10,"
               "\"successThreshold\":1,\"failureThreshold\":3},\"terminationMessagePath\":"
               "\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\","
               "\"imagePullPolicy\":\"IfNotPresent\"}",
               c ? "," : "", PG_CTR[c % 3], PG_CTR[c % 3], i % 40, 8080 + c, 256u << (c % 3), cpu,
               128u << (c % 3), i & 0xfffff, 8080 + c);
    }
    pg_put(g,
           "],\"restartPolicy\":\"Always\",\"terminationGracePeriodSeconds\":30,"
           "\"dnsPolicy\":\"ClusterFirst\",\"serviceAccountName\":\"default\","
           "\"serviceAccount\":\"default\",\"nodeName\":\"node-%04u\","
           "\"securityContext\":{},\"schedulerName\":\"default-scheduler\","
           "\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":"
           "\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":300},{\"key\":"
           "\"node.kubernetes.io/unreachable\",\"operator\":\"Exists\",\"effect\":"
           "\"NoExecute\",\"tolerationSeconds\":300}],\"priority\":0,"
           "\"enableServiceLinks\":true,\"preemptionPolicy\":\"PreemptLowerPriority\"},"
           "\"status\":{\"phase\":\"Running\",\"conditions\":[",
           node);
    static const char *const conds[] = {"PodReadyToStartContainers", "Initialized", "Ready",
                                        "ContainersReady", "PodScheduled"};
    for (unsigned c = 0; c < 5; c++)
        pg_put(g,
               "%s{\"type\":\"%s\",\"status\":\"True\",\"lastProbeTime\":null,"
               "\"lastTransitionTime\":\"2026-11-30T07:12:5%uZ\"}",
               c ? "," : "", conds[c], c);
    pg_put(g,
           "],\"hostIP\":\"172.18.%u.%u\",\"hostIPs\":[{\"ip\":\"172.18.%u.%u\"}],"
           "\"podIP\":\"10.244.%u.%u\",\"podIPs\":[{\"ip\":\"10.244.%u.%u\"}],"
           "\"startTime\":\"2026-11-30T07:12:44Z\",\"qosClass\":\"Burstable\","
           "\"containerStatuses\":[",
           node >> 8, node & 255, node >> 8, node & 255, (i >> 8) & 255, i & 255, (i >> 8) & 255,
           i & 255);
    for (unsigned c = 0; c < n_ctr; c++) {
        unsigned cpu = 50 + ((i * 31u + c * 17u) % 20) * 50;
        pg_put(g,
               "%s{\"name\":\"%s\",\"state\":{\"running\":{\"startedAt\":"
               "\"2026-11-30T07:12:50Z\"}},\"lastState\":{},\"ready\":true,"
               "\"restartCount\":0,\"image\":\"registry.example.com/shop/%s:v3.14.%u\","
               "\"imageID\":\"registry.example.com/shop/%s@sha256:%016x%016x%016x%016x\","
               "\"containerID\":\"containerd://%016x%016x%016x%016x\",\"started\":true,"
               "\"allocatedResources\":{\"cpu\":\"%um\",\"memory\":\"%uMi\"},"
               "\"resources\":{\"limits\":{\"memory\":\"%uMi\"},\"requests\":{\"cpu\":"
               "\"%um\",\"memory\":\"%uMi\"}}}",
               c ? "," : "", PG_CTR[c % 3], PG_CTR[c % 3], i % 40, PG_CTR[c % 3], i, c, i * 3,
               i * 5, i * 7, c, i * 11, i * 13, cpu, 128u << (c % 3), 256u << (c % 3), cpu,
               128u << (c % 3));
    }
    pg_put(g, "]}}");
    return g->len;
}

/* Containers per pod: 60% one, 30% two (with a proxy), 10% three. */
static unsigned podgen_nctr(unsigned i)
{
    unsigned r = (i * 2654435761u) >> 24;
    return r < 154 ? 1 : r < 230 ? 2 : 3;
}

#endif
