"""factory_boy factories for the mirror: quick rows for list, filter and query-count tests."""

from __future__ import annotations

import factory
from django.utils import timezone

from topology.models import (
    Cluster,
    Node,
    NodeCPUReservation,
    NodeFigures,
    NodePolicy,
    NodeTopology,
    Pod,
    PodAllocation,
    QoSConfig,
    QoSStrategy,
    ResctrlSetting,
    Reservation,
    Zone,
    ZoneResource,
)


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
    name = factory.Sequence(lambda n: f"node-{n:04d}")
    observed_at = factory.LazyFunction(timezone.now)
    labels = factory.LazyFunction(lambda: {"kubernetes.io/os": "linux"})
    allocatable = factory.LazyFunction(lambda: {"cpu": 64000, "memory": 256 * 2**30})
    capacity = factory.LazyFunction(lambda: {"cpu": 64000, "memory": 256 * 2**30})


class NodeTopologyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = NodeTopology

    node = factory.SubFactory(NodeFactory)
    flavour = "upstream-v1alpha2"
    api_version = "topology.node.k8s.io/v1alpha2"
    tm_policy = "single-numa-node"
    tm_scope = "pod"
    observed_at = factory.LazyFunction(timezone.now)
    raw = factory.LazyFunction(dict)


class ZoneFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Zone

    topology = factory.SubFactory(NodeTopologyFactory)
    numa_id = factory.Sequence(lambda n: n % 2)
    name = factory.LazyAttribute(lambda z: f"node-{z.numa_id}")
    zone_type = "Node"
    costs = factory.LazyAttribute(lambda z: {"node-0": 10 if z.numa_id == 0 else 20})


class ZoneResourceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ZoneResource

    zone = factory.SubFactory(ZoneFactory)
    name = "cpu"
    capacity = 32000
    allocatable = 30000
    available = 20000


class NodeFiguresFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = NodeFigures

    node = factory.SubFactory(NodeFactory)
    computed_at = factory.LazyFunction(timezone.now)
    free_cpus_by_zone = factory.LazyFunction(lambda: {"0": 8, "1": 4})
    free_cpus_total = 12
    max_free_cpus_in_one_zone = 8
    largest_exclusive_pod = factory.LazyFunction(lambda: {"single-numa-node": 8})
    largest_exclusive_pod_own_policy = 8


class PodFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Pod

    cluster = factory.SubFactory(ClusterFactory)
    node = None
    node_name = factory.LazyAttribute(lambda p: p.node.name if p.node else "")
    namespace = "default"
    name = factory.Sequence(lambda n: f"pod-{n:05d}")
    phase = "Running"
    qos_class = "Guaranteed"
    observed_at = factory.LazyFunction(timezone.now)
    containers = factory.LazyFunction(
        lambda: [{"name": "app", "requests": {"cpu": 2000}, "limits": {"cpu": 2000}}]
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

    cluster = factory.SubFactory(ClusterFactory)
    name = factory.Sequence(lambda n: f"resv-{n:04d}")
    phase = "Available"
    owners = factory.LazyFunction(lambda: [{"labelSelector": {"matchLabels": {"app": "web"}}}])
    allocatable = factory.LazyFunction(lambda: {"cpu": 4000})
    observed_at = factory.LazyFunction(timezone.now)
    raw = factory.LazyFunction(dict)


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


def full_node(cluster: Cluster, **node_fields: object) -> Node:
    """A node with everything a list can show: NRT with two zones, figures, annotation, policy."""
    node = NodeFactory(cluster=cluster, **node_fields)
    topology = NodeTopologyFactory(node=node)
    for numa_id in (0, 1):
        zone = ZoneFactory(topology=topology, numa_id=numa_id)
        ZoneResourceFactory(zone=zone, name="cpu")
        ZoneResourceFactory(zone=zone, name="memory", capacity=2**37, allocatable=2**37)
    NodeFiguresFactory(node=node)
    NodeCPUReservationFactory(node=node)
    NodePolicyFactory(node=node)
    return node


def busy_node(cluster: Cluster, pods: int = 2) -> Node:
    """A full node with pods holding allocations, and a Reservation on it."""
    node = full_node(cluster)
    for _ in range(pods):
        PodAllocationFactory(pod=PodFactory(cluster=cluster, node=node))
    ReservationFactory(cluster=cluster, node=node, node_name=node.name)
    return node


def qos_config(cluster: Cluster) -> QoSConfig:
    """The QoS ConfigMap with a cluster strategy that caps BE at 0–50 % of L3 and 40 % MB."""
    config, created = QoSConfig.objects.get_or_create(
        cluster=cluster,
        defaults={
            "namespace": "koordinator-system",
            "name": "slo-controller-config",
            "observed_at": timezone.now(),
        },
    )
    if created:
        strategy = QoSStrategy.objects.create(config=config, position=0, body={})
        ResctrlSetting.objects.create(
            strategy=strategy,
            qos_class="beClass",
            enable=True,
            cat_range_start_percent=0,
            cat_range_end_percent=50,
            mba_percent=40,
        )
    return config
