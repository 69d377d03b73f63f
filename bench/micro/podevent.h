/*
 * podevent.h — the one ~8 KB pod watch event the decode benchmarks read
 * (bench_decode: JSON; bench_protobuf: the same pod in JSON and in
 * protobuf, side by side): labels, annotations, an owner, 16
 * managedFields entries, a native sidecar and an app container, their
 * statuses with resources.
 */
#ifndef HR_BENCH_PODEVENT_H
#define HR_BENCH_PODEVENT_H

#include <stdio.h>
#include <stdlib.h>

/* One JSON watch event line, ~8 KB, shaped like the API server's. */
static inline char *hr_bench_pod_event_json(size_t *len)
{
    size_t cap = 16384, n = 0;
    char *b = malloc(cap);
    if (!b)
        return NULL;
    n += (size_t)snprintf(
        b + n, cap - n,
        "{\"type\":\"MODIFIED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
        "\"metadata\":{\"name\":\"web-7d9f8b6c4-x2k9p\",\"namespace\":\"team-a\","
        "\"uid\":\"0b7e6f0e-23a4-4c07-b5c2-5a8f2ad7e003\",\"resourceVersion\":\"4812337\","
        "\"generation\":3,\"creationTimestamp\":\"2026-11-02T09:14:07Z\","
        "\"labels\":{\"app.kubernetes.io/name\":\"web\",\"app.kubernetes.io/part-of\":\"shop\","
        "\"pod-template-hash\":\"7d9f8b6c4\",\"team\":\"a\"},"
        "\"annotations\":{\"kube-headroom.dev/status\":\"{\\\"factor\\\":\\\"2.00\\\"}\","
        "\"prometheus.io/scrape\":\"true\"},"
        "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
        "\"name\":\"web-7d9f8b6c4\",\"uid\":\"c0c0c0c0-0000-4000-8000-000000000001\","
        "\"controller\":true,\"blockOwnerDeletion\":true}],\"managedFields\":[");
    for (int m = 0; m < 16 && n < 7600; m++)
        n += (size_t)snprintf(
            b + n, cap - n,
            "%s{\"manager\":\"kube-controller-manager\",\"operation\":\"Update\","
            "\"apiVersion\":\"v1\",\"time\":\"2026-11-02T09:14:07Z\",\"fieldsType\":"
            "\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:labels\":{\".\":{},"
            "\"f:app\":{},\"f:team\":{}},\"f:ownerReferences\":{\".\":{}}},"
            "\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"app\\\"}\":{\".\":{},"
            "\"f:image\":{},\"f:imagePullPolicy\":{},\"f:name\":{},\"f:ports\":{},"
            "\"f:resources\":{\".\":{},\"f:limits\":{\".\":{},\"f:cpu\":{}},"
            "\"f:requests\":{\".\":{},\"f:cpu\":{},\"f:memory\":{}}}}}}}}",
            m ? "," : "");
    n += (size_t)snprintf(
        b + n, cap - n,
        "]},\"spec\":{\"nodeName\":\"node-017\",\"restartPolicy\":\"Always\","
        "\"initContainers\":[{\"name\":\"envoy\",\"image\":\"envoy:1.33\",\"restartPolicy\":"
        "\"Always\",\"resources\":{\"requests\":{\"cpu\":\"200m\",\"memory\":\"128Mi\"},"
        "\"limits\":{\"cpu\":\"400m\",\"memory\":\"128Mi\"}}}],"
        "\"containers\":[{\"name\":\"app\",\"image\":\"web:4.2\",\"resources\":{\"requests\":"
        "{\"cpu\":\"1\",\"memory\":\"512Mi\"},\"limits\":{\"cpu\":\"2\",\"memory\":\"512Mi\"}},"
        "\"resizePolicy\":[{\"resourceName\":\"cpu\",\"restartPolicy\":\"NotRequired\"}]}]},"
        "\"status\":{\"phase\":\"Running\",\"qosClass\":\"Burstable\",\"containerStatuses\":["
        "{\"name\":\"app\",\"ready\":true,\"restartCount\":0,\"resources\":{\"requests\":"
        "{\"cpu\":\"1\"},\"limits\":{\"cpu\":\"2\"}}}],\"initContainerStatuses\":[{\"name\":"
        "\"envoy\",\"resources\":{\"requests\":{\"cpu\":\"200m\"}}}]}}}");
    *len = n;
    return b;
}

#endif
