"""clusters: counts, data age, sync state per collection; admins manage them."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from tests.factories import ClusterFactory
from topology.choices import SyncResource
from topology.models import Cluster, SyncState

from .factories import NodeFactory, PodFactory
from .mixins import ClientFor, ListEndpointTests

pytestmark = pytest.mark.django_db


class TestClusterList(ListEndpointTests):
    max_queries = 7  # session, user, 2 × permissions, count, clusters, sync states

    def path(self, cluster: Cluster) -> str:
        return "/api/v1/clusters"

    def make_rows(self, cluster: Cluster, count: int) -> None:
        for _ in range(count):
            other = ClusterFactory()
            NodeFactory(cluster=other)
            SyncState.objects.create(cluster=other, resource="nodes", synced_through=timezone.now())

    def test_an_unknown_cluster_is_404(self, viewer: APIClient, cluster: Cluster) -> None:
        assert viewer.get("/api/v1/clusters/no-such-cluster").status_code == 404


def test_it_counts_nodes_and_pods_without_multiplying_them(viewer: APIClient) -> None:
    cluster = ClusterFactory(name="prod")
    nodes = [NodeFactory(cluster=cluster) for _ in range(3)]
    for node in nodes:
        PodFactory.create_batch(2, cluster=cluster, node=node)
    body = viewer.get("/api/v1/clusters/prod").json()
    assert (body["node_count"], body["pod_count"]) == (3, 6)


def test_data_age_comes_from_the_last_import_until_the_sync_runs(viewer: APIClient) -> None:
    imported = timezone.now() - timedelta(minutes=5)
    ClusterFactory(name="prod", last_imported_at=imported)
    body = viewer.get("/api/v1/clusters/prod").json()
    assert body["data_age"]["source"] == "last import"
    assert 299 <= body["data_age"]["seconds"] < 330
    assert body["sync"] and all(state["synced_through"] is None for state in body["sync"])


def test_data_age_is_the_stalest_served_collection_once_synced(viewer: APIClient) -> None:
    cluster = ClusterFactory(name="prod")
    now = timezone.now()
    SyncState.objects.create(cluster=cluster, resource="nodes", synced_through=now)
    SyncState.objects.create(
        cluster=cluster, resource="pods", synced_through=now - timedelta(seconds=90)
    )
    SyncState.objects.create(
        cluster=cluster,
        resource="reservations.scheduling.koordinator.sh",
        served=False,
        synced_through=now - timedelta(days=3),
    )
    body = viewer.get("/api/v1/clusters/prod").json()
    assert body["data_age"]["source"] == "live sync (stalest collection)"
    assert 90 <= body["data_age"]["seconds"] < 120
    by_resource = {state["resource"]: state for state in body["sync"]}
    assert set(by_resource) == set(SyncResource.values)  # every collection, as the Sync page
    assert by_resource["configmaps/slo-controller-config"]["synced_through"] is None
    assert by_resource["reservations.scheduling.koordinator.sh"]["served"] is False
    assert by_resource["pods"]["age_seconds"] >= 90


def test_a_cluster_never_imported_has_no_age(viewer: APIClient) -> None:
    ClusterFactory(name="prod", last_imported_at=None)
    age = viewer.get("/api/v1/clusters/prod").json()["data_age"]
    assert age == {"as_of": None, "seconds": None, "source": "never imported"}


@pytest.mark.parametrize("persona", ["viewer", "operator", "outsider"])
def test_only_admins_manage_clusters(persona: str, client_for: ClientFor) -> None:
    ClusterFactory(name="prod")
    client = client_for(persona)
    assert client.post("/api/v1/clusters", {"name": "new"}, format="json").status_code == 403
    patch = client.patch("/api/v1/clusters/prod", {"description": "x"}, format="json")
    assert patch.status_code == 403
    assert client.delete("/api/v1/clusters/prod").status_code == 403
    assert Cluster.objects.filter(name="prod", description="").exists()


def test_an_admin_creates_describes_and_deletes_a_cluster(admin: APIClient) -> None:
    created = admin.post("/api/v1/clusters", {"name": "edge", "description": "POPs"}, "json")
    assert created.status_code == 201, created.content
    assert created.json()["name"] == "edge" and created.json()["node_count"] == 0
    changed = admin.patch("/api/v1/clusters/edge", {"description": "edge POPs"}, "json")
    assert changed.json()["description"] == "edge POPs"
    assert admin.delete("/api/v1/clusters/edge").status_code == 204
    assert not Cluster.objects.filter(name="edge").exists()


def test_a_cluster_name_is_unique_and_a_slug(admin: APIClient) -> None:
    ClusterFactory(name="prod")
    duplicate = admin.post("/api/v1/clusters", {"name": "prod"}, "json")
    assert duplicate.status_code == 400
    assert "name" in duplicate.json()["errors"]
    bad = admin.post("/api/v1/clusters", {"name": "not a slug"}, "json")
    assert bad.status_code == 400 and "name" in bad.json()["errors"]


def test_the_name_cannot_be_changed(admin: APIClient) -> None:
    ClusterFactory(name="prod")
    admin.patch("/api/v1/clusters/prod", {"name": "renamed", "description": "d"}, "json")
    assert Cluster.objects.filter(name="prod", description="d").exists()


def test_put_is_not_offered(admin: APIClient) -> None:
    ClusterFactory(name="prod")
    assert admin.put("/api/v1/clusters/prod", {"description": "x"}, "json").status_code == 405


def test_a_cluster_lists_every_collection_as_the_sync_page_does(viewer, cluster) -> None:
    """Issue 27: `clusters/{c}` showed `sync: []` while the Sync health page listed six."""
    from topology.choices import SyncResource

    body = viewer.get(f"/api/v1/clusters/{cluster.name}").json()
    assert [state["resource"] for state in body["sync"]] == list(SyncResource.values)
    assert all(state["synced_through"] is None for state in body["sync"])


def test_a_patch_racing_a_delete_is_a_404_never_a_500(admin: APIClient, monkeypatch) -> None:
    """Issue 28: PATCH racing DELETE on one cluster gave 500s (9 of 60 tries): the PATCH
    read the cluster, the DELETE removed it, the PATCH saved its stale copy."""
    from scheduler_api.api.views import clusters as views

    Cluster.objects.create(name="gone")
    stale = Cluster.objects.get(name="gone")
    Cluster.objects.filter(pk=stale.pk).delete()  # the DELETE wins the race
    monkeypatch.setattr(views.ClusterViewSet, "get_object", lambda self: stale)
    response = admin.patch("/api/v1/clusters/gone", {"description": "late"}, format="json")
    assert response.status_code == 404
    assert response.json()["detail"] == "The cluster was deleted meanwhile."
    assert not Cluster.objects.filter(name="gone").exists()  # not brought back
