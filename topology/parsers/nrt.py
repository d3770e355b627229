"""NodeResourceTopology of every flavour → TopologyRecord.

Three schemas share one record: upstream `topology.node.k8s.io` v1alpha1 and
v1alpha2 (a list of resources per zone), Crane `topology.crane.io/v1alpha1`
(one resources object per zone, no `available`), and Koordinator, which is
upstream v1alpha1 plus koordlet's annotations (formats.md §1–§3).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from topology.choices import Flavour
from topology.parsers.errors import FieldError
from topology.parsers.fields import Reader
from topology.parsers.koordlet import KoordletRecord, parse_koordlet_annotations
from topology.parsers.quantity import parse_resource_list, to_base_units

UPSTREAM_GROUP = "topology.node.k8s.io"
CRANE_API_VERSION = "topology.crane.io/v1alpha1"
KOORDINATOR_MANAGED_BY = "Koordinator"
_UPSTREAM_ZONE = re.compile(r"^node-(\d+)$")
_CRANE_ZONE = re.compile(r"^node(\d+)$")
MAX_NUMA_ID = 64
_AMOUNTS = ("capacity", "allocatable", "available")  # of an upstream zone resource


@dataclass(frozen=True)
class ZoneResourceRecord:
    name: str
    capacity: int
    allocatable: int
    available: int | None  # Crane publishes none


FINGERPRINT_ATTRIBUTE = "nodeTopologyPodsFingerprint"
FINGERPRINT_METHOD_ATTRIBUTE = "nodeTopologyPodsFingerprintMethod"
FINGERPRINT_ANNOTATION = "topology.node.k8s.io/fingerprint"


@dataclass(frozen=True)
class ZoneRecord:
    name: str
    zone_type: str
    numa_id: int | None
    parent: str
    costs: dict[str, int]
    attributes: dict[str, str]
    resources: tuple[ZoneResourceRecord, ...]
    reserved_cpus: int | None = None  # Crane reservedCPUNums


@dataclass(frozen=True)
class TopologyRecord:
    name: str
    uid: str
    api_version: str
    flavour: str
    resource_version: str
    topology_policies: list[str]
    attributes: dict[str, str]
    zones: tuple[ZoneRecord, ...]
    raw: dict[str, Any]
    crane_cpu_manager_policy: str = ""
    crane_topology_policy: str = ""
    crane_reserved: dict[str, int] = field(default_factory=dict)
    koordlet: KoordletRecord | None = None

    @property
    def pods_fingerprint(self) -> str:
        """The pod-set fingerprint the updater published: the attribute, else the legacy
        annotation (NFD's topology-updater wrote that before attributes existed)."""
        return self.attributes.get(FINGERPRINT_ATTRIBUTE) or _annotation(
            self.raw, FINGERPRINT_ANNOTATION
        )

    @property
    def pods_fingerprint_method(self) -> str:
        """How the updater chose the pods it fingerprinted; blank: not said (`all`)."""
        return self.attributes.get(FINGERPRINT_METHOD_ATTRIBUTE, "")


def _annotation(raw: dict[str, Any], key: str) -> str:
    metadata = raw.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    value = annotations.get(key) if isinstance(annotations, dict) else None
    return value if isinstance(value, str) else ""


def parse_nrt(obj: Any) -> TopologyRecord:
    reader = Reader(obj, "NodeResourceTopology")
    api_version = reader.get("apiVersion", str)
    reader.get("metadata.name", str)
    if api_version == CRANE_API_VERSION:
        return _parse_crane(reader)
    if api_version in (f"{UPSTREAM_GROUP}/v1alpha1", f"{UPSTREAM_GROUP}/v1alpha2"):
        return _parse_upstream(reader, api_version)
    raise reader.error("apiVersion", f"unknown NodeResourceTopology apiVersion {api_version!r}")


def _common(reader: Reader) -> dict[str, Any]:
    return {
        "name": reader.get("metadata.name", str),
        "uid": reader.get("metadata.uid", str, default=""),
        "api_version": reader.get("apiVersion", str),
        "resource_version": reader.get("metadata.resourceVersion", str, default=""),
        "raw": reader.obj,
    }


def _parse_upstream(reader: Reader, api_version: str) -> TopologyRecord:
    v1alpha1 = api_version.endswith("/v1alpha1")
    policies = reader.get("topologyPolicies", list, default=None)
    if policies is None and v1alpha1:
        raise reader.error("topologyPolicies", "required field is missing in v1alpha1")
    for index, policy in enumerate(policies or []):
        reader.check(f"topologyPolicies[{index}]", policy, str)
    attributes = {} if v1alpha1 else _name_value_list(reader, "attributes", reader.obj)
    zones = reader.get("zones", list)
    # koordlet writes v1alpha1, but a CRD that also serves v1alpha2 (conversion None)
    # hands the same object out at v1alpha2: its koordlet marks decide, not the version.
    koordlet = _koordlet_of(reader)
    if koordlet:
        flavour = Flavour.KOORDINATOR
    else:
        flavour = Flavour.UPSTREAM_V1ALPHA1 if v1alpha1 else Flavour.UPSTREAM_V1ALPHA2
    return TopologyRecord(
        **_common(reader),
        flavour=flavour,
        topology_policies=list(policies or []),
        attributes=attributes,
        zones=tuple(_upstream_zone(reader, i, z) for i, z in enumerate(zones)),
        koordlet=koordlet,
    )


def _koordlet_of(reader: Reader) -> KoordletRecord | None:
    labels = reader.string_map("metadata.labels")
    annotations = reader.string_map("metadata.annotations")
    managed = labels.get("app.kubernetes.io/managed-by") == KOORDINATOR_MANAGED_BY
    if not managed and not any(k.startswith("node.koordinator.sh/") for k in annotations):
        return None
    return parse_koordlet_annotations(reader, annotations)


def _upstream_zone(reader: Reader, index: int, zone: Any) -> ZoneRecord:
    path = f"zones[{index}]"
    reader.check(path, zone, dict)
    name = reader.check(f"{path}.name", zone.get("name"), str)
    zone_type = reader.check(f"{path}.type", zone.get("type"), str)
    resources = [
        _upstream_resource(reader, path, r_index, item)
        for r_index, item in enumerate(_list(reader, f"{path}.resources", zone.get("resources")))
    ]
    return ZoneRecord(
        name=name,
        zone_type=zone_type,
        numa_id=_numa_id(_UPSTREAM_ZONE, name, zone_type),
        parent=zone.get("parent") or "",
        costs=_costs(reader, f"{path}.costs", zone.get("costs")),
        attributes=_name_value_list(reader, f"{path}.attributes", zone),
        resources=tuple(resources),
    )


def _upstream_resource(reader: Reader, zone_path: str, index: int, item: Any) -> ZoneResourceRecord:
    """A zone's resource. A well-formed one is read at once; the checked path, which
    builds the path of each field it reads, then only runs for one that is not, to
    name what is wrong (an NRT of 8 zones has 48 amounts, a cold resync 5,000 NRTs)."""
    if type(item) is dict:
        name = item.get("name")
        if type(name) is str:
            try:
                amounts = [to_base_units(name, item[key]) for key in _AMOUNTS]
            except (KeyError, FieldError):
                pass
            else:
                return ZoneResourceRecord(name, *amounts)
    return _checked_upstream_resource(reader, f"{zone_path}.resources[{index}]", item)


def _checked_upstream_resource(reader: Reader, path: str, item: Any) -> ZoneResourceRecord:
    reader.check(path, item, dict)
    name = reader.check(f"{path}.name", item.get("name"), str)
    amounts = {}
    for key in _AMOUNTS:
        if item.get(key) is None:
            raise reader.error(f"{path}.{key}", "required field is missing")
        amounts[key] = reader.convert(
            f"{path}.{key}", item[key], lambda v, n=name: to_base_units(n, v)
        )
    return ZoneResourceRecord(name=name, **amounts)


def _parse_crane(reader: Reader) -> TopologyRecord:
    policy = reader.get("craneManagerPolicy", dict)
    attributes = reader.string_map("attributes")
    return TopologyRecord(
        **_common(reader),
        flavour=Flavour.CRANE,
        topology_policies=[],
        attributes=attributes,
        zones=tuple(_crane_zone(reader, i, z) for i, z in enumerate(reader.get("zones", list))),
        crane_cpu_manager_policy=reader.get("craneManagerPolicy.cpuManagerPolicy", str),
        crane_topology_policy=reader.check(
            "craneManagerPolicy.topologyManagerPolicy", policy.get("topologyManagerPolicy"), str
        ),
        crane_reserved=reader.convert("reserved", reader.obj.get("reserved"), parse_resource_list),
    )


def _crane_zone(reader: Reader, index: int, zone: Any) -> ZoneRecord:
    path = f"zones[{index}]"
    reader.check(path, zone, dict)
    name = reader.check(f"{path}.name", zone.get("name"), str)
    zone_type = reader.check(f"{path}.type", zone.get("type"), str)
    resources = zone.get("resources") or {}
    reader.check(f"{path}.resources", resources, dict)
    capacity = reader.convert(
        f"{path}.resources.capacity", resources.get("capacity"), parse_resource_list
    )
    allocatable = reader.convert(
        f"{path}.resources.allocatable", resources.get("allocatable"), parse_resource_list
    )
    reserved = resources.get("reservedCPUNums")
    if reserved is not None:
        reader.check(f"{path}.resources.reservedCPUNums", reserved, int)
    attributes = zone.get("attributes") or {}
    reader.check(f"{path}.attributes", attributes, dict)
    return ZoneRecord(
        name=name,
        zone_type=zone_type,
        numa_id=_numa_id(_CRANE_ZONE, name, zone_type),
        parent=zone.get("parent") or "",
        costs=_costs(reader, f"{path}.costs", zone.get("costs")),
        attributes={str(k): str(v) for k, v in attributes.items()},
        resources=tuple(
            ZoneResourceRecord(name, capacity[name], allocatable.get(name, 0), None)
            for name in capacity
        ),
        reserved_cpus=reserved,
    )


def _numa_id(pattern: re.Pattern[str], name: str, zone_type: str) -> int | None:
    """NUMA id of a `Node` zone; scheduler-plugins ignores unparsable names and ids > 64."""
    match = pattern.match(name)
    if zone_type != "Node" or not match or int(match[1]) > MAX_NUMA_ID:
        return None
    return int(match[1])


def _list(reader: Reader, path: str, value: Any) -> list[Any]:
    """A JSON list; an empty value (absent, null, {}, "") reads as none, as it always has;
    any other value is an error naming the field (a `true` where a list belongs failed as
    a TypeError; found by the fuzz test)."""
    return reader.check(path, value, list) if value else []


def _costs(reader: Reader, path: str, costs: Any) -> dict[str, int]:
    """A zone's costs; an entry's fields are named (paths built) only when it is wrong."""
    result: dict[str, int] = {}
    for index, item in enumerate(_list(reader, path, costs)):
        if type(item) is dict:
            name, value = item.get("name"), item.get("value")
            if type(name) is str and type(value) is int:
                result[name] = value
                continue
        item_path = f"{path}[{index}]"
        reader.check(item_path, item, dict)
        name = reader.check(f"{item_path}.name", item.get("name"), str)
        result[name] = reader.check(f"{item_path}.value", item.get("value"), int)
    return result


def _name_value_list(reader: Reader, path: str, holder: dict[str, Any]) -> dict[str, str]:
    key = path.rsplit(".", 1)[-1]
    result: dict[str, str] = {}
    for index, item in enumerate(_list(reader, path, holder.get(key))):
        reader.check(f"{path}[{index}]", item, dict)
        name = reader.check(f"{path}[{index}].name", item.get("name"), str)
        result[name] = reader.check(f"{path}[{index}].value", item.get("value"), str)
    return result
