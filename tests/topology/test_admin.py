"""Admin shows the mirror read-only, with filters and node search; desired policy is editable."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from topology.models import Node
from topology.services.mirror.importer import import_objects

from .helpers import sample_items

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client_with_cluster(admin_client):
    import_objects(cluster_name="small", objects=sample_items("cluster-small.json"))
    return admin_client


def test_node_list_shows_flavour_and_policy_and_searches_by_name(admin_client_with_cluster):
    url = reverse("admin:topology_node_changelist")
    page = admin_client_with_cluster.get(url, {"q": "worker-0"}).content.decode()
    assert "worker-01" in page and "single-numa-node" in page and "crane" in page
    filtered = admin_client_with_cluster.get(url, {"topology__flavour": "koordinator"}).content
    assert b"worker-03" in filtered and b"worker-01" not in filtered


def test_observed_state_cannot_be_changed_in_admin(admin_client_with_cluster):
    node = Node.objects.get(name="worker-01")
    assert admin_client_with_cluster.get(reverse("admin:topology_node_add")).status_code == 403
    response = admin_client_with_cluster.post(
        reverse("admin:topology_node_change", args=[node.pk]), {"name": "renamed"}
    )
    assert response.status_code == 403
    node.refresh_from_db()
    assert node.name == "worker-01"


def test_desired_node_policy_is_editable(admin_client_with_cluster):
    assert (
        admin_client_with_cluster.get(reverse("admin:topology_nodepolicy_add")).status_code == 200
    )


@pytest.mark.parametrize(
    "model",
    [
        "cluster",
        "node",
        "nodetopology",
        "zone",
        "zoneresource",
        "nodecpureservation",
        "pod",
        "podallocation",
        "reservation",
        "qosconfig",
        "qosstrategy",
        "nodepolicy",
    ],
)
def test_every_model_has_a_working_list(admin_client_with_cluster, model):
    response = admin_client_with_cluster.get(reverse(f"admin:topology_{model}_changelist"))
    assert response.status_code == 200


def test_overview_lists_nodes_with_zone_cpu(admin_client):
    import_objects(cluster_name="small", objects=sample_items("cluster-small.json"))
    response = admin_client.get("/", follow=True)
    assert "worker-01" in response.content.decode()
    row = next(r for r in response.context["data"].rows if r.name == "worker-01")
    cpu = row.zones[0].cpu
    assert (row.zones[0].name, cpu.allocatable, cpu.available) == ("node-0", 52000, 2000)


def test_cluster_list_queries_do_not_grow_with_clusters(admin_client):
    from topology.models import Cluster

    url = reverse("admin:topology_cluster_changelist")
    Cluster.objects.create(name="one")
    admin_client.get(url)
    with CaptureQueriesContext(connection) as one:
        admin_client.get(url)
    Cluster.objects.bulk_create(Cluster(name=f"c{i}") for i in range(6))
    with CaptureQueriesContext(connection) as seven:
        admin_client.get(url)
    assert len(seven) == len(one)
