"""Observed against desired, field by field: the labels and annotation a node policy sets (pure).

Each policy field maps to one label or annotation key. A field the policy leaves
null keeps the observed value; a desired value that means the same to its reader as
the observed one ("True" and "true" for Crane's ParseBool, "2" and "2000m" for a
quantity) counts as unchanged, so no write is made for it. `None` as a value means
"no such key": as desired, it deletes the key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scheduler_api.engine import (
    ANN_CRANE_AWARENESS,
    LABEL_CPU_BIND_POLICY,
    LABEL_NUMA_ALLOCATE_STRATEGY,
    LABEL_NUMA_TOPOLOGY_POLICY,
    go_parse_bool,
)
from topology.editing.node_policies.reservation_annotation import (
    RESERVATION_ANNOTATION,
    ReservationRequest,
    desired_body,
    observed_body,
    same_reservation,
    serialise,
)

LABEL = "label"
ANNOTATION = "annotation"
# Crane's node label has the same key as its pod annotation (LabelNodeTopologyAwarenessKey).
CRANE_AWARENESS_LABEL = ANN_CRANE_AWARENESS

NUMA_TOPOLOGY_POLICY = "numa_topology_policy"
NUMA_ALLOCATE_STRATEGY = "numa_allocate_strategy"
CPU_BIND_POLICY = "cpu_bind_policy"
CRANE_TOPOLOGY_AWARENESS = "crane_topology_awareness"
RESERVATION = "reservation"

FIELD_KEYS = {
    NUMA_TOPOLOGY_POLICY: (LABEL, LABEL_NUMA_TOPOLOGY_POLICY),
    NUMA_ALLOCATE_STRATEGY: (LABEL, LABEL_NUMA_ALLOCATE_STRATEGY),
    CPU_BIND_POLICY: (LABEL, LABEL_CPU_BIND_POLICY),
    CRANE_TOPOLOGY_AWARENESS: (LABEL, CRANE_AWARENESS_LABEL),
    RESERVATION: (ANNOTATION, RESERVATION_ANNOTATION),
}


@dataclass(frozen=True)
class DesiredPolicy:
    """A node policy's fields as plain values; None (or "" for the reservation) = leave."""

    numa_topology_policy: str | None = None
    numa_allocate_strategy: str | None = None
    cpu_bind_policy: str | None = None
    crane_topology_awareness: bool | None = None
    reservation_cpus: str = ""
    reservation_cpu_count: int | None = None
    reservation_apply_policy: str = ""

    @classmethod
    def of(cls, policy: object) -> DesiredPolicy:
        """From anything with NodePolicy's attributes (the model, a form's instance)."""
        return cls(
            numa_topology_policy=getattr(policy, "numa_topology_policy", None),
            numa_allocate_strategy=getattr(policy, "numa_allocate_strategy", None),
            cpu_bind_policy=getattr(policy, "cpu_bind_policy", None),
            crane_topology_awareness=getattr(policy, "crane_topology_awareness", None),
            reservation_cpus=getattr(policy, "reservation_cpus", "") or "",
            reservation_cpu_count=getattr(policy, "reservation_cpu_count", None),
            reservation_apply_policy=getattr(policy, "reservation_apply_policy", "") or "",
        )

    @property
    def reservation(self) -> ReservationRequest:
        return ReservationRequest(
            self.reservation_cpus, self.reservation_cpu_count, self.reservation_apply_policy
        )

    @property
    def is_empty(self) -> bool:
        """True when the policy leaves every field as observed."""
        return self == DesiredPolicy()


@dataclass(frozen=True)
class FieldDiff:
    """One field: its key, and the value observed on the node and the one desired.

    `observed` / `desired` are the label or annotation text, None for "absent".
    `managed` says whether the policy sets the field at all.
    """

    field: str
    kind: str
    key: str
    observed: str | None
    desired: str | None
    managed: bool

    @property
    def changed(self) -> bool:
        return self.managed and self.observed != self.desired


def _label_diff(
    field: str, labels: Mapping[str, str], desired: str | None, managed: bool
) -> FieldDiff:
    kind, key = FIELD_KEYS[field]
    observed = labels.get(key)
    return FieldDiff(field, kind, key, observed, desired if managed else observed, managed)


def _numa_policy_value(value: str, observed: str | None) -> str | None:
    """Koordinator's None is the empty string, which reads like no label at all
    (GetNodeNUMATopologyPolicy): Topolens deletes the label rather than write ""."""
    if value:
        return value
    return observed if observed in (None, "") else None


def _awareness_value(value: bool, observed: str | None) -> str:
    """Crane parses the label with Go's ParseBool: an equivalent observed spelling stays."""
    if observed is not None and go_parse_bool(observed) is value:
        return observed
    return "true" if value else "false"


def _reservation_diff(desired: DesiredPolicy, annotations: Mapping[str, str]) -> FieldDiff:
    kind, key = FIELD_KEYS[RESERVATION]
    observed = annotations.get(key)
    request = desired.reservation
    if not request.managed:
        return FieldDiff(RESERVATION, kind, key, observed, observed, False)
    current = observed_body(annotations)
    wanted = desired_body(request, current)
    same = observed is not None and same_reservation(current, wanted)
    text = observed if same else (None if wanted is None else serialise(wanted))
    return FieldDiff(RESERVATION, kind, key, observed, text, True)


def _numa_policy_diff(desired: DesiredPolicy, labels: Mapping[str, str]) -> FieldDiff:
    value = desired.numa_topology_policy
    observed = labels.get(FIELD_KEYS[NUMA_TOPOLOGY_POLICY][1])
    wanted = None if value is None else _numa_policy_value(value, observed)
    return _label_diff(NUMA_TOPOLOGY_POLICY, labels, wanted, value is not None)


def _awareness_diff(desired: DesiredPolicy, labels: Mapping[str, str]) -> FieldDiff:
    value = desired.crane_topology_awareness
    observed = labels.get(FIELD_KEYS[CRANE_TOPOLOGY_AWARENESS][1])
    wanted = None if value is None else _awareness_value(value, observed)
    return _label_diff(CRANE_TOPOLOGY_AWARENESS, labels, wanted, value is not None)


def policy_field_diffs(
    desired: DesiredPolicy, labels: Mapping[str, str], annotations: Mapping[str, str]
) -> list[FieldDiff]:
    """Every field of the policy, in a fixed order, managed or not."""
    strategy, bind = desired.numa_allocate_strategy, desired.cpu_bind_policy
    return [
        _numa_policy_diff(desired, labels),
        _label_diff(NUMA_ALLOCATE_STRATEGY, labels, strategy, strategy is not None),
        _label_diff(CPU_BIND_POLICY, labels, bind, bind is not None),
        _awareness_diff(desired, labels),
        _reservation_diff(desired, annotations),
    ]


def applied(observed: Mapping[str, str], diffs: Sequence[FieldDiff], kind: str) -> dict[str, str]:
    """The labels (or annotations) the node would have once the changes are written."""
    result = dict(observed)
    for diff in diffs:
        if diff.kind != kind or not diff.changed:
            continue
        if diff.desired is None:
            result.pop(diff.key, None)
        else:
            result[diff.key] = diff.desired
    return result


def merge_patch(diffs: Sequence[FieldDiff]) -> dict[str, dict[str, dict[str, str | None]]]:
    """RFC 7386 merge patch of the node's metadata: changed keys only, None deletes.

    A section with nothing to change is left out, so "no change" is {"metadata": {}}.
    """
    sections: dict[str, dict[str, str | None]] = {}
    for diff in diffs:
        if diff.changed:
            section = "labels" if diff.kind == LABEL else "annotations"
            sections.setdefault(section, {})[diff.key] = diff.desired
    ordered = {name: sections[name] for name in ("labels", "annotations") if name in sections}
    return {"metadata": ordered}
