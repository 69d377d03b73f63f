#!/usr/bin/env python3
"""gen_cluster.py — writes cluster.json, the planner's realistic fixture.

The fixture is checked in; this script is how it was made, kept so a change
to the cluster is a reviewed change to a short description rather than to
3000 lines of JSON. Output imitates `kubectl get nodes,pods,namespaces,
limitranges,resourcequotas,headroomconfigs -A -o json` (kubectl 1.35): full metadata,
managedFields on some objects, status with containerStatuses[].resources.

Run:  python3 tests/golden/gen_cluster.py > tests/golden/cluster.json
Then regenerate the goldens (see README.md) and re-check them by hand.
"""
import json
import uuid

TS = "2026-11-02T09:14:07Z"
rv = [481200]


def next_rv():
    rv[0] += 37
    return str(rv[0])


def uid(name):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "kube-headroom-fixture/" + name))


def managed_fields(manager, op="Update", sub=None):
    mf = {
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:metadata": {"f:labels": {".": {}, "f:app.kubernetes.io/name": {}}},
            "f:spec": {
                "f:containers": {'k:{"name":"app"}': {
                    ".": {}, "f:image": {}, "f:name": {},
                    "f:resources": {".": {}, "f:limits": {".": {}, "f:cpu": {}},
                                    "f:requests": {".": {}, "f:cpu": {}}}}},
                "f:dnsPolicy": {}, "f:restartPolicy": {}},
        },
        "manager": manager,
        "operation": op,
        "time": TS,
    }
    if sub:
        mf["subresource"] = sub
    return mf


def node(name, cpu, labels=None, pressure=None, mf=False):
    lab = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": "m6i.4xlarge",
        "topology.kubernetes.io/zone": "eu-west-1a",
    }
    lab.update(labels or {})
    pressure = pressure or {}
    conds = []
    for t, msg in [("MemoryPressure", "kubelet has sufficient memory available"),
                   ("DiskPressure", "kubelet has no disk pressure"),
                   ("PIDPressure", "kubelet has sufficient PID available")]:
        on = pressure.get(t, False)
        conds.append({
            "type": t, "status": "True" if on else "False",
            "lastHeartbeatTime": TS, "lastTransitionTime": TS,
            "reason": "Kubelet" + ("Has" + t if on else "HasNo" + t
                                   if t != "PIDPressure" else "HasSufficientPID"),
            "message": "kubelet has disk pressure" if on else msg,
        })
    conds.append({"type": "Ready", "status": "True", "lastHeartbeatTime": TS,
                  "lastTransitionTime": TS, "reason": "KubeletReady",
                  "message": "kubelet is posting ready status"})
    meta = {
        "annotations": {
            "node.alpha.kubernetes.io/ttl": "0",
            "volumes.kubernetes.io/controller-managed-attach-detach": "true",
        },
        "creationTimestamp": TS,
        "labels": lab,
        "name": name,
        "resourceVersion": next_rv(),
        "uid": uid("node/" + name),
    }
    if mf:
        meta["managedFields"] = [managed_fields("kubelet"),
                                 managed_fields("kubelet", sub="status")]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta,
        "spec": {"podCIDR": "10.244.%d.0/24" % (abs(hash(name)) % 200),
                 "providerID": "aws:///eu-west-1a/i-0" + uid(name)[:15].replace("-", "")},
        "status": {
            "addresses": [{"address": "10.0.1.%d" % (len(name) * 7), "type": "InternalIP"},
                          {"address": name, "type": "Hostname"}],
            "allocatable": {"cpu": cpu, "ephemeral-storage": "95491281146",
                            "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                            "memory": "63166464Ki", "pods": "110"},
            "capacity": {"cpu": "16", "ephemeral-storage": "103612420Ki",
                         "memory": "64318976Ki", "pods": "110"},
            "conditions": conds,
            "nodeInfo": {"architecture": "amd64", "containerRuntimeVersion": "containerd://2.1.4",
                         "kernelVersion": "6.12.48", "kubeProxyVersion": "",
                         "kubeletVersion": "v1.35.1", "operatingSystem": "linux",
                         "osImage": "Debian GNU/Linux 13 (trixie)"},
        },
    }


def namespace(name, labels=None):
    lab = {"kubernetes.io/metadata.name": name}
    lab.update(labels or {})
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"creationTimestamp": TS, "labels": lab, "name": name,
                         "resourceVersion": next_rv(), "uid": uid("ns/" + name)},
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"}}


def res(req=None, lim=None, mem=None, memlim=None):
    r = {}
    if req or mem:
        r["requests"] = {}
        if req:
            r["requests"]["cpu"] = req
        if mem:
            r["requests"]["memory"] = mem
    if lim or memlim:
        r["limits"] = {}
        if lim:
            r["limits"]["cpu"] = lim
        if memlim:
            r["limits"]["memory"] = memlim
    return r


def ctr(name, image, req=None, lim=None, mem=None, memlim=None, restart=None,
        cpu_restart=False):
    c = {"image": image, "imagePullPolicy": "IfNotPresent", "name": name,
         "resources": res(req, lim, mem, memlim),
         "terminationMessagePath": "/dev/termination-log",
         "terminationMessagePolicy": "File",
         "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                           "name": "kube-api-access", "readOnly": True}]}
    if restart:
        c["restartPolicy"] = restart
    c["resizePolicy"] = [{"resourceName": "cpu",
                          "restartPolicy": "RestartContainer" if cpu_restart else "NotRequired"},
                         {"resourceName": "memory", "restartPolicy": "NotRequired"}]
    return c


def cstatus(c, with_resources=True, init=False):
    s = {"containerID": "containerd://" + uid(c["name"]).replace("-", ""),
         "image": c["image"], "imageID": c["image"] + "@sha256:" + "ab" * 32,
         "lastState": {}, "name": c["name"], "ready": True, "restartCount": 0,
         "started": True, "state": {"running": {"startedAt": TS}}}
    if init and c.get("restartPolicy") != "Always":
        s["state"] = {"terminated": {"exitCode": 0, "reason": "Completed",
                                     "startedAt": TS, "finishedAt": TS}}
        s["started"] = False
    if with_resources:
        s["resources"] = c["resources"]
    return s


def qos(cs):
    cpu = [c["resources"] for c in cs]
    if all(not r for r in cpu):
        return "BestEffort"
    g = True
    for r in cpu:
        for k in ("cpu", "memory"):
            if r.get("limits", {}).get(k) is None or \
               r.get("limits", {}).get(k) != r.get("requests", {}).get(k):
                g = False
    return "Guaranteed" if g else "Burstable"


def pod(ns, name, node_name, containers, init=None, owner=None, labels=None,
        annotations=None, phase="Running", status_resources=True, mf=False,
        deleting=False):
    init = init or []
    lab = {"app.kubernetes.io/name": name.split("-")[0]}
    lab.update(labels or {})
    meta = {"creationTimestamp": TS, "labels": lab, "name": name,
            "namespace": ns, "resourceVersion": next_rv(),
            "uid": uid("pod/%s/%s" % (ns, name))}
    if annotations:
        meta["annotations"] = annotations
    if owner:
        kind, api, oname = owner
        meta["ownerReferences"] = [{"apiVersion": api, "blockOwnerDeletion": True,
                                    "controller": True, "kind": kind, "name": oname,
                                    "uid": uid("owner/" + oname)}]
    if mf:
        meta["managedFields"] = [managed_fields("kube-controller-manager"),
                                 managed_fields("kubelet", sub="status")]
    if deleting:
        meta["deletionTimestamp"] = TS
        meta["deletionGracePeriodSeconds"] = 30
    spec = {"containers": containers, "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0, "restartPolicy": "Always", "schedulerName": "default-scheduler",
            "securityContext": {}, "serviceAccount": "default",
            "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
            "tolerations": [{"effect": "NoExecute", "key": "node.kubernetes.io/not-ready",
                             "operator": "Exists", "tolerationSeconds": 300},
                            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable",
                             "operator": "Exists", "tolerationSeconds": 300}],
            "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}],
                               "name": "kube-root-ca.crt"}}]}}]}
    if init:
        spec["initContainers"] = init
    if node_name:
        spec["nodeName"] = node_name
    status = {"phase": phase, "qosClass": qos(containers + init)}
    if node_name and phase != "Pending":
        status.update({
            "conditions": [{"type": t, "status": "True", "lastProbeTime": None,
                            "lastTransitionTime": TS}
                           for t in ("PodReadyToStartContainers", "Initialized", "Ready",
                                     "ContainersReady", "PodScheduled")],
            "hostIP": "10.0.1.10", "podIP": "10.244.1.%d" % (len(name) * 3),
            "startTime": TS,
            "containerStatuses": [cstatus(c, status_resources) for c in containers],
        })
        if init:
            status["initContainerStatuses"] = [cstatus(c, status_resources, True)
                                               for c in init]
    elif not node_name:
        status["conditions"] = [{"type": "PodScheduled", "status": "False",
                                 "lastProbeTime": None, "lastTransitionTime": TS,
                                 "reason": "Unschedulable",
                                 "message": "0/3 nodes are available: 3 Insufficient cpu."}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
            "status": status}


def limitrange(ns, name, limits):
    return {"apiVersion": "v1", "kind": "LimitRange",
            "metadata": {"creationTimestamp": TS, "name": name, "namespace": ns,
                         "resourceVersion": next_rv(), "uid": uid("lr/" + name)},
            "spec": {"limits": limits}}


IMG = "registry.example.com/"
items = [
    namespace("kube-system"),
    namespace("team-a", {"kube-headroom.dev/mode": "managed", "team": "a"}),
    namespace("team-b", {"kube-headroom.dev/mode": "managed", "team": "b"}),
    namespace("monitoring", {"kube-headroom.dev/mode": "managed"}),
    namespace("sandbox", {"team": "research"}),
    node("node-a", "15890m", mf=True),
    node("node-b", "8"),
    node("node-c", "4", pressure={"DiskPressure": True}),
    limitrange("team-b", "cpu-bounds", [
        {"type": "Container", "max": {"cpu": "4", "memory": "8Gi"},
         "maxLimitRequestRatio": {"cpu": "3"},
         "default": {"cpu": "500m"}, "defaultRequest": {"cpu": "250m"}},
        {"type": "PersistentVolumeClaim", "max": {"storage": "50Gi"}}]),
    {"apiVersion": "kube-headroom.dev/v1alpha1", "kind": "HeadroomConfig",
     "metadata": {"creationTimestamp": TS, "generation": 3, "name": "cluster",
                  "resourceVersion": next_rv(), "uid": uid("hcfg/cluster")},
     "spec": {"dryRun": True, "policy": "Proportional",
              "excludedOwners": [{"kind": "DaemonSet", "apiGroup": "apps"}]},
     "status": {"observedGeneration": 3, "managedPods": 0, "managedNodes": 0}},

    # node-a: a busy node with slack; one of each eligibility outcome.
    pod("team-a", "web-7d9f8b6c4-x2k9p", "node-a",
        [ctr("app", IMG + "web:4.2", "1", "2", "512Mi", "512Mi")],
        init=[ctr("migrate", IMG + "web-migrate:4.2", "2", None, "256Mi"),
              ctr("envoy", IMG + "envoy:1.33", "200m", "400m", "128Mi", "128Mi",
                  restart="Always")],
        owner=("ReplicaSet", "apps/v1", "web-7d9f8b6c4"), mf=True),
    pod("team-a", "api-0", "node-a",
        [ctr("app", IMG + "api:2.0", "500m", None, "256Mi")],
        owner=("StatefulSet", "apps/v1", "api"), mf=True),
    pod("team-a", "capped-5f6d7c-qq8wz", "node-a",
        [ctr("app", IMG + "capped:1.0", "500m", "1", "128Mi")],
        owner=("ReplicaSet", "apps/v1", "capped-5f6d7c"),
        annotations={"kube-headroom.dev/max-cpu": "1500m"}),
    pod("team-a", "postgres-0", "node-a",
        [ctr("app", IMG + "postgres:17", "2", "2", "4Gi", "4Gi")],
        owner=("StatefulSet", "apps/v1", "postgres")),
    pod("team-a", "debug-shell", "node-a", [ctr("app", IMG + "toolbox:1")]),
    pod("team-a", "legacy-report-8x7", "node-a",
        [ctr("app", IMG + "report:0.9", "300m", "600m", "256Mi")],
        labels={"kube-headroom.dev/mode": "unmanaged"}),
    pod("team-a", "jvm-batch-6c9", "node-a",
        [ctr("app", IMG + "jvm:21", "1", "2", "2Gi", "3Gi", cpu_restart=True)]),
    pod("team-a", "old-kubelet-view", "node-a",
        [ctr("app", IMG + "view:3", "250m", "500m", "64Mi")],
        status_resources=False),
    pod("team-a", "nightly-29871340-kq2", "node-a",
        [ctr("app", IMG + "nightly:1", "1", "2", "1Gi")],
        owner=("Job", "batch/v1", "nightly-29871340"), phase="Succeeded"),
    pod("monitoring", "node-exporter-8kz4m", "node-a",
        [ctr("app", IMG + "node-exporter:1.9", "100m", "250m", "64Mi", "128Mi")],
        owner=("DaemonSet", "apps/v1", "node-exporter")),
    pod("kube-system", "kube-proxy-7wq2d", "node-a",
        [ctr("kube-proxy", IMG + "kube-proxy:v1.35.1", "100m", None, "64Mi")],
        owner=("DaemonSet", "apps/v1", "kube-proxy"), mf=True),
    pod("kube-system", "etcd-node-a", "node-a",
        [ctr("etcd", IMG + "etcd:3.6", "100m", None, "100Mi")],
        owner=("Node", "v1", "node-a"),
        annotations={"kubernetes.io/config.mirror": "5b1f0c0e2f7d",
                     "kubernetes.io/config.source": "file"}),
    pod("sandbox", "notebook-0", "node-a",
        [ctr("app", IMG + "jupyter:4", "1500m", "4", "4Gi")],
        owner=("StatefulSet", "apps/v1", "notebook")),

    # node-b: over-booked (requests 9100m on 8 cores): no slack, targets fall
    # back to the requests and the QoS guard keeps worker-2 Burstable.
    pod("team-b", "worker-5b7c9-a1", "node-b",
        [ctr("app", IMG + "worker:7", "3", "4", "2Gi")],
        owner=("ReplicaSet", "apps/v1", "worker-5b7c9")),
    pod("team-b", "worker-5b7c9-a2", "node-b",
        [ctr("app", IMG + "worker:7", "2", "3", "1Gi", "1Gi")],
        owner=("ReplicaSet", "apps/v1", "worker-5b7c9")),
    pod("kube-system", "coredns-6f8d4-zx7", "node-b",
        [ctr("coredns", IMG + "coredns:1.12", "100m", None, "70Mi", "170Mi")],
        owner=("ReplicaSet", "apps/v1", "coredns-6f8d4")),
    pod("sandbox", "cruncher", "node-b",
        [ctr("app", IMG + "cruncher:1", "4", "8", "8Gi")]),

    # node-c: DiskPressure, increases held; team-b's LimitRange caps a limit
    # at 3x its request; a terminating pod still books its request.
    pod("team-a", "cache-0", "node-c",
        [ctr("app", IMG + "redis:8", "500m", "600m", "1Gi")],
        owner=("StatefulSet", "apps/v1", "cache")),
    pod("team-b", "small-api-77d-p9", "node-c",
        [ctr("app", IMG + "small-api:1", "250m", "500m", "128Mi")],
        owner=("ReplicaSet", "apps/v1", "small-api-77d")),
    pod("team-b", "worker-5b7c9-a3", "node-c",
        [ctr("app", IMG + "worker:7", "1", "3", "2Gi")],
        owner=("ReplicaSet", "apps/v1", "worker-5b7c9"), deleting=True),

    # A pod on a node that left the cluster, and one not scheduled yet.
    pod("team-a", "orphan-1", "node-gone",
        [ctr("app", IMG + "web:4.2", "200m", "400m", "128Mi")]),
    pod("team-a", "pending-1", None,
        [ctr("app", IMG + "web:4.2", "8", "16", "1Gi")], phase="Pending"),
]

print(json.dumps({"apiVersion": "v1", "items": items, "kind": "List",
                  "metadata": {"resourceVersion": ""}}, indent=4))
