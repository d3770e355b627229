"""A small hand-built mirror for policy tests: Koordinator and Crane nodes, row by row."""

from __future__ import annotations

from tests.dashboard.factories import (
    NodeFactory,
    NodeTopologyFactory,
    ZoneFactory,
    ZoneResourceFactory,
)
from topology.choices import Flavour
from topology.models import Cluster, Node, encode_cpus

GI = 1024**3
ZONE_MEMORY = 64 * GI


def _schedulable(node: Node, cpus: int, zones: int, labels: dict[str, str]) -> Node:
    amounts = {"cpu": cpus * 1000, "memory": ZONE_MEMORY * zones, "pods": 110}
    node.allocatable, node.capacity = amounts, dict(amounts)
    node.labels = {**node.labels, **labels}
    node.save()
    return node


def one_socket(zones: int, cores_per_zone: int) -> list[tuple[int, int, int, int]]:
    """(cpu, core, socket, numa) rows: one socket of `zones` NUMA nodes (AMD NPS-like), two
    threads a core numbered c and c + cores. One socket, because koord-scheduler shifts
    the NUMA ids of later sockets (socket<<16 | node), which the NRT's zones do not."""
    cores = zones * cores_per_zone
    rows = []
    for core in range(cores):
        numa = core // cores_per_zone
        rows += [(core, core, 0, numa), (core + cores, core, 0, numa)]
    return sorted(rows)


def koord_node(
    cluster: Cluster, name: str, *, zones: int = 2, cores: int = 6, **labels: str
) -> Node:
    """A Koordinator node: `zones` NUMA zones of `cores` hyperthreaded cores (2 CPUs each)."""
    node = NodeFactory(cluster=cluster, name=name)
    cpus = one_socket(zones, cores)
    nrt = NodeTopologyFactory(
        node=node,
        flavour=Flavour.KOORDINATOR,
        api_version="topology.node.k8s.io/v1alpha1",
        cpu_count=len(cpus),
        cpu_table=encode_cpus(cpus),
        cpu_topology_source="koordinator",
    )
    for numa in range(zones):
        zone = ZoneFactory(topology=nrt, numa_id=numa, name=f"node-{numa}")
        amount = cores * 2 * 1000
        ZoneResourceFactory(zone=zone, capacity=amount, allocatable=amount, available=amount)
        ZoneResourceFactory(
            zone=zone, name="memory", capacity=ZONE_MEMORY, allocatable=ZONE_MEMORY,
            available=ZONE_MEMORY,
        )  # fmt: skip
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
