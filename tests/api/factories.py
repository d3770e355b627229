"""The mirror as API tests build it: nodes with amounts, pods in "default", whole nodes.

Everything else comes from tests/factories.py; these defaults are the ones API tests assert.
"""

from __future__ import annotations

import factory
from django.utils import timezone

from tests import factories
from tests.factories import (
    NodeCPUReservationFactory,
    NodeFiguresFactory,
    NodePolicyFactory,
    NodeTopologyFactory,
    PodAllocationFactory,
    ReservationFactory,
    ZoneFactory,
    ZoneResourceFactory,
)
from topology.models import Cluster, Node, QoSConfig, QoSStrategy, ResctrlSetting


class NodeFactory(factories.NodeFactory):
    """A node that states its amounts, as the node list shows them."""

    allocatable = factory.LazyFunction(lambda: {"cpu": 64000, "memory": 256 * 2**30})
    capacity = factory.LazyFunction(lambda: {"cpu": 64000, "memory": 256 * 2**30})


class PodFactory(factories.PodFactory):
    """A pod of namespace "default" with one two-CPU container."""

    namespace = "default"
    containers = factory.LazyFunction(
        lambda: [{"name": "app", "requests": {"cpu": 2000}, "limits": {"cpu": 2000}}]
    )


def full_node(cluster: Cluster, **node_fields: object) -> Node:
    """A node with everything a list can show: NRT with two zones, figures, annotation, policy."""
    node = NodeFactory(cluster=cluster, **node_fields)
    topology = NodeTopologyFactory(node=node)
    for numa_id in (0, 1):
        costs = {"node-0": 10 if numa_id == 0 else 20}
        zone = ZoneFactory(topology=topology, numa_id=numa_id, costs=costs)
        ZoneResourceFactory(zone=zone, name="cpu", available=20000)
        ZoneResourceFactory(
            zone=zone, name="memory", capacity=2**37, allocatable=2**37, available=20000
        )
    NodeFiguresFactory(
        node=node,
        free_cpus_by_zone={"0": 8, "1": 4},
        free_cpus_total=12,
        max_free_cpus_in_one_zone=8,
        largest_exclusive_pod={"single-numa-node": 8},
        largest_exclusive_pod_own_policy=8,
    )
    NodeCPUReservationFactory(node=node)
    NodePolicyFactory(node=node)
    return node


def busy_node(cluster: Cluster, pods: int = 2) -> Node:
    """A full node with pods holding allocations, and a Reservation on it."""
    node = full_node(cluster)
    for _ in range(pods):
        PodAllocationFactory(pod=PodFactory(node=node))
    ReservationFactory(node=node)
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
