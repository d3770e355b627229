"""Kubelet's static CPU manager: which exclusive CPUs a container gets, and its hints.

Ported from ``pkg/kubelet/cm/cpumanager`` (``cpu_assignment.go``,
``policy_options.go`` and ``policy_static.go``; kubernetes master after v1.35, option
maturity as of v1.35):

* :func:`parse_static_policy_options` is ``NewStaticPolicyOptions`` (unknown options,
  options not enabled at their maturity, bad values, incompatible pairs) and
  :func:`validate_static_policy_options` ``ValidateStaticPolicyOptions``: what makes
  the kubelet refuse to start.
* :func:`take_cpus` is ``takeByTopology``: NUMA-packed by default (aligned to whole
  or partial uncore caches with ``prefer-align-cpus-by-uncorecache``),
  NUMA-distributed with ``distribute-cpus-across-numa``, spread over cores with
  ``distribute-cpus-across-cores``; ``full-pcpus-only`` refuses requests that are
  not whole physical cores.
* :func:`shared_pool` is the default cpuset: every CPU no container holds
  exclusively, less the reserved CPUs with ``strict-cpu-reservation``.
* :func:`allocate_cpus` is ``allocateCPUs``: CPUs inside the Topology Manager's
  hint first, the remainder from the rest.
* :func:`cpu_hints` generates the CPU manager's NUMA hints; the memory and device
  managers' generator, :func:`resource_hints`, lives in ``hints`` and is re-exported.

Sets of CPU ids are plain ``frozenset[int]``; errors are ``AllocationError``
(impossible requests) or ``SMTAlignmentError`` (``full-pcpus-only`` refusals).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from scheduler_api.engine.kubelet.reference.bitmask import NUMAMask, iterate_masks
from scheduler_api.engine.kubelet.reference.cpu_assignment import (
    CPUAccumulator,
    not_enough,
    take_distributed,
    take_packed,
)
from scheduler_api.engine.kubelet.reference.cpu_topology import CPUTopology, format_cpuset
from scheduler_api.engine.kubelet.reference.topologymanager import (
    TopologyHint,
    hints_by_resource,
    resource_hints,
)
from scheduler_api.engine.model.errors import AllocationError, SMTAlignmentError
from scheduler_api.engine.model.snapshot import go_parse_bool

__all__ = [
    "CPUAccumulator",
    "CPUHints",
    "Maturity",
    "STATIC_OPTIONS",
    "StaticPolicyOptions",
    "allocate_cpus",
    "check_options_fit",
    "parse_static_policy_options",
    "shared_pool",
    "validate_static_policy_options",
    "cpu_hint_inputs",
    "cpu_hint_preferred",
    "cpu_hints",
    "hints_by_resource",
    "reserve_cpus",
    "resource_hints",
    "take_cpus",
    "take_distributed",
    "take_packed",
]


@dataclass(frozen=True, slots=True)
class StaticPolicyOptions:
    """``--cpu-manager-policy-options`` of the static policy.

    Combinations kubelet refuses at start-up raise ``ValueError`` here.
    """

    full_pcpus_only: bool = False
    distribute_cpus_across_numa: bool = False
    align_by_socket: bool = False
    distribute_cpus_across_cores: bool = False
    strict_cpu_reservation: bool = False
    prefer_align_by_uncore_cache: bool = False

    def __post_init__(self) -> None:
        # NewStaticPolicyOptions' pair checks, in its order
        pairs = (
            ("full_pcpus_only", "distribute_cpus_across_cores"),
            ("distribute_cpus_across_numa", "distribute_cpus_across_cores"),
            ("prefer_align_by_uncore_cache", "distribute_cpus_across_cores"),
            ("prefer_align_by_uncore_cache", "distribute_cpus_across_numa"),
        )
        for first, second in pairs:
            if getattr(self, first) and getattr(self, second):
                raise ValueError(_incompatible(_OPTION_OF[first], _OPTION_OF[second]))


def _incompatible(first: str, second: str) -> str:
    return f"static policy options {first} and {second} can not be used at the same time"


class Maturity(StrEnum):
    """A policy option's graduation: what feature gate, if any, it needs."""

    ALPHA = "alpha"
    BETA = "beta"
    STABLE = "stable"


# --cpu-manager-policy-options: name -> (StaticPolicyOptions field, maturity at v1.35).
# policy_options.go (v1.34) lists strict-cpu-reservation as beta; KEP-4540 made it GA in
# v1.35 (the version scheduler-plugins builds on), which is what is modelled here.
STATIC_OPTIONS: Mapping[str, tuple[str, Maturity]] = {
    "full-pcpus-only": ("full_pcpus_only", Maturity.STABLE),
    "distribute-cpus-across-numa": ("distribute_cpus_across_numa", Maturity.BETA),
    "align-by-socket": ("align_by_socket", Maturity.ALPHA),
    "distribute-cpus-across-cores": ("distribute_cpus_across_cores", Maturity.ALPHA),
    "strict-cpu-reservation": ("strict_cpu_reservation", Maturity.STABLE),
    "prefer-align-cpus-by-uncorecache": ("prefer_align_by_uncore_cache", Maturity.BETA),
}
_OPTION_OF = {field: name for name, (field, _) in STATIC_OPTIONS.items()}
ALPHA_GATE, BETA_GATE = "CPUManagerPolicyAlphaOptions", "CPUManagerPolicyBetaOptions"
DEFAULT_GATES: Mapping[str, bool] = {ALPHA_GATE: False, BETA_GATE: True}


def _check_available(name: str, gates: Mapping[str, bool]) -> None:
    """``CheckPolicyOptionAvailable``: known, and its maturity's gate on."""
    if name not in STATIC_OPTIONS:
        raise ValueError(f'unknown CPU Manager Policy option: "{name}"')
    maturity = STATIC_OPTIONS[name][1]
    for level, gate in ((Maturity.ALPHA, ALPHA_GATE), (Maturity.BETA, BETA_GATE)):
        if maturity is level and not gates.get(gate, DEFAULT_GATES[gate]):
            raise ValueError(
                f"CPU Manager Policy {level.capitalize()}-level Options not enabled, but "
                f'option "{name}" provided (it needs the {gate} feature gate)'
            )


def parse_static_policy_options(
    raw: Mapping[str, str], gates: Mapping[str, bool] | None = None
) -> StaticPolicyOptions:
    """``NewStaticPolicyOptions``: the options from ``--cpu-manager-policy-options``, or
    ``ValueError`` with the reason the kubelet refuses to start.

    ``gates``: the kubelet's feature gates; a gate not named has its default
    (alpha options off, beta on). Go walks the map in random order; here options are
    checked in name order, so of several bad options the first by name is reported.
    """
    gates = gates or {}
    flags: dict[str, bool] = {}
    for name in sorted(raw):
        _check_available(name, gates)
        value = go_parse_bool(raw[name])
        if value is None:
            raise ValueError(
                f'bad value for option "{name}": strconv.ParseBool: parsing '
                f'"{raw[name]}": invalid syntax'
            )
        flags[STATIC_OPTIONS[name][0]] = value
    return StaticPolicyOptions(**flags)


def validate_static_policy_options(
    options: StaticPolicyOptions, topology: CPUTopology, single_numa_node: bool
) -> None:
    """``ValidateStaticPolicyOptions``: align-by-socket needs a Topology Manager policy
    other than single-numa-node, and no more sockets than NUMA nodes."""
    if options.align_by_socket and single_numa_node:
        raise ValueError(
            "the single-numa-node Topology Manager policy is incompatible with the "
            "align-by-socket CPU manager option"
        )
    check_options_fit(topology, options)


def shared_pool(
    topology: CPUTopology,
    exclusive: Iterable[int],
    reserved: Iterable[int],
    options: StaticPolicyOptions,
) -> frozenset[int]:
    """The default cpuset (``validateState``): the CPUs that Burstable, BestEffort and
    fractional Guaranteed containers share. Every CPU no container holds exclusively;
    with ``strict-cpu-reservation`` the reserved CPUs are left out too. Either way the
    CPUs open to exclusive allocation are this pool less the reserved ones."""
    pool = topology.cpus() - frozenset(exclusive)
    return pool - frozenset(reserved) if options.strict_cpu_reservation else pool


def check_options_fit(topology: CPUTopology, options: StaticPolicyOptions) -> None:
    """The hardware check kubelet's ``ValidateStaticPolicyOptions`` makes at start-up."""
    if options.align_by_socket and topology.num_sockets > topology.num_numa_nodes:
        raise ValueError(
            "align-by-socket is not compatible with hardware where the number of sockets "
            f"({topology.num_sockets}) is more than the number of NUMA nodes "
            f"({topology.num_numa_nodes})"
        )


def _take_by_topology(
    topo: CPUTopology, pool: frozenset[int], count: int, options: StaticPolicyOptions
) -> frozenset[int]:
    """``staticPolicy.takeByTopology``: pick the algorithm the options ask for."""
    spread = options.distribute_cpus_across_cores
    if options.distribute_cpus_across_numa:
        group = topo.cpus_per_core if options.full_pcpus_only else 1
        return take_distributed(topo, pool, count, group, spread=spread)
    return take_packed(
        topo, pool, count, spread=spread, prefer_uncore=options.prefer_align_by_uncore_cache
    )


def _validated_pool(
    topo: CPUTopology, available: Iterable[int], reserved: Iterable[int], count: int
) -> tuple[frozenset[int], frozenset[int]]:
    """``(available - reserved, reserved)`` after checking ids and the count."""
    free, held = frozenset(available), frozenset(reserved)
    unknown = topo.unknown(free | held)
    if unknown:
        raise AllocationError(
            f"CPU ids {format_cpuset(unknown)} are not on this node (it has "
            f"{format_cpuset(topo.cpus())}); check the available and reserved sets"
        )
    if count < 0:
        raise AllocationError(f"cannot take {count} CPUs: the request must be 0 or more")
    return free - held, held


def _check_smt(
    topo: CPUTopology, pool: frozenset[int], reserved: frozenset[int], count: int
) -> None:
    """``full-pcpus-only`` admission: whole cores only, never beside a reserved sibling."""
    per_core = topo.cpus_per_core
    if count % per_core:
        lower, upper = count - count % per_core, count - count % per_core + per_core
        raise SMTAlignmentError(
            f"SMT Alignment Error: requested {count} cpus not multiple cpus per core = "
            f"{per_core} (full-pcpus-only hands out whole cores; ask for {lower or upper}"
            f"{f' or {upper}' if lower else ''} CPUs)"
        )
    reserved_cores = frozenset().union(*(topo.siblings(cpu) for cpu in reserved))
    physical = len(pool - reserved_cores)
    if count > physical:
        raise SMTAlignmentError(
            "SMT Alignment Error: not enough free physical CPUs: available physical CPUs = "
            f"{physical}, requested CPUs = {count}, CPUs per core = {per_core} (CPUs that share "
            f"a core with reserved CPUs {format_cpuset(reserved)} do not count)"
        )


def take_cpus(
    topology: CPUTopology,
    available: Iterable[int],
    count: int,
    *,
    options: StaticPolicyOptions = StaticPolicyOptions(),
    reserved: Iterable[int] = (),
) -> frozenset[int]:
    """The ``count`` CPUs kubelet's ``takeByTopology`` picks from ``available - reserved``.

    ``count == 0`` takes nothing. ``AllocationError`` for unknown ids, a negative
    count or too few free CPUs; ``SMTAlignmentError`` for ``full-pcpus-only``
    refusals. Cost: O(n log n) per step for n CPUs (packed); the distributed
    variant adds the NUMA combination search.
    """
    pool = _checked_pool(topology, available, reserved, count, options)
    return _take_by_topology(topology, pool, count, options) if count else frozenset()


def allocate_cpus(
    topology: CPUTopology,
    available: Iterable[int],
    count: int,
    hint: TopologyHint,
    *,
    options: StaticPolicyOptions = StaticPolicyOptions(),
    reserved: Iterable[int] = (),
) -> frozenset[int]:
    """kubelet's ``Allocate`` + ``allocateCPUs``: CPUs inside the hint's NUMA nodes first.

    With ``align_by_socket`` the hint widens to the whole sockets its NUMA nodes
    sit in. Whatever the aligned CPUs cannot cover comes from the rest of the pool.
    """
    pool = _checked_pool(topology, available, reserved, count, options)
    if count == 0:
        return frozenset()
    aligned_taken: frozenset[int] = frozenset()
    if hint.numa is not None:
        aligned = _aligned_cpus(topology, hint.numa, options) & pool
        aligned_taken = _take_by_topology(topology, aligned, min(count, len(aligned)), options)
    rest = pool - aligned_taken
    if count - len(aligned_taken) > len(rest):
        raise not_enough(count, pool)
    return aligned_taken | _take_by_topology(topology, rest, count - len(aligned_taken), options)


def _checked_pool(
    topology: CPUTopology,
    available: Iterable[int],
    reserved: Iterable[int],
    count: int,
    options: StaticPolicyOptions,
) -> frozenset[int]:
    """The free CPUs to pick from, once the checks every Allocate makes first have passed:
    the options fit the machine, the ids and the count are sound, and (full-pcpus-only)
    enough whole cores are free. A count of 0 passes with no SMT check."""
    check_options_fit(topology, options)
    pool, held = _validated_pool(topology, available, reserved, count)
    if count and options.full_pcpus_only:
        _check_smt(topology, pool, held, count)
    return pool


def _aligned_cpus(
    topology: CPUTopology, numa: frozenset[int], options: StaticPolicyOptions
) -> frozenset[int]:
    """``getAlignedCPUs``: the hint's NUMA nodes, or their whole sockets with align-by-socket."""
    missing = numa - set(topology.numa_nodes())
    if missing:
        raise ValueError(
            f"hint names NUMA nodes {sorted(missing)} this node does not have "
            f"(it has {list(topology.numa_nodes())})"
        )
    if options.align_by_socket:
        return topology.cpus_in_sockets(topology.sockets_in_numa_nodes(numa))
    return topology.cpus_in_numa_nodes(numa)


def reserve_cpus(
    topology: CPUTopology, count: int, *, options: StaticPolicyOptions = StaticPolicyOptions()
) -> frozenset[int]:
    """The CPUs kubelet reserves when only a count is configured (lowest cores first).

    ``count`` is ceil(kube-reserved + system-reserved CPU); kubelet runs its
    ``takeByTopology`` over every CPU, with no SMT check. Example: 8 CPUs with
    HT and ``count=2`` give ``{0, 4}``.
    """
    if not 0 <= count <= topology.num_cpus:
        raise AllocationError(
            f"cannot reserve {count} CPUs: this node has {topology.num_cpus} "
            "(kubelet refuses to start: unable to reserve the required amount of CPUs)"
        )
    return _take_by_topology(topology, topology.cpus(), count, options)


def cpu_hints(
    topology: CPUTopology,
    available: Iterable[int],
    count: int,
    reusable: Iterable[int] = (),
    *,
    options: StaticPolicyOptions = StaticPolicyOptions(),
    reserved: Iterable[int] = (),
) -> list[TopologyHint]:
    """``generateCPUTopologyHints``: every NUMA combination that can hold ``count`` CPUs.

    A mask qualifies when it contains the NUMA node of every reusable CPU and
    its reusable plus available CPUs reach ``count``. It is preferred when its
    width equals the fewest NUMA nodes whose *total* CPUs reach ``count`` (or,
    with ``align_by_socket``, when it spans the minimum number of sockets).

    Returns ``[]`` when nothing qualifies, as kubelet does; its Topology Manager
    reads that as ``{None, not preferred}`` while :func:`merge_hints` reads ``[]``
    as "no preference", so pass results through :func:`hints_by_resource`.
    ``count == 0`` is "no preference": ``[TopologyHint(None, True)]``.
    Cost: O(2^N * n) for N NUMA nodes and n CPUs.
    """
    inputs = cpu_hint_inputs(
        topology, available, count, reusable, options=options, reserved=reserved
    )
    if inputs is None:
        return [TopologyHint(None, True)]
    pool, reuse = inputs
    min_width, masks = _cpu_masks(topology, pool, reuse, count)
    return [
        TopologyHint(m.to_frozenset(), cpu_hint_preferred(topology, m, min_width, options))
        for m in masks
    ]


class CPUHints(Protocol):
    """A CPU hint generator with :func:`cpu_hints`' signature and answers: the reference,
    or a faster twin a caller outside ``reference/`` passes in (the reference cannot name
    a fast path, so whoever wants one injects it)."""

    def __call__(
        self,
        topology: CPUTopology,
        available: Iterable[int],
        count: int,
        reusable: Iterable[int] = (),
        *,
        options: StaticPolicyOptions = ...,
        reserved: Iterable[int] = (),
    ) -> list[TopologyHint]: ...


def cpu_hint_inputs(
    topology: CPUTopology,
    available: Iterable[int],
    count: int,
    reusable: Iterable[int] = (),
    *,
    options: StaticPolicyOptions = StaticPolicyOptions(),
    reserved: Iterable[int] = (),
) -> tuple[frozenset[int], frozenset[int]] | None:
    """What :func:`cpu_hints` checks before it walks the masks, in its order, and the
    ``(available - reserved, reusable)`` sets the walk counts.

    None for ``count == 0``: no preference, ``[TopologyHint(None, True)]``, with no
    further check. ``ValueError`` for a negative count, options the machine refuses
    (:func:`check_options_fit`) or CPU ids the node does not have. Public so that a
    faster walk shares these rules (and their messages) rather than restating them.
    """
    if count < 0:
        raise ValueError(f"a CPU request cannot be negative; got {count}")
    if count == 0:
        return None
    check_options_fit(topology, options)
    pool = frozenset(available) - frozenset(reserved)
    reuse = frozenset(reusable)
    unknown = topology.unknown(pool | reuse)
    if unknown:
        raise ValueError(f"CPU ids {format_cpuset(unknown)} are not on this node")
    return pool, reuse


def _cpu_masks(
    topology: CPUTopology, pool: frozenset[int], reuse: frozenset[int], count: int
) -> tuple[int, list[NUMAMask]]:
    """The minimal width by total CPUs, and every mask that can hold ``count`` now."""
    min_width, masks = topology.num_numa_nodes, []
    for mask in iterate_masks(topology.numa_nodes()):
        if len(topology.cpus_in_numa_nodes(mask.bits)) >= count:
            min_width = min(min_width, mask.count())
        if all(mask.is_set(topology.numa_of(c)) for c in reuse):
            # As kubelet: a reusable CPU that is also available counts twice.
            matching = len(reuse) + sum(1 for c in pool if mask.is_set(topology.numa_of(c)))
            if matching >= count:
                masks.append(mask)
    return min_width, masks


def cpu_hint_preferred(
    topology: CPUTopology, mask: NUMAMask, min_width: int, options: StaticPolicyOptions
) -> bool:
    """Whether a qualifying mask is preferred: it is as narrow as the fewest NUMA nodes
    whose total CPUs hold the request (``min_width``), or, with ``align_by_socket``, it
    spans exactly the fewest sockets the request needs."""
    if options.align_by_socket and _socket_aligned(topology, mask, min_width):
        return True
    return mask.count() == min_width


def _socket_aligned(topology: CPUTopology, mask: NUMAMask, min_width: int) -> bool:
    """``isHintSocketAligned``: the mask spans exactly the fewest sockets the request needs."""
    numa_per_socket = topology.num_numa_nodes // topology.num_sockets
    if numa_per_socket == 0:
        return False
    min_sockets = (min_width + numa_per_socket - 1) // numa_per_socket
    return len(topology.sockets_in_numa_nodes(mask.bits)) == min_sockets
