"""Node capacity and allocatable, and the per-zone ledgers each NRT flavour implies."""

from __future__ import annotations

from dataclasses import dataclass

from scheduler_api.engine import Flavour

from .hardware import HardwareShape
from .ledger import NodeLedger, ZoneLedger
from .plan import NodePlan, NodeReservation
from .quantity import CPU, GIB, GPU, MEMORY, MIB

KUBE_RESERVED_MEMORY = 4 * GIB
EVICTION_HARD_MEMORY = 100 * MIB
MAX_PODS = 110


@dataclass(frozen=True)
class KoordinatorCpus:
    """CPU ids a Koordinator node keeps away from exclusive allocations."""

    kubelet_reserved: frozenset[int]
    annotation_reserved: frozenset[int]
    system_qos: frozenset[int]

    @property
    def all(self) -> frozenset[int]:
        return self.kubelet_reserved | self.annotation_reserved | self.system_qos


def node_capacity(shape: HardwareShape) -> dict[str, int]:
    capacity = {CPU: shape.logical_cpus * 1000, MEMORY: shape.memory_bytes(), "pods": MAX_PODS}
    if shape.gpus:
        capacity[GPU] = shape.gpus
    return capacity


def node_allocatable(shape: HardwareShape) -> dict[str, int]:
    allocatable = node_capacity(shape)
    allocatable[CPU] -= shape.kube_reserved_cpus * 1000
    allocatable[MEMORY] -= KUBE_RESERVED_MEMORY + EVICTION_HARD_MEMORY
    return allocatable


def lowest_cores(shape: HardwareShape, count: int, skip_cores: int = 0) -> frozenset[int]:
    """`count` CPUs taken whole core by whole core from the lowest cores (kubelet style)."""
    cores = range(skip_cores, skip_cores + -(-count // shape.threads_per_core))
    cpus = sorted(cpu for core in cores for cpu in shape.core_threads(core))
    return frozenset(cpus[:count])


def koordinator_cpus(plan: NodePlan) -> KoordinatorCpus:
    shape, setup = plan.shape, plan.koordinator
    assert setup is not None
    kubelet = lowest_cores(shape, shape.kube_reserved_cpus) if setup.kubelet_static else frozenset()
    last_zone_core = shape.zone_cores(0)[-1]
    annotation: frozenset[int] = frozenset()
    if setup.reservation == NodeReservation.CPUS:
        annotation = frozenset(
            shape.core_threads(last_zone_core) + shape.core_threads(last_zone_core - 1)
        )
    elif setup.reservation == NodeReservation.CPUS_ONLY:
        annotation = frozenset(shape.core_threads(shape.cores - 1))
    elif setup.reservation == NodeReservation.COUNT:
        annotation = lowest_cores(shape, 2)
    system_qos = lowest_cores(shape, 2, skip_cores=1) if setup.system_qos else frozenset()
    return KoordinatorCpus(kubelet, annotation, system_qos)


def build_ledger(plan: NodePlan) -> NodeLedger:
    shape = plan.shape
    ledger = NodeLedger(
        plan=plan,
        zones=[_zone(shape, zone) for zone in range(shape.zone_count)],
        capacity=node_capacity(shape),
        allocatable=node_allocatable(shape),
    )
    if plan.flavour == Flavour.KOORDINATOR:
        _block_koordinator_cpus(ledger, koordinator_cpus(plan))
    else:
        _take_kubelet_reservation(ledger, crane=plan.flavour == Flavour.CRANE)
    return ledger


def _zone(shape: HardwareShape, zone: int) -> ZoneLedger:
    capacity = {CPU: shape.cpus_per_zone * 1000, MEMORY: shape.zone_memory_bytes(zone)}
    if shape.gpus_per_zone:
        capacity[GPU] = shape.gpus_per_zone
    cpus = tuple(shape.zone_cpus(zone))
    return ZoneLedger(zone, cpus, capacity, dict(capacity), free_cpus=set(cpus))


def _take_kubelet_reservation(ledger: NodeLedger, *, crane: bool) -> None:
    """Reserved CPUs and memory come off zone 0, the way NFD and crane-agent publish them.

    NFD subtracts everything the kubelet holds back (reservation and eviction threshold);
    crane-agent subtracts kube-reserved + system-reserved only.
    """
    zone0 = ledger.zones[0]
    zone0.allocatable[CPU] -= ledger.capacity[CPU] - ledger.allocatable[CPU]
    memory_reserved = (
        KUBE_RESERVED_MEMORY if crane else ledger.capacity[MEMORY] - ledger.allocatable[MEMORY]
    )
    zone0.allocatable[MEMORY] -= memory_reserved
    ledger.reserved_cpus = set(
        lowest_cores(ledger.plan.shape, ledger.plan.shape.kube_reserved_cpus)
    )
    zone0.free_cpus -= ledger.reserved_cpus


def _block_koordinator_cpus(ledger: NodeLedger, cpus: KoordinatorCpus) -> None:
    ledger.reserved_cpus = set(cpus.all)
    for zone in ledger.zones:
        blocked = zone.free_cpus & cpus.all
        zone.free_cpus -= blocked
        zone.blocked[CPU] = len(blocked) * 1000
    setup = ledger.plan.koordinator
    if setup and setup.reservation in (NodeReservation.CPUS, NodeReservation.COUNT):
        # applyPolicy Default: the scheduler also lowers the node's allocatable.
        ledger.held_back[CPU] = len(cpus.annotation_reserved) * 1000
