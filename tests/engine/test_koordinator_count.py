"""Koordinator by counting: Filter, Score and what-if capacity equal the reference's.

`koordinator_fast` judges NUMA masks from counts and `koordinator_count` fills a node on
books updated in place; the reference allocates for every mask and rebuilds the node
after every copy. On random Koordinator nodes (1-8 NUMA zones on 1-2 sockets, SMT or
not, SingleNUMANode / Restricted / BestEffort / None, FullPCPUs / SpreadByPCPUs bind
policies, held cpusets with exclusive policies, reserved cpus, Reservations) both must
give the same answers. KOORD_EXAMPLES=1000 for a deeper local run.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from scheduler_api.engine.koordinator.fast import filter_score as koordinator_fast
from scheduler_api.engine.koordinator.fast.books import books_of, cpu_layout, layout_of
from scheduler_api.engine.koordinator.fast.count import _uid_clash, fill_count, needs_picking
from scheduler_api.engine.koordinator.fast.filter_score import countable, placed_amounts
from scheduler_api.engine.koordinator.fast.takes import pick_cpus, spread_plan
from scheduler_api.engine.koordinator.reference import plugin as koordinator
from scheduler_api.engine.koordinator.reference.plugin import (
    NodeRun,
    node_run,
    prefilter,
    resource_options,
)
from scheduler_api.engine.koordinator.reference.state import KoordConfig
from scheduler_api.engine.model.kubernetes import pod_request
from scheduler_api.engine.model.results import Reason
from scheduler_api.engine.model.snapshot import (
    ANN_KOORD_NUMA_SPEC,
    LABEL_CPU_BIND_POLICY,
    LABEL_KOORD_QOS,
    LABEL_NUMA_TOPOLOGY_POLICY,
    AllocationSource,
    ClusterSnapshot,
    Flavour,
    NodeSnapshot,
    PodAllocation,
    PodSpec,
    ReservationSnapshot,
    ResourceAmounts,
    Zone,
)
from scheduler_api.engine.schedulerplugins.fast.vector import NRTIndex
from scheduler_api.engine.whatif.evaluate import evaluate
from scheduler_api.engine.whatif.judge import Judgement
from scheduler_api.engine.whatif.systems import Scheduler, SystemConfigs
from tests.engine.conformance.strategies import (
    GI,
    KOORD_CONFIGS,
    KOORD_SETTINGS,
    koord_nodes,
    koord_pods,
    reservations,
)
from tests.engine.data_nrt_builders import container, pod


@st.composite
def cases(draw: st.DrawFn) -> tuple[NodeSnapshot, PodSpec, tuple[ReservationSnapshot, ...]]:
    node = draw(koord_nodes())
    return node, draw(koord_pods()), draw(reservations(node))


@KOORD_SETTINGS
@given(cases(), KOORD_CONFIGS)
def test_counting_filter_and_score_equal_the_reference(
    case: tuple[NodeSnapshot, PodSpec, tuple[ReservationSnapshot, ...]], config: KoordConfig
) -> None:
    node, spec, held = case
    want = koordinator.evaluate(node, spec, config=config, reservations=held)
    got = koordinator_fast.evaluate(node, spec, config=config, reservations=held)
    event(f"fits: {want.fits}; uniform layout: {cpu_layout(node.cpus).uniform}")
    assert got == want


@KOORD_SETTINGS
@given(cases(), KOORD_CONFIGS)
def test_counting_filter_then_a_real_reserve_equals_the_reference_allocation(
    case: tuple[NodeSnapshot, PodSpec, tuple[ReservationSnapshot, ...]], config: KoordConfig
) -> None:
    node, spec, held = case
    want = koordinator.allocate(node, spec, config=config, reservations=held)
    got = koordinator_fast.allocate(node, spec, config=config, reservations=held)
    assert got == want


def _kind(
    node: NodeSnapshot,
    spec: PodSpec,
    config: KoordConfig,
    held: tuple[ReservationSnapshot, ...],
    counted: int | None,
) -> str:
    """Which way the count went, for the statistics (pytest --hypothesis-show-statistics)."""
    if counted is None:
        return "left to the reference"
    state = prefilter(spec, config)
    run = node_run(node, spec, state, held, config) if not (state.error or state.skip) else None
    if not isinstance(run, NodeRun):
        return "counted: refused or skipped before the books"
    opts = resource_options(run, None)
    mode = "picking" if needs_picking(run, opts) else "counting"
    return f"counted by {mode}: policy {run.numa_policy or 'none'}, bind {opts.cpu_bind_policy}"


@KOORD_SETTINGS
@given(cases(), KOORD_CONFIGS)
def test_the_fast_capacity_count_equals_filling_copy_by_copy(
    case: tuple[NodeSnapshot, PodSpec, tuple[ReservationSnapshot, ...]], config: KoordConfig
) -> None:
    node, spec, held = case
    # judged under `config` from the start: the first copy's verdict, which fill_node
    # reuses, must come from the same config as the copies after it
    configs = SystemConfigs(koordinator=config)
    judgement = Judgement(NRTIndex((node,)), held, spec, Scheduler.KOORDINATOR, configs, detailed=3)
    reference = judgement.fill_copy_by_copy(0, 40, fast=False)
    counted = fill_count(node, spec, config, held, pod_request(spec), 40)
    event(_kind(node, spec, config, held, counted))
    event(f"copies: {min(reference, 3)}{'+' if reference > 3 else ''}")
    assert judgement.fill_node(0, 40) == (reference, node.name)
    if counted is None:  # only where fill_count declines up front, never mid-fill
        assert not countable_for(node, spec, held, config)
    else:
        assert counted == reference


@st.composite
def spread_nodes(draw: st.DrawFn) -> tuple[NodeSnapshot, tuple[ReservationSnapshot, ...]]:
    """Koordinator nodes whose LSR pods take cpus by SpreadByPCPUs under a NUMA policy
    (where single NUMA nodes fill from a spread plan), and Reservations on them."""
    node = draw(koord_nodes())
    policy = draw(st.sampled_from(["SingleNUMANode", "Restricted", "BestEffort"]))
    labels = {LABEL_CPU_BIND_POLICY: "SpreadByPCPUs", LABEL_NUMA_TOPOLOGY_POLICY: policy}
    node = dataclasses.replace(node, labels=labels, cpu_manager_policy="", cpu_manager_options={})
    return node, draw(reservations(node))


def countable_for(
    node: NodeSnapshot,
    spec: PodSpec,
    held: tuple[ReservationSnapshot, ...],
    config: KoordConfig | None = None,
) -> bool:
    """Does `fill_count` take the node on at all (no reservation candidates, no holder
    named like an assumed copy, ...)? Where it does, it must count: a count left to
    the reference would only cost time, which no equality test sees."""
    config = config or KoordConfig()
    state = prefilter(spec, config)
    if state.error is not None or state.skip:
        return True
    run = node_run(node, spec, state, held, config)
    if not isinstance(run, NodeRun):
        return True
    return countable(run, layout_of(run)) and not _uid_clash(run, held)


QUESTIONS = st.lists(
    st.tuples(st.sampled_from([1, 2, 2, 4, 6]), st.integers(1, 6 * 1024)), min_size=2, max_size=4
)


@KOORD_SETTINGS
@given(spread_nodes(), QUESTIONS)
def test_spread_counts_one_after_another_equal_filling_copy_by_copy(
    case: tuple[NodeSnapshot, tuple[ReservationSnapshot, ...]], questions: list[tuple[int, int]]
) -> None:
    """LSR pods of a few cpu counts and memory requests, counted one after another on
    one node (the later ones read the spread plans the earlier ones kept), each equal
    to its own copy-by-copy fill."""
    node, held = case
    for cpus, memory in questions:
        spec = pod(container("c", {"cpu": str(cpus), "memory": f"{memory}Mi"}), name="p",
                   labels={LABEL_KOORD_QOS: "LSR", "app": "x"}, priority=9000)  # fmt: skip
        counted = fill_count(node, spec, KoordConfig(), held, pod_request(spec), 40)
        judgement = Judgement(NRTIndex((node,)), held, spec, Scheduler.KOORDINATOR,
                              SystemConfigs(), detailed=3)  # fmt: skip
        reference = judgement.fill_copy_by_copy(0, 40, fast=False)
        if counted is None:  # a reservation the pod may take, or a uid clash: not countable
            assert held and not countable_for(node, spec, held)
        else:
            assert counted == reference


@st.composite
def free_cores(draw: st.DrawFn) -> list[list[int]]:
    """Cores with 0-3 available cpus each (distinct ids, lowest first)."""
    sizes = draw(st.lists(st.integers(0, 3), max_size=12))
    ids = draw(st.permutations(range(sum(sizes))))
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    return [sorted(ids[start : start + size]) for start, size in zip(starts, sizes, strict=True)]


@given(free_cores(), st.integers(1, 5))
def test_a_spread_plan_takes_the_lowest_cpu_of_cores_in_turn(
    cores: list[list[int]], needed: int
) -> None:
    """Each take: the `needed` lowest among each core's lowest cpu; until fewer cores
    have one. A limit keeps the first takes."""
    whole = spread_plan([list(c) for c in cores], needed, 99)
    left = [list(c) for c in cores]
    for k, taken in enumerate(whole.takes):
        assert taken == frozenset(sorted(c[0] for c in left if c)[:needed])
        assert len(taken) == needed
        for cpus in left:
            if cpus and cpus[0] in taken:
                cpus.pop(0)
        assert whole.usable[k + 1] == sum(1 for cpus in left if cpus)
    assert whole.complete and sum(1 for cpus in left if cpus) < needed
    for limit in range(6):
        plan = spread_plan([list(c) for c in cores], needed, limit)
        assert plan.takes == whole.takes[:limit]
        assert plan.usable == whole.usable[: len(plan.takes) + 1]
        assert plan.covers(limit)
        assert plan.complete == (len(whole.takes) < limit)


@KOORD_SETTINGS
@given(cases(), KOORD_CONFIGS)
def test_picking_takes_the_cpus_reserve_takes(
    case: tuple[NodeSnapshot, PodSpec, tuple[ReservationSnapshot, ...]], config: KoordConfig
) -> None:
    node, spec, held = case
    state = prefilter(spec, config)
    run = node_run(node, spec, state, held, config) if not (state.error or state.skip) else None
    if not isinstance(run, NodeRun) or not run.request_cpu_bind:
        return
    layout = layout_of(run)
    outcome = koordinator.filter_run(run, koordinator.REFERENCE_OPS)
    if not countable(run, layout) or not outcome.result.fits:
        return
    reference = koordinator.place(run, outcome.hint)
    opts = resource_options(run, outcome.hint)
    amounts = placed_amounts(run, opts, books_of(run, opts, layout), outcome.hint)
    if isinstance(reference, Reason) or isinstance(amounts, Reason) or not amounts:
        return
    picked = pick_cpus(run, opts, layout, amounts)
    event("picked" if picked is not None else "left to Reserve")
    assert picked is None or picked == reference.allocation.cpuset


def _two_numa_node(reserved: frozenset[int]) -> NodeSnapshot:
    rows = tuple((cpu, cpu, 0, cpu // 4) for cpu in range(8))
    return NodeSnapshot(
        name="k1", flavour=Flavour.KOORDINATOR,
        allocatable={"cpu": 8000, "memory": 8 * GI, "pods": 10},
        topology_policies=("Restricted",), labels={LABEL_CPU_BIND_POLICY: "FullPCPUsOnly"},
        zones=tuple(Zone(n, f"node-{n}", {"cpu": ResourceAmounts(4000, 4000, 4000)})
                    for n in (0, 1)),
        cpus=rows, kubelet_reserved_cpus=reserved,
    )  # fmt: skip


def test_a_copy_on_one_numa_node_keeps_the_next_exclusive_copy_off_it() -> None:
    """singleNUMANodeExclusive=Required: a NUMA node used by a single-NUMA copy may not
    join a wider hint, so the second 3-cpu copy finds no admissible hint."""
    node = _two_numa_node(reserved=frozenset({6, 7}))  # NUMA 1 keeps 2 usable cpus
    exclusive = {ANN_KOORD_NUMA_SPEC: json.dumps({"singleNUMANodeExclusive": "Required"})}
    spec = pod(container("c", {"cpu": "3", "memory": "1Gi"}), name="p",
               labels={LABEL_KOORD_QOS: "LSR"}, priority=9000, annotations=exclusive)  # fmt: skip
    judgement = evaluate(ClusterSnapshot((node,)), spec, scheduler="koordinator")._judgement
    assert judgement.fill_copy_by_copy(0, 10, fast=False) == 1
    assert fill_count(node, spec, KoordConfig(), (), pod_request(spec), 10) == 1


def test_without_exclusivity_the_second_copy_spans_both_numa_nodes() -> None:
    node = _two_numa_node(reserved=frozenset({6, 7}))
    spec = pod(container("c", {"cpu": "3", "memory": "1Gi"}), name="p",
               labels={LABEL_KOORD_QOS: "LSR"}, priority=9000)  # fmt: skip
    judgement = evaluate(ClusterSnapshot((node,)), spec, scheduler="koordinator")._judgement
    assert judgement.fill_copy_by_copy(0, 10, fast=False) == 2
    assert fill_count(node, spec, KoordConfig(), (), pod_request(spec), 10) == 2


def test_cpus_held_without_numa_amounts_bound_the_count() -> None:
    """koordlet-held cpus (no NUMA amounts published) leave the NRT amounts untouched:
    only the counted cpus say that two 2-cpu copies fit, not four."""
    rows = tuple((cpu, cpu, 0, 0) for cpu in range(8))
    held = PodAllocation("ns", "old", "uid-old", AllocationSource.KOORDINATOR,
                         cpuset=frozenset({0, 1, 2, 3}))  # fmt: skip
    node = NodeSnapshot(
        name="k1", flavour=Flavour.KOORDINATOR,
        allocatable={"cpu": 8000, "memory": 8 * GI, "pods": 10},
        topology_policies=("SingleNUMANodePodLevel",),
        labels={LABEL_CPU_BIND_POLICY: "FullPCPUsOnly"},
        zones=(Zone(0, "node-0", {"cpu": ResourceAmounts(8000, 8000, 8000)}),),
        cpus=rows, allocations=(held,),
    )  # fmt: skip
    spec = pod(container("c", {"cpu": "2", "memory": "1Gi"}), name="p",
               labels={LABEL_KOORD_QOS: "LSR"}, priority=9000)  # fmt: skip
    judgement = evaluate(ClusterSnapshot((node,)), spec, scheduler="koordinator")._judgement
    assert judgement.fill_copy_by_copy(0, 10, fast=False) == 2
    assert fill_count(node, spec, KoordConfig(), (), pod_request(spec), 10) == 2


def test_shared_numa_nodes_take_no_single_numa_copy_of_an_exclusive_pod() -> None:
    """singleNUMANodeExclusive=Required: NUMA nodes a multi-NUMA pod uses ("shared") take
    no single-NUMA copy. The first 4-cpu copy spans both; NUMA 0's 4 cpus left over stay
    unused, though they could hold a second copy alone."""
    rows = tuple((cpu, cpu, 0, cpu // 8) for cpu in range(16))
    spanning = PodAllocation("ns", "old", "uid-old", AllocationSource.KOORDINATOR,
                             cpuset=frozenset({0, 8}))  # fmt: skip
    node = NodeSnapshot(
        name="k1", flavour=Flavour.KOORDINATOR,
        allocatable={"cpu": 16000, "memory": 8 * GI, "pods": 10},
        topology_policies=("Restricted",), labels={LABEL_CPU_BIND_POLICY: "FullPCPUsOnly"},
        zones=tuple(Zone(n, f"node-{n}", {"cpu": ResourceAmounts(8000, 8000, 8000)})
                    for n in (0, 1)),
        cpus=rows, allocations=(spanning,),
        kubelet_reserved_cpus=frozenset({1, 9, 10, 11, 12, 13}),
    )  # fmt: skip
    exclusive = {ANN_KOORD_NUMA_SPEC: json.dumps({"singleNUMANodeExclusive": "Required"})}
    spec = pod(container("c", {"cpu": "4", "memory": "1Gi"}), name="p",
               labels={LABEL_KOORD_QOS: "LSR"}, priority=9000, annotations=exclusive)  # fmt: skip
    judgement = evaluate(ClusterSnapshot((node,)), spec, scheduler="koordinator")._judgement
    assert judgement.fill_copy_by_copy(0, 10, fast=False) == 1
    assert fill_count(node, spec, KoordConfig(), (), pod_request(spec), 10) == 1


@pytest.mark.parametrize(
    ("zone_cpu", "copies"),
    [
        pytest.param(6000, 6, id="the-numa-amounts-run-out-first"),
        pytest.param(16000, 8, id="the-cores-run-out-first"),
    ],
)
def test_spread_copies_fill_each_numa_node_until_its_amounts_or_cores_run_out(
    zone_cpu: int, copies: int
) -> None:
    """SpreadByPCPUs takes one thread per core, so a core leaves the pool only once both
    its threads are gone: 2 NUMA nodes x 4 cores x 2 threads take eight 2-cpu copies,
    unless the NRT runs out of cpu amount first."""
    rows = tuple((cpu, cpu % 8, 0, (cpu % 8) // 4) for cpu in range(16))
    node = NodeSnapshot(
        name="k1", flavour=Flavour.KOORDINATOR,
        allocatable={"cpu": 32000, "memory": 8 * GI, "pods": 20},
        topology_policies=("SingleNUMANodePodLevel",),
        labels={LABEL_CPU_BIND_POLICY: "SpreadByPCPUs"},
        zones=tuple(Zone(n, f"node-{n}", {"cpu": ResourceAmounts(zone_cpu, zone_cpu, 0)})
                    for n in (0, 1)),
        cpus=rows,
    )  # fmt: skip
    spec = pod(container("c", {"cpu": "2", "memory": "256Mi"}), name="p",
               labels={LABEL_KOORD_QOS: "LSR"}, priority=9000)  # fmt: skip
    judgement = evaluate(ClusterSnapshot((node,)), spec, scheduler="koordinator")._judgement
    assert judgement.fill_copy_by_copy(0, 20, fast=False) == copies
    assert fill_count(node, spec, KoordConfig(), (), pod_request(spec), 20) == copies


def test_a_plan_kept_by_a_larger_pod_does_not_cut_a_smaller_pods_count() -> None:
    """A 2-cpu pod of 3 GiB takes one spread copy per NUMA node (4 GiB each); its plan,
    kept with the node, holds that one take. The same pod at 512 MiB then fills the
    cores (four copies per NUMA node): its plan is built again, longer."""
    rows = tuple((cpu, cpu % 8, 0, (cpu % 8) // 4) for cpu in range(16))
    zone = {"cpu": ResourceAmounts(8000, 8000, 0), "memory": ResourceAmounts(4 * GI, 4 * GI, 0)}
    node = NodeSnapshot(
        name="k1", flavour=Flavour.KOORDINATOR,
        allocatable={"cpu": 16000, "memory": 8 * GI, "pods": 20},
        topology_policies=("SingleNUMANodePodLevel",),
        labels={LABEL_CPU_BIND_POLICY: "SpreadByPCPUs"},
        zones=tuple(Zone(n, f"node-{n}", zone) for n in (0, 1)),
        cpus=rows,
    )  # fmt: skip
    counts = []
    for memory in ("3Gi", "512Mi"):
        spec = pod(container("c", {"cpu": "2", "memory": memory}), name="p",
                   labels={LABEL_KOORD_QOS: "LSR"}, priority=9000)  # fmt: skip
        counted = fill_count(node, spec, KoordConfig(), (), pod_request(spec), 20)
        judgement = evaluate(ClusterSnapshot((node,)), spec, scheduler="koordinator")._judgement
        assert counted == judgement.fill_copy_by_copy(0, 20, fast=False)
        counts.append(counted)
    assert counts == [2, 8]
