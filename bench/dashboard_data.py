"""Data for bench/dashboard.py: 5,000 nodes x 8 NUMA zones, and one 768-CPU Koordinator node.

Written straight into the (throwaway) database with bulk_create: the point is the
dashboard's reads, not the importer. Deterministic for a seed.
"""

from __future__ import annotations

import random

from django.db import transaction
from django.utils import timezone

from topology.choices import Flavour, TopologyManagerPolicy, TopologyManagerScope
from topology.models import (
    Cluster,
    Node,
    NodeFigures,
    NodeTopology,
    Pod,
    PodAllocation,
    Reservation,
    Zone,
    ZoneResource,
    encode_cpus,
)
from topology.parsers.cpulist import format_cpulist

GI = 2**30
ZONES = 8
CORES_PER_ZONE = 48  # x 2 threads x 8 zones = 768 logical CPUs
FLAVOURS = (
    Flavour.UPSTREAM_V1ALPHA2,
    Flavour.CRANE,
    Flavour.KOORDINATOR,
    Flavour.UPSTREAM_V1ALPHA1,
)
POLICIES = tuple(TopologyManagerPolicy)
BIG_NODE = "big-768"


def _node(cluster: Cluster, index: int, now: object) -> Node:
    return Node(
        cluster=cluster,
        name=f"node-{index:05d}",
        observed_at=now,
        labels={"kubernetes.io/hostname": f"node-{index:05d}", "pool": f"pool-{index % 7}"},
    )


def _topology(node: Node, rng: random.Random, now: object) -> NodeTopology:
    return NodeTopology(
        node=node,
        observed_at=now,
        flavour=FLAVOURS[rng.randrange(len(FLAVOURS))],
        api_version="topology.node.k8s.io/v1alpha2",
        tm_policy=POLICIES[rng.randrange(len(POLICIES))],
        tm_scope=TopologyManagerScope.POD,
    )


def _zone_rows(topology: NodeTopology, rng: random.Random) -> tuple[list[Zone], list[tuple]]:
    zones, resources = [], []
    for numa in range(ZONES):
        zone = Zone(topology=topology, name=f"node-{numa}", zone_type="Node", numa_id=numa)
        zones.append(zone)
        free = rng.randrange(0, 48)
        resources.append((zone, "cpu", 48_000, 46_000, free * 1000))
        resources.append((zone, "memory", 96 * GI, 94 * GI, rng.randrange(0, 94) * GI))
        resources.append((zone, "hugepages-1Gi", 8 * GI, 8 * GI, rng.randrange(0, 8) * GI))
    return zones, resources


@transaction.atomic
def build_fleet(nodes: int, seed: int = 0) -> Cluster:
    """`nodes` nodes of 8 zones each, with NodeFigures, in one cluster called "bench"."""
    rng = random.Random(seed)
    now = timezone.now()
    cluster = Cluster.objects.create(name="bench", last_imported_at=now)
    created = Node.objects.bulk_create([_node(cluster, i, now) for i in range(nodes)], 1000)
    topologies = NodeTopology.objects.bulk_create([_topology(n, rng, now) for n in created], 1000)
    zones, resources = [], []
    for topology in topologies:
        more_zones, more_resources = _zone_rows(topology, rng)
        zones += more_zones
        resources += more_resources
    Zone.objects.bulk_create(zones, 2000)
    ZoneResource.objects.bulk_create(
        [
            ZoneResource(zone=z, name=n, capacity=c, allocatable=a, available=v)
            for z, n, c, a, v in resources
        ],
        5000,
    )
    NodeFigures.objects.bulk_create(
        [_figures(node, rng, now) for node in created if rng.random() > 0.02], 1000
    )
    return cluster


def _figures(node: Node, rng: random.Random, now: object) -> NodeFigures:
    free = {str(numa): rng.randrange(0, 46) for numa in range(ZONES)}
    return NodeFigures(
        node=node,
        computed_at=now,
        free_cpus_by_zone=free,
        free_cpus_total=sum(free.values()),
        max_free_cpus_in_one_zone=max(free.values()),
        largest_exclusive_pod={p.value: max(free.values()) for p in POLICIES},
        largest_exclusive_pod_own_policy=max(free.values()),
    )


def _cpu_table() -> list[tuple[int, int, int, int]]:
    total_cores = ZONES * CORES_PER_ZONE
    rows = []
    for core in range(total_cores):
        numa = core // CORES_PER_ZONE
        socket = numa // (ZONES // 2)
        rows += [(core, core, socket, numa), (core + total_cores, core, socket, numa)]
    return sorted(rows)


@transaction.atomic
def build_big_node(cluster: Cluster, pods: int = 120, seed: int = 1) -> Node:
    """A 768-CPU Koordinator node: pinned pods, unpinned pods, reserved CPUs, a Reservation."""
    rng = random.Random(seed)
    now = timezone.now()
    node = Node.objects.create(cluster=cluster, name=BIG_NODE, observed_at=now, labels={})
    cpus = _cpu_table()
    topology = NodeTopology.objects.create(
        node=node,
        observed_at=now,
        flavour=Flavour.KOORDINATOR,
        api_version="topology.node.k8s.io/v1alpha1",
        tm_policy=TopologyManagerPolicy.SINGLE_NUMA_NODE,
        tm_scope=TopologyManagerScope.POD,
        kubelet_reserved_cpus="0,384",
        cpu_manager_policy="static",
        cpu_count=len(cpus),
        cpu_table=encode_cpus(cpus),
        cpu_topology_source="koordinator",
        koordlet={"cpu_basic_info": {"vendorID": "AuthenticAMD", "catL3CbmMask": "ffff"}},
    )
    for numa in range(ZONES):
        zone = Zone.objects.create(
            topology=topology, name=f"node-{numa}", zone_type="Node", numa_id=numa
        )
        ZoneResource.objects.create(
            zone=zone, name="cpu", capacity=96_000, allocatable=96_000, available=96_000
        )
        ZoneResource.objects.create(
            zone=zone, name="memory", capacity=192 * GI, allocatable=190 * GI, available=190 * GI
        )
    _big_node_pods(cluster, node, cpus, pods, rng, now)
    return node


def _big_node_pods(cluster, node, cpus, count, rng, now) -> None:  # type: ignore[no-untyped-def]
    free = [cpu for cpu, *_ in cpus if cpu not in (0, 384)]
    rng.shuffle(free)
    for index in range(count):
        pod = Pod.objects.create(
            cluster=cluster,
            node=node,
            node_name=node.name,
            namespace="bench",
            name=f"pod-{index:03d}",
            observed_at=now,
            phase="Running",
            qos_class="Guaranteed",
            containers=[{"name": "c", "requests": {"cpu": 4000}, "limits": {"cpu": 4000}}],
        )
        pinned = index % 4 != 0
        cpuset = format_cpulist(free.pop() for _ in range(4)) if pinned else ""
        PodAllocation.objects.create(
            cluster=cluster,
            node=node,
            node_name=node.name,
            pod=pod,
            namespace="bench",
            pod_name=pod.name,
            source="koordinator",
            cpuset=cpuset,
            numa_resources={str(index % ZONES): {"cpu": 4000 if pinned else 500}},
        )
    Reservation.objects.create(
        cluster=cluster,
        node=node,
        node_name=node.name,
        name="resv-big",
        observed_at=now,
        owners=[{"labelSelector": {"matchLabels": {"app": "x"}}}],
        phase="Available",
        allocatable={"cpu": 8000},
        allocated={},
        cpuset=format_cpulist(free.pop() for _ in range(8)),
    )
