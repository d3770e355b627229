"""Adapters between the mirror (models, parsed records) and the engine's snapshot values.

The only place that knows both sides: views, services and commands call these,
and the engine never sees a model.
"""

from topology.adapters.mirror import cluster_snapshot, node_snapshots, stored_pod_specs
from topology.adapters.records import pod_spec_of, snapshot_from_objects

__all__ = [
    "cluster_snapshot",
    "node_snapshots",
    "pod_spec_of",
    "snapshot_from_objects",
    "stored_pod_specs",
]
