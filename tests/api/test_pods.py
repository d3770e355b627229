"""clusters/{cluster}/pods: filterable by node, namespace and "has exclusive CPUs"."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.factories import PodAllocationFactory
from topology.models import Cluster

from .factories import PodFactory, busy_node, full_node
from .mixins import EndpointTests, ListEndpointTests

pytestmark = pytest.mark.django_db
PODS = "/api/v1/clusters/prod/pods"


class TestPodList(ListEndpointTests):
    max_queries = 8  # session, user, 2 × permissions, cluster, count, pods, allocations

    def path(self, cluster: Cluster) -> str:
        return f"/api/v1/clusters/{cluster.name}/pods"

    def make_rows(self, cluster: Cluster, count: int) -> None:
        for _ in range(count):
            busy_node(cluster, pods=2)


class TestPodDetail(EndpointTests):
    def path(self, cluster: Cluster) -> str:
        return f"/api/v1/clusters/{cluster.name}/pods/default/web-0"

    def make_rows(self, cluster: Cluster, count: int) -> None:
        PodFactory(cluster=cluster, name="web-0")


def names(client: APIClient, **params: Any) -> list[str]:
    response = client.get(PODS, params)
    assert response.status_code == 200, response.content
    return [f"{p['namespace']}/{p['name']}" for p in response.json()["results"]]


def test_it_filters_by_node_namespace_and_exclusive_cpus(
    viewer: APIClient, cluster: Cluster
) -> None:
    one, two = full_node(cluster, name="one"), full_node(cluster, name="two")
    PodAllocationFactory(pod=PodFactory(cluster=cluster, node=one, name="pinned"), cpuset="2-3")
    PodAllocationFactory(
        pod=PodFactory(cluster=cluster, node=one, name="shared"), cpuset="", source="crane"
    )
    PodFactory(cluster=cluster, node=two, namespace="batch", name="job")
    assert names(viewer, node="one") == ["default/pinned", "default/shared"]
    assert names(viewer, namespace="batch") == ["batch/job"]
    assert names(viewer, has_exclusive_cpus="true") == ["default/pinned"]
    assert names(viewer, has_exclusive_cpus="false") == ["batch/job", "default/shared"]


def test_a_pod_shows_its_containers_and_allocations(viewer: APIClient, cluster: Cluster) -> None:
    node = full_node(cluster, name="one")
    PodAllocationFactory(pod=PodFactory(cluster=cluster, node=node, name="web-0"), cpuset="2-3")
    body = viewer.get(f"{PODS}/default/web-0").json()
    assert body["node"] == "one" and body["has_exclusive_cpus"] is True
    assert body["containers"] == [
        {"name": "app", "requests": {"cpu": 2000}, "limits": {"cpu": 2000}}
    ]
    assert body["allocations"] == [
        {"source": "koordinator", "cpuset": "2-3", "numa_resources": {"0": {"cpu": 2000}}}
    ]


def test_an_unknown_pod_is_404(viewer: APIClient, cluster: Cluster) -> None:
    assert viewer.get(f"{PODS}/default/nope").status_code == 404
