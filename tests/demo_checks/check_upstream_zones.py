"""Per-zone accounting for upstream NRTs whose kubelet keeps each pod (or container) on
one zone: is there a way to place the running pods' units so that every zone's
(allocatable − available) is met exactly? A bounded depth-first search answers it."""

from __future__ import annotations

from scheduler_api.engine import QoSClass
from topology.demo.qos import effective_requests, pod_qos_class
from topology.demo.quantity import CPU, GPU, HUGEPAGES, MEMORY

from .check_index import Obj, resources
from .check_zones import ZoneValues

_POD_LEVEL = ("SingleNUMANodePodLevel", "RestrictedPodLevel")
_CONTAINER_LEVEL = ("SingleNUMANodeContainerLevel", "RestrictedContainerLevel")
_SEARCH_BUDGET = 20_000
_NAMES = (CPU, MEMORY, GPU, *HUGEPAGES)  # what a zone's (allocatable - available) shows

Amounts = dict[str, int]
Vector = tuple[int, ...]


class _OutOfBudget(Exception):
    pass


def alignment_units(pod: Obj, policy: str) -> list[Amounts]:
    """What must sit whole on one zone: the pod, or each container; [] when unaligned."""
    spec = pod.get("spec", {})
    guaranteed = pod_qos_class(spec) == QoSClass.GUARANTEED
    if policy in _POD_LEVEL:
        requests = [effective_requests(spec)]
    elif policy in _CONTAINER_LEVEL:
        requests = [
            resources(c.get("resources", {}).get("requests")) for c in spec.get("containers", [])
        ]
    else:
        return []
    return [unit for unit in (_held(request, guaranteed) for request in requests) if unit]


def _held(request: Amounts, guaranteed: bool) -> Amounts:
    unit = {GPU: request.get(GPU, 0)}
    if guaranteed:
        cpu = request.get(CPU, 0)
        unit |= {CPU: cpu if cpu % 1000 == 0 else 0, MEMORY: request.get(MEMORY, 0)}
        unit |= {name: request.get(name, 0) for name in HUGEPAGES}
    return {name: value for name, value in unit.items() if value}


def zones_explained(units: list[Amounts], zones: dict[int, ZoneValues]) -> bool | None:
    """True/False when decided, None when not judged (search budget spent, or a unit
    larger than any zone, which the kubelet may legitimately spread)."""
    names = _NAMES
    largest = [max(zone.allocatable.get(name, 0) for zone in zones.values()) for name in names]
    vectors = sorted((tuple(unit.get(name, 0) for name in names) for unit in units), reverse=True)
    if any(
        value > limit for vector in vectors for value, limit in zip(vector, largest, strict=True)
    ):
        return None
    targets = [
        tuple(zone.allocatable.get(name, 0) - (zone.available or {}).get(name, 0) for name in names)
        for zone in zones.values()
    ]
    try:
        return _ZoneFiller(targets).fill(0, vectors)
    except _OutOfBudget:
        return None


class _ZoneFiller:
    """Zone by zone, look for a sub-multiset of the remaining units that meets the zone's
    need exactly; exact memory sums make the search narrow."""

    def __init__(self, targets: list[Vector]) -> None:
        self.targets = targets
        self.steps = 0

    def fill(self, zone: int, remaining: list[Vector]) -> bool:
        if zone == len(self.targets) - 1:
            return _total(remaining) == self.targets[zone]
        return self._subset(zone, remaining, 0, (0,) * len(_NAMES), [])

    def _subset(
        self, zone: int, remaining: list[Vector], start: int, total: Vector, chosen: list[int]
    ) -> bool:
        self.steps += 1
        if self.steps > _SEARCH_BUDGET:
            raise _OutOfBudget
        target = self.targets[zone]
        if total == target:
            taken = set(chosen)
            return self.fill(zone + 1, [unit for i, unit in enumerate(remaining) if i not in taken])
        previous = None
        for i in range(start, len(remaining)):
            unit = remaining[i]
            grown = tuple(a + b for a, b in zip(total, unit, strict=True))
            if unit == previous or any(g > t for g, t in zip(grown, target, strict=True)):
                continue
            previous = unit  # equal units are interchangeable: try one per position
            chosen.append(i)
            if self._subset(zone, remaining, i + 1, grown, chosen):
                return True
            chosen.pop()
        return False


def _total(units: list[Vector]) -> Vector:
    return tuple(sum(unit[k] for unit in units) for k in range(len(_NAMES)))
