"""clusters/{cluster}/nodes: flat rows, filters, ordering; one node in full."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.factories import NodeFiguresFactory, NodeTopologyFactory
from topology.models import Cluster

from .factories import NodeFactory, full_node
from .mixins import EndpointTests, ListEndpointTests

pytestmark = pytest.mark.django_db
NODES = "/api/v1/clusters/prod/nodes"


class TestNodeList(ListEndpointTests):
    max_queries = 7  # session, user, 2 × permissions, cluster, count, one page of rows

    def path(self, cluster: Cluster) -> str:
        return f"/api/v1/clusters/{cluster.name}/nodes"

    def make_rows(self, cluster: Cluster, count: int) -> None:
        for _ in range(count):
            full_node(cluster)


class TestNodeDetail(EndpointTests):
    def path(self, cluster: Cluster) -> str:
        return f"/api/v1/clusters/{cluster.name}/nodes/worker-1"

    def make_rows(self, cluster: Cluster, count: int) -> None:
        full_node(cluster, name="worker-1")


def names(client: APIClient, **params: Any) -> list[str]:
    response = client.get(NODES, params)
    assert response.status_code == 200, response.content
    return [row["name"] for row in response.json()["results"]]


def test_a_row_carries_topology_and_figures_flat(viewer: APIClient, cluster: Cluster) -> None:
    full_node(cluster, name="worker-1", labels={"zone": "a"})
    NodeFactory(cluster=cluster, name="bare")
    rows = {row["name"]: row for row in viewer.get(NODES).json()["results"]}
    assert rows["worker-1"] | {"observed_at": None, "figures_computed_at": None} == {
        "name": "worker-1",
        "labels": {"zone": "a"},
        "unschedulable": False,
        "allocatable": {"cpu": 64000, "memory": 256 * 2**30},
        "observed_at": None,
        "flavour": "upstream-v1alpha2",
        "policy": "single-numa-node",
        "scope": "pod",
        "cpu_count": 0,
        "figures_computed_at": None,
        "free_cpus_total": 12,
        "max_free_cpus_in_one_zone": 8,
        "largest_exclusive_pod": 8,
        "free_cpus_by_zone": {"0": 8, "1": 4},
    }
    assert rows["bare"]["flavour"] is None and rows["bare"]["free_cpus_total"] is None


def test_it_filters_by_name_flavour_policy_and_scope(viewer: APIClient, cluster: Cluster) -> None:
    NodeTopologyFactory(node=NodeFactory(cluster=cluster, name="gpu-1"), flavour="crane")
    NodeTopologyFactory(
        node=NodeFactory(cluster=cluster, name="cpu-1"),
        tm_policy="restricted",
        tm_scope="container",
    )
    NodeTopologyFactory(node=NodeFactory(cluster=cluster, name="cpu-2"))
    assert names(viewer, name="cpu") == ["cpu-1", "cpu-2"]
    assert names(viewer, flavour="crane") == ["gpu-1"]
    assert names(viewer, policy="restricted") == ["cpu-1"]
    assert names(viewer, scope="pod") == ["cpu-2", "gpu-1"]


def test_it_filters_by_label_selector(viewer: APIClient, cluster: Cluster) -> None:
    NodeFactory(cluster=cluster, name="a", labels={"tier": "db", "node.io/ssd": "true"})
    NodeFactory(cluster=cluster, name="b", labels={"tier": "web", "node.io/ssd": "true"})
    NodeFactory(cluster=cluster, name="c", labels={"tier": "db"})
    assert names(viewer, label="tier=db") == ["a", "c"]
    assert names(viewer, label="node.io/ssd") == ["a", "b"]
    assert names(viewer, label="tier=db,node.io/ssd=true") == ["a"]
    assert names(viewer, label="tier=cache") == []


def test_it_keeps_nodes_with_room_in_one_zone(viewer: APIClient, cluster: Cluster) -> None:
    for name, room in (("small", 2), ("medium", 8), ("large", 16)):
        NodeFiguresFactory(
            node=NodeFactory(cluster=cluster, name=name), max_free_cpus_in_one_zone=room
        )
    NodeFactory(cluster=cluster, name="not-computed")
    assert names(viewer, min_free_exclusive_cpus_in_one_zone=8) == ["large", "medium"]
    assert names(viewer, min_free_exclusive_cpus_in_one_zone=0) == ["large", "medium", "small"]


def test_it_orders_by_free_cpus(viewer: APIClient, cluster: Cluster) -> None:
    for name, room in (("a", 4), ("b", 16), ("c", 8)):
        NodeFiguresFactory(
            node=NodeFactory(cluster=cluster, name=name), max_free_cpus_in_one_zone=room
        )
    assert names(viewer, ordering="-max_free_cpus_in_one_zone") == ["b", "c", "a"]
    assert names(viewer, ordering="-name") == ["c", "b", "a"]


@pytest.mark.parametrize(
    "params",
    [
        {"flavour": "windows"},
        {"min_free_exclusive_cpus_in_one_zone": "lots"},
        {"min_free_exclusive_cpus_in_one_zone": "-1"},  # issue 28: the schema's minimum
        {"min_free_exclusive_cpus_in_one_zone": "1.5"},  # and type (a whole count)
        {"ordering": "password"},
    ],
)
def test_a_bad_filter_is_a_400_naming_it(viewer: APIClient, cluster: Cluster, params: dict) -> None:
    NodeFactory(cluster=cluster)
    response = viewer.get(NODES, params)
    assert response.status_code == 400
    assert set(response.json()["errors"]) == set(params)


def test_the_list_never_sees_another_cluster(viewer: APIClient, cluster: Cluster) -> None:
    NodeFactory(cluster=cluster, name="mine")
    NodeFactory(name="theirs")
    assert names(viewer) == ["mine"]


def test_a_node_in_full(viewer: APIClient, cluster: Cluster) -> None:
    full_node(cluster, name="worker-1")
    body = viewer.get(f"{NODES}/worker-1").json()
    assert body["topology"]["policy"] == "single-numa-node"
    assert body["figures"]["free_cpus_by_zone"] == {"0": 8, "1": 4}
    assert body["reservation"] == {
        "node": "worker-1",
        "resources": {},
        "reserved_cpus": "0-1",
        "apply_policy": "Default",
        "resolved_cpus": "",
    }
    assert body["desired_policy"]["numa_topology_policy"] == "SingleNUMANode"


def test_a_bare_node_has_nulls_not_errors(viewer: APIClient, cluster: Cluster) -> None:
    NodeFactory(cluster=cluster, name="bare")
    body = viewer.get(f"{NODES}/bare").json()
    assert [body[k] for k in ("topology", "figures", "reservation", "desired_policy")] == [None] * 4


def test_an_unknown_node_is_404(viewer: APIClient, cluster: Cluster) -> None:
    assert viewer.get(f"{NODES}/nope").status_code == 404


def test_a_node_name_with_dots_is_found(viewer: APIClient, cluster: Cluster) -> None:
    NodeFactory(cluster=cluster, name="ip-10-0-0-1.ec2.internal")
    assert viewer.get(f"{NODES}/ip-10-0-0-1.ec2.internal").status_code == 200
