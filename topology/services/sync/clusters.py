"""Register how a cluster is reached; list the clusters the sync keeps fresh."""

from __future__ import annotations

from django.db import transaction

from topology.choices import ConnectionMode
from topology.models import Cluster, ClusterConnection


@transaction.atomic
def cluster_connect(
    *,
    name: str,
    mode: ConnectionMode,
    kubeconfig_path: str = "",
    context: str = "",
    enabled: bool = True,
) -> Cluster:
    """Create the cluster if needed and set its connection; validated like the admin form."""
    cluster, _ = Cluster.objects.get_or_create(name=name)
    connection = ClusterConnection.objects.filter(cluster=cluster).first() or ClusterConnection(
        cluster=cluster
    )
    connection.mode = mode
    connection.kubeconfig_path = kubeconfig_path if mode == ConnectionMode.KUBECONFIG else ""
    connection.context = context if mode == ConnectionMode.KUBECONFIG else ""
    connection.enabled = enabled
    connection.full_clean()
    connection.save()
    return cluster


def synced_cluster_ids() -> list[int]:
    """Clusters with an enabled connection: the ones to watch and resync."""
    return list(
        ClusterConnection.objects.filter(enabled=True)
        .order_by("cluster_id")
        .values_list("cluster_id", flat=True)
    )
