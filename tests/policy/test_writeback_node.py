"""Node policy write-back against the fake API server, through the real kubernetes client:
the exact merge patch, the resourceVersion guard, conflicts, errors, and the audit row."""

from __future__ import annotations

import copy

import pytest

from tests.policy.writeback_support import (
    ALLOCATE_STRATEGY,
    KOORD_NODE,
    NUMA_POLICY,
    node_in_cluster,
    writes,
)
from topology.choices import ApplyStatus, WriteKind
from topology.models import ApplyRecord, ClusterConnection, Node, NodePolicy
from topology.services.policies.writeback import request_node_policy_apply, run_apply

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.policy.writeback_fixtures"]


@pytest.fixture
def policy(synced) -> NodePolicy:
    """On the Koordinator node (SingleNUMANode / LeastAllocated in the cluster): Restricted,
    MostAllocated; everything else left as observed."""
    node = Node.objects.get(cluster=synced, name=KOORD_NODE)
    return NodePolicy.objects.create(
        node=node, numa_topology_policy="Restricted", numa_allocate_strategy="MostAllocated"
    )


def expected_patch(resource_version: str) -> dict:
    return {
        "metadata": {
            "labels": {NUMA_POLICY: "Restricted", ALLOCATE_STRATEGY: "MostAllocated"},
            "resourceVersion": resource_version,
        }
    }


def test_the_server_receives_exactly_the_merge_patch_guarded_by_the_mirrored_version(
    fake, policy, admin_user
):
    mirrored = policy.node.resource_version
    record = request_node_policy_apply(policy=policy, user=admin_user)
    assert record.status == ApplyStatus.PENDING and not fake.requests_matching(
        "PATCH", f"/api/v1/nodes/{KOORD_NODE}"
    )
    run_apply(record_id=record.pk)
    (patch,) = fake.requests_matching("PATCH", f"/api/v1/nodes/{KOORD_NODE}")
    assert writes(fake, "PATCH") == [expected_patch(mirrored)]
    assert patch.content_type == "application/strategic-merge-patch+json"


def test_a_success_is_audited_and_the_mirror_shows_the_new_node_at_once(fake, policy, admin_user):
    before = policy.node.resource_version
    record = run_apply(record_id=request_node_policy_apply(policy=policy, user=admin_user).pk)
    in_cluster = node_in_cluster(fake, KOORD_NODE)
    assert in_cluster["metadata"]["labels"][NUMA_POLICY] == "Restricted"
    assert (record.status, record.kind) == (ApplyStatus.APPLIED, WriteKind.NODE_POLICY)
    assert (record.username, record.object_name, record.cluster_name) == ("ada", KOORD_NODE, "live")
    assert record.resource_version_before == before
    assert record.resource_version_after == in_cluster["metadata"]["resourceVersion"] != before
    assert record.requested_at <= record.finished_at and record.cluster_version is None
    assert f"-metadata.labels.{NUMA_POLICY}: SingleNUMANode" in record.diff
    assert f"+metadata.labels.{NUMA_POLICY}: Restricted" in record.diff
    node = Node.objects.get(pk=policy.node.pk)
    assert node.labels[NUMA_POLICY] == "Restricted"
    assert node.labels[ALLOCATE_STRATEGY] == "MostAllocated"
    assert node.resource_version == record.resource_version_after


def test_a_node_changed_in_the_cluster_meanwhile_is_not_overwritten(fake, policy, admin_user):
    theirs = copy.deepcopy(node_in_cluster(fake, KOORD_NODE))
    theirs["metadata"]["labels"][NUMA_POLICY] = "BestEffort"  # someone else's change
    fake.cluster.put(theirs)
    record = run_apply(record_id=request_node_policy_apply(policy=policy, user=admin_user).pk)
    in_cluster = node_in_cluster(fake, KOORD_NODE)
    assert in_cluster["metadata"]["labels"][NUMA_POLICY] == "BestEffort"
    assert in_cluster["metadata"]["labels"][ALLOCATE_STRATEGY] == "LeastAllocated"
    assert record.status == ApplyStatus.CONFLICT and "nothing was overwritten" in record.message
    assert record.patch == expected_patch(record.resource_version_before)  # ours
    assert record.cluster_version["metadata"]["labels"][NUMA_POLICY] == "BestEffort"  # theirs
    assert (
        record.cluster_version["metadata"]["resourceVersion"]
        == (in_cluster["metadata"]["resourceVersion"])
    )
    assert record.finished_at is not None and record.resource_version_after == ""
    node = Node.objects.get(pk=policy.node.pk)  # re-synced: the mirror shows their version
    assert node.labels[NUMA_POLICY] == "BestEffort"
    assert node.resource_version == in_cluster["metadata"]["resourceVersion"]
    assert [r.method for r in fake.requests if r.path.endswith(KOORD_NODE)][-2:] == [
        "PATCH",
        "GET",
    ]


def test_a_refused_policy_writes_nothing_but_is_audited(fake, synced, admin_user):
    node = Node.objects.get(cluster=synced, name=KOORD_NODE)
    policy = NodePolicy.objects.create(node=node, reservation_cpus="4000-4001")
    record = request_node_policy_apply(policy=policy, user=admin_user)
    assert record.status == ApplyStatus.ERROR and record.finished_at is not None
    assert record.message.startswith("Refused; nothing was written.")
    assert "reservation_cpus" in record.message
    assert run_apply(record_id=record.pk).status == ApplyStatus.ERROR
    assert writes(fake, "PATCH") == []


def test_a_policy_equal_to_the_node_is_refused_as_nothing_to_change(fake, synced, admin_user):
    node = Node.objects.get(cluster=synced, name=KOORD_NODE)
    policy = NodePolicy.objects.create(node=node, numa_topology_policy="SingleNUMANode")
    record = request_node_policy_apply(policy=policy, user=admin_user)
    assert record.status == ApplyStatus.ERROR and "nothing to change" in record.message
    assert writes(fake, "PATCH") == []


def test_another_api_error_is_recorded_with_its_message(fake, policy, admin_user):
    record = request_node_policy_apply(policy=policy, user=admin_user)
    fake.faults.fail_next(1, 503)
    record = run_apply(record_id=record.pk)
    assert record.status == ApplyStatus.ERROR
    assert record.message.startswith("HTTP 503") and "nothing was written" in record.message
    assert node_in_cluster(fake, KOORD_NODE)["metadata"]["labels"][NUMA_POLICY] == "SingleNUMANode"


def test_a_cluster_without_a_connection_records_an_error_and_calls_nothing(
    fake, policy, admin_user
):
    record = request_node_policy_apply(policy=policy, user=admin_user)
    ClusterConnection.objects.all().delete()  # removed after the request was queued
    sent_before = len(fake.requests)
    record = run_apply(record_id=record.pk)
    assert record.status == ApplyStatus.ERROR and "no connection" in record.message
    assert len(fake.requests) == sent_before


def test_a_task_delivered_twice_writes_once(fake, policy, admin_user):
    record = request_node_policy_apply(policy=policy, user=admin_user)
    first = run_apply(record_id=record.pk)
    second = run_apply(record_id=record.pk)
    assert first.status == second.status == ApplyStatus.APPLIED
    assert len(writes(fake, "PATCH")) == 1
    assert ApplyRecord.objects.count() == 1
