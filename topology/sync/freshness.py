"""How old the mirror of a cluster may be: what every what-if answer reports.

Each collection's `synced_through` only moves forward when the sync proves the mirror
current: a full list ends, or a watch event or bookmark is applied. While a watch is
broken nothing moves, so the age grows on its own, which is the point.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import Count, Min, Q

from topology.models import Cluster, SyncState


def data_synced_at(cluster: Cluster) -> datetime | None:
    """The time up to which the mirror is known equal to the cluster; None if never synced.

    The oldest `synced_through` of the collections the cluster serves: the mirror is
    only as fresh as its stalest part. A cluster that was only imported, or one with a
    served collection never listed, has None.
    """
    figures = SyncState.objects.filter(cluster=cluster, served=True).aggregate(
        total=Count("pk"),
        never=Count("pk", filter=Q(synced_through__isnull=True)),
        oldest=Min("synced_through"),
    )
    if not figures["total"] or figures["never"]:
        return None
    oldest: datetime = figures["oldest"]
    return oldest
