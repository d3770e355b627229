"""Koordinator `Reservation` (scheduling.koordinator.sh/v1alpha1) → ReservationRecord.

Fields as in koordinator v1.8.0 apis/scheduling/v1alpha1/reservation_types.go; the
options koord-scheduler reads off the object's metadata (apis/extension/reservation.go)
are in `ReservationOptions`, which `parse_reservation_options` also reads off a stored
object's raw JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.utils.dateparse import parse_datetime

from topology.choices import ReservationPhase
from topology.parsers.duration import parse_go_duration
from topology.parsers.fields import Reader
from topology.parsers.pod import (
    KOORD_RESOURCE_STATUS,
    AllocationRecord,
    ContainerRecord,
    parse_resource_status,
)
from topology.parsers.quantity import parse_resource_list

API_VERSION = "scheduling.koordinator.sh/v1alpha1"
DEFAULT_TTL_SECONDS = 24 * 3600
_OWNER_KINDS = ("object", "controller", "labelSelector")
RESTRICTED_OPTIONS = "scheduling.koordinator.sh/reservation-restricted-options"
PRE_ALLOCATION_MODES = ("Default", "Cluster")


@dataclass(frozen=True)
class ReservationOptions:
    """What koord-scheduler reads of a Reservation besides its spec and status basics.

    `labels`: metadata.labels (reservation-order). `restricted_options`: the raw
    reservation-restricted-options annotation, None when absent (koord-scheduler parses
    it itself; a malformed one makes the reservation unmatchable, not the object
    invalid). `pre_allocation_mode` ("" when unset) and `pre_allocation_multiple`:
    spec.preAllocationPolicy.{mode, enableMultiple}.
    """

    labels: dict[str, str] = field(default_factory=dict)
    restricted_options: str | None = None
    pre_allocation_mode: str = ""
    pre_allocation_multiple: bool = False


@dataclass(frozen=True)
class ReservationRecord:
    name: str
    uid: str
    resource_version: str
    template_namespace: str
    template_labels: dict[str, str]
    containers: tuple[ContainerRecord, ...]
    owners: list[dict[str, Any]]
    ttl_seconds: int | None
    expires: datetime | None
    allocate_once: bool
    allocate_policy: str
    unschedulable: bool
    pre_allocation: bool
    phase: str
    node_name: str
    allocatable: dict[str, int]
    allocated: dict[str, int]
    current_owners: list[dict[str, Any]]
    allocation: AllocationRecord | None
    raw: dict[str, Any]
    options: ReservationOptions = field(default_factory=ReservationOptions)


def parse_reservation(obj: Any) -> ReservationRecord:
    reader = Reader(obj, "Reservation")
    api_version = reader.get("apiVersion", str)
    if api_version != API_VERSION:
        raise reader.error("apiVersion", f"unknown Reservation apiVersion {api_version!r}")
    expires = _expires(reader)
    annotations = reader.string_map("metadata.annotations")
    status_raw = annotations.get(KOORD_RESOURCE_STATUS)
    return ReservationRecord(
        name=reader.get("metadata.name", str),
        uid=reader.get("metadata.uid", str, default=""),
        resource_version=reader.get("metadata.resourceVersion", str, default=""),
        template_namespace=reader.get("spec.template.metadata.namespace", str, default=""),
        template_labels=reader.string_map("spec.template.metadata.labels"),
        containers=_template_containers(reader),
        owners=_owners(reader),
        ttl_seconds=None if expires else _ttl(reader),
        expires=expires,
        allocate_once=reader.get("spec.allocateOnce", bool, default=True),
        allocate_policy=reader.get("spec.allocatePolicy", str, default=""),
        unschedulable=reader.get("spec.unschedulable", bool, default=False),
        pre_allocation=reader.get("spec.preAllocation", bool, default=False),
        phase=_phase(reader),
        node_name=reader.get("status.nodeName", str, default="")
        or reader.get("spec.template.spec.nodeName", str, default=""),
        allocatable=_resources(reader, "status.allocatable"),
        allocated=_resources(reader, "status.allocated"),
        current_owners=reader.get("status.currentOwners", list, default=[]),
        allocation=parse_resource_status(reader, status_raw) if status_raw else None,
        raw=obj,
        options=_options(reader),
    )


def parse_reservation_options(obj: Any) -> ReservationOptions:
    """`ReservationOptions` of a Reservation's JSON (a stored object's raw included)."""
    return _options(Reader(obj, "Reservation"))


def _options(reader: Reader) -> ReservationOptions:
    mode = reader.get("spec.preAllocationPolicy.mode", str, default="")
    if mode and mode not in PRE_ALLOCATION_MODES:
        raise reader.error("spec.preAllocationPolicy.mode", f"unknown pre-allocation mode {mode!r}")
    return ReservationOptions(
        labels=reader.string_map("metadata.labels"),
        restricted_options=reader.string_map("metadata.annotations").get(RESTRICTED_OPTIONS),
        pre_allocation_mode=mode,
        pre_allocation_multiple=reader.get(
            "spec.preAllocationPolicy.enableMultiple", bool, default=False
        ),
    )


def _resources(reader: Reader, path: str) -> dict[str, int]:
    return reader.convert(path, reader.get(path, dict, default={}), parse_resource_list)


def _template_containers(reader: Reader) -> tuple[ContainerRecord, ...]:
    containers = reader.get("spec.template.spec.containers", list, default=[])
    result = []
    for index, item in enumerate(containers):
        path = f"spec.template.spec.containers[{index}]"
        reader.check(path, item, dict)
        resources = reader.check(f"{path}.resources", item.get("resources") or {}, dict)
        limits = reader.convert(
            f"{path}.resources.limits", resources.get("limits"), parse_resource_list
        )
        requests = reader.convert(
            f"{path}.resources.requests", resources.get("requests"), parse_resource_list
        )
        result.append(
            ContainerRecord(str(item.get("name") or f"c{index}"), {**limits, **requests}, limits)
        )
    return tuple(result)


def _owners(reader: Reader) -> list[dict[str, Any]]:
    owners = reader.get("spec.owners", list)
    if not owners:
        raise reader.error("spec.owners", "a Reservation needs at least one owner")
    for index, owner in enumerate(owners):
        reader.check(f"spec.owners[{index}]", owner, dict)
        if not any(owner.get(kind) for kind in _OWNER_KINDS):
            raise reader.error(
                f"spec.owners[{index}]", "an owner needs object, controller or labelSelector"
            )
    return owners


def _ttl(reader: Reader) -> int | None:
    raw = reader.get("spec.ttl", str, default=None)
    if raw is None:
        return DEFAULT_TTL_SECONDS
    seconds = reader.convert("spec.ttl", raw, parse_go_duration)
    return seconds or None  # ttl 0 means never expires


def _expires(reader: Reader) -> datetime | None:
    raw = reader.get("spec.expires", str, default=None)
    if raw is None:
        return None
    value = parse_datetime(raw)
    if value is None:
        raise reader.error("spec.expires", f"{raw!r} is not an RFC 3339 time")
    return value


def _phase(reader: Reader) -> str:
    phase = reader.get("status.phase", str, default=ReservationPhase.PENDING)
    if phase not in ReservationPhase.values:
        raise reader.error("status.phase", f"unknown phase {phase!r}")
    return phase
