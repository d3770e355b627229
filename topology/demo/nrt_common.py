"""Pieces shared by the NodeResourceTopology renderers."""

from __future__ import annotations

from typing import Any

from .ledger import NodeLedger

NRT_KIND = "NodeResourceTopology"


def node_owner_reference(ledger: NodeLedger, node_uid: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "name": ledger.plan.name,
        "uid": node_uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def zone_costs(ledger: NodeLedger, zone: int, name_format: str) -> list[dict[str, Any]]:
    shape = ledger.plan.shape
    return [
        {"name": name_format.format(other), "value": shape.distance(zone, other)}
        for other in range(shape.zone_count)
    ]
