"""Write-back through the API: only the admin role applies; the audit history is read-only
and readable by every role; a queued apply answers 202 with its record's Location."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.factories import ClusterFactory
from topology.choices import ApplyStatus, ConnectionMode, WriteKind
from topology.models import ApplyRecord, Cluster, ClusterConnection, Node, NodePolicy

from .conftest import ROLES
from .mixins import ClientFor, EndpointTests, ListEndpointTests

pytestmark = pytest.mark.django_db
KOORD_NODE = "worker-03"  # the trio's Koordinator node (numa-allocate-strategy MostAllocated)
RESERVATION = {
    "containers": [{"name": "web", "requests": {"cpu": "2", "memory": "1Gi"}}],
    "node": KOORD_NODE,
    "owners": [{"labelSelector": {"matchLabels": {"app": "web"}}}],
}


def policy_apply(cluster: Cluster) -> str:
    return f"/api/v1/clusters/{cluster.name}/policies/{KOORD_NODE}/apply"


def qos_apply(cluster: Cluster) -> str:
    return f"/api/v1/clusters/{cluster.name}/qos/apply"


def reservations(cluster: Cluster) -> str:
    return f"/api/v1/clusters/{cluster.name}/reservations"


@pytest.fixture
def policy(trio: Cluster) -> NodePolicy:
    """A change worker-03 can take; its mirrored resourceVersion guards the write."""
    node = Node.objects.get(cluster=trio, name=KOORD_NODE)
    Node.objects.filter(pk=node.pk).update(resource_version="4711")
    return NodePolicy.objects.create(node=node, numa_topology_policy="Restricted")


@pytest.fixture
def connected(trio: Cluster) -> Cluster:
    """A connection row (never dialled here: the task is only queued)."""
    ClusterConnection.objects.create(
        cluster=trio, mode=ConnectionMode.KUBECONFIG, kubeconfig_path="/nonexistent/kubeconfig"
    )
    return trio


# Who may apply ------------------------------------------------------------------------


@pytest.mark.parametrize("persona", ["viewer", "operator", "outsider"])
def test_only_the_admin_role_applies_a_node_policy_or_the_qos_draft(
    persona: str, client_for: ClientFor, policy: NodePolicy, connected: Cluster
) -> None:
    client = client_for(persona)
    for path in (policy_apply(connected), qos_apply(connected)):
        response = client.post(path)
        assert response.status_code == 403, (path, response.content)
        assert "topology.apply_nodepolicy" in response.json()["detail"]
    assert not ApplyRecord.objects.exists()


def test_an_anonymous_apply_gets_401(client_for: ClientFor, policy, connected) -> None:
    for path in (policy_apply(connected), qos_apply(connected), reservations(connected)):
        response = client_for("anonymous").post(path, RESERVATION, format="json")
        assert response.status_code == 401, path
    assert not ApplyRecord.objects.exists()


def test_an_admin_apply_is_queued_on_commit_and_answers_202_with_its_location(
    admin: APIClient,
    policy: NodePolicy,
    connected: Cluster,
    sent,
    django_capture_on_commit_callbacks,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = admin.post(policy_apply(connected))
    assert response.status_code == 202, response.content
    record = ApplyRecord.objects.get()
    assert response["Location"] == f"/api/v1/clusters/trio/applies/{record.pk}"
    assert sent == [("topology.run_apply", [record.pk])]
    body = response.json()
    assert (body["status"], body["kind"], body["object_name"]) == (
        "pending",
        "node-policy",
        KOORD_NODE,
    )
    assert body["user"] == "admin-user" and body["url"] == response["Location"]
    assert body["patch"] == {
        "metadata": {
            "labels": {"node.koordinator.sh/numa-topology-policy": "Restricted"},
            "resourceVersion": "4711",
        }
    }


def test_an_apply_without_a_connection_is_refused_with_400_and_still_audited(
    admin: APIClient, policy: NodePolicy, sent, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = admin.post(policy_apply(policy.node.cluster))
    assert response.status_code == 400
    assert "no connection" in " ".join(response.json()["errors"]["cluster"])
    record = ApplyRecord.objects.get()
    assert response["Location"].endswith(f"/applies/{record.pk}")
    assert record.status == ApplyStatus.ERROR and sent == []


def test_a_qos_apply_without_a_draft_is_refused(admin: APIClient, connected: Cluster) -> None:
    response = admin.post(qos_apply(connected))
    assert response.status_code == 400
    assert "no QoS draft" in " ".join(response.json()["errors"]["non_field_errors"])
    assert ApplyRecord.objects.get().kind == WriteKind.QOS_CONFIG


def test_a_node_without_a_desired_policy_is_404(admin: APIClient, connected: Cluster) -> None:
    assert admin.post(policy_apply(connected)).status_code == 404


# Reservations: operators preview, admins create --------------------------------------------


def test_an_operator_previews_a_reservation_but_may_not_create_it(
    operator: APIClient, connected: Cluster
) -> None:
    preview = operator.post(
        reservations(connected), {**RESERVATION, "preview": True}, format="json"
    )
    assert preview.status_code == 200, preview.content
    assert preview.json()["reservation"]["spec"]["template"]["spec"]["nodeName"] == KOORD_NODE
    create = operator.post(reservations(connected), RESERVATION, format="json")
    assert create.status_code == 403 and "preview" in create.json()["detail"]
    assert not ApplyRecord.objects.exists()


def test_a_viewer_may_not_even_preview_a_reservation(viewer: APIClient, connected) -> None:
    response = viewer.post(reservations(connected), {**RESERVATION, "preview": True}, format="json")
    assert response.status_code == 403


def test_an_admin_creates_a_reservation_as_a_queued_apply(
    admin: APIClient, connected: Cluster, sent, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = admin.post(reservations(connected), RESERVATION, format="json")
    assert response.status_code == 202, response.content
    record = ApplyRecord.objects.get()
    assert record.kind == WriteKind.RESERVATION and record.object_name == f"whatif-pod-{KOORD_NODE}"
    assert sent == [("topology.run_apply", [record.pk])]


def test_reading_reservations_still_works_for_a_viewer(viewer: APIClient, trio: Cluster) -> None:
    response = viewer.get(reservations(trio))
    assert response.status_code == 200 and response.json()["count"] >= 1


# The audit history ---------------------------------------------------------------------------


def make_records(cluster: Cluster, count: int, **fields) -> list[ApplyRecord]:
    return [
        ApplyRecord.objects.create(
            cluster=cluster,
            cluster_name=cluster.name,
            kind=fields.get("kind", WriteKind.NODE_POLICY),
            object_name=f"node-{index}",
            username="ada",
            status=fields.get("status", ApplyStatus.APPLIED),
        )
        for index in range(count)
    ]


class TestApplyHistory(ListEndpointTests):
    max_queries = 7
    readers = ROLES

    def path(self, cluster: Cluster) -> str:
        return f"/api/v1/clusters/{cluster.name}/applies"

    def make_rows(self, cluster: Cluster, count: int) -> None:
        make_records(cluster, count)


class TestApplyRecordDetail(EndpointTests):
    def path(self, cluster: Cluster) -> str:
        record = ApplyRecord.objects.filter(cluster_name=cluster.name).first()
        return f"/api/v1/clusters/{cluster.name}/applies/{record.pk if record else 1}"

    def make_rows(self, cluster: Cluster, count: int) -> None:
        make_records(cluster, count)


def test_the_history_filters_by_kind_and_status_and_keeps_to_its_cluster(
    viewer: APIClient, cluster: Cluster
) -> None:
    make_records(cluster, 2)
    (conflict,) = make_records(cluster, 1, status=ApplyStatus.CONFLICT, kind=WriteKind.QOS_CONFIG)
    make_records(ClusterFactory(name="other"), 3)
    path = f"/api/v1/clusters/{cluster.name}/applies"
    assert viewer.get(path).json()["count"] == 3
    found = viewer.get(path, {"status": "conflict", "kind": "qos-config"}).json()["results"]
    assert [r["id"] for r in found] == [conflict.pk]
    other = ApplyRecord.objects.filter(cluster_name="other").first()
    assert viewer.get(f"{path}/{other.pk}").status_code == 404


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_the_history_cannot_be_written_through_the_api(
    method: str, admin: APIClient, cluster: Cluster
) -> None:
    (record,) = make_records(cluster, 1)
    path = f"/api/v1/clusters/{cluster.name}/applies"
    target = path if method == "post" else f"{path}/{record.pk}"
    response = getattr(admin, method)(target, {"status": "pending"}, format="json")
    assert response.status_code in (403, 405)
    assert ApplyRecord.objects.get().status == ApplyStatus.APPLIED
