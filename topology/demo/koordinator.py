"""Koordinator node bookkeeping: cpusets handed out by koord-scheduler and the kubelet."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from scheduler_api.engine import CPUBindPolicy
from topology.parsers.cpulist import format_cpulist

from .capacity import KoordinatorCpus
from .cpu_picker import pick_single_zone, pick_spanning, zone_order
from .ledger import NodeLedger
from .pods import PodDraft
from .quantity import CPU, MEMORY, MIB, format_resources

QOS_LABEL = "koordinator.sh/qosClass"
RESOURCE_SPEC = "scheduling.koordinator.sh/resource-spec"
RESOURCE_STATUS = "scheduling.koordinator.sh/resource-status"
NUMA_TOPOLOGY_SPEC = "scheduling.koordinator.sh/numa-topology-spec"
RESERVATION_ALLOCATED = "scheduling.koordinator.sh/reservation-allocated"
SCHEDULER = "koord-scheduler"
_STRICT_NUMA = ("SingleNUMANode", "Restricted")


def compact_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


@dataclass
class CpusetGrant:
    """CPUs and memory granted per zone for one pod (or reservation)."""

    cpus: dict[int, list[int]]
    memory: dict[int, int]

    @property
    def cpuset(self) -> frozenset[int]:
        return frozenset(cpu for cpus in self.cpus.values() for cpu in cpus)

    def numa_resources(self) -> list[dict[str, Any]]:
        return [
            {
                "node": zone,
                "resources": format_resources({CPU: len(cpus) * 1000, MEMORY: self.memory[zone]}),
            }
            for zone, cpus in sorted(self.cpus.items())
        ]

    def status_annotation(self) -> str:
        return compact_json(
            {"cpuset": format_cpulist(self.cpuset), "numaNodeResources": self.numa_resources()}
        )


@dataclass
class KoordinatorNode:
    ledger: NodeLedger
    cpus: KoordinatorCpus
    lse: set[int] = field(default_factory=set)
    lsr: set[int] = field(default_factory=set)
    pinned: list[tuple[PodDraft, frozenset[int]]] = field(default_factory=list)
    grants: dict[str, CpusetGrant] = field(default_factory=dict)

    @property
    def strict_numa(self) -> bool:
        setup = self.ledger.plan.koordinator
        return bool(setup and setup.numa_policy in _STRICT_NUMA)

    def bind_policy(self, preferred: CPUBindPolicy) -> CPUBindPolicy:
        """A node's cpu-bind-policy label beats what the pod asks for."""
        setup = self.ledger.plan.koordinator
        label = setup.bind_policy if setup else None
        if label == "FullPCPUsOnly":
            return CPUBindPolicy.FULL_PCPUS
        if label == "SpreadByPCPUs":
            return CPUBindPolicy.SPREAD_BY_PCPUS
        return preferred

    def grant(self, count: int, memory: int, bind: CPUBindPolicy) -> CpusetGrant | None:
        """Pick and hold `count` CPUs (+ memory) on one zone, or over several when allowed."""
        ledger = self.ledger
        setup = ledger.plan.koordinator
        zones = zone_order(ledger.zones, setup.allocate_strategy if setup else None)
        single = pick_single_zone(ledger.plan.shape, zones, count, bind, memory)
        if single is not None:
            zone, cpus = single
            return self._hold(CpusetGrant({zone.index: cpus}, {zone.index: memory}))
        if self.strict_numa:
            return None
        picked = pick_spanning(ledger.plan.shape, zones, count, bind)
        if picked is None:
            return None
        memory_split = _split_memory(memory, picked)
        if any(ledger.zones[index].free(MEMORY) < amount for index, amount in memory_split.items()):
            return None
        return self._hold(CpusetGrant(picked, memory_split))

    def _hold(self, grant: CpusetGrant) -> CpusetGrant:
        for index, cpus in grant.cpus.items():
            zone = self.ledger.zones[index]
            zone.free_cpus -= set(cpus)
            zone.hold({CPU: len(cpus) * 1000, MEMORY: grant.memory[index]})
        return grant


def _split_memory(memory: int, picked: dict[int, list[int]]) -> dict[int, int]:
    """Memory follows the CPUs, zone by zone; the first zone takes the rounding."""
    total = sum(len(cpus) for cpus in picked.values())
    shares = {index: memory // MIB * len(cpus) // total * MIB for index, cpus in picked.items()}
    first = min(shares)
    shares[first] += memory - sum(shares.values())
    return shares
