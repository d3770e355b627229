"""Workloads on Crane nodes: crane-scheduler's `topology-result` decides the zones.

crane-scheduler (cpuManagerPolicy Static) counts, per zone, the CPUs of every pod's
result against the zone's allocatable. Topology-aware pods (pod annotation, else the
NRT's SingleNUMANodePodLevel) get the single fitting zone with the most free CPUs;
unaware pods are spread greedily over zones by free CPUs, largest first.
"""

from __future__ import annotations

import json

from .ledger import NodeLedger, ZoneLedger
from .meta import DemoContext
from .pods import PodDraft
from .quantity import CPU, format_cpu
from .workloads import guaranteed_pod
from .zone_fit import ZoneShares, hold_shares

SCHEDULER = "crane-scheduler"
AWARENESS = "topology.crane.io/topology-awareness"
CPU_POLICY = "topology.crane.io/cpu-policy"
TOPOLOGY_RESULT = "topology.crane.io/topology-result"
_POLICIES = ("exclusive",) * 6 + ("numa",) * 2 + ("immovable", "none")


def node_is_aware(ledger: NodeLedger) -> bool:
    return ledger.plan.crane_awareness != "false"


def target_cpus(draft: PodDraft) -> int:
    """Millicores of the containers crane pins: integer CPU with requests == limits."""
    if draft.annotations.get(CPU_POLICY) == "none":
        return 0
    total = 0
    for container in draft.containers:
        cpu = container.requests.get(CPU, 0)
        if cpu and cpu % 1000 == 0 and container.limits.get(CPU) == cpu:
            total += cpu
    return total


def crane_result(zones: list[ZoneLedger], millis: int, aware: bool) -> ZoneShares | None:
    by_free = sorted(zones, key=lambda zone: (-zone.free(CPU), zone.index))
    if aware:
        zone = next((zone for zone in by_free if zone.free(CPU) >= millis), None)
        return None if zone is None else {zone.index: {CPU: millis}}
    shares: ZoneShares = {}
    for zone in by_free:
        take = min(millis, zone.free(CPU) // 1000 * 1000)
        if take > 0:
            shares[zone.index] = {CPU: take}
            millis -= take
    return shares if millis == 0 else None


def result_annotation(shares: ZoneShares) -> str:
    zones = [
        {
            "name": f"node{index}",
            "type": "Node",
            "resources": {"capacity": {"cpu": format_cpu(amounts[CPU])}},
        }
        for index, amounts in sorted(shares.items())
    ]
    return json.dumps(zones, separators=(",", ":"))


def annotate(ctx: DemoContext, draft: PodDraft, node_aware: bool) -> bool:
    """Pick a cpu-policy and maybe an awareness override; returns the effective awareness."""
    rng = ctx.rng
    draft.scheduler = SCHEDULER
    draft.annotations[CPU_POLICY] = rng.choice(_POLICIES)
    aware = node_aware
    if rng.random() < 0.6:
        aware = node_aware if rng.random() < 0.8 else not node_aware
        draft.annotations = {AWARENESS: str(aware).lower()} | draft.annotations
    return aware


def place_crane_pod(ctx: DemoContext, ledger: NodeLedger, draft: PodDraft) -> bool:
    aware = annotate(ctx, draft, node_is_aware(ledger))
    requests = draft.requests()
    if not ledger.fits(requests):
        return False
    millis = target_cpus(draft)
    if millis:
        shares = crane_result(ledger.zones, millis, aware)
        if shares is None:
            return False
        hold_shares(ledger.zones, shares)
        draft.annotations[TOPOLOGY_RESULT] = result_annotation(shares)
    ledger.add(requests)
    return True


def populate_crane(ctx: DemoContext, ledger: NodeLedger) -> list[PodDraft]:
    target = ctx.rng.uniform(0.35, 0.85) * sum(zone.allocatable[CPU] for zone in ledger.zones)
    placed, failures, pods = 0, 0, []
    largest_zone = max(zone.allocatable[CPU] for zone in ledger.zones) // 1000
    while placed < target and failures < 8:
        draft = guaranteed_pod(ctx, max_cpus=largest_zone, scheduler=SCHEDULER)
        if draft is None or not place_crane_pod(ctx, ledger, draft):
            failures += 1
            continue
        pods.append(draft)
        placed += target_cpus(draft) or draft.requests()[CPU]
    return pods


def finished_crane_result(ctx: DemoContext, ledger: NodeLedger, draft: PodDraft) -> None:
    """A Succeeded pod keeps the result it was bound with; its CPUs went back long ago."""
    annotate(ctx, draft, node_is_aware(ledger))
    draft.annotations[CPU_POLICY] = "exclusive"
    zone = ctx.rng.choice(ledger.zones)
    draft.annotations[TOPOLOGY_RESULT] = result_annotation({zone.index: {CPU: target_cpus(draft)}})
