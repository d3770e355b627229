"""The rules that give every logical CPU of a node its state and holder (pure).

`topology.services.mirror.cpu_state.node_cpu_state` reads the mirror into
`CPUStateInputs`; `classify_cpus` here applies the rules, so that they are tested
without a database.

Rules, strongest first (a CPU takes the first that claims it):

1. **exclusive**: a running pod's published cpuset (Koordinator resource-status or
   kubelet static pinning from koordlet). A pod allocated from a Reservation sits
   inside that Reservation's cpuset: the pod wins and the CPU notes the Reservation.
2. **reserved**: kubelet `reservedSystemCPUs`, the node annotation
   `node.koordinator.sh/reservation` (as koordlet resolved it) and an exclusive
   system-QoS cpuset. A pod on such a CPU is a conflict and is reported.
3. **reservation**: the cpuset of an Available Koordinator Reservation.
4. **shared**: pods without a cpuset still claim CPU on a NUMA zone (Koordinator LS
   pods' numaNodeResources). They float over the zone's pool, so no CPU is theirs;
   the core map paints that many unheld CPUs of the zone, taken from the zone's end
   so that the free CPUs drawn are as many as a new exclusive pod could get.
5. **free**: everything else.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from topology.choices import CPUState

CPUTuple = tuple[int, int, int, int]
SHARED_STATES = (CPUState.SHARED, CPUState.FREE)


class HolderKind(StrEnum):
    POD = "pod"
    RESERVATION = "reservation"
    KUBELET = "kubelet"
    NODE_ANNOTATION = "node-annotation"
    SYSTEM_QOS = "system-qos"
    SHARED_PODS = "shared-pods"


@dataclass(frozen=True)
class Holder:
    """Who holds CPUs. `code` is the short mark drawn in the core map and its legend."""

    kind: HolderKind
    name: str
    code: str = ""
    source: str = ""
    detail: str = ""


@dataclass(frozen=True)
class CPU:
    id: int
    core: int
    socket: int
    numa: int
    state: CPUState
    holder: Holder | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Claim:
    """A set of CPUs somebody holds (an input of the classification)."""

    holder: Holder
    cpus: frozenset[int]


@dataclass(frozen=True)
class SharedClaim:
    """CPU requested on one NUMA zone by pods without a cpuset."""

    millicores: int
    pods: int


@dataclass(frozen=True)
class CPUStateInputs:
    cpus: tuple[CPUTuple, ...]
    pods: tuple[Claim, ...] = ()
    reserved: tuple[Claim, ...] = ()
    reservations: tuple[Claim, ...] = ()
    shared: Mapping[int, SharedClaim] = field(default_factory=dict)
    notes: Mapping[int, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class NodeCPUState:
    """Every logical CPU of one node; `missing_detail` says why there are none."""

    node: str
    cpus: tuple[CPU, ...] = ()
    holders: tuple[Holder, ...] = ()
    conflicts: tuple[str, ...] = ()
    missing_detail: str = ""

    @property
    def has_detail(self) -> bool:
        return bool(self.cpus)

    def zone_counts(self) -> dict[int, dict[CPUState, int]]:
        counts: dict[int, dict[CPUState, int]] = defaultdict(lambda: dict.fromkeys(CPUState, 0))
        for cpu in self.cpus:
            counts[cpu.numa][cpu.state] += 1
        return dict(sorted(counts.items()))

    def cpus_of(self, holder: Holder) -> tuple[int, ...]:
        return tuple(cpu.id for cpu in self.cpus if cpu.holder == holder)


def pod_code(index: int) -> str:
    """A, B, …, Z, AA, AB, …: spreadsheet column names, short enough for a cell."""
    code = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        code = chr(ord("A") + rest) + code
    return code


def classify_cpus(node: str, inputs: CPUStateInputs) -> NodeCPUState:
    """Apply the module's rules to every CPU of the table; pure and deterministic."""
    known = {row[0] for row in inputs.cpus}
    owner: dict[int, tuple[CPUState, Holder]] = {}
    notes: dict[int, list[str]] = defaultdict(list)
    conflicts: list[str] = []
    for cpu, lines in inputs.notes.items():
        notes[cpu].extend(lines)
    pods = _coded_pods(inputs.pods)
    layers = (
        (CPUState.EXCLUSIVE, pods),
        (CPUState.RESERVED, inputs.reserved),
        (CPUState.RESERVATION, inputs.reservations),
    )
    for state, claims in layers:
        for claim in claims:
            _claim(state, claim, known, owner, notes, conflicts)
    _paint_shared(inputs, owner)
    cpus = tuple(
        CPU(cpu, core, socket, numa, *owner.get(cpu, (CPUState.FREE, None)), tuple(notes[cpu]))
        for cpu, core, socket, numa in sorted(inputs.cpus)
    )
    holders = _holders_in_use(cpus)
    return NodeCPUState(node, cpus, holders, tuple(conflicts))


def _coded_pods(pods: Iterable[Claim]) -> list[Claim]:
    """Pods ordered by their lowest CPU, each given its code in that order."""
    ordered = sorted(pods, key=lambda c: (min(c.cpus, default=1 << 30), c.holder.name))
    return [
        Claim(
            Holder(c.holder.kind, c.holder.name, pod_code(i), c.holder.source, c.holder.detail),
            c.cpus,
        )
        for i, c in enumerate(ordered)
    ]


def _claim(
    state: CPUState,
    claim: Claim,
    known: set[int],
    owner: dict[int, tuple[CPUState, Holder]],
    notes: dict[int, list[str]],
    conflicts: list[str],
) -> None:
    unknown = sorted(claim.cpus - known)
    if unknown:
        conflicts.append(f"{claim.holder.name} names CPUs this node does not have: {unknown}")
    for cpu in sorted(claim.cpus & known):
        held = owner.get(cpu)
        if held is None:
            owner[cpu] = (state, claim.holder)
        elif state is CPUState.RESERVATION and held[0] is CPUState.EXCLUSIVE:
            notes[cpu].append(f"inside Reservation {claim.holder.name}")
        else:
            notes[cpu].append(f"also claimed by {claim.holder.name}")
            conflicts.append(f"CPU {cpu}: {held[1].name} and {claim.holder.name} both claim it")


def _paint_shared(inputs: CPUStateInputs, owner: dict[int, tuple[CPUState, Holder]]) -> None:
    """Mark ceil(claim) unheld CPUs per zone as shared, whole cores from the zone's end."""
    for numa, claim in sorted(inputs.shared.items()):
        unheld = [row for row in inputs.cpus if row[3] == numa and row[0] not in owner]
        unheld.sort(key=lambda row: (row[2], row[1], row[0]), reverse=True)
        count = min(len(unheld), math.ceil(claim.millicores / 1000))
        holder = Holder(
            HolderKind.SHARED_PODS,
            f"shared pool of zone {numa}",
            CPUState.SHARED.mark,
            detail=(
                f"{claim.millicores / 1000:g} CPUs requested on this zone by {claim.pods} "
                "pod(s) without a cpuset; they float over the pool, these cells show the share"
            ),
        )
        for row in unheld[:count]:
            owner[row[0]] = (CPUState.SHARED, holder)


def _holders_in_use(cpus: Iterable[CPU]) -> tuple[Holder, ...]:
    seen: dict[Holder, None] = {}
    for cpu in cpus:
        if cpu.holder is not None:
            seen.setdefault(cpu.holder)
    pods = [h for h in seen if h.kind is HolderKind.POD]
    others = [h for h in seen if h.kind is not HolderKind.POD]
    return tuple(sorted(pods, key=lambda h: (len(h.code), h.code)) + others)
