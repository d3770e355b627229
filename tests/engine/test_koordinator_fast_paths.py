"""Koordinator's fast paths equal the steps they stand for.

The counting Filter walks masks with a `Spreader` (distribute worked out once per pod)
and sums kept per mask; the capacity count assumes the copies a NUMA node takes in
closed form (`alike_copies`), fills single NUMA nodes before judging any copy whole,
takes SpreadByPCPUs cpus by index (`pick_spread`) and keeps books between what-ifs.
Each is held here against the step it replaces, on random Koordinator nodes (those of
`test_koordinator_count`, and roomier ones where a NUMA node takes many copies).
KOORD_EXAMPLES=1000 for a deeper local run.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import combinations
from unittest import mock

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from scheduler_api.engine.koordinator.cache import MEMO_KEPT, kept_prefilter, remember
from scheduler_api.engine.koordinator.fast import filter_score as koordinator_fast
from scheduler_api.engine.koordinator.fast.books import books_of, layout_of, numa_totals
from scheduler_api.engine.koordinator.fast.count import (
    Filler,
    copy_allocation,
    fill_count,
)
from scheduler_api.engine.koordinator.fast.filter_score import countable
from scheduler_api.engine.koordinator.fast.spread import Spreader, masks_by_width
from scheduler_api.engine.koordinator.fast.takes import (
    alike_copies,
    pick_spread,
    spreads_within_numa_nodes,
    take_cpus_by_numa,
)
from scheduler_api.engine.koordinator.reference import plugin as koordinator
from scheduler_api.engine.koordinator.reference.cpu import KoordCPUTopology
from scheduler_api.engine.koordinator.reference.numa import (
    NodeContext,
    ResourceOptions,
    distribute,
    with_hint,
)
from scheduler_api.engine.koordinator.reference.plugin import (
    NO_RESTORE,
    NodeRun,
    resource_options,
)
from scheduler_api.engine.koordinator.reference.pod import prefilter
from scheduler_api.engine.koordinator.reference.state import (
    KoordConfig,
    NodeAllocation,
    NodeView,
)
from scheduler_api.engine.model.decided import Undecided
from scheduler_api.engine.model.kubernetes import node_fit_count, pod_request
from scheduler_api.engine.model.snapshot import (
    LABEL_CPU_BIND_POLICY,
    LABEL_KOORD_QOS,
    AllocationSource,
    ClusterSnapshot,
    CPUBindPolicy,
    Flavour,
    NodeSnapshot,
    PodAllocation,
    PodSpec,
    ResourceAmounts,
    Zone,
)
from scheduler_api.engine.whatif.evaluate import evaluate
from tests.engine.conformance.strategies import (
    GI,
    KOORD_CONFIGS,
    KOORD_SETTINGS,
    KoordCase,
    koord_run,
    roomy_cases,
)
from tests.engine.data_nrt_builders import container, pod

CAP = 30


def _fill(run: NodeRun, spec: PodSpec, cap: int, *, closed_form: bool) -> int | None:
    try:
        return Filler(run, layout_of(run), spec, closed_form=closed_form).fill(cap)
    except Undecided:
        return None


# --- the counting Filter ------------------------------------------------------------------


@pytest.mark.parametrize("array_walks_from", [koordinator_fast.ARRAY_WALK_MIN_NUMA_NODES, 1])
@KOORD_SETTINGS
@given(roomy_cases(), KOORD_CONFIGS)
def test_counting_filter_and_score_equal_the_reference_on_roomy_nodes(
    array_walks_from: int, case: KoordCase, config: KoordConfig
) -> None:
    """As the what-if runs it, and with whole hint walks on arrays (`koordinator_masks`)
    on every node they apply to (from one NUMA node on)."""
    node, spec, held = case
    want = koordinator.evaluate(node, spec, config=config, reservations=held)
    with mock.patch.object(koordinator_fast, "ARRAY_WALK_MIN_NUMA_NODES", array_walks_from):
        assert koordinator_fast.evaluate(node, spec, config=config, reservations=held) == want
    event(f"fits: {want.fits}")


@st.composite
def spread_questions(
    draw: st.DrawFn,
) -> tuple[ResourceOptions, dict[int, dict[str, int]], frozenset[int], int]:
    """Requests, amounts per NUMA node (ids with gaps, some names missing) and a hint."""
    numas = sorted(draw(st.sets(st.integers(0, 9), min_size=1, max_size=8)))
    names = ["cpu", "memory", "example.com/gpu"]
    totals = {
        numa: {
            name: draw(st.sampled_from([0, 1000, 2000, 3000, 4000, 7000, 16000]))
            for name in names
            if draw(st.integers(0, 5))
        }
        for numa in numas
    }
    requests = {
        name: draw(st.sampled_from([0, 500, 1000, 2000, 4000, 6000, 9000])) for name in names
    }
    opts = ResourceOptions(
        requests=requests, num_cpus_needed=requests["cpu"] // 1000,
        request_cpu_bind=draw(st.booleans()), required_cpu_bind_policy=draw(st.booleans()),
        cpu_bind_policy=draw(st.sampled_from(list(CPUBindPolicy))), cpu_exclusive_policy="",
        numa_allocate_strategy="",
    )  # fmt: skip
    hint = frozenset(draw(st.sets(st.sampled_from(numas), min_size=1)))
    return opts, totals, hint, draw(st.sampled_from([1, 2, 4]))


@KOORD_SETTINGS
@given(spread_questions())
def test_the_spreader_distributes_as_distribute_does(
    question: tuple[ResourceOptions, dict[int, dict[str, int]], frozenset[int], int],
) -> None:
    opts, totals, hint, per_core = question
    rows = tuple((cpu, cpu // per_core, 0, 0) for cpu in range(4 * per_core))
    topology = KoordCPUTopology.from_rows(rows)  # distribute reads only its cpus per core
    view = NodeView(True, topology, frozenset(), "", (), "", {})
    ctx = NodeContext(view, NodeAllocation(), NO_RESTORE, KoordConfig())
    want = distribute(ctx, with_hint(opts, hint), totals)
    spreader = Spreader(opts, totals, per_core)
    assert spreader.spread(sorted(hint)) == want
    assert bool(spreader.spread(sorted(hint), all_missing=False)[1]) == bool(want[1])
    numa = min(hint)
    alone = distribute(ctx, with_hint(opts, frozenset({numa})), totals)
    changed = {n: {name: amount // 2 for name, amount in t.items()} for n, t in totals.items()}
    assert spreader.spread_alone(numa, totals) == alone
    assert spreader.spread_alone(numa, changed) == distribute(
        ctx, with_hint(opts, frozenset({numa})), changed
    )


@st.composite
def even_questions(draw: st.DrawFn) -> tuple[ResourceOptions, dict[int, dict[str, int]], list[int]]:
    """Requests, and amounts per NUMA node near the even shares of a mask (within 2 of
    ceil(amount / width)), not binding cpus."""
    numas = sorted(draw(st.sets(st.integers(0, 9), min_size=2, max_size=8)))
    mask = sorted(draw(st.sets(st.sampled_from(numas), min_size=2)))
    names = ["cpu", "memory"]
    requests = {name: draw(st.integers(0, 160)) for name in names}

    def amount(numa: int, name: str) -> int:
        if numa not in mask:
            return draw(st.integers(0, 40))
        share = -(-requests[name] // len(mask))
        return max(share + draw(st.integers(-2, 2)), 0)

    totals = {numa: {name: amount(numa, name) for name in names} for numa in numas}
    opts = ResourceOptions(
        requests=requests, num_cpus_needed=0, request_cpu_bind=False,
        required_cpu_bind_policy=False, cpu_bind_policy=CPUBindPolicy.DEFAULT,
        cpu_exclusive_policy="", numa_allocate_strategy="",
    )  # fmt: skip
    return opts, totals, mask


@KOORD_SETTINGS
@given(even_questions())
def test_shares_that_fit_are_placed_whole_by_distribute(
    question: tuple[ResourceOptions, dict[int, dict[str, int]], list[int]],
) -> None:
    """`shares_fit` is a sufficient condition: where it holds, distribute misses nothing."""
    opts, totals, mask = question
    view = NodeView(True, KoordCPUTopology.from_rows(((0, 0, 0, 0),)), frozenset(), "", (), "", {})
    ctx = NodeContext(view, NodeAllocation(), NO_RESTORE, KoordConfig())
    _, missing = distribute(ctx, with_hint(opts, frozenset(mask)), totals)
    fits = Spreader(opts, totals, 1).shares_fit(mask)
    event(f"shares fit: {fits}; distribute places all: {not missing}")
    if fits:
        assert not missing


def test_masks_come_by_width_in_the_order_combinations_lists_them() -> None:
    for count in range(7):
        numa_ids = tuple(range(0, 2 * count, 2))
        widths = masks_by_width(numa_ids)
        for size, width in enumerate(widths, start=1):
            expected = [frozenset(c) for c in combinations(numa_ids, size)]
            assert [m.numas for m in width.masks] == expected
            for mask, parent, last in zip(width.masks, width.parents, width.lasts, strict=True):
                assert numa_ids[last] == max(mask.numas)
                if size > 1:
                    assert widths[size - 2].masks[parent].numas == mask.numas - {max(mask.numas)}
        assert len(widths) == count


# --- the capacity count -------------------------------------------------------------------


@KOORD_SETTINGS
@given(roomy_cases(), KOORD_CONFIGS)
def test_the_closed_form_fill_equals_the_copy_by_copy_fill_and_the_reference(
    case: KoordCase, config: KoordConfig
) -> None:
    """Closed form (alike copies, single NUMA nodes first, no-policy copies at once)
    against the copy-by-copy fill on the same books, and against the reference."""
    node, spec, held = case
    run = koord_run(case, config)
    if run is None or not countable(run, layout_of(run)):
        return
    cap = node_fit_count(node, pod_request(spec), CAP)
    closed = _fill(run, spec, cap, closed_form=True)
    stepped = _fill(run, spec, cap, closed_form=False)
    event(f"closed form: {'left to the reference' if closed is None else 'counted'}")
    event(f"copies: {min(closed or 0, 5)}{'+' if (closed or 0) > 5 else ''}")
    if closed is not None and stepped is not None:
        assert closed == stepped
    if closed is not None:
        judgement = evaluate(ClusterSnapshot((node,), held), spec, scheduler="koordinator")
        judgement._judgement.configs = replace(judgement._judgement.configs, koordinator=config)
        assert closed == judgement._judgement.fill_copy_by_copy(0, cap, fast=False)


@KOORD_SETTINGS
@given(roomy_cases(), KOORD_CONFIGS, st.integers(0, 12))
def test_alike_copies_are_the_copies_numa_totals_leave_room_for(
    case: KoordCase, config: KoordConfig, start: int
) -> None:
    """alike_copies against numa_totals after each further copy's amounts are added."""
    run = koord_run(case, config)
    if run is None or not run.ctx.view.numa_resources:
        return
    numa, resources = run.ctx.view.numa_resources[-1]
    amounts = {name: max(amount // 7, 1) for name, amount in resources.items() if amount > 0}
    state = copy_allocation(run.ctx.state)
    state.resources[numa] = {**state.resources.get(numa, {}), **{
        name: state.resources.get(numa, {}).get(name, 0) + start * amount
        for name, amount in amounts.items()
    }}  # fmt: skip
    run = replace(run, ctx=replace(run.ctx, state=state, memo=None))
    counted = alike_copies(run, numa, amounts) if amounts else 0
    stepped = 0
    while amounts and stepped <= counted + 1:
        left = numa_totals(run, {numa})[numa]
        if any(left.get(name, 0) < amount for name, amount in amounts.items()):
            break
        held = state.resources.setdefault(numa, {})
        for name, amount in amounts.items():
            held[name] = held.get(name, 0) + amount
        stepped += 1
    assert counted == stepped


@KOORD_SETTINGS
@given(roomy_cases(), KOORD_CONFIGS, st.data())
def test_pick_spread_takes_what_take_cpus_takes(
    case: KoordCase, config: KoordConfig, data: st.DataObject
) -> None:
    """SpreadByPCPUs required on a uniform SMT layout, for any NUMA amounts."""
    run = koord_run(case, config)
    if run is None:
        return
    layout = layout_of(run)
    spread = replace(
        resource_options(run, None), required_cpu_bind_policy=True,
        cpu_bind_policy=CPUBindPolicy.SPREAD_BY_PCPUS,
    )  # fmt: skip
    if not spreads_within_numa_nodes(run, spread, layout) or not run.ctx.view.numa_resources:
        return
    numas = [numa for numa, _ in run.ctx.view.numa_resources]
    chosen = data.draw(st.sets(st.sampled_from(numas), min_size=1))
    placed = {numa: {"cpu": 1000 * data.draw(st.integers(0, 8))} for numa in chosen}
    want = take_cpus_by_numa(run, spread, layout, placed)
    event("taken" if want is not None else "takeCPUs failed")
    assert want is not None  # never more than the NUMA node offers: takeCPUs cannot fail
    assert pick_spread(run, spread, layout, placed) == want


# --- what is kept between questions ---------------------------------------------------------


@KOORD_SETTINGS
@given(roomy_cases(), KOORD_CONFIGS)
def test_kept_books_stay_the_books_after_a_capacity_count(
    case: KoordCase, config: KoordConfig
) -> None:
    """A count changes a copy of the kept NodeAllocation, never the kept books: judging
    the same node object afterwards still equals the reference, and the kept books equal
    books built afresh."""
    node, spec, held = case
    fill_count(node, spec, config, held, pod_request(spec), CAP)
    want = koordinator.evaluate(node, spec, config=config, reservations=held)
    assert koordinator_fast.evaluate(node, spec, config=config, reservations=held) == want
    run = koord_run(case, config)
    if run is not None:
        layout, opts = layout_of(run), resource_options(run, None)
        fresh = replace(run, ctx=replace(run.ctx, memo=None))
        assert books_of(run, opts, layout) == books_of(fresh, opts, layout)


@KOORD_SETTINGS
@given(roomy_cases(), KOORD_CONFIGS)
def test_a_count_after_judging_the_node_equals_the_reference(
    case: KoordCase, config: KoordConfig
) -> None:
    """The count reuses the verdict the fast evaluate gave for this pod and config."""
    node, spec, held = case
    verdict = koordinator_fast.evaluate(node, spec, config=config, reservations=held)
    counted = fill_count(node, spec, config, held, pod_request(spec), CAP, judged=verdict)
    event(f"fits: {verdict.fits}; counted: {counted is not None}")
    if counted is not None:
        judgement = evaluate(ClusterSnapshot((node,), held), spec, scheduler="koordinator")
        judgement._judgement.configs = replace(judgement._judgement.configs, koordinator=config)
        assert counted == judgement._judgement.fill_copy_by_copy(0, CAP, fast=False)


def test_prefilter_is_kept_per_pod_object() -> None:
    config = KoordConfig()
    spec = PodSpec(namespace="ns", name="p")
    assert kept_prefilter(spec, config) is kept_prefilter(spec, config)
    assert kept_prefilter(spec, config) == prefilter(spec, config)
    other = replace(spec, name="q")
    assert kept_prefilter(other, config) == prefilter(other, config)
    assert kept_prefilter(other, config) is not kept_prefilter(spec, config)


def test_with_hint_is_replace() -> None:
    opts = ResourceOptions(
        requests={"cpu": 2000}, num_cpus_needed=2, request_cpu_bind=True,
        required_cpu_bind_policy=True, cpu_bind_policy="FullPCPUs", cpu_exclusive_policy="x",
        numa_allocate_strategy="y", required_from_reservation=True, ignores_reservations=True,
        hint=frozenset({0}),
        preferred_cpus=frozenset({3}), reusable={0: {"cpu": 1}}, required_resources={1: {}},
    )  # fmt: skip
    assert with_hint(opts, frozenset({1, 2})) == replace(opts, hint=frozenset({1, 2}))
    assert with_hint(opts, None) == replace(opts, hint=None)


# --- edges the random nodes seldom reach ----------------------------------------------------


def _smt_node(
    cores_per_numa: int,
    zone_cpu: int,
    policy: str,
    bind: str,
    reserved: frozenset[int] = frozenset(),
) -> NodeSnapshot:
    """Two NUMA nodes of `cores_per_numa` two-thread cores (siblings numbered apart)."""
    total = 2 * cores_per_numa
    rows = tuple(
        (core + thread * total, core, 0, core // cores_per_numa)
        for core in range(total)
        for thread in (0, 1)
    )
    zones = tuple(
        Zone(n, f"node-{n}", {"cpu": ResourceAmounts(zone_cpu, zone_cpu, 0),
                              "memory": ResourceAmounts(8 * GI, 8 * GI, 0)})
        for n in (0, 1)
    )  # fmt: skip
    return NodeSnapshot(
        name="k1", flavour=Flavour.KOORDINATOR,
        allocatable={"cpu": 4 * total * 1000, "memory": 16 * GI, "pods": 40},
        topology_policies=(policy,), labels={LABEL_CPU_BIND_POLICY: bind},
        zones=zones, cpus=tuple(sorted(rows)), kubelet_reserved_cpus=reserved,
    )  # fmt: skip


def _lsr_pod(cpu: str) -> PodSpec:
    return pod(container("c", {"cpu": cpu, "memory": "256Mi"}), name="p",
               labels={LABEL_KOORD_QOS: "LSR"}, priority=9000)  # fmt: skip


@pytest.mark.parametrize("policy", ["SingleNUMANodePodLevel", "Restricted"])
def test_a_single_cpu_left_on_a_numa_node_takes_no_two_cpu_copy(policy: str) -> None:
    """SpreadByPCPUs: three two-thread cores on NUMA node 0, one cpu reserved, leave one
    cpu after two 2-cpu copies, while its NUMA amounts (7 cpus) would hold a third;
    NUMA node 1 takes three."""
    node = _smt_node(3, 8000, policy, "SpreadByPCPUs", reserved=frozenset({8}))
    spec = _lsr_pod("2")
    judgement = evaluate(ClusterSnapshot((node,)), spec, scheduler="koordinator")._judgement
    assert judgement.fill_copy_by_copy(0, 20, fast=False) == 5
    assert fill_count(node, spec, KoordConfig(), (), pod_request(spec), 20) == 5


@pytest.mark.parametrize("policy", ["Restricted", "BestEffort"])
def test_a_node_with_exactly_enough_cpus_across_numa_nodes_fits(policy: str) -> None:
    """Every NUMA node together holds exactly what the pod asks: the widest mask
    allocates, so the walk may not call every mask hopeless."""
    node, spec = _smt_node(2, 4000, policy, "FullPCPUsOnly"), _lsr_pod("8")
    want = koordinator.evaluate(node, spec)
    assert want.fits
    assert koordinator_fast.evaluate(node, spec) == want


def _numa_zero_held_whole() -> NodeSnapshot:
    """Four NUMA nodes of two one-thread cores, each with 1 cpu of amount left; NUMA
    node 0's two cpus held by a pod that holds only 1 cpu of its amount there."""
    rows = tuple((cpu, cpu, 0, cpu // 2) for cpu in range(8))
    zones = tuple(
        Zone(n, f"node-{n}", {"cpu": ResourceAmounts(2000, 2000, 0),
                              "memory": ResourceAmounts(8 * GI, 8 * GI, 0)})
        for n in range(4)
    )  # fmt: skip
    held = tuple(
        PodAllocation("ns", f"held-{n}", f"held-{n}", AllocationSource.KOORDINATOR,
                      cpuset=frozenset({0, 1}) if n == 0 else frozenset(),
                      numa_resources={n: {"cpu": 1000}})
        for n in range(4)
    )  # fmt: skip
    return NodeSnapshot(
        name="k1", flavour=Flavour.KOORDINATOR,
        allocatable={"cpu": 8000, "memory": 32 * GI, "pods": 40},
        topology_policies=("SingleNUMANodePodLevel",), zones=zones, cpus=rows, allocations=held,
    )  # fmt: skip


@pytest.mark.parametrize("cpus", ["2", "3", "4"])
def test_a_numa_node_with_amount_but_no_free_cpu_is_quoted_only_where_it_allocates(
    cpus: str,
) -> None:
    """NUMA node 0 has a cpu of amount left and no cpu to take. A pod of fewer cpus than
    NUMA nodes may get no share of it (distribute's first NUMA node gets cpus // width
    of them): masks holding it then allocate (0111 for 2 cpus), and a refusal quotes
    them. From 4 cpus on, every mask holding it falls short (`HintWalk.dead`)."""
    node, spec = _numa_zero_held_whole(), _lsr_pod(cpus)
    want = koordinator.evaluate(node, spec)
    assert not want.fits
    assert koordinator_fast.evaluate(node, spec) == want
    assert ("0111" in str(want.reasons[0])) == (cpus == "2")


def test_a_node_memo_starts_afresh_once_full() -> None:
    memo: dict[object, object] = {}
    for index in range(MEMO_KEPT + 3):
        remember(memo, index, index)
    assert len(memo) == 3
    assert memo[MEMO_KEPT + 2] == MEMO_KEPT + 2


def test_a_view_answers_for_the_first_numa_node_of_an_id() -> None:
    topology = KoordCPUTopology.from_rows(())
    view = NodeView(True, topology, frozenset(), "", ((1, {"cpu": 1}), (1, {"cpu": 2})), "", {})
    assert view.numa_nodes() == (1, 1)
    assert view.resources_of(1) == {"cpu": 1}
    assert view.resources_of(0) == {}
