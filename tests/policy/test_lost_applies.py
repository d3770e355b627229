"""An apply whose task was lost is sent again by housekeeping, then given up on when old.

Each lost apply then runs like any other (against the fake API server, through the real
kubernetes client): a repeated task writes once, and an apply nobody ran is closed with
an error that says so.
"""

from __future__ import annotations

from datetime import timedelta

import psycopg
import pytest
from django.db import connection
from django.utils import timezone

from tests.policy.writeback_support import KOORD_NODE, writes
from topology import tasks
from topology.choices import ApplyStatus
from topology.models import ApplyRecord, Node, NodePolicy
from topology.services.policies.writeback import request_node_policy_apply, run_apply
from topology.services.policies.writeback.lost import LostApplies, recover_lost_applies

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.policy.writeback_fixtures"]


@pytest.fixture
def lost(synced, sent, django_capture_on_commit_callbacks) -> ApplyRecord:
    """A pending apply whose task was sent three minutes ago and never ran."""
    node = Node.objects.get(cluster=synced, name=KOORD_NODE)
    policy = NodePolicy.objects.create(node=node, numa_topology_policy="Restricted")
    with django_capture_on_commit_callbacks(execute=True):
        record = request_node_policy_apply(policy=policy, user=None)
    assert sent == [("topology.run_apply", [record.pk])] and record.times_queued == 1
    sent.clear()
    age(record, minutes=3)
    return record


def age(record: ApplyRecord, *, minutes: int) -> None:
    past = timezone.now() - timedelta(minutes=minutes)
    ApplyRecord.objects.filter(pk=record.pk).update(requested_at=past, queued_at=past)


def test_a_lost_task_is_sent_again_once_per_wait(lost, sent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        first = recover_lost_applies()
    assert (first.requeued, first.expired) == (1, 0)
    assert sent == [("topology.run_apply", [lost.pk])]
    lost.refresh_from_db()
    assert lost.status == ApplyStatus.PENDING and lost.times_queued == 2
    with django_capture_on_commit_callbacks(execute=True):
        again = recover_lost_applies()  # sent a moment ago: not yet
    assert again.requeued == 0 and len(sent) == 1


def test_a_young_apply_is_left_to_its_task(synced, sent, django_capture_on_commit_callbacks):
    node = Node.objects.get(cluster=synced, name=KOORD_NODE)
    policy = NodePolicy.objects.create(node=node, numa_topology_policy="Restricted")
    with django_capture_on_commit_callbacks(execute=True):
        request_node_policy_apply(policy=policy, user=None)
        assert recover_lost_applies().requeued == 0
    assert len(sent) == 1


def test_the_task_sent_again_writes_once(fake, lost, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        recover_lost_applies()
    run_apply(record_id=lost.pk)  # the task sent again
    run_apply(record_id=lost.pk)  # the lost one, delivered late after all
    lost.refresh_from_db()
    assert lost.status == ApplyStatus.APPLIED
    assert len(writes(fake, "PATCH")) == 1


def test_an_apply_nobody_ran_for_an_hour_is_closed(lost, sent, settings):
    age(lost, minutes=61)
    result = recover_lost_applies()
    assert (result.requeued, result.expired) == (0, 1)
    lost.refresh_from_db()
    assert lost.status == ApplyStatus.ERROR and lost.finished_at is not None
    assert "no worker finished this apply within 3600 s" in lost.message
    assert not sent


def test_finished_applies_are_never_touched(lost, sent, django_capture_on_commit_callbacks):
    run_apply(record_id=lost.pk)
    age(lost, minutes=120)
    with django_capture_on_commit_callbacks(execute=True):
        assert recover_lost_applies() == LostApplies(requeued=0, expired=0)
    lost.refresh_from_db()
    assert lost.status == ApplyStatus.APPLIED and not sent


def test_housekeeping_reports_what_it_recovered(lost, sent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        report = tasks.ensure_schedules()
    assert report["applies_requeued"] == 1 and report["applies_expired"] == 0
    assert ("topology.run_apply", [lost.pk]) in sent


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks need PostgreSQL")
def test_an_apply_a_worker_is_running_is_skipped(lost, sent):
    """The row is locked by the worker running it (here: another connection)."""
    age(lost, minutes=61)
    settings = connection.settings_dict
    with psycopg.connect(
        host=settings["HOST"] or None,
        port=settings["PORT"] or None,
        user=settings["USER"],
        password=settings["PASSWORD"] or None,
        dbname=settings["NAME"],
    ) as other:
        other.execute("SELECT 1 FROM topology_applyrecord WHERE id = %s FOR UPDATE", (lost.pk,))
        result = recover_lost_applies()
    assert (result.requeued, result.expired) == (0, 0)
    lost.refresh_from_db()
    assert lost.status == ApplyStatus.PENDING
