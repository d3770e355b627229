"""`check_demo_invariants`: do the generated numbers add up? (empty list when they do)

Like sortedcontainers' `_check()`, it re-derives everything from the objects alone, so a
mutated or hand-edited object list is judged the same way as a fresh one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import Any

from .check_crane import check_crane
from .check_general import (
    check_metadata,
    check_namespaces,
    check_node_requests,
    check_pods,
    check_qos_config,
)
from .check_index import ClusterIndex, Obj
from .check_koordinator import check_koordinator
from .check_reservations import check_reservations
from .check_upstream import check_upstream
from .check_zones import CRANE, KOORDINATOR, ZoneValues, check_zone_totals, nrt_flavour, read_zones

_FLAVOUR_CHECKS: dict[str, Callable[[ClusterIndex, Obj, Obj, dict[int, ZoneValues]], list[str]]] = {
    CRANE: check_crane,
    KOORDINATOR: check_koordinator,
}
_MALFORMED = (ValueError, KeyError, TypeError, AttributeError, json.JSONDecodeError)


def check_demo_invariants(objects: list[dict[str, Any]]) -> list[str]:
    """Every problem found, as readable sentences; a malformed object is one more problem."""
    index = ClusterIndex.build(objects)
    problems = _guarded("metadata", lambda: check_metadata(objects))
    problems += _guarded("namespaces", lambda: check_namespaces(index, objects))
    problems += _guarded("pods", lambda: check_pods(index))
    for name, node in sorted(index.nodes.items()):
        problems += _guarded(f"Node {name}", partial(check_node, index, node))
    problems += _guarded("reservations", lambda: check_reservations(index))
    problems += _guarded("slo-controller-config", lambda: check_qos_config(index))
    return problems


def check_node(index: ClusterIndex, node: Obj) -> list[str]:
    name = node["metadata"]["name"]
    problems = check_node_requests(index, node)
    nrt = index.nrts.get(name)
    if nrt is None:
        return [*problems, f"Node {name}: no NodeResourceTopology"]
    zones = read_zones(nrt)
    problems += check_zone_totals(node, zones)
    return problems + _FLAVOUR_CHECKS.get(nrt_flavour(nrt), check_upstream)(index, node, nrt, zones)


def _guarded(what: str, check: Callable[[], list[str]]) -> list[str]:
    try:
        return check()
    except _MALFORMED as error:
        return [f"{what}: malformed object ({type(error).__name__}: {error})"]
