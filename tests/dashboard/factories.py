"""Dashboard-only builders; the factories and koordinator_node are in tests/factories.py."""

from __future__ import annotations

from tests.factories import (
    NodeFactory,
    NodeFiguresFactory,
    NodeTopologyFactory,
    ZoneFactory,
    ZoneResourceFactory,
)
from topology.models import Cluster, Node


def upstream_node(cluster: Cluster, name: str, zones: int = 2, figures: bool = True) -> Node:
    node = NodeFactory(cluster=cluster, name=name)
    nrt = NodeTopologyFactory(node=node)
    for numa in range(zones):
        zone = ZoneFactory(topology=nrt, numa_id=numa, name=f"node-{numa}")
        ZoneResourceFactory(zone=zone)
        ZoneResourceFactory(
            zone=zone,
            name="memory",
            capacity=64 * 1024**3,
            allocatable=60 * 1024**3,
            available=40 * 1024**3,
        )
    if figures:
        NodeFiguresFactory(node=node)
    return node
