"""factory_boy factories for the mirror, shared by every app's tests, and a Koordinator node.

The defaults describe a plausible cluster: nodes labelled with their hostname, pods of
namespace "team" that take their cluster from their node, Reservations on a node. A test
package whose tests rely on other defaults subclasses a factory in its own factories.py.
"""

from __future__ import annotations

import factory
from django.utils import timezone

from topology.choices import Flavour, TopologyManagerPolicy, TopologyManagerScope
from topology.models import (
    Cluster,
    Node,
    NodeCPUReservation,
    NodeFigures,
    NodePolicy,
    NodeTopology,
    Pod,
    PodAllocation,
    Reservation,
    Zone,
    ZoneResource,
    encode_cpus,
)

# One logical CPU row: (cpu, core, socket, numa).
CPURow = tuple[int, int, int, int]


class ClusterFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Cluster
        django_get_or_create = ("name",)

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


def _cluster_of_node_or_new() -> factory.Maybe:
    """The node's cluster when there is a node, else a new cluster (or the one passed)."""
    return factory.Maybe(
        "node",
        yes_declaration=factory.SelfAttribute("node.cluster"),
        no_declaration=factory.SubFactory(ClusterFactory),
    )


class PodFactory(factory.django.DjangoModelFactory):
    """A pod on `node` (in the node's cluster), or not yet scheduled when no node is given."""

    class Meta:
        model = Pod

    node = None
    cluster = _cluster_of_node_or_new()
    node_name = factory.LazyAttribute(lambda o: o.node.name if o.node else "")
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
    """A Reservation on `node` (in the node's cluster), or still pending when no node is given."""

    class Meta:
        model = Reservation

    node = None
    cluster = _cluster_of_node_or_new()
    node_name = factory.LazyAttribute(lambda o: o.node.name if o.node else "")
    name = factory.Sequence(lambda n: f"resv-{n}")
    observed_at = factory.LazyFunction(timezone.now)
    owners = factory.LazyFunction(lambda: [{"labelSelector": {"matchLabels": {"app": "web"}}}])
    phase = "Available"
    allocatable = factory.LazyFunction(lambda: {"cpu": 4000, "memory": 8 * 1024**3})
    allocated = factory.LazyFunction(lambda: {"cpu": 2000})
    cpuset = "4-7"
    ttl_seconds = 3600


class NodeCPUReservationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = NodeCPUReservation

    node = factory.SubFactory(NodeFactory)
    reserved_cpus = "0-1"
    apply_policy = "Default"


class NodePolicyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = NodePolicy

    node = factory.SubFactory(NodeFactory)
    numa_topology_policy = "SingleNUMANode"
    cpu_bind_policy = "FullPCPUs"


def hyperthreaded(
    zones: int = 2, cores_per_zone: int = 4, *, one_socket: bool = False
) -> list[CPURow]:
    """Two threads per core; thread 1 of core c is c + total cores (the Linux numbering).

    Each NUMA zone is a socket of its own, unless `one_socket` puts every zone on socket 0
    (like AMD's NPS modes).
    """
    total = zones * cores_per_zone
    rows = []
    for core in range(total):
        numa = core // cores_per_zone
        socket = 0 if one_socket else numa
        rows += [(core, core, socket, numa), (core + total, core, socket, numa)]
    return sorted(rows)


def koordinator_node(
    cluster: Cluster,
    name: str = "koord-1",
    *,
    zones: int = 2,
    cores_per_zone: int = 4,
    one_socket: bool = False,
    zone_memory: int | None = None,
    **topology: object,
) -> Node:
    """A Koordinator node with a cpu table and a cpu resource per zone (no figures).

    `one_socket` lays the CPUs out as in `hyperthreaded`; with `zone_memory` (bytes) each zone
    also has that much memory, all of it available. `topology` sets NodeTopology fields.
    """
    node = NodeFactory(cluster=cluster, name=name)
    cpus = hyperthreaded(zones, cores_per_zone, one_socket=one_socket)
    nrt = NodeTopologyFactory(
        node=node,
        flavour=Flavour.KOORDINATOR,
        api_version="topology.node.k8s.io/v1alpha1",
        cpu_count=len(cpus),
        cpu_table=encode_cpus(cpus),
        cpu_topology_source="koordinator",
        **topology,
    )
    per_zone = cores_per_zone * 2 * 1000
    for numa in range(zones):
        zone = ZoneFactory(topology=nrt, numa_id=numa, name=f"node-{numa}")
        ZoneResourceFactory(zone=zone, capacity=per_zone, allocatable=per_zone, available=per_zone)
        if zone_memory is not None:
            ZoneResourceFactory(
                zone=zone,
                name="memory",
                capacity=zone_memory,
                allocatable=zone_memory,
                available=zone_memory,
            )
    return node
