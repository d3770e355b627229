"""Choosing CPU ids inside NUMA zones, the way koord-scheduler and the kubelet do."""

from __future__ import annotations

from collections.abc import Sequence

from scheduler_api.engine import CPUBindPolicy

from .hardware import HardwareShape
from .ledger import ZoneLedger
from .quantity import CPU


def pick_in_zone(
    shape: HardwareShape, zone: ZoneLedger, count: int, bind: CPUBindPolicy
) -> list[int] | None:
    """`count` free CPUs of one zone, lowest cores first; None when the zone cannot give them."""
    if count * 1000 > zone.free(CPU):
        return None
    cores = [shape.core_threads(core) for core in shape.zone_cores(zone.index)]
    if bind == CPUBindPolicy.FULL_PCPUS:
        whole = [threads for threads in cores if all(cpu in zone.free_cpus for cpu in threads)]
        needed, extra = divmod(count, shape.threads_per_core)
        if extra or len(whole) < needed:
            return None
        return sorted(cpu for threads in whole[:needed] for cpu in threads)
    # SpreadByPCPUs: one thread per physical core first, then the siblings.
    passes = [
        [cpu for cpu in threads[rank : rank + 1] if cpu in zone.free_cpus]
        for rank in range(shape.threads_per_core)
        for threads in cores
    ]
    ordered = [cpu for chunk in passes for cpu in chunk]
    return sorted(ordered[:count]) if len(ordered) >= count else None


def zone_order(zones: Sequence[ZoneLedger], strategy: str | None) -> list[ZoneLedger]:
    """MostAllocated packs the busiest zone first; LeastAllocated (the default) the idlest."""
    most = strategy == "MostAllocated"
    return sorted(
        zones, key=lambda zone: (-zone.used_ratio() if most else zone.used_ratio(), zone.index)
    )


def pick_single_zone(
    shape: HardwareShape, zones: Sequence[ZoneLedger], count: int, bind: CPUBindPolicy, memory: int
) -> tuple[ZoneLedger, list[int]] | None:
    for zone in zones:
        if zone.free("memory") < memory:
            continue
        cpus = pick_in_zone(shape, zone, count, bind)
        if cpus is not None:
            return zone, cpus
    return None


def pick_spanning(
    shape: HardwareShape, zones: Sequence[ZoneLedger], count: int, bind: CPUBindPolicy
) -> dict[int, list[int]] | None:
    """Several zones in order, each giving what it can (whole cores for FullPCPUs)."""
    step = shape.threads_per_core if bind == CPUBindPolicy.FULL_PCPUS else 1
    picked: dict[int, list[int]] = {}
    for zone in zones:
        remaining = count - sum(len(cpus) for cpus in picked.values())
        if remaining <= 0:
            break
        cpus = _largest_pick(shape, zone, remaining, step, bind)
        if cpus:
            picked[zone.index] = cpus
    return picked if sum(len(cpus) for cpus in picked.values()) == count else None


def _largest_pick(
    shape: HardwareShape, zone: ZoneLedger, wanted: int, step: int, bind: CPUBindPolicy
) -> list[int]:
    room = min(wanted, len(zone.free_cpus), zone.free(CPU) // 1000)
    for take in range(room - room % step, 0, -step):
        cpus = pick_in_zone(shape, zone, take, bind)
        if cpus is not None:
            return cpus
    return []
