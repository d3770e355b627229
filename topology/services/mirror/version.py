"""The mirror's version: a per-cluster counter that every write to the mirror bumps.

Bumped in the writer's own transaction, so a reader that sees a version sees at least
the rows written up to it. Caches of values built from the mirror (the what-if's engine
snapshot) are keyed by it, so no write can leave them stale.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import F

from topology.models import Cluster
from topology.services.sync.enqueue import enqueue_diagnosis


def bump_mirror_version(cluster: Cluster) -> None:
    """Also asks for the cluster's diagnoses to be refreshed (coalesced, after commit)."""
    Cluster.objects.filter(pk=cluster.pk).update(mirror_version=F("mirror_version") + 1)
    enqueue_diagnosis(cluster.pk)


MirrorKey = tuple[int, datetime, int]


def mirror_key(cluster: Cluster) -> MirrorKey | None:
    """(id, created_at, version) as committed now; None for a deleted cluster.

    Creation time is part of the key: SQLite may hand a deleted cluster's id to a new one.
    """
    rows = Cluster.objects.filter(pk=cluster.pk).values_list("pk", "created_at", "mirror_version")
    return rows.first()
