#!/usr/bin/env python3
"""gen_gang.py — writes gang.json (or, with "neighbour", gang-neighbour.json),
the dumps of the `gang_*` golden tests (design §2.10).

Four 16-core nodes worker-0..3. In namespace ml (managed) a Job "train" owns
four pods of 2000m, one per node, marked kube-headroom.dev/group-uniform:
"true" (the Job's pods are grouped by its uid). In namespace other (not
managed) filler pods book 0, 2, 4 and 6 cores of the nodes. Alone the
members would get 16000m, 14000m, 12000m and 10000m; the group gets ratio 5:
10000m each, train-3's node binding. "neighbour" adds an 8000m pod on
worker-0: ratio 4, 8000m each, train-0's node binding. "toolarge" sets
spec.maxGroupSize to 3: the four-member group is refused whole, every
member group-too-large (the fillers are not managed either way).

Run it from this folder: python3 gen_gang.py > gang.json;
python3 gen_gang.py neighbour > gang-neighbour.json;
python3 gen_gang.py toolarge > gang-toolarge.json
"""
import sys

from dumpgen import Dump, print_list

d = Dump(3000)
JOB_UID = "9a9a9a9a-0000-4000-8000-000000000001"
MEMBER = {"labels": {"job-name": "train", "kube-headroom.dev/group-uniform": "true"},
          "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "train",
                               "uid": JOB_UID, "controller": True, "blockOwnerDeletion": True}]}

items = [
    d.config({"dryRun": False, "maxGroupSize": 3} if sys.argv[1:] == ["toolarge"] else {"dryRun": False}),
    d.ns("ml", {"kube-headroom.dev/mode": "managed"}),
    d.ns("other", {}),
    d.memory_limitrange("other"),
]
items += [d.node(f"worker-{i}", "16") for i in range(4)]
items += [d.pod("ml", f"train-{i}", f"worker-{i}", "2", MEMBER) for i in range(4)]
items += [d.pod("other", f"filler-{i}", f"worker-{i}", str(2 * i)) for i in range(1, 4)]
if sys.argv[1:] == ["neighbour"]:
    items.append(d.pod("other", "neighbour", "worker-0", "8"))
print_list(items)
