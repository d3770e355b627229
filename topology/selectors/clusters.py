"""Clusters for the switcher, and how old a cluster's data is."""

from __future__ import annotations

from django.db.models import Count, Min, QuerySet

from topology.models import Cluster, SyncState
from topology.selectors.types import DataAge


def clusters_for_switcher() -> QuerySet[Cluster]:
    """Every cluster with its node count; one query."""
    return Cluster.objects.annotate(node_count=Count("nodes")).order_by("name")


def data_age(cluster: Cluster) -> DataAge:
    """The stalest served collection's `synced_through` when the sync runs, else the last import.

    The stalest, not the freshest: a page is only as current as its oldest input.
    """
    synced = SyncState.objects.filter(cluster=cluster, served=True).aggregate(
        stalest=Min("synced_through"), states=Count("id")
    )
    if synced["states"] and synced["stalest"] is not None:
        return DataAge(synced["stalest"], "live sync (stalest collection)")
    if cluster.last_imported_at is not None:
        return DataAge(cluster.last_imported_at, "last import")
    return DataAge(None, "never imported")
