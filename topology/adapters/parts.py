"""Builders of engine values shared by both adapters (parsed records and stored models).

Both the offline path (kubectl dumps → records → snapshot) and the mirror path
(models → snapshot) go through these, so a what-if answers the same on both.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from scheduler_api.engine import (
    AllocationSource,
    ContainerSpec,
    ControllerRef,
    CPUExclusivePolicy,
    LabelRequirement,
    LabelSelector,
    ObjectRef,
    OwnerRef,
    PodAllocation,
    PodSpec,
    PreAllocationMode,
    ReservationAllocatePolicy,
    ReservationOwner,
    ReservationPhase,
    ReservationSnapshot,
    ResourceAmounts,
    Zone,
    pod_request,
    quantity_format_of,
    reservation_uid_of,
)
from topology.parsers.errors import ObjectParseError
from topology.parsers.reservation import parse_reservation_options

RESOURCE_SPEC = "scheduling.koordinator.sh/resource-spec"


@dataclass(frozen=True)
class ZoneParts:
    name: str
    zone_type: str
    numa_id: int | None
    costs: Mapping[str, int]
    # (name, capacity, allocatable, available); available None: not published (Crane)
    resources: tuple[tuple[str, int, int, int | None], ...]


def zones_of(parts: Iterable[ZoneParts]) -> tuple[Zone, ...]:
    """Engine zones in NRT order; costs re-keyed from zone names to NUMA ids."""
    listed = list(parts)
    numa_by_name = {z.name: z.numa_id for z in listed if z.numa_id is not None}
    return tuple(
        Zone(
            numa_id=-1 if z.numa_id is None else z.numa_id,
            name=z.name,
            resources={
                name: ResourceAmounts(cap, alloc, alloc if avail is None else avail)
                for name, cap, alloc, avail in z.resources
            },
            costs={numa_by_name[n]: d for n, d in z.costs.items() if n in numa_by_name},
            zone_type=z.zone_type,
        )
        for z in listed
    )


def container_specs(
    items: Iterable[Mapping[str, Any]], raw: Iterable[Mapping[str, Any]] = ()
) -> tuple[ContainerSpec, ...]:
    """Containers as {name, requests, limits}; `raw` manifest containers give quantity formats."""
    formats = {c.get("name"): _formats(c) for c in raw if isinstance(c, Mapping)}
    return tuple(
        ContainerSpec(
            name=str(c["name"]),
            requests=dict(c.get("requests") or {}),
            limits=dict(c.get("limits") or {}),
            quantity_formats=formats.get(c["name"], {}),
            restart_policy=str(c.get("restart_policy") or ""),
        )
        for c in items
    )


def _formats(container: Mapping[str, Any]) -> dict[str, Any]:
    resources = container.get("resources") or {}
    found: dict[str, Any] = {}
    for key in ("limits", "requests"):
        for name, text in (resources.get(key) or {}).items():
            found[name] = quantity_format_of(str(text))
    return found


def owner_refs(items: Iterable[Mapping[str, Any]]) -> tuple[OwnerRef, ...]:
    return tuple(
        OwnerRef(
            api_version=str(ref.get("apiVersion", "")),
            kind=str(ref.get("kind", "")),
            name=str(ref.get("name", "")),
            uid=str(ref.get("uid", "")),
            controller=ref.get("controller"),
        )
        for ref in items
    )


def pod_spec(
    *,
    namespace: str,
    name: str,
    uid: str,
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    containers: Iterable[Mapping[str, Any]],
    init_containers: Iterable[Mapping[str, Any]] = (),
    overhead: Mapping[str, int] | None = None,
    owner_references: Iterable[Mapping[str, Any]] = (),
    priority: int | None = None,
    raw_spec: Mapping[str, Any] | None = None,
    resources: Mapping[str, Mapping[str, int]] | None = None,
) -> PodSpec:
    """`resources`: the pod's spec.resources as stored ({"requests", "limits"})."""
    spec = raw_spec or {}
    return PodSpec(
        namespace=namespace,
        name=name,
        uid=uid,
        labels=dict(labels),
        annotations=dict(annotations),
        containers=container_specs(containers, spec.get("containers") or ()),
        init_containers=container_specs(init_containers, spec.get("initContainers") or ()),
        overhead=dict(overhead or {}),
        owner_refs=owner_refs(owner_references),
        priority_class_name=str(spec.get("priorityClassName", "")),
        priority=priority,
        pod_resources={kind: dict(amounts) for kind, amounts in (resources or {}).items()},
    )


def add_requests(total: dict[str, int], pod: PodSpec) -> None:
    """Add one bound pod's NodeResourcesFit request (and one pod slot) to `total`."""
    for name, amount in pod_request(pod).items():
        total[name] = total.get(name, 0) + amount
    total["pods"] = total.get("pods", 0) + 1


def _exclusive_policy(annotations: Mapping[str, str]) -> CPUExclusivePolicy:
    try:
        spec = json.loads(annotations.get(RESOURCE_SPEC, "{}"))
    except ValueError:
        return CPUExclusivePolicy.UNSET
    value = spec.get("preferredCPUExclusivePolicy", "") if isinstance(spec, dict) else ""
    known = value in set(CPUExclusivePolicy)
    return CPUExclusivePolicy(value) if known else CPUExclusivePolicy.UNSET


def allocation(
    *,
    namespace: str,
    name: str,
    uid: str,
    source: str,
    cpuset: frozenset[int] | None,
    numa_resources: Mapping[Any, Mapping[str, int]],
    pod_annotations: Mapping[str, str] | None = None,
) -> PodAllocation:
    annotations = pod_annotations or {}
    return PodAllocation(
        namespace=namespace,
        name=name,
        uid=uid,
        source=AllocationSource(source),
        cpuset=cpuset or frozenset(),
        numa_resources={int(k): dict(v) for k, v in numa_resources.items()},
        exclusive=bool(cpuset),
        cpu_exclusive_policy=_exclusive_policy(annotations),
        reservation_uid=reservation_uid_of(annotations),
    )


def reservation_owners(items: Iterable[Mapping[str, Any]]) -> tuple[ReservationOwner, ...]:
    return tuple(_owner(item) for item in items)


def _owner(item: Mapping[str, Any]) -> ReservationOwner:
    obj, ctl, sel = item.get("object"), item.get("controller"), item.get("labelSelector")
    return ReservationOwner(
        object=_object_ref(obj) if isinstance(obj, Mapping) else None,
        controller=_controller_ref(ctl) if isinstance(ctl, Mapping) else None,
        label_selector=_selector(sel) if isinstance(sel, Mapping) else None,
    )


def _object_ref(data: Mapping[str, Any]) -> ObjectRef:
    return ObjectRef(
        namespace=str(data.get("namespace", "")),
        name=str(data.get("name", "")),
        uid=str(data.get("uid", "")),
        api_version=str(data.get("apiVersion", "")),
        kind=str(data.get("kind", "")),
    )


def _controller_ref(data: Mapping[str, Any]) -> ControllerRef:
    return ControllerRef(
        api_version=str(data.get("apiVersion", "")),
        kind=str(data.get("kind", "")),
        name=str(data.get("name", "")),
        uid=str(data.get("uid", "")),
        controller=data.get("controller"),
        namespace=str(data.get("namespace", "")),
    )


def _selector(data: Mapping[str, Any]) -> LabelSelector:
    expressions = tuple(
        LabelRequirement(
            key=str(e.get("key", "")),
            operator=str(e.get("operator", "")),
            values=tuple(str(v) for v in e.get("values") or ()),
        )
        for e in data.get("matchExpressions") or ()
        if isinstance(e, Mapping)
    )
    labels = {str(k): str(v) for k, v in (data.get("matchLabels") or {}).items()}
    return LabelSelector(match_labels=labels, match_expressions=expressions)


def object_refs(items: Iterable[Mapping[str, Any]]) -> tuple[ObjectRef, ...]:
    return tuple(_object_ref(item) for item in items if isinstance(item, Mapping))


def reservation_snapshot(
    *,
    name: str,
    uid: str,
    node_name: str,
    phase: str,
    owners: Iterable[Mapping[str, Any]],
    allocatable: Mapping[str, int],
    allocated: Mapping[str, int],
    allocate_once: bool,
    allocate_policy: str,
    unschedulable: bool,
    cpuset: frozenset[int],
    numa_resources: Mapping[Any, Mapping[str, int]],
    current_owners: Iterable[Mapping[str, Any]],
    labels: Mapping[str, str] | None = None,
    restricted_options: str | None = None,
    pre_allocation: bool = False,
    pre_allocation_mode: str = "",
    pre_allocation_multiple: bool = False,
) -> ReservationSnapshot:
    """A Reservation for the engine; an unknown allocatePolicy reads as the default, an
    unknown pre-allocation mode as unset."""
    known = allocate_policy in set(ReservationAllocatePolicy)
    mode = pre_allocation_mode if pre_allocation_mode in set(PreAllocationMode) else ""
    return ReservationSnapshot(
        name=name,
        uid=uid,
        node_name=node_name,
        phase=ReservationPhase(phase),
        owners=reservation_owners(owners),
        allocatable=allocatable,
        allocated=allocated,
        allocate_once=allocate_once,
        allocate_policy=ReservationAllocatePolicy(allocate_policy)
        if known
        else ReservationAllocatePolicy.DEFAULT,
        unschedulable=unschedulable,
        cpuset=cpuset,
        numa_resources={int(k): dict(v) for k, v in numa_resources.items()},
        current_owners=object_refs(current_owners),
        labels=dict(labels or {}),
        restricted_options=restricted_options,
        pre_allocation=pre_allocation,
        pre_allocation_mode=PreAllocationMode(mode),
        pre_allocation_multiple=pre_allocation_multiple,
    )


def reservation_option_fields(raw: Any) -> dict[str, Any]:
    """`reservation_snapshot`'s option arguments read off a stored Reservation's raw JSON
    (no column holds them); none for a raw object that no longer parses."""
    try:
        options = parse_reservation_options(raw)
    except ObjectParseError:
        return {}
    return {
        "labels": options.labels,
        "restricted_options": options.restricted_options,
        "pre_allocation_mode": options.pre_allocation_mode,
        "pre_allocation_multiple": options.pre_allocation_multiple,
    }
