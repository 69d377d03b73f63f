#!/usr/bin/env python3
"""gen_tenantfair.py — writes tenantfair.json, the dump of the TenantFair
golden tests (design §2.9): `policy: TenantFair` on two nodes.

- worker-16 (16 cores): team-a (no weight label: 1) has five 1000m pods,
  team-b (kube-headroom.dev/weight "3") one 1000m pod: the table test's node
  with weights, so S = 10000, W = 4, S_a = 2500, S_b = 7500.
- worker-8 (8 cores): team-a one 1000m pod, team-c (weight label "lots":
  invalid, read as 1) one 500m pod, sandbox (not managed) one 1000m pod that
  books but is no tenant: S = 5500, W = 2, S_a = S_c = 2750.

Run it from this folder: python3 gen_tenantfair.py > tenantfair.json
"""
import json

rv = [2000]


def meta(**kw):
    rv[0] += 1
    m = {"resourceVersion": str(rv[0]), "uid": f"7e7e7e7e-0000-4000-8000-{rv[0]:012d}"}
    m.update(kw)
    return m


def ns(name, labels):
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": meta(name=name, labels={"kubernetes.io/metadata.name": name, **labels}),
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


def node(name, cpu):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": meta(name=name, labels={"kubernetes.io/hostname": name,
                                                "kubernetes.io/os": "linux"}),
            "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"},
                       "capacity": {"cpu": cpu, "memory": "32Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(namespace, name, node_name, cpu):
    res = {"requests": {"cpu": cpu, "memory": "256Mi"}, "limits": {"memory": "512Mi"}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta(name=name, namespace=namespace),
            "spec": {"nodeName": node_name,
                     "containers": [{"name": "app", "image": "app:1", "resources": res}]},
            "status": {"phase": "Running", "qosClass": "Burstable",
                       "containerStatuses": [{"name": "app", "ready": True, "restartCount": 0,
                                              "resources": res}]}}


managed = {"kube-headroom.dev/mode": "managed"}
items = [
    {"apiVersion": "kube-headroom.dev/v1alpha1", "kind": "HeadroomConfig",
     "metadata": meta(name="cluster", generation=1),
     "spec": {"policy": "TenantFair", "dryRun": False}},
    ns("team-a", managed),
    ns("team-b", {**managed, "kube-headroom.dev/weight": "3"}),
    ns("team-c", {**managed, "kube-headroom.dev/weight": "lots"}),
    ns("sandbox", {}),
    {"apiVersion": "v1", "kind": "LimitRange",  # no CPU bound: a complete dump
     "metadata": meta(name="memory", namespace="sandbox"),
     "spec": {"limits": [{"type": "Container", "max": {"memory": "4Gi"}}]}},
    node("worker-16", "16"),
    node("worker-8", "8"),
]
items += [pod("team-a", f"web-{i}", "worker-16", "1") for i in range(5)]
items += [pod("team-b", "db-0", "worker-16", "1"),
          pod("team-a", "web-5", "worker-8", "1"),
          pod("team-c", "batch-0", "worker-8", "500m"),
          pod("sandbox", "toy-0", "worker-8", "1")]
print(json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
                  "items": items}, indent=1))
