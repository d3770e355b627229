"""Workloads on nodes whose NRT comes from NFD's topology-updater (upstream v1alpha1/2).

Pods here carry no per-NUMA annotation: the kubelet decides, and only the zones'
`available` shows the outcome. The generator plays the kubelet: Topology Manager
policy and scope decide whether a pod (or each container) must fit one zone.
"""

from __future__ import annotations

from scheduler_api.engine import QoSClass
from scheduler_api.engine import TopologyManagerPolicy as TopologyPolicy
from scheduler_api.engine import TopologyManagerScope as TopologyScope

from .ledger import NodeLedger, ZoneLedger
from .meta import DemoContext
from .pods import PodDraft
from .quantity import CPU, GPU, HUGEPAGES, MEMORY
from .workloads import guaranteed_pod
from .zone_fit import ZoneShares, first_fitting_zone, hold_shares, merge_shares, spread_over

SCHEDULER = "topo-aware-scheduler"
_ZONE_RESOURCES = (CPU, MEMORY, GPU, *HUGEPAGES)


def zone_units(draft: PodDraft, scope: TopologyScope) -> list[dict[str, int]]:
    """What the Topology Manager aligns: the whole pod, or each app container."""
    if scope == TopologyScope.POD:
        requests = [draft.requests()]
    else:
        requests = [dict(container.requests) for container in draft.containers]
    return [{name: unit[name] for name in _ZONE_RESOURCES if unit.get(name)} for unit in requests]


def place_on_zones(ledger: NodeLedger, draft: PodDraft) -> ZoneShares | None:
    """Kubelet-like admission; holds the zones and returns the shares, or None (nothing held)."""
    topology = ledger.plan.topology
    placed: ZoneShares = {}
    for unit in zone_units(draft, topology.scope):
        shares = _place_unit(ledger.zones, unit, topology.policy)
        if shares is None:
            hold_shares(ledger.zones, placed, sign=-1)
            return None
        hold_shares(ledger.zones, shares)
        merge_shares(placed, shares)
    return placed


def _place_unit(
    zones: list[ZoneLedger], unit: dict[str, int], policy: TopologyPolicy
) -> ZoneShares | None:
    if policy == TopologyPolicy.NONE:
        # No alignment: the static CPU manager packs the fullest zones first.
        packed = sorted(zones, key=lambda zone: (zone.free(CPU), zone.index))
        return spread_over([zone for zone in packed if zone.free(CPU) > 0], unit)
    zone = first_fitting_zone(zones, unit)
    if zone is not None:
        return {zone.index: dict(unit)}
    if policy == TopologyPolicy.BEST_EFFORT:
        return spread_over(zones, unit)
    return None


def populate_upstream(ctx: DemoContext, ledger: NodeLedger) -> list[PodDraft]:
    """Guaranteed integer-CPU pods until the node's exclusive-CPU target is met."""
    target = ctx.rng.uniform(0.35, 0.85) * sum(zone.allocatable[CPU] for zone in ledger.zones)
    placed, failures, pods = 0, 0, []
    largest_zone = max(zone.allocatable[CPU] for zone in ledger.zones) // 1000
    while placed < target and failures < 8:
        gpu_node = bool(ledger.plan.shape.gpus)
        draft = guaranteed_pod(ctx, max_cpus=largest_zone, gpu_node=gpu_node, scheduler=SCHEDULER)
        if draft is None or not _admit(ledger, draft):
            failures += 1
            continue
        pods.append(draft)
        placed += draft.requests()[CPU]
    return pods


def _admit(ledger: NodeLedger, draft: PodDraft) -> bool:
    requests = draft.requests()
    if not ledger.fits(requests) or draft.qos_class() != QoSClass.GUARANTEED:
        return False
    if place_on_zones(ledger, draft) is None:
        return False
    ledger.add(requests)
    return True
