"""Applies whose task never finished: sent again while young, closed when too old.

An apply's task is sent once its audit row is committed. If the broker loses the
message (a Redis restart) or a worker dies while running it, the row would stay
pending for ever and the user would wait on nothing. Housekeeping (every minute)
looks for such rows:

- pending, and its task last sent `requeue_seconds` ago or more: the task is sent
  again. Running is safe to repeat: the task locks the row and runs only a pending one,
  and the write is guarded by the resourceVersion Topolens read, so a write that did
  reach the cluster before a worker died comes back as a conflict, never twice.
- pending for `expire_seconds` or more: closed as an error that says what is known.

A row a worker is running right now is locked, and skipped.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from topology.choices import ApplyStatus
from topology.models import ApplyRecord
from topology.services.policies.writeback.requests import send_apply_task

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LostApplies:
    requeued: int
    expired: int


def expiry_message(seconds: int) -> str:
    return (
        f"no worker finished this apply within {seconds} s (its task was lost, or a worker "
        "stopped while running it); if the write reached the cluster, the next sync shows "
        "it. Ask for the apply again to retry."
    )


def recover_lost_applies(now: datetime | None = None) -> LostApplies:
    """Send again the tasks of pending applies that look lost; close the ones too old."""
    now = now or timezone.now()
    limits = settings.TOPOLENS_APPLY
    expire_seconds = limits["expire_seconds"]
    expired = _expire(now, now - timedelta(seconds=expire_seconds), expire_seconds)
    requeued = _requeue(now, now - timedelta(seconds=limits["requeue_seconds"]))
    if requeued or expired:
        logger.warning("applies: %d tasks sent again, %d given up on", requeued, expired)
    return LostApplies(requeued, expired)


def _locked_pending_ids(*conditions: Q, **filters: object) -> list[int]:
    """Pending applies matching the filters that no worker holds locked, locked now (the
    caller's transaction keeps the locks until it commits)."""
    rows = ApplyRecord.objects.select_for_update(skip_locked=True).filter(
        *conditions, status=ApplyStatus.PENDING, **filters
    )
    return list(rows.values_list("pk", flat=True))


@transaction.atomic
def _expire(now: datetime, requested_before: datetime, seconds: int) -> int:
    ids = _locked_pending_ids(requested_at__lt=requested_before)
    return ApplyRecord.objects.filter(pk__in=ids).update(
        status=ApplyStatus.ERROR, message=expiry_message(seconds), finished_at=now
    )


@transaction.atomic
def _requeue(now: datetime, queued_before: datetime) -> int:
    ids = _locked_pending_ids(Q(queued_at__lt=queued_before) | Q(queued_at__isnull=True))
    ApplyRecord.objects.filter(pk__in=ids).update(queued_at=now, times_queued=F("times_queued") + 1)
    for record_id in ids:
        transaction.on_commit(lambda record_id=record_id: send_apply_task(record_id))
    return len(ids)
