"""Clusters managed through the API (admins): the mirror itself comes from import or sync."""

from __future__ import annotations

from django.db import transaction

from topology.models import Cluster


@transaction.atomic
def cluster_create(*, name: str, description: str = "") -> Cluster:
    return Cluster.objects.create(name=name, description=description)


@transaction.atomic
def cluster_update(*, cluster: Cluster, description: str | None = None) -> Cluster:
    if description is not None:
        cluster.description = description
        cluster.save(update_fields=["description"])
    return cluster


@transaction.atomic
def cluster_delete(*, cluster: Cluster) -> None:
    """Deletes the cluster's whole mirror with it."""
    cluster.delete()
