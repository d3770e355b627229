"""The exact JSON merge patch that turns the observed node into the desired one.

`node_merge_patch(policy)` reads only the policy and its node's mirrored labels and
annotations (`policy.node`): no other query. The body holds only keys that change;
`None` deletes a key (RFC 7386). It carries no resourceVersion: the write-back adds
the node's mirrored `metadata.resourceVersion` as its guard.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from topology.editing.node_policies.diff import (
    DesiredPolicy,
    FieldDiff,
    merge_patch,
    policy_field_diffs,
)

if TYPE_CHECKING:
    from topology.models import NodePolicy

__all__ = ["node_merge_patch", "node_policy_diff"]


def node_policy_diff(policy: NodePolicy) -> list[FieldDiff]:
    """Observed against desired for every policy field of the node, in a fixed order."""
    node = policy.node
    return policy_field_diffs(DesiredPolicy.of(policy), node.labels or {}, node.annotations or {})


def node_merge_patch(policy: NodePolicy) -> dict[str, Any]:
    """`{"metadata": {"labels": {...}, "annotations": {...}}}`, changed keys only.

    A section with no change is left out: an all-unchanged policy gives `{"metadata": {}}`.
    """
    return merge_patch(node_policy_diff(policy))
