"""The node annotation `node.koordinator.sh/reservation` as Topolens writes it (pure).

koordlet and koord-scheduler read it with Koordinator's `extension.GetNodeReservation`
(apis/extension/node_reservation.go): a JSON object with the optional (`omitempty`)
fields `resources` (a ResourceList), `reservedCPUs` (a cpulist) and `applyPolicy`
(`Default` | `ReservedCPUsOnly`). `reservedCPUs` wins over `resources.cpu`; a cpu
quantity is rounded up to whole CPUs, which koordlet then picks with kubelet's
takeByTopology over every CPU of the node (`getNodeReserved`).

A policy reserves by count or by cpulist. Writing one drops the other, so the written
annotation never says two things; every other field already on the node (a memory
reservation, an unknown key) is kept verbatim.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler_api.engine import AllocationError, CPUTopology, reserve_cpus
from topology.parsers.cpulist import format_cpulist, parse_cpulist
from topology.parsers.errors import FieldError
from topology.parsers.node import RESERVATION_ANNOTATION
from topology.parsers.quantity import parse_resource_list

APPLY_POLICIES = ("Default", "ReservedCPUsOnly")
# Go's encoding/json writes struct fields in declaration order: keep that order.
_FIELD_ORDER = ("resources", "reservedCPUs", "applyPolicy")

CPURow = tuple[int, int, int, int]

__all__ = [
    "APPLY_POLICIES",
    "RESERVATION_ANNOTATION",
    "ReservationRequest",
    "desired_body",
    "observed_body",
    "reserved_cpu_ids",
    "same_reservation",
    "serialise",
]


@dataclass(frozen=True)
class ReservationRequest:
    """A policy's reservation fields: a cpulist or a count (0 removes the annotation)."""

    cpus: str = ""
    count: int | None = None
    apply_policy: str = ""

    @property
    def managed(self) -> bool:
        """Whether the policy says anything about the annotation (else: leave it)."""
        return bool(self.cpus) or self.count is not None or bool(self.apply_policy)

    @property
    def removes(self) -> bool:
        return self.count == 0 and not self.cpus


def observed_body(annotations: Mapping[str, str]) -> dict[str, Any] | None:
    """The annotation on the node as a JSON object; None when absent.

    An annotation that is not a JSON object reads as empty: koordlet logs an error
    and reserves nothing, and a written policy replaces it.
    """
    raw = annotations.get(RESERVATION_ANNOTATION)
    if raw is None:
        return None
    try:
        data = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def canonical_cpulist(text: str) -> str:
    """ "3,0-2" → "0-3"; text that is no cpulist is returned as given (validation says why)."""
    try:
        return format_cpulist(parse_cpulist(text))
    except FieldError:
        return text


def desired_body(
    request: ReservationRequest, observed: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """The annotation the policy wants; None means "no annotation" (remove it)."""
    if request.removes:
        return None
    body = dict(observed or {})
    raw_resources = body.get("resources")
    resources = dict(raw_resources) if isinstance(raw_resources, dict) else {}
    if request.cpus:
        resources.pop("cpu", None)
        body["reservedCPUs"] = canonical_cpulist(request.cpus)
    elif request.count is not None:
        resources["cpu"] = str(request.count)
        body.pop("reservedCPUs", None)
    if resources:
        body["resources"] = resources
    else:
        body.pop("resources", None)
    if request.apply_policy:
        body["applyPolicy"] = request.apply_policy
    return ordered(body)


def ordered(body: Mapping[str, Any]) -> dict[str, Any]:
    known = {key: body[key] for key in _FIELD_ORDER if key in body}
    return {**known, **{k: v for k, v in body.items() if k not in _FIELD_ORDER}}


def serialise(body: Mapping[str, Any]) -> str:
    """Compact JSON, fields in Go's order: what `json.Marshal(NodeReservation)` writes."""
    return json.dumps(ordered(body), separators=(",", ":"), ensure_ascii=False)


def _comparable(body: Mapping[str, Any] | None) -> Any:
    """What koordlet and koord-scheduler make of a body: quantities and cpulists canonical."""
    if body is None:
        return None
    resources: Any = body.get("resources")
    try:
        resources = parse_resource_list(resources)
    except FieldError:
        pass
    cpus = body.get("reservedCPUs")
    return {
        **{k: v for k, v in body.items() if k not in _FIELD_ORDER},
        "resources": resources or {},
        "reservedCPUs": canonical_cpulist(cpus) if isinstance(cpus, str) else cpus,
        "applyPolicy": body.get("applyPolicy") or "Default",
    }


def same_reservation(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    """Equal as Koordinator reads them ("2" equals "2000m", "3,0-2" equals "0-3")."""
    return bool(_comparable(a) == _comparable(b))


def reserved_count(body: Mapping[str, Any] | None) -> int:
    """How many CPUs the body reserves: |reservedCPUs|, else ceil(resources.cpu)."""
    if not body:
        return 0
    cpus = body.get("reservedCPUs")
    if isinstance(cpus, str) and cpus:
        try:
            return len(parse_cpulist(cpus))
        except FieldError:
            return 0
    try:
        millicores = parse_resource_list(body.get("resources")).get("cpu", 0)
    except FieldError:
        return 0
    return -(-millicores // 1000)


def reserved_cpu_ids(
    body: Mapping[str, Any] | None, cpu_rows: Sequence[CPURow]
) -> frozenset[int] | None:
    """The CPUs koordlet would reserve; None when that cannot be known.

    A cpulist is taken as written; a count is resolved as koordlet does (kubelet's
    takeByTopology over every CPU), which needs the node's CPU layout.
    """
    if not body:
        return frozenset()
    cpus = body.get("reservedCPUs")
    if isinstance(cpus, str) and cpus:
        try:
            return parse_cpulist(cpus)
        except FieldError:
            return None
    count = reserved_count(body)
    if count == 0:
        return frozenset()
    if not cpu_rows:
        return None
    try:
        return reserve_cpus(CPUTopology.from_cpus(cpu_rows), count)
    except (AllocationError, ValueError):
        return None
