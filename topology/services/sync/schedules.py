"""django-celery-beat schedules for the sync, kept in step with the registered clusters.

- one global task that re-runs this service and restarts dead watches (every minute);
- per cluster with an enabled connection: a periodic full resync;
- per cluster: a periodic recomputation of its derived per-node figures.

Idempotent: rows are created or updated by name, and the ones of clusters that are
gone (or no longer connected) are removed. Beat's DatabaseScheduler notices changes
made through `save()` and `delete()`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from django.db import transaction
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from topology.models import Cluster
from topology.services.sync.enqueue import FIGURES_TASK, RESYNC_TASK, SCHEDULES_TASK

PREFIX = "topology: "
HOUSEKEEPING_NAME = f"{PREFIX}keep schedules and watches running"
HOUSEKEEPING_TASK = SCHEDULES_TASK
HOUSEKEEPING_SECONDS = 60
# The API's finished what-if tasks expire (named, not imported: topology imports no API).
EXPIRE_TASKS_NAME = f"{PREFIX}expire finished what-if tasks"
EXPIRE_TASKS_TASK = "scheduler_api.expire_whatif_tasks"
EXPIRE_TASKS_SECONDS = 3600


@dataclass(frozen=True)
class Wanted:
    name: str
    task: str
    seconds: int
    args: list[int]


def resync_name(cluster: Cluster) -> str:
    return f"{PREFIX}full resync of {cluster.name} (#{cluster.pk})"


def figures_name(cluster: Cluster) -> str:
    return f"{PREFIX}recompute figures of {cluster.name} (#{cluster.pk})"


def wanted_schedules(*, resync_seconds: int, figures_seconds: int) -> list[Wanted]:
    wanted = [
        Wanted(HOUSEKEEPING_NAME, HOUSEKEEPING_TASK, HOUSEKEEPING_SECONDS, []),
        Wanted(EXPIRE_TASKS_NAME, EXPIRE_TASKS_TASK, EXPIRE_TASKS_SECONDS, []),
    ]
    for cluster in Cluster.objects.select_related("connection").order_by("pk"):
        wanted.append(Wanted(figures_name(cluster), FIGURES_TASK, figures_seconds, [cluster.pk]))
        connection = getattr(cluster, "connection", None)
        if connection is not None and connection.enabled:
            wanted.append(Wanted(resync_name(cluster), RESYNC_TASK, resync_seconds, [cluster.pk]))
    return wanted


@transaction.atomic
def ensure_schedules(*, resync_seconds: int, figures_seconds: int) -> int:
    """Create, update or remove our PeriodicTasks; returns how many rows changed."""
    wanted = wanted_schedules(resync_seconds=resync_seconds, figures_seconds=figures_seconds)
    changed = 0
    for item in wanted:
        changed += _upsert(item)
    stale = PeriodicTask.objects.filter(name__startswith=PREFIX).exclude(
        name__in=[item.name for item in wanted]
    )
    for task in stale:
        task.delete()
        changed += 1
    return changed


def _upsert(item: Wanted) -> int:
    interval, _ = IntervalSchedule.objects.get_or_create(
        every=item.seconds, period=IntervalSchedule.SECONDS
    )
    values = {"task": item.task, "interval": interval, "args": json.dumps(item.args)}
    task = PeriodicTask.objects.filter(name=item.name).first()
    if task is None:
        PeriodicTask.objects.create(name=item.name, **values)
        return 1
    if all(getattr(task, key) == value for key, value in values.items()):
        return 0  # `enabled` is left alone: an admin may have paused it
    for key, value in values.items():
        setattr(task, key, value)
    task.save()
    return 1
