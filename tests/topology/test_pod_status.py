"""Pods as a diagnosis needs them (issue 30 §1): status reasons, the PodScheduled
condition, creation time; Pending and kubelet-rejected pods mirrored, rejected ones
holding nothing."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from topology.adapters.mirror import node_snapshots
from topology.models import Cluster, Pod, PodAllocation
from topology.parsers.pod import parse_pod
from topology.services.mirror.exporter import pod_object
from topology.services.mirror.importer import import_objects

from .helpers import sample_items

GUARANTEED = {"cpu": "4", "memory": "4Gi"}


def pod(name: str, *, node: str = "", status: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "prod",
            "creationTimestamp": "2026-11-29T01:00:00Z",
            "annotations": {
                "scheduling.koordinator.sh/resource-status": '{"cpuset": "0-3"}',
            },
        },
        "spec": {
            "nodeName": node,
            "containers": [
                {"name": "db", "resources": {"requests": GUARANTEED, "limits": GUARANTEED}}
            ],
        },
        "status": status or {"phase": "Pending"},
    }


PENDING_STATUS = {
    "phase": "Pending",
    "conditions": [
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": "0/3 nodes are available: 3 Insufficient cpu.",
            "lastTransitionTime": "2026-11-29T01:00:05Z",
        },
        {"type": "Ready", "status": "False"},
    ],
}
REJECTED_STATUS = {
    "phase": "Failed",
    "reason": "TopologyAffinityError",
    "message": "Pod was rejected: Resources cannot be allocated with Topology locality",
}


def test_a_pending_pod_keeps_its_scheduling_condition_and_age() -> None:
    record = parse_pod(pod("waiting", status=PENDING_STATUS))
    assert record.created_at == datetime(2026, 11, 29, 1, 0, tzinfo=UTC)
    assert record.status["scheduled"] == {
        "status": "False",
        "reason": "Unschedulable",
        "message": "0/3 nodes are available: 3 Insufficient cpu.",
        "lastTransitionTime": "2026-11-29T01:00:05Z",
    }
    assert not record.finished and not record.rejected and not record.holds_resources


def test_a_rejected_pod_is_kept_but_holds_nothing() -> None:
    record = parse_pod(pod("refused", node="n1", status=REJECTED_STATUS))
    assert record.rejected and not record.finished and not record.holds_resources
    assert record.status["reason"] == "TopologyAffinityError"
    assert record.allocations == ()  # the scheduler's annotation is not an allocation


@pytest.mark.parametrize(
    ("status", "finished"),
    [
        ({"phase": "Failed", "reason": "OutOfcpu"}, False),
        ({"phase": "Failed", "reason": "UnexpectedAdmissionError"}, False),
        ({"phase": "Failed", "reason": "Evicted"}, True),
        ({"phase": "Failed"}, True),
        ({"phase": "Succeeded"}, True),
    ],
)
def test_only_admission_rejections_of_the_failed_pods_are_mirrored(
    status: dict[str, Any], finished: bool
) -> None:
    assert parse_pod(pod("p", node="n1", status=status)).finished is finished


def test_a_malformed_status_is_left_out_not_refused() -> None:
    status = {
        "phase": "Pending",
        "reason": 7,
        "conditions": "PodScheduled",
        "containerStatuses": [{"name": "db", "state": {"waiting": "x"}, "restartCount": True}],
    }
    record = parse_pod(pod("odd", status=status))
    assert record.status == {}


def test_container_reasons_and_restarts_are_kept() -> None:
    status = {
        "phase": "Running",
        "containerStatuses": [
            {
                "name": "db",
                "restartCount": 3,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137}},
            },
            {"name": "quiet", "restartCount": 0, "state": {"running": {}}},
        ],
    }
    record = parse_pod(pod("crashing", node="n1", status=status))
    assert record.status["containers"] == [
        {
            "name": "db",
            "restarts": 3,
            "state": "waiting: CrashLoopBackOff",
            "last": "terminated: OOMKilled",
        }
    ]


@pytest.mark.django_db
def test_the_mirror_keeps_them_and_the_snapshot_leaves_the_rejected_out() -> None:
    items = sample_items("cluster-small.json")
    node = next(i["metadata"]["name"] for i in items if i["kind"] == "Node")
    objects = [
        *items,
        pod("waiting", status=PENDING_STATUS),
        pod("refused", node=node, status=REJECTED_STATUS),
    ]
    summary = import_objects(cluster_name="small", objects=objects)
    assert summary.ok, summary.errors
    cluster = Cluster.objects.get(name="small")
    refused = Pod.objects.get(cluster=cluster, name="refused")
    assert refused.phase == "Failed" and refused.status["reason"] == "TopologyAffinityError"
    assert Pod.objects.get(cluster=cluster, name="waiting").status["scheduled"]["reason"] == (
        "Unschedulable"
    )
    assert not PodAllocation.objects.filter(pod=refused).exists()
    assert import_objects(cluster_name="plain", objects=items).ok
    plain = Cluster.objects.get(name="plain")
    requested = {
        c.name: next(n for n in node_snapshots(c) if n.name == node).requested
        for c in (cluster, plain)
    }
    assert requested["small"] == requested["plain"]  # the rejected pod holds nothing


@pytest.mark.django_db
def test_status_comes_back_in_an_export() -> None:
    objects = [pod("waiting", status=PENDING_STATUS)]
    assert import_objects(cluster_name="solo", objects=objects).ok
    exported = pod_object(Pod.objects.get(name="waiting"))
    again = parse_pod(copy.deepcopy(exported))
    assert again.status == parse_pod(pod("waiting", status=PENDING_STATUS)).status
    assert exported["metadata"]["creationTimestamp"] == "2026-11-29T01:00:00Z"
