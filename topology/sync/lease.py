"""At most one live sync session per cluster, through a row with an expiry.

A conditional UPDATE takes the lease only if it is free, expired or already ours, so
two workers (or a worker and `manage.py sync_cluster`) never watch one cluster at once.
The owner renews it while it runs; if it dies, the lease expires and the next
`ensure_watches` starts a new session.
"""

from __future__ import annotations

import os
import socket
import uuid
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from topology.models import SyncLease


def new_owner(prefix: str) -> str:
    return f"{prefix}:{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _row(cluster_id: int) -> None:
    if not SyncLease.objects.filter(cluster_id=cluster_id).exists():
        try:
            with transaction.atomic():
                SyncLease.objects.create(cluster_id=cluster_id)
        except IntegrityError:
            pass  # another worker created it first


def acquire(cluster_id: int, owner: str, ttl: float) -> bool:
    """Take the lease if free. A new session lists everything first, so a pending resync
    request is dropped with it."""
    _row(cluster_id)
    now = timezone.now()
    free = Q(owner="") | Q(owner=owner) | Q(expires_at__isnull=True) | Q(expires_at__lt=now)
    taken = (
        SyncLease.objects.filter(cluster_id=cluster_id)
        .filter(free)
        .update(owner=owner, expires_at=now + timedelta(seconds=ttl), resync_requested_at=None)
    )
    return taken == 1


def renew(cluster_id: int, owner: str, ttl: float) -> bool:
    """False when the lease was lost (expired and taken by another): stop at once."""
    expires = timezone.now() + timedelta(seconds=ttl)
    return (
        SyncLease.objects.filter(cluster_id=cluster_id, owner=owner).update(expires_at=expires) == 1
    )


def release(cluster_id: int, owner: str) -> None:
    SyncLease.objects.filter(cluster_id=cluster_id, owner=owner).update(owner="", expires_at=None)


def live_owner(cluster_id: int) -> str:
    """The owner of an unexpired lease, or ""."""
    lease = SyncLease.objects.filter(cluster_id=cluster_id, expires_at__gte=timezone.now()).exclude(
        owner=""
    )
    return lease.values_list("owner", flat=True).first() or ""


def request_resync(cluster_id: int) -> bool:
    """Ask the live session to re-list everything; False when no session is live."""
    return (
        SyncLease.objects.filter(cluster_id=cluster_id, expires_at__gte=timezone.now())
        .exclude(owner="")
        .update(resync_requested_at=timezone.now())
        == 1
    )


def take_resync_request(cluster_id: int, owner: str) -> bool:
    return (
        SyncLease.objects.filter(
            cluster_id=cluster_id, owner=owner, resync_requested_at__isnull=False
        ).update(resync_requested_at=None)
        == 1
    )
