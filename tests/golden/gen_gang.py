#!/usr/bin/env python3
"""gen_gang.py — writes gang.json (or, with "neighbour", gang-neighbour.json),
the dumps of the gang golden tests (design §2.10).

Four 16-core nodes worker-0..3. In namespace ml (managed) a Job "train" owns
four pods of 2000m, one per node, marked kube-headroom.dev/group-uniform:
"true" (the Job's pods are grouped by its uid). In namespace other (not
managed) filler pods book 0, 2, 4 and 6 cores of the nodes. Alone the
members would get 16000m, 14000m, 12000m and 10000m; the gang gets ratio 5:
10000m each, train-3's node binding. "neighbour" adds an 8000m pod on
worker-0: ratio 4, 8000m each, train-0's node binding.

Run it from this folder: python3 gen_gang.py > gang.json;
python3 gen_gang.py neighbour > gang-neighbour.json
"""
import json
import sys

rv = [3000]
JOB_UID = "9a9a9a9a-0000-4000-8000-000000000001"


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


def pod(namespace, name, node_name, cpu, member=False):
    res = {"requests": {"cpu": cpu, "memory": "256Mi"}, "limits": {"memory": "512Mi"}}
    m = meta(name=name, namespace=namespace)
    if member:
        m["labels"] = {"job-name": "train", "kube-headroom.dev/group-uniform": "true"}
        m["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": "train",
                                 "uid": JOB_UID, "controller": True,
                                 "blockOwnerDeletion": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": m,
            "spec": {"nodeName": node_name,
                     "containers": [{"name": "app", "image": "app:1", "resources": res}]},
            "status": {"phase": "Running", "qosClass": "Burstable",
                       "containerStatuses": [{"name": "app", "ready": True, "restartCount": 0,
                                              "resources": res}]}}


items = [
    {"apiVersion": "kube-headroom.dev/v1alpha1", "kind": "HeadroomConfig",
     "metadata": meta(name="cluster", generation=1), "spec": {"dryRun": False}},
    ns("ml", {"kube-headroom.dev/mode": "managed"}),
    ns("other", {}),
    {"apiVersion": "v1", "kind": "LimitRange",  # no CPU bound: a complete dump
     "metadata": meta(name="memory", namespace="other"),
     "spec": {"limits": [{"type": "Container", "max": {"memory": "4Gi"}}]}},
]
items += [node(f"worker-{i}", "16") for i in range(4)]
items += [pod("ml", f"train-{i}", f"worker-{i}", "2", member=True) for i in range(4)]
items += [pod("other", f"filler-{i}", f"worker-{i}", str(2 * i)) for i in range(1, 4)]
if sys.argv[1:] == ["neighbour"]:
    items.append(pod("other", "neighbour", "worker-0", "8"))
print(json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
                  "items": items}, indent=1))
