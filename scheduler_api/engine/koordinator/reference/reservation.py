"""Koordinator Reservations: owner matching and the NUMA/cpuset restore state.

Reproduces pkg/util/reservation (MatchReservationOwners, MatchObjectRef,
MatchReservationControllerReference, label selectors), the reservation plugin's
matched/unmatched split (BeforePreFilter) and nodenumaresource/reservation.go
(RestoreReservation, mergeReservationAllocations).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from scheduler_api.engine.koordinator.reference.state import (
    NodeAllocation,
    NUMAResources,
    add_numa,
    subtract,
    subtract_non_negative,
)
from scheduler_api.engine.model.snapshot import (
    ControllerRef,
    LabelSelector,
    NodeSnapshot,
    ObjectRef,
    PodSpec,
    ReservationAllocatePolicy,
    ReservationOwner,
    ReservationPhase,
    ReservationSnapshot,
)


def match_object_ref(pod: PodSpec, ref: ObjectRef | None) -> bool:
    """MatchObjectRef: set fields must equal the pod's; kind is ignored."""
    if ref is None:
        return True
    return (
        (not ref.uid or ref.uid == pod.uid)
        and (not ref.name or ref.name == pod.name)
        and (not ref.namespace or ref.namespace == pod.namespace)
        and (not ref.api_version or ref.api_version == pod.api_version)
    )


def match_controller(pod: PodSpec, ref: ControllerRef | None) -> bool:
    """MatchReservationControllerReference: any pod owner reference that matches."""
    if ref is None:
        return True
    if ref.namespace and ref.namespace != pod.namespace:
        return False
    for owner in pod.owner_refs:
        if (
            (
                ref.controller is None
                or (owner.controller is not None and ref.controller == owner.controller)
            )
            and (not ref.uid or ref.uid == owner.uid)
            and (not ref.name or ref.name == owner.name)
            and (not ref.kind or ref.kind == owner.kind)
            and (not ref.api_version or ref.api_version == owner.api_version)
        ):
            return True
    return False


def match_selector(labels: Mapping[str, str], selector: LabelSelector | None) -> bool:
    """metav1.LabelSelectorAsSelector semantics; an empty selector matches everything."""
    if selector is None:
        return True
    if any(labels.get(k) != v for k, v in selector.match_labels.items()):
        return False
    for req in selector.match_expressions:
        present, value = req.key in labels, labels.get(req.key)
        ok = {
            "In": present and value in req.values,
            "NotIn": not present or value not in req.values,
            "Exists": present,
            "DoesNotExist": not present,
        }.get(req.operator, False)
        if not ok:
            return False
    return True


def match_owner(pod: PodSpec, owner: ReservationOwner) -> bool:
    """One owner entry: object AND controller AND labelSelector (unset parts match)."""
    return (
        match_object_ref(pod, owner.object)
        and match_controller(pod, owner.controller)
        and match_selector(pod.labels, owner.label_selector)
    )


def matches_owners(pod: PodSpec, owners: Sequence[ReservationOwner]) -> bool:
    """MatchReservationOwners: owners are ORed; no owners match nothing."""
    return any(match_owner(pod, owner) for owner in owners)


def assigned_pod_uids(node: NodeSnapshot, reservation: ReservationSnapshot) -> frozenset[str]:
    """rInfo.AssignedPods: pods allocated from the reservation (annotation or status)."""
    from_pods = {a.uid for a in node.allocations if a.reservation_uid == reservation.uid}
    return frozenset(from_pods | {o.uid for o in reservation.current_owners if o.uid})


@dataclass(frozen=True, slots=True)
class ReservationSplit:
    """BeforePreFilter's view of the node: reservations the pod may use, and the others."""

    matched: tuple[ReservationSnapshot, ...] = ()
    unmatched: tuple[ReservationSnapshot, ...] = ()


def split_reservations(
    node: NodeSnapshot, pod: PodSpec, reservations: Iterable[ReservationSnapshot]
) -> ReservationSplit:
    """Matched: Available on this node, not used up (allocateOnce), owned, and then the one
    the pod's reservation affinity names (whether schedulable or not), or, without a
    name, any schedulable one (checkReservationMatchedOrIgnored). A pod that ignores
    reservations sees them all (`koordinator.reference.numa.try_ignoring_reservations`).
    Reservation taints and affinity selectors are not modelled."""
    matched, unmatched = [], []
    named = pod.reservation_affinity_name
    for r in sorted(reservations, key=lambda r: r.name):
        if r.phase is not ReservationPhase.AVAILABLE or r.node_name != node.name:
            continue
        assigned = assigned_pod_uids(node, r)
        if r.allocate_once and assigned:
            continue
        usable = r.name == named if named else not r.unschedulable
        if pod.ignores_reservations or (usable and matches_owners(pod, r.owners)):
            matched.append(r)
        elif assigned:
            unmatched.append(r)
    return ReservationSplit(tuple(matched), tuple(unmatched))


@dataclass(frozen=True, slots=True)
class ReservationAlloc:
    """reservationAlloc: what a reservation reserved, what its owners took, what is left."""

    reservation: ReservationSnapshot
    reserved_cpus: frozenset[int]
    allocatable: NUMAResources
    allocated: NUMAResources
    remained: NUMAResources

    @property
    def restricted(self) -> bool:
        return self.reservation.allocate_policy is ReservationAllocatePolicy.RESTRICTED


@dataclass(frozen=True, slots=True)
class RestoreState:
    """nodeReservationRestoreStateData after mergeReservationAllocations."""

    matched: tuple[ReservationAlloc, ...] = ()
    unmatched: tuple[ReservationAlloc, ...] = ()
    matched_reserved_cpus: frozenset[int] = frozenset()
    matched_allocatable: NUMAResources = field(default_factory=dict)
    matched_allocated: NUMAResources = field(default_factory=dict)
    unmatched_used: NUMAResources = field(default_factory=dict)


def _reservation_alloc(
    node: NodeSnapshot, state: NodeAllocation, r: ReservationSnapshot
) -> ReservationAlloc | None:
    own = state.pods.get(r.uid)
    if own is None:
        return None
    owners = [state.pods[u] for u in sorted(assigned_pod_uids(node, r)) if u in state.pods]
    allocatable = dict(own.numa_resources)
    allocated: dict[int, dict[str, int]] = {}
    remained: dict[int, dict[str, int]] = {}
    if allocatable:
        allocated = add_numa(*(o.numa_resources for o in owners if o.numa_resources))
        remained = {n: subtract(allocatable[n], allocated.get(n, {})) for n in allocatable}
        for numa in allocated:
            remained.setdefault(numa, subtract({}, allocated[numa]))
    cpus = own.cpuset
    for o in owners:
        cpus = cpus - o.cpuset
    if not allocatable and not cpus:
        return None
    return ReservationAlloc(r, cpus, allocatable, allocated, remained)


def restore_state(
    node: NodeSnapshot, state: NodeAllocation, split: ReservationSplit
) -> RestoreState:
    """RestoreReservation + mergeReservationAllocations for one node."""
    matched = [a for r in split.matched if (a := _reservation_alloc(node, state, r))]
    unmatched = [a for r in split.unmatched if (a := _reservation_alloc(node, state, r))]
    used = [
        {
            n: subtract_non_negative(a.allocatable.get(n, {}), a.remained.get(n, {}))
            for n in a.allocatable
        }
        for a in unmatched
    ]
    cpus: frozenset[int] = frozenset()
    for a in matched:
        cpus |= a.reserved_cpus
    return RestoreState(
        matched=tuple(matched),
        unmatched=tuple(unmatched),
        matched_reserved_cpus=cpus,
        matched_allocatable=add_numa(*(a.allocatable for a in matched)),
        matched_allocated=add_numa(*(a.allocated for a in matched)),
        unmatched_used=add_numa(*used),
    )


def nominate(split: ReservationSplit, requests: dict[str, int]) -> ReservationSnapshot | None:
    """A simplified GetNominatedReservation: the matched reservation left fullest after use.

    koord-scheduler scores candidate reservations (scoreReservation: MostAllocated over
    the reserved resources, a resource the pod would over-ask scoring nothing) and
    nominates the best; ties go to the name order here. The reservation-order label is
    not modelled.
    """

    def fill_after(r: ReservationSnapshot) -> int:
        reserved = {name: capacity for name, capacity in r.allocatable.items() if capacity > 0}
        total = 0
        for name, capacity in reserved.items():
            used = r.allocated.get(name, 0) + requests.get(name, 0)
            if used <= capacity:
                total += 100 * used // capacity
        return total // len(reserved) if reserved else 0

    candidates = [r for r in split.matched if _has_room(r, requests)]
    return max(candidates, key=fill_after, default=None)


def _has_room(r: ReservationSnapshot, requests: dict[str, int]) -> bool:
    """FilterReservation's resource check: shared resource names with something left."""
    shared = set(r.allocatable) & set(requests)
    if not shared:
        return False
    left = subtract_non_negative(dict(r.allocatable), dict(r.allocated))
    return any(left.get(name, 0) > 0 for name in shared)
