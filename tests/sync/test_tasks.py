"""Celery tasks take ids, are idempotent, share one lease per cluster, enqueue on commit."""

from __future__ import annotations

import pytest
from django_celery_beat.models import PeriodicTask

from tests.sync.conftest import FAST
from tests.sync.mirror_check import assert_mirror_matches
from topology import tasks
from topology.models import Cluster, NodeFigures, SyncLease
from topology.services.mirror.importer import import_objects
from topology.services.sync import schedules
from topology.sync import lease
from webapp.celery import app

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_sync(settings):
    settings.TOPOLENS_SYNC = {**FAST, "session_seconds": 1.0}


def test_a_resync_task_lists_the_cluster_then_queues_its_figures_and_diagnoses_on_commit(
    fake, connect, sent, django_capture_on_commit_callbacks
):
    cluster = connect(fake)
    with django_capture_on_commit_callbacks(execute=True):
        result = tasks.sync_cluster(cluster.pk)
    assert result["collections"]["pods"]["written"] > 0
    assert_mirror_matches(fake, cluster)
    # the writes asked for one diagnosis refresh (coalesced), the full list for figures
    assert sorted(sent) == [
        ("topology.recompute_figures", [cluster.pk]),
        ("topology.refresh_diagnoses", [cluster.pk]),
    ]
    assert not lease.live_owner(cluster.pk)  # released


def test_running_a_resync_twice_changes_nothing_the_second_time(fake, connect, sent):
    cluster = connect(fake)
    tasks.sync_cluster(cluster.pk)
    again = tasks.sync_cluster(cluster.pk)
    assert all(c.get("written", 0) == 0 for c in again["collections"].values())


def test_a_resync_asks_the_live_watch_session_instead_of_racing_it(fake, connect, sent):
    cluster = connect(fake)
    assert lease.acquire(cluster.pk, "watch:elsewhere", 60)
    requests_before = len(fake.requests)
    assert tasks.sync_cluster(cluster.pk) == {"requested": "the live watch session re-lists"}
    assert SyncLease.objects.get(cluster=cluster).resync_requested_at is not None
    assert len(fake.requests) == requests_before
    assert lease.take_resync_request(cluster.pk, "watch:elsewhere")


def test_a_watch_task_skips_a_cluster_another_session_holds(fake, connect, sent):
    cluster = connect(fake)
    lease.acquire(cluster.pk, "command:elsewhere", 60)
    assert tasks.watch_cluster(cluster.pk) == {"skipped": "already watched"}
    assert fake.requests == []


def test_a_watch_task_runs_one_session_then_hands_over_to_the_next(
    fake, connect, sent, django_capture_on_commit_callbacks
):
    cluster = connect(fake)
    with django_capture_on_commit_callbacks(execute=True):
        report = tasks.watch_cluster(cluster.pk)
    assert report["collections"]["nodes"]["listed"] == 5
    assert ("topology.watch_cluster", [cluster.pk]) in sent
    assert SyncLease.objects.get(cluster=cluster).watch_enqueued_at is not None
    assert any(r.is_watch for r in fake.requests)


def test_tasks_about_a_missing_or_unconnected_cluster_do_nothing(sent):
    assert tasks.sync_cluster(987654) == {"skipped": "no enabled connection"}
    assert tasks.watch_cluster(987654) == {"skipped": "no enabled connection"}
    assert tasks.recompute_figures(987654) == 0


def test_the_figures_task_recomputes_the_derived_figures(demo_items):
    import_objects(cluster_name="figs", objects=demo_items)
    cluster = Cluster.objects.get(name="figs")
    assert tasks.recompute_figures(cluster.pk) == 5
    assert NodeFigures.objects.filter(node__cluster=cluster).count() == 5


def test_housekeeping_keeps_one_beat_entry_per_cluster_and_starts_missing_watches(
    fake, connect, sent, demo_items, django_capture_on_commit_callbacks
):
    connected = connect(fake)
    import_objects(cluster_name="imported", objects=demo_items[:3])
    with django_capture_on_commit_callbacks(execute=True):
        first = tasks.ensure_schedules()
    names = set(
        PeriodicTask.objects.filter(name__startswith="topology: ").values_list("name", "task")
    )
    assert (schedules.HOUSEKEEPING_NAME, "topology.ensure_schedules") in names
    assert (f"topology: full resync of live (#{connected.pk})", "topology.sync_cluster") in names
    assert sum(1 for _, task in names if task == "topology.recompute_figures") == 2
    assert first["watches_started"] == 1 and sent == [("topology.watch_cluster", [connected.pk])]
    with django_capture_on_commit_callbacks(execute=True):
        second = tasks.ensure_schedules()
    assert second == {
        "schedules_changed": 0,
        "watches_started": 0,
        "applies_requeued": 0,
        "applies_expired": 0,
    }  # idempotent
    connected.connection.enabled = False
    connected.connection.save()
    tasks.ensure_schedules()
    assert not PeriodicTask.objects.filter(task="topology.sync_cluster").exists()


def test_the_migration_installs_the_housekeeping_entry():
    entry = PeriodicTask.objects.get(name=schedules.HOUSEKEEPING_NAME)
    assert entry.task == "topology.ensure_schedules" and entry.interval.every == 60


def test_watch_loops_have_their_own_queue_which_a_default_worker_also_consumes():
    route = app.amqp.router.route({}, "topology.watch_cluster", args=[1])
    assert route["queue"].name == "watch" and route["queue"].routing_key == "watch"
    assert app.amqp.router.route({}, "topology.sync_cluster", args=[1])["queue"].name == "celery"
    assert {q.name for q in app.conf.task_queues} == {"celery", "watch"}
    assert app.conf.worker_prefetch_multiplier == 1


def test_one_session_per_cluster_through_the_lease(fake, connect):
    cluster = connect(fake)
    assert lease.acquire(cluster.pk, "a", 60)
    assert not lease.acquire(cluster.pk, "b", 60)
    assert lease.renew(cluster.pk, "a", 60) and lease.live_owner(cluster.pk) == "a"
    SyncLease.objects.filter(cluster=cluster).update(expires_at="2000-01-01T00:00:00Z")
    assert lease.acquire(cluster.pk, "b", 60)  # an expired lease is free
    assert not lease.renew(cluster.pk, "a", 60)  # and its old owner learns it lost it
    lease.release(cluster.pk, "b")
    assert not lease.live_owner(cluster.pk) and not lease.request_resync(cluster.pk)
