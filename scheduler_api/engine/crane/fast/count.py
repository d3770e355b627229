"""Mirrors: whatif.judge.Judgement.fill_copy_by_copy.

What-if capacity on a crane-scheduler node: copies counted per zone.

The reference fills the node copy by copy, each copy's topology-result debiting the
zones it names. Topology-aware, a copy lands whole in one zone that passes the
shortfall check, and debits only that zone (zones with unique NUMA ids), so zones fill
independently: the node takes the sum of what each zone takes, within what the
node-level filters allow. Not topology-aware, crane's greedy fill refuses a copy only
when its topology-result comes out empty (every zone has nothing left of every resource
it places), or when it would panic on a scalar resource, which refuses every copy
alike; `greedy_never_empty` tells when the zones hold enough that no copy up to the
node-level limit can come out empty. The plugin skipping the pod refuses nothing.
Elsewhere None: fill copy by copy.
"""

from __future__ import annotations

from collections.abc import Mapping

from scheduler_api.engine.crane.cache import kept_crane_zones
from scheduler_api.engine.crane.reference.plugin import (
    FIXED_RESOURCES,
    CraneConfig,
    CraneZone,
    compared_resources,
    pinned_containers,
    published_amounts,
    target_request,
    topology_aware,
    whole_cores,
)
from scheduler_api.engine.model.decided import UNLIMITED
from scheduler_api.engine.model.kubernetes import node_fit_count
from scheduler_api.engine.model.snapshot import Flavour, NodeSnapshot, PodSpec


def _copies_of(free: int, wanted: int, debit: int) -> int:
    """How many j >= 0 keep `wanted <= free - j * debit` (UNLIMITED without a debit)."""
    if wanted > free:
        return 0
    return UNLIMITED if debit <= 0 else (free - wanted) // debit + 1


def zone_copies(zone: CraneZone, request: Mapping[str, int]) -> int:
    """Copies one zone takes: each must pass fitsRequestForNUMANode, then debits it."""
    debit = published_amounts(dict(request))  # what the next cycle reads back
    copies = UNLIMITED
    for name in compared_resources(request):
        found = _copies_of(zone.free(name), request.get(name, 0), debit.get(name, 0))
        if found != UNLIMITED:
            copies = found if copies == UNLIMITED else min(copies, found)
    return copies


def aware_copies(node: NodeSnapshot, request: Mapping[str, int]) -> int | None:
    """Copies a topology-aware node admits; None when zones share a NUMA id."""
    zones = kept_crane_zones(node)
    if len({z.numa_id for z in zones}) != len(zones):
        return None
    if not zones:
        return 0  # no zone passes the shortfall check
    if not any(request.values()):
        return UNLIMITED  # nothing requested, nothing debited
    counts = [zone_copies(zone, request) for zone in zones]
    return UNLIMITED if UNLIMITED in counts else sum(counts)


def fill_count(
    node: NodeSnapshot,
    pod: PodSpec,
    config: CraneConfig,
    request: Mapping[str, int],
    limit: int,
) -> int | None:
    """Copies of `pod` `node` takes alone (at most `limit`); None: fill copy by copy."""
    cap = node_fit_count(node, request, limit)
    indices = pinned_containers(pod, config)
    if cap == 0 or not indices:
        return cap  # the plugin skips the pod
    if node.flavour is not Flavour.CRANE:
        return 0
    if node.crane_cpu_manager_policy != "Static":
        return cap
    aligned = target_request(pod, indices, config)
    if not topology_aware(node, pod):
        zones = kept_crane_zones(node)
        panics = zones and any(aligned.values()) and (
            any(name not in FIXED_RESOURCES for name in aligned)
        )  # fmt: skip
        if panics:
            return 0
        if len({z.numa_id for z in zones}) != len(zones):
            return None  # a copy's result then debits every zone of its NUMA id
        return cap if greedy_never_empty(zones, aligned, cap) else None
    copies = aware_copies(node, aligned)
    if copies is None:
        return None
    return cap if copies == UNLIMITED else min(cap, copies)


def greedy_never_empty(zones: list[CraneZone], request: Mapping[str, int], copies: int) -> bool:
    """Does every one of `copies` greedy fills give a non-empty topology-result?

    A fill places a requested resource in every zone it visits with some of it free, so
    its result is empty only once no zone has any free of any resource it requests.
    Each copy takes from the positive free amounts at most its debit (`_greedy_debit`);
    so if some resource's positive free total exceeds `copies` debits, none comes out
    empty. (The cpu each zone gives is first rounded down to whole cores, as upstream.)
    """
    rounded = [_whole_core_zone(zone) for zone in zones]
    for name in FIXED_RESOURCES:
        if request.get(name, 0) <= 0:
            continue
        free = sum(max(zone.free(name), 0) for zone in rounded)
        if free > copies * _greedy_debit(rounded, request, name):
            return True
    return False


def _whole_core_zone(zone: CraneZone) -> CraneZone:
    allocatable = {**zone.allocatable, "cpu": whole_cores(zone.allocatable.get("cpu", 0))}
    return CraneZone(zone.numa_id, zone.name, allocatable, zone.requested)


def _greedy_debit(zones: list[CraneZone], request: Mapping[str, int], name: str) -> int:
    """The most one greedy fill takes from the zones' positive free amounts of `name`.

    A zone already short (free < 0) takes a negative share, which the next zones make
    up, and reads back as no debit: what the fill places in the other zones is at most
    the request plus those shortfalls, a bound that stays the same from copy to copy.
    Memory reads back as the cpu placed (crane's quirk, `published_amounts`).
    """
    basis = "cpu" if name == "memory" else name
    shortfall = sum(max(-zone.free(basis), 0) for zone in zones)
    return request.get(basis, 0) + shortfall
