"""What crane's fast paths keep between questions: the one place its caches live.

The reference (`crane/reference/`) never imports this module: it works out each node's
claimed zones from the snapshot every time. Fast paths read them kept with the node
(`NodeSnapshot.derived`: a snapshot never changes, so what derives from it alone stays
true as long as the node object lives).
"""

from __future__ import annotations

from scheduler_api.engine.crane.reference import plugin as crane
from scheduler_api.engine.crane.reference.plugin import CraneZone
from scheduler_api.engine.model.snapshot import NodeSnapshot

__all__ = ["ZONES_KEY", "kept_crane_zones", "kept_zones"]

ZONES_KEY = "crane-zones"  # the node's derived view holding its claimed zones


def kept_zones(node: NodeSnapshot) -> tuple[CraneZone, ...]:
    """`crane.claimed_zones`, worked out once per node object. Never to be edited."""
    return node.derived(ZONES_KEY, crane.claimed_zones)


def kept_crane_zones(node: NodeSnapshot) -> list[CraneZone]:
    """`crane.crane_zones` from the kept claimed zones: working copies to edit."""
    return crane.crane_zones(node, kept_zones)
