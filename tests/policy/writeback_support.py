"""Constants and helpers of the write-back tests (fixtures: writeback_fixtures)."""

from __future__ import annotations

import json
from typing import Any

from tests.sync.fakekube import FakeKubeServer

KOORD_NODE = "epyc-nps4-01"  # the demo's Koordinator node (labels numa policy + strategy)
NUMA_POLICY = "node.koordinator.sh/numa-topology-policy"
ALLOCATE_STRATEGY = "node.koordinator.sh/numa-allocate-strategy"


def writes(fake: FakeKubeServer, method: str) -> list[dict[str, Any]]:
    """The bodies of every `method` request the fake server received, parsed."""
    return [json.loads(r.body) for r in fake.requests if r.method == method]


def node_in_cluster(fake: FakeKubeServer, name: str) -> dict[str, Any]:
    found = fake.cluster.get(("", "nodes"), ("", name))
    if found is None:
        raise LookupError(f"node {name} is not in the fake cluster")
    return found


def config_map_in_cluster(fake: FakeKubeServer) -> dict[str, Any]:
    key = ("koordinator-system", "slo-controller-config")
    found = fake.cluster.get(("", "configmaps"), key)
    if found is None:
        raise LookupError("the QoS ConfigMap is not in the fake cluster")
    return found
