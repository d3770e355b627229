"""The mirror with draft node policies written: engine snapshots of "what if we applied it".

The observed snapshot comes from `cluster_snapshot`; each node with a draft policy
gets its desired labels and reservation annotation, and what koordlet and
crane-agent would derive from them (`topology.editing.node_policies.snapshot`).
Nothing is written: the drafts are read, or passed in unsaved (a bulk edit's preview).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from scheduler_api.engine import ClusterSnapshot
from topology.editing.node_policies.diff import DesiredPolicy
from topology.editing.node_policies.snapshot import with_draft_policy
from topology.models import Cluster, NodePolicy

__all__ = ["drafts_by_node", "stored_drafts", "with_drafts"]


def drafts_by_node(policies: Iterable[NodePolicy]) -> dict[str, DesiredPolicy]:
    """Node name → desired policy (the node must be loaded: `select_related("node")`)."""
    return {policy.node.name: DesiredPolicy.of(policy) for policy in policies}


def stored_drafts(cluster: Cluster) -> dict[str, DesiredPolicy]:
    """Every saved NodePolicy of the cluster, by node name (one query)."""
    return drafts_by_node(NodePolicy.objects.filter(node__cluster=cluster).select_related("node"))


def with_drafts(snapshot: ClusterSnapshot, drafts: Mapping[str, DesiredPolicy]) -> ClusterSnapshot:
    """`snapshot` with each named node's draft applied; other nodes are the same objects."""
    nodes = tuple(
        with_draft_policy(node, drafts[node.name]) if node.name in drafts else node
        for node in snapshot.nodes
    )
    return dataclasses.replace(snapshot, nodes=nodes)
