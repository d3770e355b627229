"""Enqueue the sync's Celery tasks, by name and on commit.

By name (`send_task`), so that services, admin and commands can ask for a task without
importing the tasks module, which imports them: no cycle. On commit, so that a task
never runs before the rows it reads exist. Routing (the "watch" queue) still applies.
"""

from __future__ import annotations

from celery import current_app
from django.db import transaction
from django.utils import timezone

from topology.models import Cluster, SyncLease

WATCH_TASK = "topology.watch_cluster"
RESYNC_TASK = "topology.sync_cluster"
FIGURES_TASK = "topology.recompute_figures"
SCHEDULES_TASK = "topology.ensure_schedules"
DIAGNOSIS_TASK = "topology.refresh_diagnoses"
DIAGNOSIS_DEBOUNCE_SECONDS = 2.0  # writes this soon after a request share its refresh


def _send_on_commit(name: str, *args: int, countdown: float | None = None) -> None:
    options = {"countdown": countdown} if countdown else {}
    transaction.on_commit(lambda: current_app.send_task(name, args=list(args), **options))


def enqueue_watch(cluster_id: int, *, delay: float | None = None) -> None:
    """Remembered on the lease, so housekeeping does not queue a second one meanwhile."""
    SyncLease.objects.update_or_create(
        cluster_id=cluster_id, defaults={"watch_enqueued_at": timezone.now()}
    )
    _send_on_commit(WATCH_TASK, cluster_id, countdown=delay)


def enqueue_resync(cluster_id: int) -> None:
    _send_on_commit(RESYNC_TASK, cluster_id)


def enqueue_figures(cluster_id: int) -> None:
    _send_on_commit(FIGURES_TASK, cluster_id)


def enqueue_schedules() -> None:
    _send_on_commit(SCHEDULES_TASK)


def enqueue_diagnosis(cluster_id: int) -> None:
    """One refresh of the cluster's diagnoses, unless one is queued already: the claim on
    `Cluster.diagnosis_queued_at` coalesces the requests of many writes into one task,
    which clears it as it starts (`services.diagnosis.refresh`)."""
    claimed = Cluster.objects.filter(pk=cluster_id, diagnosis_queued_at__isnull=True).update(
        diagnosis_queued_at=timezone.now()
    )
    if claimed:
        _send_on_commit(DIAGNOSIS_TASK, cluster_id, countdown=DIAGNOSIS_DEBOUNCE_SECONDS)
