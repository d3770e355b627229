"""Clusters managed through the API (admins): the mirror itself comes from import or sync."""

from __future__ import annotations

from django.db import transaction

from topology.models import Cluster


@transaction.atomic
def cluster_create(*, name: str, description: str = "") -> Cluster:
    return Cluster.objects.create(name=name, description=description)


@transaction.atomic
def cluster_update(*, cluster: Cluster, description: str | None = None) -> Cluster:
    """Raises Cluster.DoesNotExist when the cluster was deleted since it was read (a
    DELETE racing this PATCH): updated by its row, never saved back from a stale copy."""
    rows = Cluster.objects.select_for_update().filter(pk=cluster.pk)
    if description is not None:
        if not rows.update(description=description):
            raise Cluster.DoesNotExist(f"cluster {cluster.name} was deleted meanwhile")
        cluster.description = description
    elif not rows.exists():
        raise Cluster.DoesNotExist(f"cluster {cluster.name} was deleted meanwhile")
    return cluster


@transaction.atomic
def cluster_delete(*, cluster: Cluster) -> None:
    """Deletes the cluster's whole mirror with it."""
    cluster.delete()
