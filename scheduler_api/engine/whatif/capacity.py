"""Derived per-node figures: free exclusive CPUs per NUMA zone, and the largest exclusive pod.

"Free exclusive" means CPUs a new Guaranteed pod could be pinned to:
- with per-CPU detail (koordlet's cpu-topology): the zone's CPUs minus those held
  exclusively (Koordinator cpusets, kubelet pins) and every reserved set
  (kubelet reserved, node annotation, exclusive system-QoS CPUs);
- plain NRT: the zone's available cpu in whole cores (the topology-updater has
  already taken the pinned ones off);
- Crane: the zone's allocatable minus what topology-results claim, in whole cores.

The largest exclusive pod is given per Topology Manager policy, as the kubelet's
CPU manager hints decide admission: `single-numa-node` needs one zone; `restricted`
needs a preferred hint, i.e. the fewest zones whose *capacity* can hold the pod
must also have the *free* CPUs; `best-effort` and `none` admit any spread.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from scheduler_api.engine.kubelet.reference.node_config import (
    kubelet_policy,
)
from scheduler_api.engine.model.snapshot import (
    AllocationSource,
    Flavour,
    NodeSnapshot,
    TopologyManagerPolicy,
)


@dataclass(frozen=True, slots=True)
class NodeCapacity:
    """`free_cpus` and `capacity_cpus` by NUMA id; `largest_exclusive_pod` by TM policy."""

    free_cpus: Mapping[int, int]
    capacity_cpus: Mapping[int, int]
    largest_exclusive_pod: Mapping[TopologyManagerPolicy, int]
    own_policy: TopologyManagerPolicy

    @property
    def free_total(self) -> int:
        return sum(self.free_cpus.values())

    @property
    def max_free_in_one_zone(self) -> int:
        return max(self.free_cpus.values(), default=0)

    @property
    def largest_under_own_policy(self) -> int:
        return self.largest_exclusive_pod[self.own_policy]


def _held_exclusively(node: NodeSnapshot) -> frozenset[int]:
    held = {
        cpu
        for a in node.allocations
        if a.source in (AllocationSource.KOORDINATOR, AllocationSource.KUBELET)
        for cpu in a.cpuset
    }
    return frozenset(held)


def _from_cpu_detail(node: NodeSnapshot) -> tuple[dict[int, int], dict[int, int]]:
    unusable = (
        _held_exclusively(node)
        | node.kubelet_reserved_cpus
        | node.node_reserved_cpus
        | node.system_qos_exclusive_cpus
    )
    free: dict[int, int] = {}
    capacity: dict[int, int] = {}
    for cpu, _core, _socket, numa in node.cpus:
        capacity[numa] = capacity.get(numa, 0) + 1
        free[numa] = free.get(numa, 0) + (cpu not in unusable)
    return free, capacity


def _crane_claims(node: NodeSnapshot) -> dict[int, int]:
    claims: dict[int, int] = {}
    for alloc in node.allocations:
        if alloc.source is AllocationSource.CRANE:
            for numa, amounts in alloc.numa_resources.items():
                claims[numa] = claims.get(numa, 0) + amounts.get("cpu", 0)
    return claims


def _from_zones(node: NodeSnapshot) -> tuple[dict[int, int], dict[int, int]]:
    claims = _crane_claims(node) if node.flavour is Flavour.CRANE else {}
    free: dict[int, int] = {}
    capacity: dict[int, int] = {}
    for zone in node.zones:
        cpu = zone.resources.get("cpu")
        if zone.numa_id < 0 or cpu is None:
            continue
        if node.flavour is Flavour.CRANE:
            left = cpu.allocatable - claims.get(zone.numa_id, 0)
        else:
            left = cpu.available
        free[zone.numa_id] = max(left, 0) // 1000
        capacity[zone.numa_id] = cpu.allocatable // 1000
    return free, capacity


def _restricted_largest(free: Mapping[int, int], capacity: Mapping[int, int]) -> int:
    """The largest count whose narrowest capacity-sized zone set also has it free."""
    caps = sorted(capacity.values(), reverse=True)
    frees = sorted(free.values(), reverse=True)
    for count in range(sum(frees), 0, -1):
        width, reached = 0, 0
        while width < len(caps) and reached < count:
            reached += caps[width]
            width += 1
        if reached >= count and sum(frees[:width]) >= count:
            return count
    return 0


def node_capacity(
    node: NodeSnapshot, own_policy: TopologyManagerPolicy | None = None
) -> NodeCapacity:
    """Free exclusive CPUs per zone and the largest exclusive pod each policy admits.

    `own_policy` is the node's policy as its scheduler reads it; by default the one
    its NRT publishes.
    """
    free, capacity = _from_cpu_detail(node) if node.cpus else _from_zones(node)
    total = sum(free.values())
    largest = {
        TopologyManagerPolicy.NONE: total,
        TopologyManagerPolicy.BEST_EFFORT: total,
        TopologyManagerPolicy.RESTRICTED: _restricted_largest(free, capacity),
        TopologyManagerPolicy.SINGLE_NUMA_NODE: max(free.values(), default=0),
    }
    return NodeCapacity(free, capacity, largest, own_policy or kubelet_policy(node)[0])


# --- what each NUMA zone's CPUs are doing, and fragmentation ------------------------------

RESERVED_KINDS = ("kubelet", "node", "system-qos", "reservation")


@dataclass(frozen=True, slots=True)
class ZoneCPUs:
    """One NUMA zone's CPUs (whole CPUs). `exclusive`: held by pinned pods (Koordinator
    cpusets, kubelet pins); `reserved` by kind (RESERVED_KINDS: the kubelet's reserved
    set, the node's `node.koordinator.sh/reservation`, exclusive system-QoS CPUs,
    Koordinator Reservations' cpusets), each CPU counted once, in that order; `shared`:
    the rest, the shared pool the zone's other pods run on; `free`: the figures' free
    exclusive CPUs as `node_capacity` counts them (with per-CPU detail: the shared pool
    and the Reservations' CPUs, which their owners may still be given).
    Without per-CPU detail only `capacity` and `free` are known (the others None)."""

    capacity: int
    free: int
    exclusive: int | None = None
    shared: int | None = None
    reserved: Mapping[str, int] | None = None


def zone_cpus(
    node: NodeSnapshot, reservation_cpus: frozenset[int] = frozenset()
) -> dict[int, ZoneCPUs]:
    """Per NUMA id, what the zone's CPUs are doing (`ZoneCPUs`); `reservation_cpus`: the
    cpusets of the node's Koordinator Reservations."""
    free, capacity = _from_cpu_detail(node) if node.cpus else _from_zones(node)
    if not node.cpus:
        return {numa: ZoneCPUs(capacity[numa], free.get(numa, 0)) for numa in sorted(capacity)}
    reserved_sets = (
        ("kubelet", node.kubelet_reserved_cpus),
        ("node", node.node_reserved_cpus),
        ("system-qos", node.system_qos_exclusive_cpus),
        ("reservation", reservation_cpus),
    )
    held = _held_exclusively(node)
    counts: dict[int, dict[str, int]] = {}
    for cpu, _core, _socket, numa in node.cpus:
        zone = counts.setdefault(numa, {"capacity": 0, "exclusive": 0, "shared": 0})
        zone["capacity"] += 1
        kind = next((kind for kind, cpus in reserved_sets if cpu in cpus), None)
        if kind is not None:
            zone[kind] = zone.get(kind, 0) + 1
        elif cpu in held:
            zone["exclusive"] += 1
        else:
            zone["shared"] += 1
    return {
        numa: ZoneCPUs(
            capacity=zone["capacity"],
            free=free.get(numa, 0),
            exclusive=zone["exclusive"],
            shared=zone["shared"],
            reserved={kind: zone.get(kind, 0) for kind in RESERVED_KINDS},
        )
        for numa, zone in sorted(counts.items())
    }


def fragmentation(free_by_zone: Mapping[int, int] | Mapping[str, int]) -> float:
    """The share of a node's free exclusive CPUs that no single-NUMA pod can use at once:
    1 - (the largest zone's free CPUs / all free CPUs); 0 when none is free (nothing to
    fragment). 0 means one zone holds all the free CPUs; near 1, they are spread thin."""
    total = sum(free_by_zone.values())
    return 1 - max(free_by_zone.values()) / total if total else 0.0


def cluster_fragmentation(nodes: Iterable[tuple[int, int]]) -> float:
    """`fragmentation` over a cluster, from each node's (largest zone's free CPUs, all
    its free CPUs): 1 - sum of the largest / sum of all; 0 when nothing is free."""
    largest = total = 0
    for node_largest, node_total in nodes:
        largest += node_largest
        total += node_total
    return 1 - largest / total if total else 0.0
