"""Checks that a cluster's mirror adds up; each problem is a sentence naming the node.

- every NUMA zone: available ≤ allocatable ≤ capacity;
- zone totals of cpu, memory and devices equal the node's capacity;
- exclusive cpusets on a node are pairwise disjoint and miss reserved CPUs;
- cpusets name CPUs the node's CPU topology has.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations

from topology.models import Cluster, Node, PodAllocation
from topology.parsers.cpulist import parse_cpulist

SUMMED_RESOURCES = ("cpu", "memory", "nvidia.com/gpu")


def check_mirror(cluster: Cluster) -> list[str]:
    problems: list[str] = []
    allocations = _allocations_by_node(cluster)
    nodes = (
        Node.objects.filter(cluster=cluster)
        .select_related("topology", "cpu_reservation")
        .prefetch_related("topology__zones__resources")
    )
    for node in nodes:
        if hasattr(node, "topology"):
            problems += _zone_problems(node)
            problems += _cpuset_problems(node, allocations.get(node.name, []))
    return problems


def _allocations_by_node(cluster: Cluster) -> dict[str, list[PodAllocation]]:
    grouped: dict[str, list[PodAllocation]] = defaultdict(list)
    for allocation in PodAllocation.objects.filter(cluster=cluster).exclude(cpuset=""):
        grouped[allocation.node_name].append(allocation)
    return grouped


def _zone_problems(node: Node) -> list[str]:
    problems = []
    totals: dict[str, int] = defaultdict(int)
    for zone in node.topology.zones.all():
        if zone.numa_id is None:
            continue
        for resource in zone.resources.all():
            totals[resource.name] += resource.capacity
            available = resource.available if resource.available is not None else 0
            if not available <= resource.allocatable <= resource.capacity:
                problems.append(
                    f"{node.name} {zone.name} {resource.name}: available {resource.available}, "
                    f"allocatable {resource.allocatable}, capacity {resource.capacity} "
                    "are not in order"
                )
    for name in SUMMED_RESOURCES:
        if name in totals and totals[name] != node.capacity.get(name, 0):
            problems.append(
                f"{node.name}: zones hold {totals[name]} {name} but the node has "
                f"{node.capacity.get(name, 0)}"
            )
    return problems


def _reserved_cpus(node: Node) -> frozenset[int]:
    reserved = parse_cpulist(node.topology.kubelet_reserved_cpus)
    reservation = getattr(node, "cpu_reservation", None)
    if reservation is not None:
        reserved |= parse_cpulist(reservation.resolved_cpus or reservation.reserved_cpus)
    return reserved


def _cpuset_problems(node: Node, allocations: list[PodAllocation]) -> list[str]:
    problems = []
    known = {cpu[0] for cpu in node.topology.cpus}
    reserved = _reserved_cpus(node)
    sets = [(f"{a.namespace}/{a.pod_name}", parse_cpulist(a.cpuset)) for a in allocations]
    for (name_a, cpus_a), (name_b, cpus_b) in combinations(sets, 2):
        if cpus_a & cpus_b and name_a != name_b:
            problems.append(
                f"{node.name}: {name_a} and {name_b} share CPUs {sorted(cpus_a & cpus_b)}"
            )
    for name, cpus in sets:
        if cpus & reserved:
            problems.append(f"{node.name}: {name} holds reserved CPUs {sorted(cpus & reserved)}")
        if known and not cpus <= known:
            problems.append(f"{node.name}: {name} holds unknown CPUs {sorted(cpus - known)}")
    return problems
