"""v1 Pod → PodRecord: what placement needs, and the allocation it holds."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from django.utils.dateparse import parse_datetime

from scheduler_api.engine import ContainerSpec, PodSpec, pod_request
from topology.choices import AllocationSource
from topology.domain.pod_phases import FINISHED_PHASES, rejected_at_admission
from topology.parsers.cpulist import parse_cpulist
from topology.parsers.errors import FieldError
from topology.parsers.fields import Reader, Section, read_or_ignore
from topology.parsers.node import tracked
from topology.parsers.quantity import parse_resource_list

CRANE_TOPOLOGY_RESULT = "topology.crane.io/topology-result"
KOORD_RESOURCE_STATUS = "scheduling.koordinator.sh/resource-status"
MESSAGE_LIMIT = 2000  # a status or condition message is kept up to this many characters
_CRANE_ZONE = re.compile(r"node(0|[1-9]\d*)")  # exactly as crane-agent names zones


@dataclass(frozen=True)
class ContainerRecord:
    """`restart_policy` is an init container's (`Always`: a sidecar, which runs beside
    the app containers and adds to their requests)."""

    name: str
    requests: dict[str, int]
    limits: dict[str, int]
    restart_policy: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "requests": self.requests,
            "limits": self.limits,
            "restart_policy": self.restart_policy,
        }


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
    created_at: datetime | None = None
    status: dict[str, Any] = field(default_factory=dict)  # `status_of`
    # spec.resources after API defaulting: {"requests": {...}, "limits": {...}}, {} if unset
    resources: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def rejected(self) -> bool:
        """Refused by the kubelet at admission (kept in the mirror, holds nothing)."""
        return rejected_at_admission(self.phase, self.status.get("reason", ""))

    @property
    def finished(self) -> bool:
        """Done and of no interest to placement: not mirrored (a rejected pod is)."""
        return self.phase in FINISHED_PHASES and not self.rejected

    @property
    def holds_resources(self) -> bool:
        """Bound to a node and not finished or rejected: it occupies what it requests."""
        return bool(self.node_name) and self.phase not in FINISHED_PHASES


def parse_pod(obj: Any) -> PodRecord:
    reader = Reader(obj, "Pod")
    metadata, spec, status = reader.at("metadata"), reader.at("spec"), reader.at("status")
    annotations = metadata.string_map("annotations")
    containers = _containers(spec, "containers", required=True)
    init_containers = _containers(spec, "initContainers", required=False)
    resources = _pod_resources(spec, containers, init_containers)
    record = PodRecord(
        namespace=metadata.get("namespace", str, default="default"),
        name=metadata.get("name", str),
        uid=metadata.get("uid", str, default=""),
        resource_version=metadata.get("resourceVersion", str, default=""),
        node_name=spec.get("nodeName", str, default=""),
        phase=status.get("phase", str, default="Pending"),
        qos_class=status.get("qosClass", str, default="")
        or qos_class_of(containers, init_containers, resources),
        scheduler_name=spec.get("schedulerName", str, default="default-scheduler"),
        priority=spec.get("priority", int, default=None),
        labels=metadata.string_map("labels"),
        annotations=tracked(annotations),
        owner_references=_owner_references(metadata),
        containers=containers,
        init_containers=init_containers,
        overhead=reader.convert(
            "spec.overhead", spec.get("overhead", dict, {}), parse_resource_list
        ),
        allocations=_allocations(reader, annotations),
        # metadata is an object here: the name was read from it above
        created_at=parse_timestamp(reader.obj["metadata"].get("creationTimestamp")),
        status=status_of(reader.obj.get("status")),
        resources=resources,
    )
    # the kubelet refused it: whatever a scheduler annotated, it holds nothing
    return replace(record, allocations=()) if record.rejected else record


def qos_class_of(
    containers: tuple[ContainerRecord, ...],
    init_containers: tuple[ContainerRecord, ...] = (),
    resources: dict[str, dict[str, int]] | None = None,
) -> str:
    """Kubernetes' QoS class, by the engine's rule (used when status.qosClass is absent)."""
    return containers_pod(containers, init_containers, resources=resources).qos_class.value


def containers_pod(
    containers: tuple[ContainerRecord, ...],
    init_containers: tuple[ContainerRecord, ...] = (),
    overhead: dict[str, int] | None = None,
    *,
    resources: dict[str, dict[str, int]] | None = None,
) -> PodSpec:
    """A nameless engine pod of these containers (and pod-level `resources`): what the
    engine's rules read to give a pod's QoS class and requests (`PodSpec.qos_class`,
    `pod_request`)."""

    def spec(record: ContainerRecord) -> ContainerSpec:
        return ContainerSpec(
            record.name, record.requests, record.limits, restart_policy=record.restart_policy
        )

    return PodSpec(
        namespace="",
        name="",
        containers=tuple(map(spec, containers)),
        init_containers=tuple(map(spec, init_containers)),
        overhead=overhead or {},
        pod_resources=resources or {},
    )


# Pod-level resources (spec.resources, KEP-2837). Kubernetes validation admits only these
# names there (component-helpers/resource/helpers.go IsSupportedPodLevelResource).
POD_LEVEL_NAMES = ("cpu", "memory")
HUGEPAGES = "hugepages-"


def _pod_resources(
    spec: Section,
    containers: tuple[ContainerRecord, ...],
    init_containers: tuple[ContainerRecord, ...],
) -> dict[str, dict[str, int]]:
    """spec.resources, read as container resources are, then defaulted as the API
    server does (`_default_pod_resources`); {} when the pod sets none."""
    raw = spec.get("resources", dict, default={})
    path = f"{spec.path}.resources"
    amounts = {
        kind: spec.reader.convert(f"{path}.{kind}", raw.get(kind), parse_resource_list)
        for kind in ("requests", "limits")
    }
    for kind, found in amounts.items():
        for name in found:
            if name not in POD_LEVEL_NAMES and not name.startswith(HUGEPAGES):
                raise spec.reader.error(
                    f"{path}.{kind}.{name}",
                    "pod-level resources support only cpu, memory and hugepages-<size>",
                )
    if not amounts["requests"] and not amounts["limits"]:
        return {}
    return _default_pod_resources(
        amounts["requests"], amounts["limits"], containers, init_containers
    )


def _default_pod_resources(
    requests: dict[str, int],
    limits: dict[str, int],
    containers: tuple[ContainerRecord, ...],
    init_containers: tuple[ContainerRecord, ...],
) -> dict[str, dict[str, int]]:
    """kubernetes pkg/apis/core/v1/defaults.go (stored master after v1.35) SetDefaults_Pod:
    `defaultHugePagePodLimits` (a hugepages limit of the containers' aggregate, unless
    the pod requests that size itself), then `defaultPodRequests` (with pod-level limits
    set, a missing cpu or memory request is the containers' aggregate request, else the
    pod-level limit). `defaultPodLimits` (newer still) is not applied: it only changes
    limits, which a stored pod already carries."""
    limits = dict(limits)
    container_limits = _aggregate(containers, init_containers, limits=True)
    for name, amount in container_limits.items():
        if name.startswith(HUGEPAGES) and name not in requests:
            limits.setdefault(name, amount)
    requests = dict(requests)
    if limits:
        container_requests = _aggregate(containers, init_containers, limits=False)
        for name, amount in container_requests.items():
            if name in POD_LEVEL_NAMES:  # supported, and may be overcommitted
                requests.setdefault(name, amount)
        for name, amount in limits.items():
            requests.setdefault(name, amount)
    return {"requests": requests, "limits": limits}


def _aggregate(
    containers: tuple[ContainerRecord, ...],
    init_containers: tuple[ContainerRecord, ...],
    *,
    limits: bool,
) -> dict[str, int]:
    """AggregateContainerRequests (or AggregateContainerLimits): the engine's rule on a
    pod of these containers alone."""
    if limits:
        containers = tuple(replace(c, requests=c.limits) for c in containers)
        init_containers = tuple(replace(c, requests=c.limits) for c in init_containers)
    return pod_request(containers_pod(containers, init_containers))


def _containers(spec: Section, key: str, *, required: bool) -> tuple[ContainerRecord, ...]:
    items = spec.get(key, list) if required else spec.get(key, list, default=[])
    path = f"{spec.path}.{key}"
    if required and not items:
        raise spec.reader.error(path, "a pod needs at least one container")
    records = [_container(spec.reader, path, index, item) for index, item in enumerate(items)]
    if key == "initContainers":
        records = [
            _with_restart_policy(spec.reader, path, i, r, items[i]) for i, r in enumerate(records)
        ]
    return tuple(records)


def _with_restart_policy(
    reader: Reader, path: str, index: int, record: ContainerRecord, item: dict[str, Any]
) -> ContainerRecord:
    """An init container's restartPolicy (only `Always`, a sidecar, is allowed there)."""
    policy = reader.check(f"{path}[{index}].restartPolicy", item.get("restartPolicy") or "", str)
    return replace(record, restart_policy=policy) if policy else record


def _container(reader: Reader, path: str, index: int, item: Any) -> ContainerRecord:
    """A well-formed container is read at once; the checked path, which builds the path
    of each field it reads, only runs for one that is not, to name what is wrong."""
    if type(item) is dict:
        resources = item.get("resources") or {}
        name = item.get("name")
        if type(resources) is dict and type(name) is str:
            try:
                limits = parse_resource_list(resources.get("limits"))
                requests = parse_resource_list(resources.get("requests"))
            except FieldError:
                pass
            else:
                return _container_record(name, requests, limits)
    return _checked_container(reader, f"{path}[{index}]", item)


def _checked_container(reader: Reader, item_path: str, item: Any) -> ContainerRecord:
    reader.check(item_path, item, dict)
    resources = item.get("resources") or {}
    reader.check(f"{item_path}.resources", resources, dict)
    limits = reader.convert(
        f"{item_path}.resources.limits", resources.get("limits"), parse_resource_list
    )
    requests = reader.convert(
        f"{item_path}.resources.requests", resources.get("requests"), parse_resource_list
    )
    name = reader.check(f"{item_path}.name", item.get("name"), str)
    return _container_record(name, requests, limits)


def _container_record(
    name: str, requests: dict[str, int], limits: dict[str, int]
) -> ContainerRecord:
    # Kubernetes defaults a missing request to its limit.
    return ContainerRecord(name=name, requests={**limits, **requests}, limits=limits)


def _owner_references(metadata: Section) -> list[dict[str, Any]]:
    refs = metadata.get("ownerReferences", list, default=[])
    keep = ("apiVersion", "kind", "name", "uid", "controller")
    return [{k: ref[k] for k in keep if k in ref} for ref in refs if isinstance(ref, dict)]


def _allocations(reader: Reader, annotations: dict[str, str]) -> tuple[AllocationRecord, ...]:
    allocations = []
    if CRANE_TOPOLOGY_RESULT in annotations:
        result = parse_crane_topology_result(reader, annotations[CRANE_TOPOLOGY_RESULT])
        if result is not None:
            allocations.append(result)
    if KOORD_RESOURCE_STATUS in annotations:
        status = parse_resource_status(reader, annotations[KOORD_RESOURCE_STATUS])
        if status is not None:
            allocations.append(status)
    return tuple(allocations)


def parse_crane_topology_result(reader: Reader, raw: str) -> AllocationRecord | None:
    """What crane-scheduler's GetPodNUMANodeResult reads of the annotation, or None.

    crane-scheduler is lenient here, and so are we, so that a pod is never dropped from
    the mirror (with its node-level requests) over an annotation its scheduler ignores:
    - an annotation that does not decode as a list of zones (bad JSON, a field of the
      wrong type, a bad quantity) is ignored as a whole, and a warning names the field;
    - only zones of type `Node` count, and only those named as Crane names NUMA zones
      (`node<N>`): upstream matches the names exactly, and no other name is a zone's;
    - a zone listed twice counts twice (upstream adds the entries up).
    """
    path = f"metadata.annotations[{CRANE_TOPOLOGY_RESULT}]"
    zones = read_or_ignore(lambda: _crane_result_zones(reader, path, raw), "crane-scheduler")
    if zones is None:
        return None
    numa: dict[int, dict[str, int]] = {}
    for name, amounts in zones:
        held = numa.setdefault(int(name[len("node") :]), {})
        for resource, amount in amounts.items():
            held[resource] = held.get(resource, 0) + amount
    return AllocationRecord(AllocationSource.CRANE, None, numa, raw)


def _crane_result_zones(reader: Reader, path: str, raw: str) -> list[tuple[str, dict[str, int]]]:
    """(name, capacity) of each `Node` zone named `node<N>`; ObjectParseError when the
    annotation would not unmarshal into crane's ZoneList."""
    zones = reader.check(path, reader.json_field(path, raw), list)
    kept = []
    for index, zone in enumerate(zones):
        zone_path = f"{path}[{index}]"
        reader.check(zone_path, zone, dict)
        name = reader.check(f"{zone_path}.name", _go_null(zone.get("name"), ""), str)
        zone_type = reader.check(f"{zone_path}.type", _go_null(zone.get("type"), ""), str)
        resources = reader.check(
            f"{zone_path}.resources", _go_null(zone.get("resources"), {}), dict
        )
        capacity = reader.convert(
            f"{zone_path}.resources.capacity", resources.get("capacity"), parse_resource_list
        )
        if zone_type == "Node" and _CRANE_ZONE.fullmatch(name):
            kept.append((name, capacity))
    return kept


def _go_null(value: Any, zero: Any) -> Any:
    """Go's json leaves a field at its zero value for an absent or null one."""
    return zero if value is None else value


def parse_resource_status(
    reader: Reader, raw: str, base: str = "metadata.annotations"
) -> AllocationRecord | None:
    """Koordinator's resource-status, or None. The scheduler's pod handler skips a pod's
    status that does not unmarshal and keeps the pod; so does this, with a warning
    (the pod, and its node-level requests, stay in the mirror)."""
    path = f"{base}[{KOORD_RESOURCE_STATUS}]"
    return read_or_ignore(lambda: _resource_status(reader, path, raw), "koord-scheduler")


def _resource_status(reader: Reader, path: str, raw: str) -> AllocationRecord | None:
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
        node = reader.check(f"{item_path}.node", _go_null(item.get("node"), 0), int)
        numa[node] = reader.convert(
            f"{item_path}.resources", item.get("resources"), parse_resource_list
        )
    return AllocationRecord(AllocationSource.KOORDINATOR, cpuset, numa, raw)


def status_of(status: Any) -> dict[str, Any]:
    """What explains a pod's placement, from its `status`: reason and message, the
    PodScheduled condition, and each container's waiting/termination reason where there
    is one. Read leniently: a malformed part is left out, never refuses the pod (the pod
    and what it requests stay mirrored)."""
    if not isinstance(status, dict):
        return {}
    kept: dict[str, Any] = {}
    for key in ("reason", "message"):
        if isinstance(status.get(key), str) and status[key]:
            kept[key] = status[key][:MESSAGE_LIMIT]
    scheduled = _pod_scheduled(status.get("conditions"))
    if scheduled:
        kept["scheduled"] = scheduled
    containers = [
        state
        for key in ("initContainerStatuses", "containerStatuses")
        for state in _container_states(status.get(key))
    ]
    if containers:
        kept["containers"] = containers
    return kept


def _pod_scheduled(conditions: Any) -> dict[str, str]:
    """The PodScheduled condition: status, reason, message, lastTransitionTime."""
    for condition in conditions if isinstance(conditions, list) else ():
        if isinstance(condition, dict) and condition.get("type") == "PodScheduled":
            fields = ("status", "reason", "message", "lastTransitionTime")
            return {
                key: str(condition[key])[:MESSAGE_LIMIT]
                for key in fields
                if isinstance(condition.get(key), str) and condition[key]
            }
    return {}


def _container_states(statuses: Any) -> list[dict[str, Any]]:
    """Containers whose state (or last termination) has a reason, with restart counts."""
    kept = []
    for item in statuses if isinstance(statuses, list) else ():
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        reasons = {
            label: _state_reason(item.get(key))
            for label, key in (("state", "state"), ("last", "lastState"))
        }
        restarts = item.get("restartCount")
        restarts = restarts if isinstance(restarts, int) and not isinstance(restarts, bool) else 0
        if any(reasons.values()) or restarts:
            entry: dict[str, Any] = {"name": item["name"], "restarts": restarts}
            entry.update({label: reason for label, reason in reasons.items() if reason})
            kept.append(entry)
    return kept


def _state_reason(state: Any) -> str:
    """`waiting: ImagePullBackOff`, `terminated: OOMKilled`; empty without a reason."""
    if not isinstance(state, dict):
        return ""
    for key in ("waiting", "terminated"):
        detail = state.get(key)
        if isinstance(detail, dict) and isinstance(detail.get("reason"), str):
            return f"{key}: {detail['reason']}"[:256]
    return ""


def parse_timestamp(value: Any) -> datetime | None:
    """An RFC 3339 time, or None when absent or unreadable (nothing depends on it)."""
    if not isinstance(value, str):
        return None
    try:
        return parse_datetime(value)
    except ValueError:
        return None
