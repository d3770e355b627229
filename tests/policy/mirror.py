"""A small hand-built mirror for policy tests: Koordinator and Crane nodes, row by row."""

from __future__ import annotations

from tests.factories import (
    NodeFactory,
    NodeTopologyFactory,
    ZoneFactory,
    ZoneResourceFactory,
    koordinator_node,
)
from topology.choices import Flavour
from topology.models import Cluster, Node

GI = 1024**3
ZONE_MEMORY = 64 * GI


def _schedulable(node: Node, cpus: int, zones: int, labels: dict[str, str]) -> Node:
    amounts = {"cpu": cpus * 1000, "memory": ZONE_MEMORY * zones, "pods": 110}
    node.allocatable, node.capacity = amounts, dict(amounts)
    node.labels = {**node.labels, **labels}
    node.save()
    return node


def koord_node(
    cluster: Cluster, name: str, *, zones: int = 2, cores: int = 6, **labels: str
) -> Node:
    """A Koordinator node: `zones` NUMA zones of `cores` hyperthreaded cores (2 CPUs each).

    All on one socket, because koord-scheduler shifts the NUMA ids of later sockets
    (socket<<16 | node), which the NRT's zones do not.
    """
    node = koordinator_node(
        cluster, name, zones=zones, cores_per_zone=cores, one_socket=True, zone_memory=ZONE_MEMORY
    )
    return _schedulable(node, zones * cores * 2, zones, labels)


def crane_node(
    cluster: Cluster, name: str, *, zones: int = 2, cpus_per_zone: int = 16, aware: bool = False
) -> Node:
    """A Crane node (static CPU policy); its NRT's policy follows the awareness label."""
    node = NodeFactory(cluster=cluster, name=name)
    nrt = NodeTopologyFactory(
        node=node,
        flavour=Flavour.CRANE,
        api_version="topology.crane.io/v1alpha1",
        crane_cpu_manager_policy="Static",
        crane_topology_policy="SingleNUMANodePodLevel" if aware else "None",
    )
    for numa in range(zones):
        zone = ZoneFactory(topology=nrt, numa_id=numa, name=f"node{numa}")
        amount = cpus_per_zone * 1000
        ZoneResourceFactory(zone=zone, capacity=amount, allocatable=amount, available=None)
        ZoneResourceFactory(
            zone=zone, name="memory", capacity=ZONE_MEMORY, allocatable=ZONE_MEMORY,
            available=None,
        )  # fmt: skip
    label = {"topology.crane.io/topology-awareness": "true" if aware else "false"}
    return _schedulable(node, zones * cpus_per_zone, zones, label)
