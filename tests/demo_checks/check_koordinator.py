"""Koordinator NRTs: koordlet publishes available == allocatable, so the accounting is
checked from the cpusets and per-zone resources that pods and Reservations carry."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from topology.demo.quantity import CPU, MEMORY
from topology.parsers.cpulist import format_cpulist, parse_cpulist

from .check_index import (
    ClusterIndex,
    Obj,
    allocated_from,
    annotation_json,
    koordinator_status,
    label,
    resources,
)
from .check_zones import ZoneValues

QOS_LABEL = "koordinator.sh/qosClass"
RESERVATION = "node.koordinator.sh/reservation"


@dataclass
class Claim:
    who: str
    cpus: frozenset[int]
    zones: dict[int, dict[str, int]]
    qos: str = ""
    inside: str = ""  # name of the Available Reservation it is carved from


@dataclass
class CpuView:
    node_of: dict[int, int]
    kubelet_reserved: frozenset[int]
    annotation_reserved: frozenset[int]
    system_qos: frozenset[int]
    claims: list[Claim] = field(default_factory=list)

    @property
    def reserved(self) -> frozenset[int]:
        return self.kubelet_reserved | self.annotation_reserved | self.system_qos


def read_view(nrt: Obj) -> CpuView:
    topology = annotation_json(nrt, "node.koordinator.sh/cpu-topology") or {"detail": []}
    policy = annotation_json(nrt, "kubelet.koordinator.sh/cpu-manager-policy") or {}
    reservation = annotation_json(nrt, RESERVATION) or {}
    system_qos = annotation_json(nrt, "node.koordinator.sh/system-qos-resource") or {}
    exclusive = system_qos.get("cpusetExclusive") is not False  # absent: exclusive
    return CpuView(
        node_of={int(cpu["id"]): int(cpu["node"]) for cpu in topology["detail"]},
        kubelet_reserved=parse_cpulist(policy.get("reservedCPUs", "")),
        annotation_reserved=parse_cpulist(reservation.get("reservedCPUs", "")),
        system_qos=parse_cpulist(system_qos.get("cpuset", "")) if exclusive else frozenset(),
    )


def collect_claims(index: ClusterIndex, node: str, nrt: Obj, view: CpuView) -> None:
    for pod in index.active_pods(node):
        cpus, zones = koordinator_status(pod)
        carved = allocated_from(pod, index)
        qos = pod["metadata"].get("labels", {}).get(QOS_LABEL, "")
        if cpus or zones:
            view.claims.append(
                Claim(label(pod), cpus, zones, qos, carved["metadata"]["name"] if carved else "")
            )
    for reservation in index.node_reservations(node):
        cpus, zones = koordinator_status(reservation)
        if cpus or zones:
            view.claims.append(Claim(label(reservation), cpus, zones))
    for alloc in annotation_json(nrt, "node.koordinator.sh/pod-cpu-allocs") or []:
        cpus = parse_cpulist(alloc["cpuset"])
        view.claims.append(
            Claim(
                f"kubelet-pinned {alloc['namespace']}/{alloc['name']}", cpus, _cpu_zones(view, cpus)
            )
        )


def _cpu_zones(view: CpuView, cpus: frozenset[int]) -> dict[int, dict[str, int]]:
    zones: dict[int, dict[str, int]] = {}
    for cpu in cpus:
        bucket = zones.setdefault(view.node_of.get(cpu, -1), {CPU: 0})
        bucket[CPU] += 1000
    return zones


def check_koordinator(
    index: ClusterIndex, node: Obj, nrt: Obj, zones: dict[int, ZoneValues]
) -> list[str]:
    name = node["metadata"]["name"]
    view = read_view(nrt)
    collect_claims(index, name, nrt, view)
    problems = _check_available(name, zones) + _check_topology(name, node, view)
    problems += _check_disjoint(name, view) + _check_claim_zones(view)
    problems += _check_zone_load(name, zones, view) + _check_pools(name, nrt, view)
    return problems + _check_node_reservation(name, node, view)


def _check_available(name: str, zones: dict[int, ZoneValues]) -> list[str]:
    return [
        f"NRT {name} zone {index} {resource}: koordlet publishes available == allocatable"
        for index, zone in sorted(zones.items())
        for resource, allocatable in zone.allocatable.items()
        if (zone.available or {}).get(resource) != allocatable
        or allocatable > zone.capacity.get(resource, 0)
    ]


def _check_topology(name: str, node: Obj, view: CpuView) -> list[str]:
    cpus = resources(node["status"].get("capacity")).get(CPU, 0) // 1000
    if sorted(view.node_of) != list(range(cpus)):
        return [
            f"NRT {name}: cpu-topology does not list every logical CPU 0..{cpus - 1} exactly once"
        ]
    return []


def _check_disjoint(name: str, view: CpuView) -> list[str]:
    """Exclusive cpusets never meet, nor touch reserved CPUs. A pod carved out of an
    Available Reservation only has to be disjoint from the Reservation's other pods."""
    problems = []
    owners: dict[str, dict[int, str]] = {}  # per scope: the node, or one Reservation's cpuset
    clashes: dict[tuple[str, str], list[int]] = {}
    reservations = {
        claim.who: claim for claim in view.claims if claim.who.startswith("Reservation ")
    }
    for claim in view.claims:
        if clash := claim.cpus & view.reserved:
            problems.append(f"{claim.who}: cpuset overlaps reserved CPUs {sorted(clash)} on {name}")
        if claim.inside:
            problems += _check_inside(claim, reservations.get(f"Reservation {claim.inside}"))
        scope = owners.setdefault(claim.inside, {})
        for cpu in sorted(claim.cpus):
            other = scope.setdefault(cpu, claim.who)
            if other != claim.who:
                clashes.setdefault((claim.who, other), []).append(cpu)
    problems += [
        f"{first} and {second}: both hold CPUs {format_cpulist(cpus)} on {name}"
        for (first, second), cpus in clashes.items()
    ]
    return problems


def _check_inside(claim: Claim, reservation: Claim | None) -> list[str]:
    if reservation is None or not reservation.cpus:
        return []
    if not claim.cpus <= reservation.cpus:
        return [f"{claim.who}: cpuset is not inside its Reservation {claim.inside}'s"]
    return []


def _check_claim_zones(view: CpuView) -> list[str]:
    problems = []
    for claim in view.claims:
        if not claim.cpus:
            continue
        by_zone = _cpu_zones(view, claim.cpus)
        declared = {zone: amounts.get(CPU, 0) for zone, amounts in claim.zones.items()}
        if {zone: amounts[CPU] for zone, amounts in by_zone.items()} != declared:
            problems.append(
                f"{claim.who}: cpuset spans zones {sorted(by_zone)} unlike numaNodeResources"
            )
    return problems


def _check_zone_load(name: str, zones: dict[int, ZoneValues], view: CpuView) -> list[str]:
    load: dict[int, dict[str, int]] = {index: {CPU: 0, MEMORY: 0} for index in zones}
    for cpu in view.reserved:
        load.setdefault(view.node_of.get(cpu, -1), {CPU: 0, MEMORY: 0})[CPU] += 1000
    for claim in view.claims:
        if claim.inside:
            continue  # already counted in its Reservation
        for zone, amounts in claim.zones.items():
            bucket = load.setdefault(zone, {CPU: 0, MEMORY: 0})
            for resource in (CPU, MEMORY):
                bucket[resource] += amounts.get(resource, 0)
    problems = []
    for zone, amounts in sorted(load.items()):
        for resource, held in amounts.items():
            allocatable = zones[zone].allocatable.get(resource, 0) if zone in zones else 0
            if held > allocatable:
                problems.append(
                    f"NRT {name} zone {zone}: {resource} held {held} > allocatable {allocatable}"
                )
    return problems


def _check_pools(name: str, nrt: Obj, view: CpuView) -> list[str]:
    pinned = {
        cpu for claim in view.claims if claim.who.startswith("kubelet-pinned") for cpu in claim.cpus
    }
    lse = {cpu for claim in view.claims if claim.qos == "LSE" for cpu in claim.cpus}
    lsr = {cpu for claim in view.claims if claim.qos == "LSR" for cpu in claim.cpus}
    never = lse | pinned | view.annotation_reserved | view.system_qos
    problems = []
    for key, excluded in (("cpu-shared-pools", never | lsr), ("be-cpu-shared-pools", never)):
        pools = annotation_json(nrt, f"node.koordinator.sh/{key}") or []
        published = {cpu for pool in pools for cpu in parse_cpulist(pool["cpuset"])}
        expected = set(view.node_of) - excluded
        if published != expected:
            problems.append(
                f"NRT {name}: {key} differs from all CPUs minus exclusive/reserved ones"
            )
    return problems


def _check_node_reservation(name: str, node: Obj, view: CpuView) -> list[str]:
    wanted = annotation_json(node, RESERVATION) or {}
    if (
        "reservedCPUs" in wanted
        and parse_cpulist(wanted["reservedCPUs"]) != view.annotation_reserved
    ):
        return [f"Node {name}: reservedCPUs differ from what koordlet re-emits in its NRT"]
    count = wanted.get("resources", {}).get(CPU)
    if count is not None and "reservedCPUs" not in wanted:
        if len(view.annotation_reserved) != math.ceil(resources({CPU: count})[CPU] / 1000):
            return [f"Node {name}: reserved cpu count not resolved to as many CPUs in the NRT"]
    return []
