"""v1 Pod → PodRecord: what placement needs, and the allocation it holds."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from scheduler_api.engine.snapshot import ContainerSpec, PodSpec
from topology.choices import AllocationSource
from topology.parsers.cpulist import parse_cpulist
from topology.parsers.fields import Reader
from topology.parsers.node import tracked
from topology.parsers.quantity import parse_resource_list

CRANE_TOPOLOGY_RESULT = "topology.crane.io/topology-result"
KOORD_RESOURCE_STATUS = "scheduling.koordinator.sh/resource-status"
FINISHED_PHASES = frozenset({"Succeeded", "Failed"})
_CRANE_ZONE = re.compile(r"^node(\d+)$")


@dataclass(frozen=True)
class ContainerRecord:
    name: str
    requests: dict[str, int]
    limits: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "requests": self.requests, "limits": self.limits}


@dataclass(frozen=True)
class AllocationRecord:
    """The CPUs / NUMA share a pod holds, as one system published it."""

    source: str
    cpuset: frozenset[int] | None
    numa_resources: dict[int, dict[str, int]]
    raw: str = ""


@dataclass(frozen=True)
class PodRecord:
    namespace: str
    name: str
    uid: str
    resource_version: str
    node_name: str
    phase: str
    qos_class: str
    scheduler_name: str
    priority: int | None
    labels: dict[str, str]
    annotations: dict[str, str]
    owner_references: list[dict[str, Any]]
    containers: tuple[ContainerRecord, ...]
    init_containers: tuple[ContainerRecord, ...]
    overhead: dict[str, int]
    allocations: tuple[AllocationRecord, ...] = field(default=())

    @property
    def finished(self) -> bool:
        return self.phase in FINISHED_PHASES


def parse_pod(obj: Any) -> PodRecord:
    reader = Reader(obj, "Pod")
    annotations = reader.string_map("metadata.annotations")
    containers = _containers(reader, "spec.containers", required=True)
    init_containers = _containers(reader, "spec.initContainers", required=False)
    return PodRecord(
        namespace=reader.get("metadata.namespace", str, default="default"),
        name=reader.get("metadata.name", str),
        uid=reader.get("metadata.uid", str, default=""),
        resource_version=reader.get("metadata.resourceVersion", str, default=""),
        node_name=reader.get("spec.nodeName", str, default=""),
        phase=reader.get("status.phase", str, default="Pending"),
        qos_class=reader.get("status.qosClass", str, default="")
        or qos_class_of(containers, init_containers),
        scheduler_name=reader.get("spec.schedulerName", str, default="default-scheduler"),
        priority=reader.get("spec.priority", int, default=None),
        labels=reader.string_map("metadata.labels"),
        annotations=tracked(annotations),
        owner_references=_owner_references(reader),
        containers=containers,
        init_containers=init_containers,
        overhead=reader.convert(
            "spec.overhead", reader.get("spec.overhead", dict, {}), parse_resource_list
        ),
        allocations=_allocations(reader, annotations),
    )


def qos_class_of(
    containers: tuple[ContainerRecord, ...], init_containers: tuple[ContainerRecord, ...] = ()
) -> str:
    """Kubernetes' QoS class, by the engine's rule (used when status.qosClass is absent)."""

    def spec(record: ContainerRecord) -> ContainerSpec:
        return ContainerSpec(record.name, record.requests, record.limits)

    pod = PodSpec(
        namespace="",
        name="",
        containers=tuple(map(spec, containers)),
        init_containers=tuple(map(spec, init_containers)),
    )
    return pod.qos_class.value


def _containers(reader: Reader, path: str, *, required: bool) -> tuple[ContainerRecord, ...]:
    items = reader.get(path, list) if required else reader.get(path, list, default=[])
    if required and not items:
        raise reader.error(path, "a pod needs at least one container")
    result = []
    for index, item in enumerate(items):
        item_path = f"{path}[{index}]"
        reader.check(item_path, item, dict)
        resources = item.get("resources") or {}
        reader.check(f"{item_path}.resources", resources, dict)
        limits = reader.convert(
            f"{item_path}.resources.limits", resources.get("limits"), parse_resource_list
        )
        requests = reader.convert(
            f"{item_path}.resources.requests", resources.get("requests"), parse_resource_list
        )
        # Kubernetes defaults a missing request to its limit.
        requests = {**limits, **requests}
        name = reader.check(f"{item_path}.name", item.get("name"), str)
        result.append(ContainerRecord(name=name, requests=requests, limits=limits))
    return tuple(result)


def _owner_references(reader: Reader) -> list[dict[str, Any]]:
    refs = reader.get("metadata.ownerReferences", list, default=[])
    keep = ("apiVersion", "kind", "name", "uid", "controller")
    return [{k: ref[k] for k in keep if k in ref} for ref in refs if isinstance(ref, dict)]


def _allocations(reader: Reader, annotations: dict[str, str]) -> tuple[AllocationRecord, ...]:
    allocations = []
    if CRANE_TOPOLOGY_RESULT in annotations:
        allocations.append(parse_crane_topology_result(reader, annotations[CRANE_TOPOLOGY_RESULT]))
    if KOORD_RESOURCE_STATUS in annotations:
        status = parse_resource_status(reader, annotations[KOORD_RESOURCE_STATUS])
        if status is not None:
            allocations.append(status)
    return tuple(allocations)


def parse_crane_topology_result(reader: Reader, raw: str) -> AllocationRecord:
    path = f"metadata.annotations[{CRANE_TOPOLOGY_RESULT}]"
    zones = reader.check(path, reader.json_field(path, raw), list)
    numa: dict[int, dict[str, int]] = {}
    for index, zone in enumerate(zones):
        zone_path = f"{path}[{index}]"
        reader.check(zone_path, zone, dict)
        name = reader.check(f"{zone_path}.name", zone.get("name"), str)
        match = _CRANE_ZONE.match(name)
        if not match:
            raise reader.error(f"{zone_path}.name", f"{name!r} is not a Crane NUMA zone (node<N>)")
        capacity = (zone.get("resources") or {}).get("capacity")
        numa[int(match[1])] = reader.convert(
            f"{zone_path}.resources.capacity", capacity, parse_resource_list
        )
    return AllocationRecord(AllocationSource.CRANE, None, numa, raw)


def parse_resource_status(
    reader: Reader, raw: str, base: str = "metadata.annotations"
) -> AllocationRecord | None:
    path = f"{base}[{KOORD_RESOURCE_STATUS}]"
    data = reader.json_field(path, raw)
    if data is None:
        return None
    reader.check(path, data, dict)
    cpuset_text = data.get("cpuset") or ""
    cpuset = reader.convert(f"{path}.cpuset", cpuset_text, parse_cpulist) if cpuset_text else None
    numa: dict[int, dict[str, int]] = {}
    for index, item in enumerate(
        reader.check(f"{path}.numaNodeResources", data.get("numaNodeResources") or [], list)
    ):
        item_path = f"{path}.numaNodeResources[{index}]"
        reader.check(item_path, item, dict)
        node = reader.check(f"{item_path}.node", item.get("node"), int)
        numa[node] = reader.convert(
            f"{item_path}.resources", item.get("resources"), parse_resource_list
        )
    return AllocationRecord(AllocationSource.KOORDINATOR, cpuset, numa, raw)
