"""clusters/{cluster}/nodes/{node}/topology: zones, logical CPUs with their state, allocations."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.factories import PodAllocationFactory
from topology.models import Cluster, PodAllocation

from .factories import NodeFactory, PodFactory, full_node
from .mixins import EndpointTests

pytestmark = pytest.mark.django_db


class TestNodeTopology(EndpointTests):
    def path(self, cluster: Cluster) -> str:
        return f"/api/v1/clusters/{cluster.name}/nodes/worker-1/topology"

    def make_rows(self, cluster: Cluster, count: int) -> None:
        full_node(cluster, name="worker-1")


def test_zones_carry_resources_and_distances(viewer: APIClient, cluster: Cluster) -> None:
    full_node(cluster, name="worker-1")
    body = viewer.get(TestNodeTopology().path(cluster)).json()
    assert (body["flavour"], body["policy"], body["scope"]) == (
        "upstream-v1alpha2",
        "single-numa-node",
        "pod",
    )
    zone0 = body["zones"][0]
    assert (zone0["name"], zone0["numa_id"], zone0["costs"]) == ("node-0", 0, {"node-0": 10})
    assert [r["name"] for r in zone0["resources"]] == ["cpu", "memory"]
    assert zone0["resources"][0] == {
        "name": "cpu",
        "capacity": 32000,
        "allocatable": 30000,
        "available": 20000,
    }
    # A plain NRT names no CPU ids: no CPUs, and a sentence saying why.
    assert body["cpus"] == [] and "per NUMA zone" in body["cpu_detail_missing"]


def test_each_cpu_has_its_core_socket_zone_and_state(
    viewer: APIClient, small_cluster: Cluster
) -> None:
    body = viewer.get("/api/v1/clusters/small/nodes/worker-03/topology").json()
    assert body["flavour"] == "koordinator" and body["cpu_detail_missing"] == ""
    assert len(body["cpus"]) == 32
    cpu16 = next(cpu for cpu in body["cpus"] if cpu["id"] == 16)
    assert (cpu16["core"], cpu16["socket"], cpu16["numa"]) == (0, 0, 0)
    states = {cpu["state"] for cpu in body["cpus"]}
    assert {"exclusive", "reserved", "free"} <= states
    reserved = sorted(cpu["id"] for cpu in body["cpus"] if cpu["state"] == "reserved")
    assert {14, 15, 30, 31} <= set(reserved)  # the node.koordinator.sh/reservation annotation
    pinned = [cpu for cpu in body["cpus"] if cpu["state"] == "exclusive"]
    assert all(cpu["holder"]["kind"] == "pod" for cpu in pinned)
    expected = PodAllocation.objects.filter(node__name="worker-03", cluster=small_cluster).count()
    assert len(body["allocations"]) == expected > 0


def test_the_allocations_are_the_nodes_own(viewer: APIClient, cluster: Cluster) -> None:
    node = full_node(cluster, name="worker-1")
    PodAllocationFactory(pod=PodFactory(cluster=cluster, node=node, name="mine"), cpuset="4-5")
    PodAllocationFactory(pod=PodFactory(cluster=cluster, node=full_node(cluster), name="other"))
    allocations = viewer.get(TestNodeTopology().path(cluster)).json()["allocations"]
    assert [(a["pod_name"], a["cpuset"]) for a in allocations] == [("mine", "4-5")]


def test_a_node_without_nrt_says_so(viewer: APIClient, cluster: Cluster) -> None:
    NodeFactory(cluster=cluster, name="bare")
    body = viewer.get("/api/v1/clusters/prod/nodes/bare/topology").json()
    assert body["flavour"] is None and body["zones"] == [] and body["cpus"] == []
    assert "No NodeResourceTopology" in body["cpu_detail_missing"]


def test_an_unknown_node_is_404(viewer: APIClient, cluster: Cluster) -> None:
    assert viewer.get("/api/v1/clusters/prod/nodes/nope/topology").status_code == 404


def test_the_query_count_does_not_grow_with_pods(
    viewer: APIClient, cluster: Cluster, django_assert_max_num_queries
) -> None:
    node = full_node(cluster, name="worker-1")
    path = TestNodeTopology().path(cluster)
    with django_assert_max_num_queries(12) as few:
        viewer.get(path)
    for index in range(10):
        PodAllocationFactory(pod=PodFactory(cluster=cluster, node=node), cpuset=str(index))
    with django_assert_max_num_queries(12) as many:
        viewer.get(path)
    assert len(many.captured_queries) == len(few.captured_queries)
