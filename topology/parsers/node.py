"""v1 Node → NodeRecord, with Koordinator's node CPU reservation annotation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from topology.parsers.cpulist import parse_cpulist
from topology.parsers.fields import Reader, read_or_ignore
from topology.parsers.quantity import parse_resource_list

RESERVATION_ANNOTATION = "node.koordinator.sh/reservation"
# Annotation and label prefixes Topolens reads; everything else is left behind.
TRACKED_PREFIXES = (
    "node.koordinator.sh/",
    "kubelet.koordinator.sh/",
    "scheduling.koordinator.sh/",
    "topology.crane.io/",
    "topology.node.k8s.io/",
    "topolens.io/",
)


@dataclass(frozen=True)
class NodeReservationRecord:
    """`node.koordinator.sh/reservation`: CPUs kept from pods (formats.md §3.2)."""

    resources: dict[str, int] = field(default_factory=dict)
    reserved_cpus: frozenset[int] | None = None
    apply_policy: str = ""
    raw: str = ""

    @property
    def cpu_count(self) -> int:
        """reservedCPUs overrides resources.cpu; a quantity rounds up to whole CPUs."""
        if self.reserved_cpus is not None:
            return len(self.reserved_cpus)
        return -(-self.resources.get("cpu", 0) // 1000)


@dataclass(frozen=True)
class NodeRecord:
    name: str
    uid: str
    resource_version: str
    labels: dict[str, str]
    annotations: dict[str, str]
    capacity: dict[str, int]
    allocatable: dict[str, int]
    unschedulable: bool
    reservation: NodeReservationRecord | None


def parse_node(obj: Any) -> NodeRecord:
    reader = Reader(obj, "Node")
    name = reader.get("metadata.name", str)
    annotations = reader.string_map("metadata.annotations")
    return NodeRecord(
        name=name,
        uid=reader.get("metadata.uid", str, default=""),
        resource_version=reader.get("metadata.resourceVersion", str, default=""),
        labels=reader.string_map("metadata.labels"),
        annotations=tracked(annotations),
        capacity=reader.convert(
            "status.capacity", reader.get("status.capacity", dict, {}), parse_resource_list
        ),
        allocatable=reader.convert(
            "status.allocatable", reader.get("status.allocatable", dict, {}), parse_resource_list
        ),
        unschedulable=reader.get("spec.unschedulable", bool, default=False),
        reservation=parse_node_reservation(reader, annotations, "metadata.annotations"),
    )


def tracked(annotations: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in annotations.items() if k.startswith(TRACKED_PREFIXES)}


def parse_node_reservation(
    reader: Reader, annotations: dict[str, str], base: str
) -> NodeReservationRecord | None:
    """The node.koordinator.sh/reservation annotation, read as Koordinator reads it.

    Koordinator never refuses a node over it: GetNodeReservation skips an empty value,
    and its callers ignore one that does not unmarshal (bad JSON, a bad quantity or
    cpulist), with a log line. So does this: the node stays, the annotation is ignored
    with a warning naming the field. Quantities may be JSON numbers, and null is zero,
    as resource.Quantity unmarshals them; an applyPolicy Koordinator does not know is
    kept (it trims the node's allocatable only for "" and Default).
    """
    raw = annotations.get(RESERVATION_ANNOTATION)
    if not raw:
        return None
    path = f"{base}[{RESERVATION_ANNOTATION}]"
    return read_or_ignore(lambda: _node_reservation(reader, path, raw), "Koordinator")


def _node_reservation(reader: Reader, path: str, raw: str) -> NodeReservationRecord | None:
    data = reader.json_field(path, raw)
    if data is None:
        return None
    data = reader.check(path, data, dict)
    cpus = reader.check(f"{path}.reservedCPUs", data.get("reservedCPUs") or "", str)
    policy = reader.check(f"{path}.applyPolicy", data.get("applyPolicy") or "", str)
    resources = reader.check(f"{path}.resources", data.get("resources") or {}, dict)
    quantities = {name: _json_quantity(value) for name, value in resources.items()}
    return NodeReservationRecord(
        resources=reader.convert(f"{path}.resources", quantities, parse_resource_list),
        reserved_cpus=(
            reader.convert(f"{path}.reservedCPUs", cpus, parse_cpulist) if cpus else None
        ),
        apply_policy=policy,
        raw=raw,
    )


def _json_quantity(value: Any) -> Any:
    """resource.Quantity's UnmarshalJSON: null is zero, and a JSON number is read as the
    quantity it spells."""
    if value is None:
        return "0"
    if isinstance(value, float):
        return repr(value)
    return value
