"""What the generator has handed out so far, per NUMA zone and per node.

A zone's `allocatable` is what its NRT publishes; `blocked` is the part placements may
not use although it is allocatable (Koordinator's reserved CPUs); `free_cpus` tracks CPU
ids for the systems that publish cpusets.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .plan import NodePlan
from .quantity import CPU


@dataclass
class ZoneLedger:
    index: int
    cpu_ids: tuple[int, ...]
    capacity: dict[str, int]
    allocatable: dict[str, int]
    blocked: dict[str, int] = field(default_factory=dict)
    used: dict[str, int] = field(default_factory=dict)
    free_cpus: set[int] = field(default_factory=set)

    def free(self, resource: str) -> int:
        return (
            self.allocatable.get(resource, 0)
            - self.blocked.get(resource, 0)
            - self.used.get(resource, 0)
        )

    def fits(self, amounts: dict[str, int]) -> bool:
        return all(amount <= self.free(name) for name, amount in amounts.items() if amount)

    def hold(self, amounts: dict[str, int]) -> None:
        for name, amount in amounts.items():
            self.used[name] = self.used.get(name, 0) + amount

    def used_ratio(self) -> float:
        return self.used.get(CPU, 0) / max(1, self.allocatable.get(CPU, 0))


@dataclass
class NodeLedger:
    plan: NodePlan
    zones: list[ZoneLedger]
    capacity: dict[str, int]
    allocatable: dict[str, int]
    requested: dict[str, int] = field(default_factory=dict)
    # CPUs nobody may pin: kubelet-reserved, node-annotation reserved, exclusive system QoS.
    reserved_cpus: set[int] = field(default_factory=set)
    # Node allocatable the scheduler keeps back besides kubelet reservations (Koordinator).
    held_back: dict[str, int] = field(default_factory=dict)

    def fits(self, request: dict[str, int]) -> bool:
        return all(
            amount
            <= self.allocatable.get(name, 0)
            - self.held_back.get(name, 0)
            - self.requested.get(name, 0)
            for name, amount in request.items()
            if amount
        )

    def add(self, request: dict[str, int]) -> None:
        for name, amount in request.items():
            self.requested[name] = self.requested.get(name, 0) + amount
