"""Admin's "Apply to cluster…" pages and the audit history: the exact body before confirming,
the admin role only, a confirm that queues exactly what was shown, and the record's page."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.urls import reverse

from tests.api.conftest import trio_items
from topology.choices import ApplyStatus, ConnectionMode, WriteKind
from topology.models import ApplyRecord, Cluster, ClusterConnection, Node, NodePolicy
from topology.services.mirror.importer import import_objects

pytestmark = pytest.mark.django_db
KOORD_NODE = "worker-03"
NUMA_POLICY = "node.koordinator.sh/numa-topology-policy"


@pytest.fixture(autouse=True)
def quick_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def trio() -> Cluster:
    assert import_objects(cluster_name="trio", objects=trio_items()).ok
    cluster = Cluster.objects.get(name="trio")
    ClusterConnection.objects.create(
        cluster=cluster, mode=ConnectionMode.KUBECONFIG, kubeconfig_path="/nonexistent"
    )
    return cluster


@pytest.fixture
def policy(trio: Cluster) -> NodePolicy:
    node = Node.objects.get(cluster=trio, name=KOORD_NODE)
    Node.objects.filter(pk=node.pk).update(resource_version="4711")
    return NodePolicy.objects.create(node=node, numa_topology_policy="Restricted")


def staff(role: str | None) -> Client:
    user = User.objects.create_user(f"{role}-staff", password=None, is_staff=True)
    if role:
        user.groups.add(Group.objects.get(name=role))
    client = Client()
    client.force_login(user)
    return client


def confirm_node(policy: NodePolicy) -> str:
    return reverse("admin:topology_applyrecord_confirm_node", args=[policy.pk])


def digest_of(page: str) -> str:
    marker = 'name="digest" value="'
    start = page.index(marker) + len(marker)
    return page[start : page.index('"', start)]


def test_the_confirm_page_shows_the_exact_patch_and_the_diff(policy: NodePolicy) -> None:
    page = staff("admin").get(confirm_node(policy))
    assert page.status_code == 200
    text = page.content.decode()
    body = {"metadata": {"labels": {NUMA_POLICY: "Restricted"}, "resourceVersion": "4711"}}
    shown = json.dumps(body, indent=2, sort_keys=True).replace('"', "&quot;")
    assert shown in text
    assert f"+metadata.labels.{NUMA_POLICY}: Restricted" in text
    assert "Confirm apply" in text and "csrfmiddlewaretoken" in text
    assert not ApplyRecord.objects.exists()  # looking queues nothing


@pytest.mark.parametrize("role", ["viewer", "operator", None])
def test_a_role_without_the_apply_permission_gets_403_and_nothing_is_queued(
    role: str | None, policy: NodePolicy, sent
) -> None:
    client = staff(role)
    assert client.get(confirm_node(policy)).status_code == 403
    assert client.post(confirm_node(policy), {"digest": "x"}).status_code == 403
    qos = reverse("admin:topology_applyrecord_confirm_qos", args=[policy.node.cluster.pk])
    assert client.get(qos).status_code == 403
    assert not ApplyRecord.objects.exists() and sent == []


def test_an_anonymous_visitor_is_sent_to_the_login_page(policy: NodePolicy) -> None:
    response = Client().get(confirm_node(policy))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_confirming_queues_what_was_shown_and_lands_on_the_record(
    policy: NodePolicy, sent, django_capture_on_commit_callbacks
) -> None:
    client = staff("admin")
    digest = digest_of(client.get(confirm_node(policy)).content.decode())
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(confirm_node(policy), {"digest": digest})
    record = ApplyRecord.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:topology_applyrecord_change", args=[record.pk])
    assert (record.status, record.kind, record.username) == (
        ApplyStatus.PENDING,
        WriteKind.NODE_POLICY,
        "admin-staff",
    )
    assert record.patch["metadata"]["labels"] == {NUMA_POLICY: "Restricted"}
    assert sent == [("topology.run_apply", [record.pk])]


def test_a_body_that_changed_since_the_page_was_shown_asks_for_a_second_look(
    policy: NodePolicy, sent
) -> None:
    client = staff("admin")
    digest = digest_of(client.get(confirm_node(policy)).content.decode())
    Node.objects.filter(pk=policy.node.pk).update(resource_version="4712")  # the sync moved on
    response = client.post(confirm_node(policy), {"digest": digest})
    assert response.status_code == 200
    assert "changed since this page was shown" in response.content.decode()
    assert "4712" in response.content.decode() and not ApplyRecord.objects.exists()


def test_a_refused_plan_shows_why_and_confirming_it_records_the_refusal(trio: Cluster) -> None:
    node = Node.objects.get(cluster=trio, name=KOORD_NODE)
    policy = NodePolicy.objects.create(node=node, numa_allocate_strategy="MostAllocated")
    client = staff("admin")
    page = client.get(confirm_node(policy)).content.decode()
    assert "Refused: nothing would be written" in page and "nothing to change" in page
    assert "Confirm apply" not in page
    client.post(confirm_node(policy), {"digest": digest_of(page)})
    assert ApplyRecord.objects.get().status == ApplyStatus.ERROR


def record(trio: Cluster, **fields) -> ApplyRecord:
    defaults = {
        "kind": WriteKind.NODE_POLICY,
        "object_name": KOORD_NODE,
        "username": "ada",
        "patch": {"metadata": {"labels": {NUMA_POLICY: "Restricted"}, "resourceVersion": "1"}},
        "diff": f"+metadata.labels.{NUMA_POLICY}: Restricted",
    }
    return ApplyRecord.objects.create(
        cluster=trio, cluster_name=trio.name, **{**defaults, **fields}
    )


def test_a_pending_record_refreshes_until_its_result_is_in(trio: Cluster) -> None:
    pending = record(trio)
    page = staff("admin").get(reverse("admin:topology_applyrecord_change", args=[pending.pk]))
    text = page.content.decode()
    assert page.status_code == 200 and 'http-equiv="refresh"' in text
    assert "Result: <strong>pending</strong>" in text


def test_a_conflict_shows_both_versions_and_does_not_refresh(trio: Cluster) -> None:
    theirs = {"metadata": {"labels": {NUMA_POLICY: "BestEffort"}, "resourceVersion": "2"}}
    conflict = record(trio, status=ApplyStatus.CONFLICT, cluster_version=theirs)
    text = (
        staff("viewer")
        .get(reverse("admin:topology_applyrecord_change", args=[conflict.pk]))
        .content.decode()
    )
    assert 'http-equiv="refresh"' not in text and "both versions are below" in text
    assert "&quot;Restricted&quot;" in text and "&quot;BestEffort&quot;" in text  # ours, theirs
    assert "Body sent (ours)" in text and "Cluster&#x27;s version (theirs)" in text


def test_the_history_lists_and_filters_by_cluster_kind_and_status(trio: Cluster) -> None:
    record(trio, status=ApplyStatus.APPLIED)
    record(trio, status=ApplyStatus.ERROR, object_name="worker-01")
    client = staff("viewer")  # every role reads the history
    url = reverse("admin:topology_applyrecord_changelist")
    text = client.get(url, {"status__exact": "error", "cluster_name": "trio"}).content.decode()
    assert "worker-01" in text and f">{KOORD_NODE}<" not in text
    assert client.get(url, {"kind__exact": "qos-config"}).content.decode().count("worker-0") == 0
    assert client.get(reverse("admin:topology_applyrecord_add")).status_code == 403


def test_the_reservation_page_previews_the_exact_object_then_queues_it(
    trio: Cluster, sent, django_capture_on_commit_callbacks
) -> None:
    client = staff("admin")
    url = reverse("admin:topology_applyrecord_confirm_reservation", args=[trio.pk])
    assert "Preview" in client.get(url, {"cpus": "2", "node": KOORD_NODE}).content.decode()
    form = {
        "cpus": "2",
        "memory": "1Gi",
        "pod_name": "web",
        "namespace": "team-web",
        "node": KOORD_NODE,
        "owner_labels": "app=web",
        "ttl": "1h",
        "allocate_once": "on",
    }
    preview = client.post(url, {**form, "preview": "Preview"}).content.decode()
    assert "&quot;nodeName&quot;: &quot;worker-03&quot;" in preview
    assert "&quot;ttl&quot;: &quot;1h&quot;" in preview and not ApplyRecord.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        confirmed = client.post(url, {**form, "confirm": "1", "digest": digest_of(preview)})
    created = ApplyRecord.objects.get()
    assert confirmed.status_code == 302 and created.kind == WriteKind.RESERVATION
    assert created.object_name == f"web-{KOORD_NODE}" and created.status == ApplyStatus.PENDING
    assert created.patch["spec"]["owners"] == [{"labelSelector": {"matchLabels": {"app": "web"}}}]
    assert sent == [("topology.run_apply", [created.pk])]


def test_an_operator_previews_a_reservation_in_admin_but_cannot_confirm_it(
    trio: Cluster, sent
) -> None:
    client = staff("operator")
    url = reverse("admin:topology_applyrecord_confirm_reservation", args=[trio.pk])
    changelist = client.get(reverse("admin:topology_applyrecord_changelist")).content.decode()
    assert f"Reserve on {trio.name}…" in changelist
    form = {"cpus": "2", "memory": "1Gi", "node": KOORD_NODE, "owner_object": "Pod/team-web/web"}
    preview = client.post(url, {**form, "preview": "Preview"}).content.decode()
    assert "&quot;nodeName&quot;: &quot;worker-03&quot;" in preview
    assert "Only the admin role may create it" in preview and "Confirm apply" not in preview
    confirm = client.post(url, {**form, "confirm": "1", "digest": digest_of(preview)})
    assert confirm.status_code == 403 and not ApplyRecord.objects.exists() and sent == []
    assert staff("viewer").get(url).status_code == 403
