"""Warning events about pods: mirrored through list and watch and the import, retained
after the API server lets them go, bounded by the housekeeping's pruning, and read back
folded by pod and reason."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone

from tests.sync.conftest import WatchRun, sync_once, wait_for
from topology import tasks
from topology.choices import SyncResource
from topology.models import Cluster, Pod, PodDiagnosis, PodEvent, SyncError, SyncState
from topology.selectors.events import latest_events_by_pod, pod_events
from topology.services.mirror.events import prune_pod_events
from topology.services.mirror.importer import import_objects
from topology.services.mirror.loading import parse_documents
from topology.sync.resources import POD_WARNINGS

NAMESPACE = "team-a"
UNSCHEDULABLE = "0/5 nodes are available: 5 node(s) didn't satisfy single-numa-node."


def pending_pod(name: str) -> dict[str, Any]:
    """A pod no node could take: unbound, Pending, its PodScheduled condition False."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"namespace": NAMESPACE, "name": name, "uid": f"uid-{name}"},
        "spec": {
            "schedulerName": "default-scheduler",
            "containers": [{"name": "main", "resources": {"requests": {"cpu": "64"}}}],
        },
        "status": {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
        },
    }


def warning(pod: str, suffix: str, *, reason: str = "FailedScheduling", **fields: Any) -> dict:
    """An Event about `pod` as the scheduler (or the kubelet) writes it."""
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"namespace": NAMESPACE, "name": f"{pod}.{suffix}"},
        "involvedObject": {"kind": "Pod", "namespace": NAMESPACE, "name": pod, "uid": f"uid-{pod}"},
        "type": "Warning",
        "reason": reason,
        "message": UNSCHEDULABLE,
        "source": {"component": "default-scheduler"},
        "count": 1,
        "firstTimestamp": "2026-11-29T10:00:00Z",
        "lastTimestamp": "2026-11-29T10:00:00Z",
    }
    event.update(fields)
    return event


def mirrored(cluster: Cluster, name: str) -> PodEvent | None:
    return PodEvent.objects.filter(cluster=cluster, namespace=NAMESPACE, name=name).first()


def events_applied_through(cluster: Cluster, resource_version: int) -> bool:
    """The events watch has applied everything up to `resource_version` (an event or a
    bookmark at or past it: the stream is in order)."""
    state = SyncState.objects.filter(cluster=cluster, resource=SyncResource.EVENTS).first()
    return state is not None and int(state.resource_version or 0) >= resource_version


@pytest.mark.django_db(transaction=True, available_apps=["topology"])
def test_a_pending_pods_failed_scheduling_arrives_by_list_then_by_watch(
    make_fake, demo_items, connect, fast
):
    normal = warning("web-0", "normal", type="Normal", reason="Scheduled")
    fake = make_fake([*demo_items, pending_pod("web-0"), warning("web-0", "a"), normal])
    cluster = connect(fake)
    with WatchRun(cluster, fast) as run:
        wait_for(lambda: mirrored(cluster, "web-0.a"), what="the listed event")
        assert Pod.objects.get(cluster=cluster, name="web-0").phase == "Pending"
        fake.cluster.put(pending_pod("web-1"))
        fake.cluster.put(warning("web-1", "b", message="0/5 nodes: Insufficient cpu."))
        fake.cluster.put(warning("web-0", "a", count=4, lastTimestamp="2026-11-29T10:03:00Z"))
        row = wait_for(lambda: mirrored(cluster, "web-1.b"), what="the watched event")
        assert (row.pod_name, row.pod_uid, row.message) == (
            "web-1",
            "uid-web-1",
            "0/5 nodes: Insufficient cpu.",
        )
        wait_for(lambda: mirrored(cluster, "web-0.a").count == 4, what="the count's update")
    assert not PodEvent.objects.filter(name="web-0.normal").exists()
    first = mirrored(cluster, "web-0.a")
    assert first.last_seen == datetime(2026, 11, 29, 10, 3, tzinfo=UTC)
    assert first.reason == "FailedScheduling" and first.source == "default-scheduler"
    assert run.report.counts[SyncResource.EVENTS]["events"] >= 2
    lists = fake.requests_matching("GET", "/api/v1/events")
    assert lists and {r.query.get("fieldSelector") for r in lists} == {POD_WARNINGS}
    # the writes asked for a diagnosis refresh (one, queued); it diagnoses both pods
    assert Cluster.objects.get(pk=cluster.pk).diagnosis_queued_at is not None
    tasks.refresh_diagnoses(cluster.pk)
    diagnosed = {d.name: d for d in PodDiagnosis.objects.filter(cluster=cluster)}
    assert {"web-0", "web-1"} <= set(diagnosed)
    web0 = diagnosed["web-0"]
    assert web0.state == "pending" and web0.reason == "Unschedulable"
    assert [(e["reason"], e["count"]) for e in web0.body["events"]] == [("FailedScheduling", 4)]
    assert Cluster.objects.get(pk=cluster.pk).diagnosis_queued_at is None


@pytest.mark.django_db(transaction=True, available_apps=["topology"])
def test_an_event_the_server_deletes_stays_mirrored(make_fake, demo_items, connect, fast):
    event = warning("web-0", "a", reason="TopologyAffinityError")
    fake = make_fake([*demo_items, pending_pod("web-0"), event])
    cluster = connect(fake)
    with WatchRun(cluster, fast) as run:
        wait_for(lambda: mirrored(cluster, "web-0.a"), what="the listed event")
        fake.cluster.delete(event)  # its TTL ran out
        deleted_at = fake.cluster.rv
        wait_for(lambda: events_applied_through(cluster, deleted_at), what="the DELETED event")
    assert mirrored(cluster, "web-0.a").reason == "TopologyAffinityError"
    assert run.report.counts[SyncResource.EVENTS]["removed"] == 0


@pytest.mark.django_db
def test_an_event_absent_from_a_relist_stays_mirrored(make_fake, demo_items, connect, fast):
    event = warning("web-0", "a", reason="OutOfnvidia.com/gpu")
    fake = make_fake([*demo_items, pending_pod("web-0"), event])
    cluster = connect(fake)
    assert sync_once(cluster, fast).ok
    fake.cluster.delete(event)
    report = sync_once(cluster, fast)
    assert report.ok and report.counts.get(SyncResource.EVENTS, {}).get("removed", 0) == 0
    assert mirrored(cluster, "web-0.a").reason == "OutOfnvidia.com/gpu"


@pytest.mark.django_db
def test_a_malformed_event_is_an_error_of_its_own_and_the_sync_goes_on(
    make_fake, demo_items, connect, fast
):
    bad = warning("web-0", "bad", lastTimestamp="yesterday")
    fake = make_fake([*demo_items, pending_pod("web-0"), bad, warning("web-0", "good")])
    cluster = connect(fake)
    report = sync_once(cluster, fast)
    assert report.counts[SyncResource.EVENTS]["errors"] == 1 and not report.ok
    error = SyncError.objects.get(cluster=cluster, resource=SyncResource.EVENTS)
    assert (error.object_name, error.field) == (f"{NAMESPACE}/web-0.bad", "lastTimestamp")
    assert "yesterday" in error.message
    assert mirrored(cluster, "web-0.good") is not None and mirrored(cluster, "web-0.bad") is None
    assert Pod.objects.filter(cluster=cluster).count() > 1  # every other collection synced
    bad["lastTimestamp"] = "2026-11-29T10:01:00Z"
    fake.cluster.put(bad)
    assert sync_once(cluster, fast).ok
    assert mirrored(cluster, "web-0.bad") is not None
    assert not SyncError.objects.filter(cluster=cluster).exists()


@pytest.mark.django_db(transaction=True, available_apps=["topology"])
def test_a_malformed_event_by_watch_is_recorded_and_the_next_one_mirrored(
    make_fake, demo_items, connect, fast
):
    fake = make_fake([*demo_items, pending_pod("web-0")])
    cluster = connect(fake)
    with WatchRun(cluster, fast):
        wait_for(lambda: events_applied_through(cluster, 0), what="the first list")
        fake.cluster.put(warning("web-0", "bad", count="many"))
        fake.cluster.put(warning("web-0", "good"))
        wait_for(lambda: mirrored(cluster, "web-0.good"), what="the good event")
        error = wait_for(
            lambda: SyncError.objects.filter(cluster=cluster, resource=SyncResource.EVENTS).first(),
            what="the error",
        )
    assert (error.object_name, error.field) == (f"{NAMESPACE}/web-0.bad", "count")


def kubectl_events_dump(*events: dict[str, Any]) -> list[dict[str, Any]]:
    """`kubectl get events -A -o json`, read as the import reads a file."""
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": list(events)})
    return parse_documents(text, source="events.json")


@pytest.mark.django_db
def test_a_kubectl_events_dump_imports_the_tracked_events_and_keeps_them_after():
    dump = kubectl_events_dump(
        warning("web-0", "a"),
        warning("web-0", "b", reason="FailedScheduling-Reservation", count=2),
        warning("web-0", "c", type="Normal", reason="Scheduled"),
        warning("web-0", "d", reason="BackOff"),
    )
    summary = import_objects(cluster_name="offline", objects=[pending_pod("web-0"), *dump])
    assert summary.ok, summary.errors
    assert summary.counts["Event"]["created"] == 2
    cluster = Cluster.objects.get(name="offline")
    assert set(PodEvent.objects.values_list("name", flat=True)) == {"web-0.a", "web-0.b"}
    again = import_objects(
        cluster_name="offline", objects=kubectl_events_dump(warning("web-0", "a", count=9))
    )
    assert again.ok and again.counts["Event"]["updated"] == 1
    assert again.counts["Event"]["removed"] == 0  # b is not in the dump: it is kept
    assert mirrored(cluster, "web-0.a").count == 9 and mirrored(cluster, "web-0.b")


@pytest.mark.django_db
def test_a_malformed_event_in_a_dump_is_reported_and_the_rest_imported():
    dump = kubectl_events_dump(warning("web-0", "bad", count=-2), warning("web-0", "good"))
    summary = import_objects(cluster_name="offline", objects=dump)
    assert not summary.ok and "count" in summary.errors[0]
    assert summary.counts["Event"]["errors"] == 1 and summary.counts["Event"]["created"] == 1


# Retention ------------------------------------------------------------------------------

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def stored_event(cluster: Cluster, name: str, last_seen: datetime | None, **fields: Any):
    defaults = {"pod_name": "web-0", "reason": "FailedScheduling", "observed_at": NOW}
    return PodEvent.objects.create(
        cluster=cluster,
        namespace=NAMESPACE,
        name=name,
        last_seen=last_seen,
        **{**defaults, **fields},
    )


def names(cluster: Cluster) -> set[str]:
    return set(PodEvent.objects.filter(cluster=cluster).values_list("name", flat=True))


@pytest.mark.django_db
def test_pruning_removes_events_last_seen_before_the_retention_age(settings):
    settings.TOPOLENS_EVENT_RETENTION_SECONDS = 3600
    cluster = Cluster.objects.create(name="c")
    stored_event(cluster, "fresh", NOW - timedelta(minutes=59))
    stored_event(cluster, "stale", NOW - timedelta(minutes=61))
    stored_event(cluster, "timeless-fresh", None)
    stored_event(cluster, "timeless-stale", None, observed_at=NOW - timedelta(hours=2))
    version = Cluster.objects.get(pk=cluster.pk).mirror_version
    assert prune_pod_events(now=NOW) == 2
    assert names(cluster) == {"fresh", "timeless-fresh"}
    pruned = Cluster.objects.get(pk=cluster.pk)
    assert pruned.mirror_version == version  # the engine's snapshot reads no events
    assert pruned.diagnosis_queued_at is not None  # the diagnoses show them: refreshed
    assert prune_pod_events(now=NOW) == 0  # again: nothing left to prune


@pytest.mark.django_db
def test_pruning_keeps_the_newest_events_of_each_cluster_up_to_the_count(settings):
    settings.TOPOLENS_EVENT_RETENTION_COUNT = 3
    busy, quiet = Cluster.objects.create(name="busy"), Cluster.objects.create(name="quiet")
    for minutes in range(6):
        stored_event(busy, f"e{minutes}", NOW - timedelta(minutes=minutes))
    stored_event(busy, "tie-older", NOW - timedelta(minutes=2))  # same time, later id
    for minutes in range(3):
        stored_event(quiet, f"q{minutes}", NOW - timedelta(minutes=minutes))
    assert prune_pod_events(busy, now=NOW) == 4
    assert names(busy) == {"e0", "e1", "tie-older"}  # at a tie the later row is newer
    assert names(quiet) == {"q0", "q1", "q2"}


@pytest.mark.django_db
def test_housekeeping_prunes_the_events(settings):
    settings.TOPOLENS_EVENT_RETENTION_SECONDS = 3600
    cluster = Cluster.objects.create(name="c")
    stored_event(cluster, "stale", timezone.now() - timedelta(days=2))
    stored_event(cluster, "fresh", timezone.now())
    tasks.ensure_schedules()
    assert names(cluster) == {"fresh"}


# Reading them back -------------------------------------------------------------------


@pytest.mark.django_db
def test_events_read_back_folded_by_pod_and_reason_as_kubectl_shows_them():
    cluster = Cluster.objects.create(name="c")
    early, late = NOW - timedelta(minutes=30), NOW - timedelta(minutes=5)
    stored_event(cluster, "a1", early, count=3, message="old message", first_seen=early)
    stored_event(cluster, "a2", late, count=2, message="new message", first_seen=late)
    stored_event(cluster, "a3", late - timedelta(minutes=1), reason="OutOfcpu", count=1)
    stored_event(cluster, "b1", NOW, pod_name="web-1", count=5)
    events = pod_events(cluster, NAMESPACE, "web-0")
    assert [(e.reason, e.count, e.message) for e in events] == [
        ("FailedScheduling", 5, "new message"),
        ("OutOfcpu", 1, ""),
    ]
    assert (events[0].first_seen, events[0].last_seen) == (early, late)
    by_pod = latest_events_by_pod(cluster)
    assert list(by_pod) == [(NAMESPACE, "web-1"), (NAMESPACE, "web-0")]
    assert by_pod[(NAMESPACE, "web-0")] == events
    assert pod_events(cluster, NAMESPACE, "nobody") == []
