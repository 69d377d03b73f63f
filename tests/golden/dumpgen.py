"""dumpgen.py — what the generators of the small golden dumps share
(gen_gang.py, gen_tenantfair.py, gen_nodepools.py): the objects of a
`kubectl get nodes,pods,namespaces,limitranges,resourcequotas,headroomconfigs -A -o json`
List as the API server prints them, each with its own resourceVersion and
uid from one counter, so a dump reads as one consistent snapshot.

Imported, not run: each generator makes a Dump, calls its makers in the
order the items appear (the counter follows that order, so a generator's
output stays byte for byte what it was) and prints it.
"""
import json


class Dump:
    def __init__(self, first_rv, uid_prefix="7e7e7e7e"):
        self.rv = first_rv
        self.uid_prefix = uid_prefix

    def meta(self, **kw):
        self.rv += 1
        m = {"resourceVersion": str(self.rv),
             "uid": f"{self.uid_prefix}-0000-4000-8000-{self.rv:012d}"}
        m.update(kw)
        return m

    def config(self, spec):
        return {"apiVersion": "kube-headroom.dev/v1alpha1", "kind": "HeadroomConfig",
                "metadata": self.meta(name="cluster", generation=1), "spec": spec}

    def ns(self, name, labels):
        return {"apiVersion": "v1", "kind": "Namespace",
                "metadata": self.meta(name=name,
                                      labels={"kubernetes.io/metadata.name": name, **labels}),
                "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}

    def memory_limitrange(self, namespace):
        """A LimitRange with no CPU bound: the dump is complete (it has the kind)."""
        return {"apiVersion": "v1", "kind": "LimitRange",
                "metadata": self.meta(name="memory", namespace=namespace),
                "spec": {"limits": [{"type": "Container", "max": {"memory": "4Gi"}}]}}

    def node(self, name, cpu, labels=None):
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": self.meta(name=name, labels={"kubernetes.io/hostname": name,
                                                         "kubernetes.io/os": "linux",
                                                         **(labels or {})}),
                "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"},
                           "capacity": {"cpu": cpu, "memory": "32Gi", "pods": "110"},
                           "conditions": [{"type": "Ready", "status": "True"}]}}

    def pod(self, namespace, name, node_name, cpu, metadata=None):
        """A running one-container Burstable pod: CPU request cpu, no CPU limit;
        metadata: more fields of its metadata (labels, ownerReferences)."""
        res = {"requests": {"cpu": cpu, "memory": "256Mi"}, "limits": {"memory": "512Mi"}}
        m = self.meta(name=name, namespace=namespace)
        m.update(metadata or {})
        return {"apiVersion": "v1", "kind": "Pod", "metadata": m,
                "spec": {"nodeName": node_name,
                         "containers": [{"name": "app", "image": "app:1", "resources": res}]},
                "status": {"phase": "Running", "qosClass": "Burstable",
                           "containerStatuses": [{"name": "app", "ready": True,
                                                  "restartCount": 0, "resources": res}]}}


def print_list(items):
    print(json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
                      "items": items}, indent=1))
