"""koord-scheduler NodeNUMAResource: PreFilter, Filter, Score, Reserve and PreBind.

Reproduces pkg/scheduler/plugins/nodenumaresource plugin.go, topology_hint.go,
scoring.go and util.go on top of the resource manager in `koordinator.reference.numa`.
`evaluate` runs PreFilter + Filter + Score; `allocate` additionally runs Reserve and
renders the annotations PreBind writes (resource-status, and resource-spec when the
pod's bind policy was defaulted), so cpusets are only computed where needed.

The reservation plugin's part (koordinator v1.8.0 pkg/scheduler/plugins/reservation
plugin.go Filter/filterWithReservations, nominator.go, Reserve and PreBind) is here too:
a pod with a reservation affinity needs a matched reservation that admits it, and a pod
nominated to a reservation records it (reservation-allocated) whether or not the NUMA
plugin allocated from it.

Not modelled: CPU amplification ratios (treated as 1), hints from other providers
(DeviceShare), the reservation plugin's own NodeResourcesFit restoration (fitsNode with
reserved remains given back) and its node Score, reservation taints and preemption.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import NamedTuple, Protocol

from scheduler_api.engine.koordinator.reference.merge import Hint, merge
from scheduler_api.engine.koordinator.reference.numa import (
    Allocation,
    NodeContext,
    ResourceOptions,
    ignored_reusable,
    resource_score,
    topology_hints,
    try_allocate,
    try_from_node,
    try_from_reservations,
    try_ignoring_reservations,
    with_hint,
)
from scheduler_api.engine.koordinator.reference.pod import (
    ERR_INVALID_CPUS,
    PodState,
    prefilter,
)
from scheduler_api.engine.koordinator.reference.render import render_resource_status
from scheduler_api.engine.koordinator.reference.reservation import (
    ReservationAlloc,
    ReservationSplit,
    RestoreState,
    nominate,
    reservation_admits,
    restore_state,
    split_reservations,
)
from scheduler_api.engine.koordinator.reference.state import (
    KoordConfig,
    NodeBooks,
    add,
    add_numa,
    available_cpus,
    available_numa,
    fresh_books,
    node_cpu_bind_policy,
    node_numa_policy,
    numa_allocate_strategy,
)
from scheduler_api.engine.model.results import (
    PlacementResult,
    Reason,
    ReasonCheck,
    refused,
)
from scheduler_api.engine.model.snapshot import (
    ANN_KOORD_RESERVATION_ALLOCATED,
    ANN_KOORD_RESOURCE_SPEC,
    ANN_KOORD_RESOURCE_STATUS,
    CPUBindPolicy,
    NodeSnapshot,
    NUMATopologyPolicy,
    PodSpec,
    ReservationSnapshot,
)

__all__ = [
    "AllocationOps",
    "KoordConfig",
    "allocate",
    "evaluate",
    "prefilter",
    "reference_ops",
    "render_resource_status",
]

ERR_POLICY_MISMATCH = "node(s) NUMA Topology policy not match"
ERR_INVALID_TOPOLOGY = "node(s) invalid CPU Topology"
ERR_SMT = "node(s) requested cpus not multiple cpus per core"
ERR_BIND_CONFLICT = "node(s) cpu bind policy conflicts with pod's required cpu bind policy"


# --- per-node setup ------------------------------------------------------------------------

# restore_state of a node whose reservations the pod neither matches nor shares (most
# nodes hold none): one shared state that nothing can change
NO_RESTORE = RestoreState(
    matched_allocatable=MappingProxyType({}),
    matched_allocated=MappingProxyType({}),
    unmatched_used=MappingProxyType({}),
)
NO_SPLIT = ReservationSplit()


@dataclass(frozen=True, slots=True)
class NodeRun:
    """One node's context for one pod: policies resolved, reservations split."""

    node: NodeSnapshot
    pod: PodSpec
    state: PodState
    ctx: NodeContext
    node_bind: str
    numa_policy: str
    request_cpu_bind: bool
    candidates: tuple[ReservationAlloc, ...]
    split: ReservationSplit


def request_cpu_bind(state: PodState, node_bind: str) -> bool | Reason:
    """requestCPUBind: a node bind policy turns binding on for whole-cpu requests."""
    if state.request_cpu_bind:
        return True
    cpu = state.requests.get("cpu", 0)
    if cpu == 0 or node_bind in ("", "None"):
        return False
    if cpu % 1000 != 0:
        return Reason(ReasonCheck.INVALID_CPU_REQUEST, resource="cpu", message=ERR_INVALID_CPUS)
    return True


def cpu_bind_policy(run: NodeRun) -> tuple[str, bool]:
    """getCPUBindPolicy: (policy, required); a node policy makes it required."""
    if run.state.required_cpu_bind_policy:
        return run.state.required_cpu_bind_policy, True
    if run.node_bind == "SpreadByPCPUs":
        return CPUBindPolicy.SPREAD_BY_PCPUS, True
    if run.node_bind == "FullPCPUsOnly":
        return CPUBindPolicy.FULL_PCPUS, True
    return run.state.preferred_cpu_bind_policy, False


def resource_options(run: NodeRun, hint: frozenset[int] | None) -> ResourceOptions:
    """getResourceOptions (amplification ratio 1)."""
    policy, required = cpu_bind_policy(run)
    strategy = numa_allocate_strategy(run.node, run.ctx.config)
    return ResourceOptions(
        requests=run.state.requests,
        num_cpus_needed=run.state.num_cpus_needed,
        request_cpu_bind=run.request_cpu_bind,
        required_cpu_bind_policy=required,
        cpu_bind_policy=policy,
        cpu_exclusive_policy=run.state.preferred_cpu_exclusive_policy,
        numa_allocate_strategy=strategy,
        required_from_reservation=run.state.has_reservation_affinity,
        ignores_reservations=run.state.ignores_reservations,
        hint=hint,
    )


BooksSource = Callable[[NodeSnapshot, KoordConfig, Sequence[ReservationSnapshot]], NodeBooks]
SplitSource = Callable[
    [NodeBooks, PodSpec, Sequence[ReservationSnapshot]], tuple[ReservationSplit, RestoreState]
]
PrefilterSource = Callable[[PodSpec, KoordConfig], PodState]


class Inputs(NamedTuple):
    """Where the plugin gets the node's books, the reservation split and the pod's
    PreFilter state. The reference works each out from the snapshot every time
    (`FRESH`); a fast path may hand in kept ones (`koordinator.cache.KEPT`), which must
    be equal in value: the conformance tests compare the two."""

    books: BooksSource
    split: SplitSource
    prefilter: PrefilterSource


def split_and_restore(
    books: NodeBooks, pod: PodSpec, reservations: Sequence[ReservationSnapshot]
) -> tuple[ReservationSplit, RestoreState]:
    """split_reservations, and restore_state when the pod matches or must skip any."""
    if not books.reservations:
        return NO_SPLIT, NO_RESTORE
    split = split_reservations(books.node, pod, reservations)
    restore = NO_RESTORE
    if split.matched or split.unmatched:
        restore = restore_state(books.node, books.held, split)
    return split, restore


FRESH = Inputs(fresh_books, split_and_restore, prefilter)


def node_run(
    node: NodeSnapshot,
    pod: PodSpec,
    state: PodState,
    reservations: Sequence[ReservationSnapshot],
    config: KoordConfig,
    inputs: Inputs = FRESH,
) -> NodeRun | Reason:
    """Resolve policies for the node; a Reason when Filter refuses before allocating.

    Filter checks a NUMA policy conflict before the cpu request; a pod without a NUMA
    policy cannot conflict, so its cpu request is checked before the node's books are
    looked up (most refusals of a fractional pod on bind-policy nodes end here)."""
    node_bind = node_cpu_bind_policy(node)
    binding = request_cpu_bind(state, node_bind) if not state.pod_numa_policy else None
    if isinstance(binding, Reason):
        return binding
    books = inputs.books(node, config, reservations)
    node_policy = node_numa_policy(node, books.view)
    if node_policy and state.pod_numa_policy and node_policy != state.pod_numa_policy:
        return Reason(ReasonCheck.POLICY_MISMATCH, message=ERR_POLICY_MISMATCH)
    if binding is None:
        binding = request_cpu_bind(state, node_bind)
        if isinstance(binding, Reason):
            return binding
    split, restore = inputs.split(books, pod, reservations)
    ctx = NodeContext(books.view, books.held, restore, config, books.memo)
    return NodeRun(
        node, pod, state, ctx, node_bind, state.pod_numa_policy or node_policy,
        binding, ctx.restore.matched, split,
    )  # fmt: skip


# --- what Filter and Score ask the resource manager -------------------------------------


class AllocationOps(Protocol):
    """The three questions Filter and Score put to the resource manager.

    The reference answers them by allocating (cpusets and all); `koordinator.fast.filter_score`
    answers the same questions from counts. Both must give equal answers.
    """

    def hints(self, run: NodeRun, opts: ResourceOptions) -> dict[str, list[Hint]] | Reason:
        """Hints whose merge is the merge of GetTopologyHints' hints."""
        ...

    def attempt(self, run: NodeRun, opts: ResourceOptions) -> Reason | None:
        """Why the allocation Filter tries would fail; None when it succeeds."""
        ...

    def score_inputs(
        self, run: NodeRun, hint: frozenset[int] | None
    ) -> tuple[dict[str, int], dict[str, int]] | Reason:
        """Score's (allocatable, requested) after placing the pod, or why placing fails."""
        ...


class ReferenceOps:
    """The resource manager as upstream runs it: every question is a real allocation."""

    def hints(self, run: NodeRun, opts: ResourceOptions) -> dict[str, list[Hint]] | Reason:
        return topology_hints(run.ctx, opts, run.numa_policy, run.candidates)

    def attempt(self, run: NodeRun, opts: ResourceOptions) -> Reason | None:
        result = try_allocate(run.ctx, opts, run.candidates)
        return result if isinstance(result, Reason) else None

    def score_inputs(
        self, run: NodeRun, hint: frozenset[int] | None
    ) -> tuple[dict[str, int], dict[str, int]] | Reason:
        placed = place(run, hint)
        return placed if isinstance(placed, Reason) else _numa_score_inputs(run, placed)


REFERENCE_OPS = ReferenceOps()
OpsChooser = Callable[[NodeRun], AllocationOps]


def reference_ops(run: NodeRun) -> AllocationOps:
    return REFERENCE_OPS


# --- Filter --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FilterOutcome:
    result: PlacementResult
    run: NodeRun | None = None
    hint: frozenset[int] | None = None
    ops: AllocationOps = REFERENCE_OPS


def bind_checks(run: NodeRun) -> Reason | None:
    """Filter's cpu-bind checks: a valid topology, no policy conflict, SMT alignment."""
    topology = run.ctx.view.topology
    if not topology.is_valid():
        return Reason(ReasonCheck.INVALID_CPU_TOPOLOGY, message=ERR_INVALID_TOPOLOGY)
    required = run.state.required_cpu_bind_policy
    if run.node_bind == "FullPCPUsOnly":
        required = CPUBindPolicy.FULL_PCPUS
    elif run.node_bind == "SpreadByPCPUs":
        required = CPUBindPolicy.SPREAD_BY_PCPUS
    if run.state.required_cpu_bind_policy and run.state.required_cpu_bind_policy != required:
        return Reason(ReasonCheck.CPU_BIND_POLICY_CONFLICT, message=ERR_BIND_CONFLICT)
    if (
        required == CPUBindPolicy.FULL_PCPUS
        and run.state.num_cpus_needed % topology.cpus_per_core()
    ):
        return Reason(ReasonCheck.SMT_ALIGNMENT, resource="cpu", message=ERR_SMT)
    return None


def _admit(run: NodeRun, ops: AllocationOps) -> FilterOutcome:
    """FilterByNUMANode: hints, the policy's merge, then a real allocation attempt."""
    numa_nodes = run.ctx.view.numa_nodes()
    if not numa_nodes:
        return FilterOutcome(
            refused(Reason(ReasonCheck.INSUFFICIENT_NUMA, message="node(s) missing NUMA resources"))
        )
    opts = resource_options(run, None)
    hints = ops.hints(run, opts)
    if isinstance(hints, Reason):
        return FilterOutcome(refused(hints))
    statuses = run.ctx.state.numa_status(len(numa_nodes))
    exclusive = run.state.pod_numa_exclusive or ("Required" if run.state.pod_numa_policy else "")
    merged = merge(run.numa_policy, numa_nodes, [hints], exclusive, statuses)
    if not merged.admit and merged.reasons:
        check = (
            ReasonCheck.UNSATISFIED_NUMA
            if merged.reasons[0].startswith("Unsatisfied")
            else ReasonCheck.UNALIGNED_HINT
        )
        return FilterOutcome(refused(*(Reason(check, message=m) for m in merged.reasons)))
    attempt = ops.attempt(run, with_hint(opts, merged.hint.mask))
    if attempt is not None:
        return FilterOutcome(refused(attempt))
    zones = tuple(sorted(merged.hint.mask or ()))
    return FilterOutcome(PlacementResult(True, numa_zones=zones), run, merged.hint.mask, ops)


def filter_node(
    node: NodeSnapshot,
    pod: PodSpec,
    state: PodState,
    reservations: Sequence[ReservationSnapshot],
    config: KoordConfig,
    choose: OpsChooser = reference_ops,
    inputs: Inputs = FRESH,
) -> FilterOutcome:
    """Plugin.Filter; `choose` picks who answers the resource manager's questions."""
    if state.error is not None:
        return FilterOutcome(refused(state.error))
    if state.skip:
        return FilterOutcome(PlacementResult(True, notes=("pod requests nothing: plugin skipped",)))
    run = node_run(node, pod, state, reservations, config, inputs)
    if isinstance(run, Reason):
        return FilterOutcome(refused(run))
    return filter_run(run, choose(run))


def _unknown_numa_policy(policy: str) -> Reason | None:
    """createNUMATopologyPolicy knows three policies; for any other label value (such as
    `None`, a value users write) it returns no policy, and FilterByNUMANode's merge then
    dereferences nil: koord-scheduler panics instead of placing the pod."""
    if policy in KNOWN_NUMA_POLICIES:
        return None
    message = (
        f"koord-scheduler would fail: NUMA topology policy {policy!r} is none of "
        f"{', '.join(sorted(KNOWN_NUMA_POLICIES))} (its Filter dereferences a nil policy)"
    )
    return Reason(ReasonCheck.SCHEDULER_ERROR, message=message)


KNOWN_NUMA_POLICIES = frozenset(
    {
        NUMATopologyPolicy.BEST_EFFORT,
        NUMATopologyPolicy.RESTRICTED,
        NUMATopologyPolicy.SINGLE_NUMA_NODE,
    }
)


ERR_RESERVATION_AFFINITY = "node(s) no reservations match reservation affinity"
ERR_NO_RESERVATION_MEETS = "node(s) no reservation(s) to meet the requirements"


def reservation_filter(run: NodeRun) -> tuple[Reason, ...]:
    """The Reservation plugin's Filter, before the NUMA plugin's, for a pod with a
    reservation affinity (a pod without one falls back to the node): some matched
    reservation (the named one, if named) must admit it (`reservation_admits`)."""
    if not run.state.has_reservation_affinity:
        return ()
    if not run.split.matched:
        return (Reason(ReasonCheck.RESERVATION, message=ERR_RESERVATION_AFFINITY),)
    named, requests, messages = run.pod.reservation_affinity_name, run.state.requests, []
    for r in run.split.matched:
        if named and r.name != named:
            continue
        reasons = reservation_admits(requests, r, run.node, True)
        if reasons is None:
            return ()
        messages += reasons
    found = messages or [ERR_NO_RESERVATION_MEETS]
    return tuple(Reason(ReasonCheck.RESERVATION, message=m) for m in found)


def filter_run_refuses_at_once(run: NodeRun) -> bool:
    """Whether the Reservation plugin's Filter refuses the pod (`reservation_filter`)."""
    return bool(reservation_filter(run))


def filter_run(run: NodeRun, ops: AllocationOps) -> FilterOutcome:
    """Plugin.Filter once the node's policies are resolved (`reservation_filter` first)."""
    refusals = reservation_filter(run)
    if refusals:
        return FilterOutcome(refused(*refusals))
    if run.request_cpu_bind:
        problem = bind_checks(run)
        if problem is not None:
            return FilterOutcome(refused(problem))
        _, required = cpu_bind_policy(run)
        if required and run.numa_policy == NUMATopologyPolicy.NONE:
            attempt = ops.attempt(run, resource_options(run, None))
            if attempt is not None:
                return FilterOutcome(refused(attempt))
            return FilterOutcome(PlacementResult(True), run, None, ops)
    if run.numa_policy != NUMATopologyPolicy.NONE:
        unknown = _unknown_numa_policy(run.numa_policy)
        return FilterOutcome(refused(unknown)) if unknown else _admit(run, ops)
    note = ("NUMA topology policy none",)
    return FilterOutcome(PlacementResult(True, notes=note), run, None, ops)


# --- Score and Reserve ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Placed:
    """What allocateWithNominatedReservation / tryAllocateFromNode produced, and from where."""

    allocation: Allocation
    reusable: Mapping[int, Mapping[str, int]]
    preferred_cpus: frozenset[int]
    # the nominated reservation (the reservation plugin assumes the pod into it and PreBind
    # records it), whether the allocation came from it or from the node
    reservation: ReservationSnapshot | None = None


def nominated_reservation(run: NodeRun, opts: ResourceOptions) -> ReservationSnapshot | None:
    """NominateReservation on the node; the NUMA plugin's FilterNominateReservation tries
    each reservation holding NUMA resources or cpus alone (only a pod that must allocate
    from a reservation can fail it)."""
    allocs = {a.reservation.uid: a for a in run.ctx.restore.matched}
    binds = run.request_cpu_bind or run.numa_policy != NUMATopologyPolicy.NONE

    def allocates(r: ReservationSnapshot) -> bool:
        alloc = allocs.get(r.uid)
        if not binds or alloc is None:
            return True
        return not isinstance(try_from_reservations(run.ctx, opts, [alloc]), Reason)

    return nominate(run.node, run.pod, run.split, run.state.requests, allocates)


def place(run: NodeRun, hint: frozenset[int] | None) -> Placed | Reason:
    """The nominated reservation first (if it reserved NUMA resources or cpus), then the node;
    a reservation-ignored pod takes from the node and every reservation's remains at once."""
    opts = resource_options(run, hint)
    if run.state.ignores_reservations:
        return _place_ignoring_reservations(run, opts)
    nominated = nominated_reservation(run, opts)
    if nominated is None and run.state.has_reservation_affinity:
        return Reason(ReasonCheck.RESERVATION, message="no nominated reservation")
    chosen = [
        a
        for a in run.ctx.restore.matched
        if nominated is not None and a.reservation.uid == nominated.uid
    ]
    result = try_from_reservations(run.ctx, opts, chosen)
    if isinstance(result, Reason):
        return result
    if result is not None:
        alloc = chosen[0]
        reusable = add_numa(
            run.ctx.restore.unmatched_used, run.ctx.restore.matched_allocated, alloc.remained
        )
        return Placed(result, reusable, alloc.reserved_cpus, nominated)
    from_node = try_from_node(run.ctx, opts)
    if isinstance(from_node, Reason):
        return from_node
    return Placed(from_node, add_numa(run.ctx.restore.unmatched_used), frozenset(), nominated)


def _place_ignoring_reservations(run: NodeRun, opts: ResourceOptions) -> Placed | Reason:
    result = try_ignoring_reservations(run.ctx, opts)
    if isinstance(result, Reason):
        return result
    restore = run.ctx.restore
    return Placed(result, ignored_reusable(restore), restore.matched_reserved_cpus)


def _numa_score_inputs(run: NodeRun, placed: Placed) -> tuple[dict[str, int], dict[str, int]]:
    """calculateAllocatableAndRequested: the chosen NUMA nodes, or the whole node."""
    alloc, view, held = placed.allocation, run.ctx.view, run.ctx.state
    if alloc.numa_resources:
        _, allocated = available_numa(held, view, placed.reusable)
        allocatable: dict[str, int] = {}
        requested: dict[str, int] = {}
        for numa, _ in alloc.numa_resources:
            requested = add(requested, allocated.get(numa, {}))
            allocatable = add(allocatable, view.resources_of(numa))
    else:
        allocatable, requested = dict(run.node.allocatable), dict(run.node.requested)
    if alloc.cpuset:
        _, still_held = available_cpus(held, view, placed.preferred_cpus - alloc.cpuset)
        requested["cpu"] = len(still_held) * 1000
    return allocatable, requested


def score_node(
    run: NodeRun, hint: frozenset[int] | None, ops: AllocationOps = REFERENCE_OPS
) -> int | Reason:
    """Plugin.Score: node-level LeastAllocated without a NUMA policy, else the chosen NUMAs."""
    config = run.ctx.config
    if run.request_cpu_bind and not run.ctx.view.topology.is_valid():
        return 0
    if run.numa_policy == NUMATopologyPolicy.NONE:
        return resource_score(run.node.requested, run.node.allocatable, run.state.requests,
                              config.resource_weights, config.scoring_strategy)  # fmt: skip
    inputs = ops.score_inputs(run, hint)
    if isinstance(inputs, Reason):
        return inputs
    allocatable, requested = inputs
    return resource_score(
        requested, allocatable, run.state.requests, config.resource_weights, config.scoring_strategy
    )


# --- rendering -------------------------------------------------------------------------------


def resource_spec_writeback(run: NodeRun) -> str | None:
    """appendResourceSpecIfMissed: the resource-spec PreBind writes back, if any."""
    policy, required = cpu_bind_policy(run)
    spec = run.pod.koord_resource_spec
    if spec is None:
        return None
    values = {
        "requiredCPUBindPolicy": spec.required_cpu_bind_policy,
        "preferredCPUBindPolicy": spec.preferred_cpu_bind_policy,
        "preferredCPUExclusivePolicy": spec.preferred_cpu_exclusive_policy,
    }
    changed = False
    if required and values["requiredCPUBindPolicy"] in ("", CPUBindPolicy.DEFAULT):
        values["requiredCPUBindPolicy"], changed = policy, True
    if values["preferredCPUBindPolicy"] == CPUBindPolicy.DEFAULT:
        values["preferredCPUBindPolicy"], changed = policy, True
    if not values["requiredCPUBindPolicy"] and not values["preferredCPUBindPolicy"] and policy:
        values["preferredCPUBindPolicy"], changed = policy, True
    if not changed:
        return None
    return json.dumps({k: v for k, v in values.items() if v}, separators=(",", ":"))


def reservation_allocated(reservation: ReservationSnapshot) -> str:
    """SetReservationAllocated: PreBind's record of the reservation the pod came from
    (the next pod reads it: an allocateOnce reservation is then used up)."""
    return json.dumps({"name": reservation.name, "uid": reservation.uid}, separators=(",", ":"))


# --- entry points ---------------------------------------------------------------------------


def filter_and_score(
    node: NodeSnapshot,
    pod: PodSpec,
    conf: KoordConfig,
    reservations: Sequence[ReservationSnapshot],
    choose: OpsChooser = reference_ops,
    inputs: Inputs = FRESH,
) -> tuple[PlacementResult, FilterOutcome, PodState]:
    """PreFilter, Filter and Score: the verdict, with what Reserve needs to go on."""
    state = inputs.prefilter(pod, conf)
    outcome = filter_node(node, pod, state, reservations, conf, choose, inputs)
    if not outcome.result.fits or outcome.run is None:
        score = 0 if outcome.result.fits else None
        return replace(outcome.result, score=score), outcome, state
    scored = score_node(outcome.run, outcome.hint, outcome.ops)
    if isinstance(scored, Reason):
        return replace(outcome.result, score=None, reasons=(scored,)), outcome, state
    return replace(outcome.result, score=scored), outcome, state


def evaluate(
    node: NodeSnapshot,
    pod: PodSpec,
    *,
    config: KoordConfig | None = None,
    reservations: Sequence[ReservationSnapshot] = (),
    ops: OpsChooser = reference_ops,
    inputs: Inputs = FRESH,
) -> PlacementResult:
    """PreFilter + Filter + Score for one node; no cpuset (see `allocate`).

    A Score that fails (the allocation it re-runs cannot be made) fails the real
    scheduling cycle: reported as score None with the reason.
    """
    return filter_and_score(node, pod, config or KoordConfig(), reservations, ops, inputs)[0]


def _with_nominated_reservation(verdict: PlacementResult, run: NodeRun) -> PlacementResult:
    """A pod the NUMA plugin's Reserve leaves alone: the reservation plugin still nominates
    a reservation, assumes the pod into it and records it at PreBind."""
    if run.state.ignores_reservations or not run.split.matched:
        return verdict
    nominated = nominated_reservation(run, resource_options(run, None))
    if nominated is None:
        if run.state.has_reservation_affinity:
            return refused(Reason(ReasonCheck.RESERVATION, message=ERR_RESERVATION_AFFINITY),
                           notes=("Reserve failed",))  # fmt: skip
        return verdict
    recorded = {ANN_KOORD_RESERVATION_ALLOCATED: reservation_allocated(nominated)}
    return replace(verdict, annotations={**verdict.annotations, **recorded})


def allocate(
    node: NodeSnapshot,
    pod: PodSpec,
    *,
    config: KoordConfig | None = None,
    reservations: Sequence[ReservationSnapshot] = (),
    ops: OpsChooser = reference_ops,
    inputs: Inputs = FRESH,
) -> PlacementResult:
    """`evaluate`, then Reserve: the cpuset and NUMA amounts, and the PreBind annotations.

    Reserve allocates only when the pod binds cpus or the node has a NUMA policy;
    otherwise nothing is written, as upstream. Reserve always allocates for real,
    whichever `ops` answered Filter and Score.
    """
    conf = config or KoordConfig()
    verdict, outcome, state = filter_and_score(node, pod, conf, reservations, ops, inputs)
    run = outcome.run
    if not verdict.fits or run is None:
        return verdict
    if not run.request_cpu_bind and run.numa_policy == NUMATopologyPolicy.NONE:
        return _with_nominated_reservation(verdict, run)
    placed = place(run, outcome.hint)
    if isinstance(placed, Reason):
        return refused(placed, notes=("Reserve failed",))
    alloc = placed.allocation
    annotations = {ANN_KOORD_RESOURCE_STATUS: render_resource_status(alloc, state.formats)}
    spec = resource_spec_writeback(run) if run.request_cpu_bind else None
    if spec is not None:
        annotations[ANN_KOORD_RESOURCE_SPEC] = spec
    if placed.reservation is not None:
        annotations[ANN_KOORD_RESERVATION_ALLOCATED] = reservation_allocated(placed.reservation)
    zones = tuple(n for n, _ in alloc.numa_resources) or verdict.numa_zones
    return replace(
        verdict,
        cpuset=alloc.cpuset,
        numa_zones=zones,
        annotations=annotations,
        numa_resources={numa: dict(amounts) for numa, amounts in alloc.numa_resources},
    )
