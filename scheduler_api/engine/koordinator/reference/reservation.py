"""Koordinator Reservations: owner matching, what a reservation has left, nomination, and
the NUMA/cpuset restore state.

Reproduces koordinator v1.8.0: pkg/util/reservation/reservation.go (MatchReservationOwners,
MatchObjectRef, MatchReservationControllerReference, GetReservationRestrictedResources),
pkg/scheduler/frameworkext/reservation_info.go (NewReservationInfo's ResourceNames,
IsMatchable, AddAssignedPod, RefreshPreCalculated), apis/extension/reservation.go
(GetReservationRestrictedOptions, GetExactMatchReservationSpec, ExactMatchReservation),
the reservation plugin's transformer.go (checkReservationMatchedOrIgnored), plugin.go
(fitsReservation, FilterNominateReservation), nominator.go (NominateReservation),
scoring.go (ScoreReservation, findMostPreferredReservationByOrder), and
nodenumaresource/reservation.go (RestoreReservation, mergeReservationAllocations).

What a reservation has allocated is read from status.allocated (the controller's sum of
its owners' requests, the same pods the scheduler's cache sums) masked to its resource
names; `book_owner` adds a pod the way the cache's AddAssignedPod does, so a what-if that
places replicas one after another sees each one's use.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from scheduler_api.engine.koordinator.reference.state import (
    NodeAllocation,
    NUMAResources,
    add,
    add_numa,
    subtract,
    subtract_non_negative,
)
from scheduler_api.engine.model.kubernetes import pod_requests
from scheduler_api.engine.model.snapshot import (
    ANN_KOORD_EXACT_MATCH_RESERVATION,
    LABEL_RESERVATION_ORDER,
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


# --- what a reservation reserves for its owners --------------------------------------------


@dataclass(frozen=True, slots=True)
class ReservationTerms:
    """What NewReservationInfo works out of a Reservation: the names its owners' requests
    are counted under, and why it cannot be matched at all (ParseError)."""

    resource_names: tuple[str, ...]
    parse_error: str = ""


def restricted_options(text: str | None) -> tuple[str, ...] | str:
    """GetReservationRestrictedOptions: `resources` of the annotation's JSON object, () when
    the annotation is absent or empty; a message when json.Unmarshal would fail."""
    if not text:
        return ()
    try:
        raw = json.loads(text)
    except ValueError as error:
        return f"reservation-restricted-options is not valid JSON: {error}"
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        return "reservation-restricted-options is not a JSON object"
    resources = raw.get("resources")
    if resources is None:
        return ()
    if not isinstance(resources, list) or not all(isinstance(r, str) for r in resources):
        return "reservation-restricted-options resources is not a list of resource names"
    return tuple(resources)


def restricted_resources(names: Sequence[str], options: Sequence[str]) -> tuple[str, ...]:
    """GetReservationRestrictedResources: the names the options list (in `names`' order),
    or every name when the options list none of them."""
    chosen = tuple(name for name in names if name in options)
    return chosen or tuple(names)


def reservation_terms(r: ReservationSnapshot) -> ReservationTerms:
    """NewReservationInfo: ResourceNames (sorted allocatable names, narrowed by the
    restricted options under the Restricted policy only) and ParseError."""
    names = tuple(sorted(r.allocatable))
    if r.allocate_policy is not ReservationAllocatePolicy.RESTRICTED:
        return ReservationTerms(names)
    options = restricted_options(r.restricted_options)
    if isinstance(options, str):
        return ReservationTerms(names, options)
    return ReservationTerms(restricted_resources(names, options))


def mask(resources: Mapping[str, int], names: Iterable[str]) -> dict[str, int]:
    """quotav1.Mask: only the named resources."""
    kept = set(names)
    return {name: amount for name, amount in resources.items() if name in kept}


def allocated_of(r: ReservationSnapshot) -> dict[str, int]:
    """rInfo.Allocated: what its owners took, counted under its resource names only."""
    return mask(r.allocated, reservation_terms(r).resource_names)


def remained_of(r: ReservationSnapshot) -> dict[str, int]:
    """RefreshPreCalculated's Available: Allocatable - Allocated, floored at zero (the
    reserved-inside-the-reservation part, a node-reservation annotation on the
    Reservation itself, is not modelled)."""
    return subtract_non_negative(subtract(r.allocatable, allocated_of(r)), {})


def is_matchable(node: NodeSnapshot, r: ReservationSnapshot) -> bool:
    """IsMatchable: Available on this node, parsed, and not an allocateOnce reservation
    someone already took."""
    if r.phase is not ReservationPhase.AVAILABLE or not r.node_name or r.node_name != node.name:
        return False
    if reservation_terms(r).parse_error:
        return False
    return not (r.allocate_once and assigned_pod_uids(node, r))


def book_owner(r: ReservationSnapshot, pod: PodSpec, uid: str) -> ReservationSnapshot:
    """AddAssignedPod: `pod` (bound as `uid`) becomes an owner and its requests, masked to
    the reservation's resource names, are allocated (a pod already an owner: unchanged)."""
    if any(owner.uid == uid for owner in r.current_owners):
        return r
    requests, _ = pod_requests(pod)
    allocated = add(r.allocated, mask(requests, reservation_terms(r).resource_names))
    owner = ObjectRef(namespace=pod.namespace, name=pod.name, uid=uid)
    return replace(r, allocated=allocated, current_owners=(*r.current_owners, owner))


# --- the pod's side: exact match ------------------------------------------------------------


def exact_match_spec(pod: PodSpec) -> tuple[str, ...] | None | str:
    """GetExactMatchReservationSpec: the resourceNames (None when the annotation is absent
    or empty); a message when json.Unmarshal would fail (BeforePreFilter then fails the
    pod on every node)."""
    text = pod.annotations.get(ANN_KOORD_EXACT_MATCH_RESERVATION, "")
    if not text:
        return None
    try:
        raw = json.loads(text)
    except ValueError as error:
        return f"exact-match-reservation is not valid JSON: {error}"
    if raw is None:
        return ()
    names = raw.get("resourceNames") if isinstance(raw, dict) else 0
    if names is None:
        return ()
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return "exact-match-reservation resourceNames is not a list of resource names"
    return tuple(names)


def exact_match(
    requests: Mapping[str, int], allocatable: Mapping[str, int], names: Sequence[str] | None
) -> bool:
    """ExactMatchReservation. Kept as upstream: a listed name that neither side has ends the
    check at once as a match, even if a later listed name differs."""
    for name in names or ():
        in_reservation, in_pod = name in allocatable, name in requests
        if not in_reservation or not in_pod:
            return not in_reservation and not in_pod
        if allocatable[name] != requests[name]:
            return False
    return True


@dataclass(frozen=True, slots=True)
class ReservationSplit:
    """BeforePreFilter's view of the node: reservations the pod may use, and the others."""

    matched: tuple[ReservationSnapshot, ...] = ()
    unmatched: tuple[ReservationSnapshot, ...] = ()


def matched_or_ignored(
    pod: PodSpec,
    r: ReservationSnapshot,
    requests: Mapping[str, int],
    spec: Sequence[str] | None,
) -> bool:
    """checkReservationMatchedOrIgnored: an ignoring pod sees every reservation; else an
    owner whose affinity names this one, or (no name) a schedulable one, and either way
    one exactly matching the exact-match spec. Reservation taints, tolerations and
    affinity selectors are not modelled."""
    if pod.ignores_reservations:
        return True
    if not matches_owners(pod, r.owners):
        return False
    named = pod.reservation_affinity_name
    if named:
        return r.name == named and exact_match(requests, r.allocatable, spec)
    return not r.unschedulable and exact_match(requests, r.allocatable, spec)


def split_reservations(
    node: NodeSnapshot, pod: PodSpec, reservations: Iterable[ReservationSnapshot]
) -> ReservationSplit:
    """Of the matchable reservations on the node (`is_matchable`): matched
    (`matched_or_ignored`), and unmatched ones some owner already allocated from. A
    malformed exact-match spec matches nothing (PreFilter refuses the pod first)."""
    matched, unmatched = [], []
    requests, _ = pod_requests(pod)
    spec = exact_match_spec(pod)
    for r in sorted(reservations, key=lambda r: r.name):
        if not is_matchable(node, r):
            continue
        if not isinstance(spec, str) and matched_or_ignored(pod, r, requests, spec):
            matched.append(r)
        elif assigned_pod_uids(node, r):
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


# --- nomination ------------------------------------------------------------------------------

RESERVATION_REASON = "Reservation(s) "
MAX_SCORE = 100
INT64 = re.compile(r"[+-]?[0-9]+")


def go_parse_int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64); None where Go returns an error."""
    if not INT64.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def fits_reservation(
    requests: Mapping[str, int], r: ReservationSnapshot, node: NodeSnapshot
) -> list[str]:
    """fitsReservation (short reasons): the pod count the reservation reserves, and each of
    its resource names the pod asks for within what the reservation has left."""
    reasons = []
    max_pods = r.allocatable.get("pods")
    if max_pods is not None and len(assigned_pod_uids(node, r)) + 1 > max_pods:
        reasons.append(RESERVATION_REASON + "Too many pods")
    allocated = allocated_of(r)
    for name in reservation_terms(r).resource_names:
        requested = requests.get(name, 0)
        if requested == 0:
            continue
        used = max(allocated.get(name, 0), 0)
        if requested > r.allocatable.get(name, 0) - used:
            reasons.append(RESERVATION_REASON + f"Insufficient {name}")
    return reasons


def reservation_admits(
    requests: Mapping[str, int], r: ReservationSnapshot, node: NodeSnapshot, has_affinity: bool
) -> list[str] | None:
    """One reservation of filterWithReservations: None when the pod may use it, else why
    not (a pod without affinity skips one it shares no resource name with, with no
    reason). The node-level half (fitsNode with the reservation's remains given back) is
    the shared NodeResourcesFit's business here: an Aligned reservation always admits."""
    if not has_affinity and not set(reservation_terms(r).resource_names) & {
        name for name in requests
    }:
        return []
    if r.allocate_policy is ReservationAllocatePolicy.RESTRICTED:
        reasons = fits_reservation(requests, r, node)
        return reasons or None
    return None


def score_reservation(requests: Mapping[str, int], r: ReservationSnapshot) -> int:
    """ScoreReservation: MostAllocated over the reservation's non-zero allocatable, the pod
    added to what it has allocated; a resource the pod would over-ask scores nothing."""
    reserved = {name: amount for name, amount in r.allocatable.items() if amount != 0}
    if not reserved:
        return 0
    requested = add(dict(requests), allocated_of(r))
    total = 0
    for name, capacity in reserved.items():
        used = requested.get(name, 0)
        if used <= capacity:
            total += MAX_SCORE * used // capacity
    return total // len(reserved)


def preferred_by_order(candidates: Sequence[ReservationSnapshot]) -> ReservationSnapshot | None:
    """findMostPreferredReservationByOrder: the lowest non-zero reservation-order label
    (unparsable ones ignored); the first such on a tie."""
    best, best_order = None, None
    for r in candidates:
        order = go_parse_int64(r.labels.get(LABEL_RESERVATION_ORDER, ""))
        if order and (best_order is None or order < best_order):
            best, best_order = r, order
    return best


def nominate(
    node: NodeSnapshot,
    pod: PodSpec,
    split: ReservationSplit,
    requests: Mapping[str, int],
    allocates: Callable[[ReservationSnapshot], bool] = lambda r: True,
) -> ReservationSnapshot | None:
    """NominateReservation for a normal pod.

    The only matched reservation of a pod with an affinity is nominated outright. Else the
    candidates are those FilterNominateReservation passes (not used up, `reservation_admits`
    as a required reservation, and `allocates`: the NUMA plugin's own try, which only a pod
    that must allocate from a reservation can fail); one of them, or the one the
    reservation-order label prefers, or the best ScoreReservation. koord-scheduler sorts the
    scores with an unstable sort: equal scores go to the name order here.
    """
    has_affinity = pod.has_reservation_affinity
    if pod.ignores_reservations or not split.matched:
        return None
    if len(split.matched) == 1 and has_affinity:
        return split.matched[0]
    candidates = [
        r
        for r in split.matched
        if not (r.allocate_once and assigned_pod_uids(node, r))
        and reservation_admits(requests, r, node, has_affinity) is None
        and allocates(r)
    ]
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    by_order = preferred_by_order(candidates)
    if by_order is not None:
        return by_order
    return max(candidates, key=lambda r: score_reservation(requests, r))
