"""Parsers: raw Kubernetes objects (dicts) → typed records, one module per kind.

`parse_object` is the single entry: it says which mirrored kind an object is,
or that Topolens does not mirror it, and raises ObjectParseError for a
malformed one.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from topology.parsers.errors import ObjectParseError
from topology.parsers.event import EventRecord, parse_event
from topology.parsers.node import NodeRecord, parse_node
from topology.parsers.nrt import TopologyRecord, parse_nrt
from topology.parsers.pod import PodRecord, parse_pod
from topology.parsers.qos_config import QoSConfigRecord, is_qos_configmap, parse_qos_configmap
from topology.parsers.reservation import ReservationRecord, parse_reservation
from topology.parsers.resource_slice import API_GROUP as DRA_API_GROUP
from topology.parsers.resource_slice import (
    ResourceClaimRecord,
    ResourceSliceRecord,
    parse_resource_claim,
    parse_resource_slice,
)
from topology.parsers.scheduler_config import (
    SchedulerConfigRecord,
    holds_scheduler_configuration,
    parse_scheduler_configmap,
)

Record = (
    NodeRecord
    | TopologyRecord
    | PodRecord
    | ReservationRecord
    | QoSConfigRecord
    | SchedulerConfigRecord
    | EventRecord
    | ResourceSliceRecord
    | ResourceClaimRecord
)


class MirroredKind(StrEnum):
    NODE = "Node"
    TOPOLOGY = "NodeResourceTopology"
    POD = "Pod"
    RESERVATION = "Reservation"
    QOS_CONFIG = "QoSConfig"
    SCHEDULER_CONFIG = "SchedulerConfiguration"
    EVENT = "Event"
    RESOURCE_SLICE = "ResourceSlice"
    RESOURCE_CLAIM = "ResourceClaim"


_CORE_KINDS = {  # of apiVersion v1
    "Node": MirroredKind.NODE,
    "Pod": MirroredKind.POD,
    "Event": MirroredKind.EVENT,
}
# Mirrored under (namespace, name); every other kind under its name alone.
NAMESPACED_KINDS = frozenset({MirroredKind.POD, MirroredKind.EVENT, MirroredKind.RESOURCE_CLAIM})
# DRA kinds (resource.k8s.io): mirrored and drawn, not judged (parsers.resource_slice).
_DRA_KINDS = {
    "ResourceSlice": MirroredKind.RESOURCE_SLICE,
    "ResourceClaim": MirroredKind.RESOURCE_CLAIM,
}
_PARSERS = {
    MirroredKind.NODE: parse_node,
    MirroredKind.TOPOLOGY: parse_nrt,
    MirroredKind.POD: parse_pod,
    MirroredKind.RESERVATION: parse_reservation,
    MirroredKind.QOS_CONFIG: parse_qos_configmap,
    MirroredKind.SCHEDULER_CONFIG: parse_scheduler_configmap,
    MirroredKind.EVENT: parse_event,
    MirroredKind.RESOURCE_SLICE: parse_resource_slice,
    MirroredKind.RESOURCE_CLAIM: parse_resource_claim,
}


@dataclass(frozen=True)
class ParsedObject:
    kind: MirroredKind
    record: Record


def classify(obj: Any) -> MirroredKind | None:
    """Which mirrored kind an object is; None for kinds Topolens ignores (Namespace…)."""
    if not isinstance(obj, dict):
        raise ObjectParseError("<unknown>", "", "<object>", "expected a JSON object")
    kind = obj.get("kind")
    api_version = obj.get("apiVersion")
    if not isinstance(kind, str) or not isinstance(api_version, str):
        raise ObjectParseError(str(kind or "<unknown>"), _name(obj), "kind/apiVersion", "missing")
    if kind == "ConfigMap":
        return _configmap_kind(obj)
    if kind == "NodeResourceTopology":
        return MirroredKind.TOPOLOGY
    if kind == "Reservation" and api_version.startswith("scheduling.koordinator.sh/"):
        return MirroredKind.RESERVATION
    if kind == "Event" and api_version.startswith("events.k8s.io/"):
        return MirroredKind.EVENT
    if kind in _DRA_KINDS and api_version.startswith(f"{DRA_API_GROUP}/"):
        return _DRA_KINDS[kind]
    if api_version == "v1":
        return _CORE_KINDS.get(kind)
    return None


def _configmap_kind(obj: dict[str, Any]) -> MirroredKind | None:
    if is_qos_configmap(obj):
        return MirroredKind.QOS_CONFIG
    if holds_scheduler_configuration(obj):
        return MirroredKind.SCHEDULER_CONFIG
    return None


def parse_object(obj: Any) -> ParsedObject | None:
    """None for an object Topolens does not mirror: a kind it ignores, or an Event that
    explains no placement (`parse_event`)."""
    kind = classify(obj)
    if kind is None:
        return None
    record = _PARSERS[kind](obj)
    return None if record is None else ParsedObject(kind, record)


def object_key(kind: MirroredKind, obj: dict[str, Any]) -> tuple[str, ...]:
    """The mirror key of a raw object, even a malformed one: (namespace, name) for pods
    and events."""
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    name = str(metadata.get("name", ""))
    if kind in NAMESPACED_KINDS:
        return (str(metadata.get("namespace", "default")), name)
    return (name,)


def _name(obj: dict[str, Any]) -> str:
    metadata = obj.get("metadata")
    return str(metadata.get("name", "")) if isinstance(metadata, dict) else ""


__all__ = [
    "NAMESPACED_KINDS",
    "MirroredKind",
    "ObjectParseError",
    "ParsedObject",
    "Record",
    "classify",
    "object_key",
    "parse_object",
]
