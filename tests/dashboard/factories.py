"""factory_boy factories for dashboard tests: a mirror built row by row."""

from __future__ import annotations

import factory
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


class ClusterFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Cluster

    name = factory.Sequence(lambda n: f"cluster-{n}")
    last_imported_at = factory.LazyFunction(timezone.now)


class NodeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Node

    cluster = factory.SubFactory(ClusterFactory)
    name = factory.Sequence(lambda n: f"node-{n:03d}")
    observed_at = factory.LazyFunction(timezone.now)
    labels = factory.LazyAttribute(lambda o: {"kubernetes.io/hostname": o.name})


class NodeTopologyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = NodeTopology

    node = factory.SubFactory(NodeFactory)
    observed_at = factory.LazyFunction(timezone.now)
    flavour = Flavour.UPSTREAM_V1ALPHA2
    api_version = "topology.node.k8s.io/v1alpha2"
    tm_policy = TopologyManagerPolicy.SINGLE_NUMA_NODE
    tm_scope = TopologyManagerScope.POD


class ZoneFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Zone

    topology = factory.SubFactory(NodeTopologyFactory)
    numa_id = factory.Sequence(lambda n: n)
    name = factory.LazyAttribute(lambda o: f"node-{o.numa_id}")
    zone_type = "Node"


class ZoneResourceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ZoneResource

    zone = factory.SubFactory(ZoneFactory)
    name = "cpu"
    capacity = 32000
    allocatable = 30000
    available = 22000


class NodeFiguresFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = NodeFigures

    node = factory.SubFactory(NodeFactory)
    computed_at = factory.LazyFunction(timezone.now)
    free_cpus_by_zone = factory.LazyFunction(lambda: {"0": 22, "1": 8})
    free_cpus_total = 30
    max_free_cpus_in_one_zone = 22
    largest_exclusive_pod = factory.LazyFunction(lambda: {"single-numa-node": 22, "none": 30})
    largest_exclusive_pod_own_policy = 22


class PodFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Pod

    cluster = factory.SelfAttribute("node.cluster")
    node = factory.SubFactory(NodeFactory)
    node_name = factory.SelfAttribute("node.name")
    namespace = "team"
    name = factory.Sequence(lambda n: f"pod-{n}")
    observed_at = factory.LazyFunction(timezone.now)
    phase = "Running"
    qos_class = "Guaranteed"
    containers = factory.LazyFunction(
        lambda: [{"name": "c", "requests": {"cpu": 4000}, "limits": {"cpu": 4000}}]
    )


class PodAllocationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = PodAllocation

    pod = factory.SubFactory(PodFactory)
    cluster = factory.SelfAttribute("pod.cluster")
    node = factory.SelfAttribute("pod.node")
    node_name = factory.SelfAttribute("pod.node_name")
    namespace = factory.SelfAttribute("pod.namespace")
    pod_name = factory.SelfAttribute("pod.name")
    source = "koordinator"
    cpuset = "2-3"
    numa_resources = factory.LazyFunction(lambda: {"0": {"cpu": 2000}})


class ReservationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Reservation

    cluster = factory.SelfAttribute("node.cluster")
    node = factory.SubFactory(NodeFactory)
    node_name = factory.SelfAttribute("node.name")
    name = factory.Sequence(lambda n: f"resv-{n}")
    observed_at = factory.LazyFunction(timezone.now)
    owners = factory.LazyFunction(lambda: [{"labelSelector": {"matchLabels": {"app": "web"}}}])
    phase = "Available"
    allocatable = factory.LazyFunction(lambda: {"cpu": 4000, "memory": 8 * 1024**3})
    allocated = factory.LazyFunction(lambda: {"cpu": 2000})
    cpuset = "4-7"
    ttl_seconds = 3600


# One logical CPU row: (cpu, core, socket, numa).
def hyperthreaded(zones: int = 2, cores_per_zone: int = 4) -> list[tuple[int, int, int, int]]:
    """Two threads per core; thread 1 of core c is c + total cores (the Linux numbering)."""
    total = zones * cores_per_zone
    rows = []
    for core in range(total):
        numa = core // cores_per_zone
        rows += [(core, core, numa, numa), (core + total, core, numa, numa)]
    return sorted(rows)


def koordinator_node(
    cluster: Cluster, name: str = "koord-1", zones: int = 2, cores_per_zone: int = 4, **topology
) -> Node:
    """A Koordinator node with a cpu table and one cpu resource per zone (no figures)."""
    node = NodeFactory(cluster=cluster, name=name)
    cpus = hyperthreaded(zones, cores_per_zone)
    nrt = NodeTopologyFactory(
        node=node,
        flavour=Flavour.KOORDINATOR,
        api_version="topology.node.k8s.io/v1alpha1",
        cpu_count=len(cpus),
        cpu_table=encode_cpus(cpus),
        cpu_topology_source="koordinator",
        **topology,
    )
    for numa in range(zones):
        zone = ZoneFactory(topology=nrt, numa_id=numa, name=f"node-{numa}")
        per_zone = cores_per_zone * 2 * 1000
        ZoneResourceFactory(zone=zone, capacity=per_zone, allocatable=per_zone, available=per_zone)
    return node


def upstream_node(cluster: Cluster, name: str, zones: int = 2, figures: bool = True) -> Node:
    node = NodeFactory(cluster=cluster, name=name)
    nrt = NodeTopologyFactory(node=node)
    for numa in range(zones):
        zone = ZoneFactory(topology=nrt, numa_id=numa, name=f"node-{numa}")
        ZoneResourceFactory(zone=zone)
        ZoneResourceFactory(
            zone=zone,
            name="memory",
            capacity=64 * 1024**3,
            allocatable=60 * 1024**3,
            available=40 * 1024**3,
        )
    if figures:
        NodeFiguresFactory(node=node)
    return node
