"""clusters/{cluster}/reservations (Koordinator objects) and node-reservations (annotation)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.factories import NodeCPUReservationFactory, ReservationFactory
from topology.models import Cluster

from .factories import NodeFactory, full_node
from .mixins import EndpointTests, ListEndpointTests

pytestmark = pytest.mark.django_db


class TestReservationList(ListEndpointTests):
    max_queries = 7

    def path(self, cluster: Cluster) -> str:
        return f"/api/v1/clusters/{cluster.name}/reservations"

    def make_rows(self, cluster: Cluster, count: int) -> None:
        ReservationFactory.create_batch(count, cluster=cluster)


class TestReservationDetail(EndpointTests):
    def path(self, cluster: Cluster) -> str:
        return f"/api/v1/clusters/{cluster.name}/reservations/resv-web"

    def make_rows(self, cluster: Cluster, count: int) -> None:
        ReservationFactory(cluster=cluster, name="resv-web")


class TestNodeReservationList(ListEndpointTests):
    max_queries = 7

    def path(self, cluster: Cluster) -> str:
        return f"/api/v1/clusters/{cluster.name}/node-reservations"

    def make_rows(self, cluster: Cluster, count: int) -> None:
        for _ in range(count):
            full_node(cluster)


class TestNodeReservationDetail(EndpointTests):
    def path(self, cluster: Cluster) -> str:
        return f"/api/v1/clusters/{cluster.name}/node-reservations/worker-1"

    def make_rows(self, cluster: Cluster, count: int) -> None:
        full_node(cluster, name="worker-1")


def test_reservations_filter_by_node_and_phase(viewer: APIClient, cluster: Cluster) -> None:
    ReservationFactory(cluster=cluster, name="a", node_name="n1", phase="Available")
    ReservationFactory(cluster=cluster, name="b", node_name="n2", phase="Available")
    ReservationFactory(cluster=cluster, name="c", node_name="n1", phase="Succeeded")
    path = "/api/v1/clusters/prod/reservations"
    by_node = viewer.get(path, {"node": "n1"}).json()["results"]
    assert [r["name"] for r in by_node] == ["a", "c"]
    available = viewer.get(path, {"phase": "Available"}).json()["results"]
    assert [r["name"] for r in available] == ["a", "b"]


def test_a_reservation_shows_owners_and_amounts(viewer: APIClient, small_cluster: Cluster) -> None:
    body = viewer.get("/api/v1/clusters/small/reservations/resv-worker-03-web").json()
    assert body["node"] == "worker-03" and body["phase"] == "Available"
    assert body["owners"] and body["allocatable"]["cpu"] > 0


def test_node_reservations_filter_by_node(viewer: APIClient, cluster: Cluster) -> None:
    NodeCPUReservationFactory(node=NodeFactory(cluster=cluster, name="a"), reserved_cpus="0-3")
    NodeCPUReservationFactory(node=NodeFactory(cluster=cluster, name="b"))
    body = viewer.get("/api/v1/clusters/prod/node-reservations", {"node": "a"}).json()
    assert [(r["node"], r["reserved_cpus"]) for r in body["results"]] == [("a", "0-3")]


def test_the_annotation_as_koordlet_resolved_it(viewer: APIClient, small_cluster: Cluster) -> None:
    body = viewer.get("/api/v1/clusters/small/node-reservations/worker-03").json()
    assert body["reserved_cpus"] == "14-15,30-31"
