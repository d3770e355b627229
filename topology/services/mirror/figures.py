"""Recompute the derived per-node figures (NodeFigures) from the mirror with the engine."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from scheduler_api.engine import NodeCapacity, TopologyManagerPolicy, node_capacity
from topology.adapters import node_snapshots
from topology.models import Cluster, Node, NodeFigures


def _own_policy(node: Node) -> TopologyManagerPolicy | None:
    topology = getattr(node, "topology", None)
    if topology is None or not topology.tm_policy:
        return None
    return TopologyManagerPolicy(topology.tm_policy)


def _figures_row(node: Node, capacity: NodeCapacity, now: object) -> NodeFigures:
    return NodeFigures(
        node=node,
        computed_at=now,
        free_cpus_by_zone={str(k): v for k, v in sorted(capacity.free_cpus.items())},
        free_cpus_total=capacity.free_total,
        max_free_cpus_in_one_zone=capacity.max_free_in_one_zone,
        largest_exclusive_pod={str(k): v for k, v in capacity.largest_exclusive_pod.items()},
        largest_exclusive_pod_own_policy=capacity.largest_under_own_policy,
    )


@transaction.atomic
def recompute_figures(*, cluster_id: int) -> int:
    """Replace every node's figures of the cluster; returns how many nodes were written.

    Idempotent: running it twice gives the same rows (only computed_at moves).
    """
    cluster = Cluster.objects.get(pk=cluster_id)
    nodes = {n.name: n for n in Node.objects.filter(cluster=cluster).select_related("topology")}
    now = timezone.now()
    rows = [
        _figures_row(nodes[s.name], node_capacity(s, _own_policy(nodes[s.name])), now)
        for s in node_snapshots(cluster)
    ]
    NodeFigures.objects.filter(node__cluster=cluster).delete()
    NodeFigures.objects.bulk_create(rows)
    return len(rows)
