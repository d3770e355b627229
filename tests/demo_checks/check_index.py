"""The demo objects indexed for the invariant checks, and small readers they share."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from topology.demo.qos import effective_requests
from topology.parsers.cpulist import parse_cpulist
from topology.parsers.quantity import to_base_units

TERMINATED_PHASES = ("Succeeded", "Failed")
RESERVATION_ALLOCATED = "scheduling.koordinator.sh/reservation-allocated"
RESOURCE_STATUS = "scheduling.koordinator.sh/resource-status"
_ZONE_NAME = re.compile(r"^node-?(\d+)$")

Obj = dict[str, Any]


@dataclass
class ClusterIndex:
    nodes: dict[str, Obj] = field(default_factory=dict)
    nrts: dict[str, Obj] = field(default_factory=dict)
    pods_by_node: dict[str, list[Obj]] = field(default_factory=dict)
    pods_by_uid: dict[str, Obj] = field(default_factory=dict)
    reservations: dict[str, Obj] = field(default_factory=dict)
    namespaces: set[str] = field(default_factory=set)
    config_maps: list[Obj] = field(default_factory=list)

    @classmethod
    def build(cls, objects: list[Obj]) -> ClusterIndex:
        index = cls()
        for obj in objects:
            kind, name = obj.get("kind"), obj.get("metadata", {}).get("name", "")
            if kind == "Node":
                index.nodes[name] = obj
            elif kind == "NodeResourceTopology":
                index.nrts[name] = obj
            elif kind == "Pod":
                index.pods_by_node.setdefault(obj.get("spec", {}).get("nodeName", ""), []).append(
                    obj
                )
                index.pods_by_uid[obj["metadata"].get("uid", "")] = obj
            elif kind == "Reservation":
                index.reservations[name] = obj
            elif kind == "Namespace":
                index.namespaces.add(name)
            elif kind == "ConfigMap":
                index.config_maps.append(obj)
        return index

    def active_pods(self, node: str) -> list[Obj]:
        return [pod for pod in self.pods_by_node.get(node, []) if is_active(pod)]

    def node_reservations(self, node: str, phase: str = "Available") -> list[Obj]:
        return [
            resv
            for resv in self.reservations.values()
            if resv.get("status", {}).get("nodeName") == node
            and resv["status"].get("phase") == phase
        ]


def is_active(pod: Obj) -> bool:
    return pod.get("status", {}).get("phase") not in TERMINATED_PHASES


def label(obj: Obj) -> str:
    meta = obj.get("metadata", {})
    where = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{obj.get('kind')} {where}{meta.get('name')}"


def annotation_json(obj: Obj, key: str) -> Any:
    """The parsed JSON of an annotation, None when absent (ValueError when malformed)."""
    raw = obj.get("metadata", {}).get("annotations", {}).get(key)
    return None if raw is None else json.loads(raw)


def zone_index(name: str) -> int:
    match = _ZONE_NAME.match(name)
    if match is None:
        raise ValueError(f"zone name {name!r} is not node-<id> / node<id>")
    return int(match[1])


def pod_requests(pod: Obj) -> dict[str, int]:
    return effective_requests(pod.get("spec", {}))


def resources(amounts: dict[str, str] | None) -> dict[str, int]:
    return {name: to_base_units(name, text) for name, text in (amounts or {}).items()}


def koordinator_status(obj: Obj) -> tuple[frozenset[int], dict[int, dict[str, int]]]:
    """(cpuset, per-zone resources) from a `resource-status` annotation; empty when absent."""
    status = annotation_json(obj, RESOURCE_STATUS) or {}
    cpus = parse_cpulist(status.get("cpuset", ""))
    per_zone: dict[int, dict[str, int]] = {}
    for entry in status.get("numaNodeResources") or []:
        bucket = per_zone.setdefault(int(entry["node"]), {})
        for name, value in resources(entry.get("resources")).items():
            bucket[name] = bucket.get(name, 0) + value
    return cpus, per_zone


def allocated_from(pod: Obj, index: ClusterIndex) -> Obj | None:
    """The Available Reservation this pod consumes, when it carries one."""
    ref = annotation_json(pod, RESERVATION_ALLOCATED)
    if not ref:
        return None
    reservation = index.reservations.get(ref.get("name", ""))
    if reservation is None or reservation.get("status", {}).get("phase") != "Available":
        return None
    return reservation
