"""Koordinator on columns: every row it decides equals the reference's verdict and count.

`koordinator_vector` answers Filter, Score and capacity on numpy columns for
SingleNUMANode nodes without a bind policy (pods that bind no cpus, or whole cpus under
a preferred policy), and for FullPCPUsOnly nodes without a NUMA policy; Filter and
Score alone for Restricted and SpreadByPCPUs nodes where a single NUMA node takes the
pod; and finds the rows no NUMA mask can take (one shared refusal). On random
clusters of Koordinator nodes (the count tests' nodes, bent towards each case, with
reservations whose owners the pod sometimes matches), a what-if's verdict on every node
must be the reference's (`judge_node`: the shared filters, then `koordinator.evaluate`),
and every fitting node's count the copy-by-copy fill's.
KOORD_EXAMPLES=1000 for a deeper local run."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from scheduler_api.engine.koordinator.fast.vector import ColumnVerdicts, columns_of
from scheduler_api.engine.koordinator.reference import plugin as koordinator
from scheduler_api.engine.koordinator.reference import pod as koordinator_pod
from scheduler_api.engine.koordinator.reference.state import KoordConfig
from scheduler_api.engine.model.snapshot import (
    ANN_KOORD_NUMA_SPEC,
    ANN_KOORD_RESERVATION_AFFINITY,
    ANN_KOORD_RESOURCE_SPEC,
    LABEL_CPU_BIND_POLICY,
    LABEL_KOORD_QOS,
    LABEL_NUMA_TOPOLOGY_POLICY,
    Flavour,
    LabelSelector,
    NodeSnapshot,
    PodSpec,
    ReservationOwner,
    ReservationPhase,
    ReservationSnapshot,
    ResourceAmounts,
    Zone,
)
from scheduler_api.engine.schedulerplugins.fast.vector import NRTIndex
from scheduler_api.engine.whatif.families import judge_node
from scheduler_api.engine.whatif.families.koordinator import KoordinatorColumns
from scheduler_api.engine.whatif.judge import Judgement
from scheduler_api.engine.whatif.systems import Scheduler, SystemConfigs
from tests.engine.conformance.strategies import (
    KOORD_CONFIGS,
    KOORD_SETTINGS,
    koord_nodes,
    reservations,
)
from tests.engine.data_nrt_builders import container, pod

GI = 2**30


@st.composite
def case_nodes(draw: st.DrawFn, name: str) -> NodeSnapshot:
    """A count-test node, mostly SingleNUMANode by label and without a bind policy."""
    node = draw(koord_nodes())
    labels = dict(node.labels)
    if draw(st.integers(0, 4)) > 0:
        labels.pop(LABEL_CPU_BIND_POLICY, None)
    if draw(st.integers(0, 4)) > 0:
        labels[LABEL_NUMA_TOPOLOGY_POLICY] = "SingleNUMANode"
    full_pcpus = node.cpu_manager_policy == "static" and draw(st.booleans())
    return replace(
        node,
        name=name,
        labels=labels,
        cpu_manager_policy="static" if full_pcpus else "",
        cpu_manager_options=node.cpu_manager_options if full_pcpus else {},
    )


@st.composite
def whole_core_nodes(draw: st.DrawFn, name: str) -> NodeSnapshot:
    """A count-test node, mostly FullPCPUsOnly (label or kubelet) with no NUMA policy."""
    node = draw(koord_nodes())
    labels = dict(node.labels)
    if draw(st.integers(0, 4)) > 0:
        labels.pop(LABEL_NUMA_TOPOLOGY_POLICY, None)
    kubelet = draw(st.booleans())
    if draw(st.integers(0, 4)) > 0 and not kubelet:
        labels[LABEL_CPU_BIND_POLICY] = "FullPCPUsOnly"
    return replace(
        node,
        name=name,
        labels=labels,
        topology_policies=() if draw(st.integers(0, 3)) > 0 else node.topology_policies,
        cpu_manager_policy="static" if kubelet else node.cpu_manager_policy,
        cpu_manager_options={"full-pcpus-only": "true"} if kubelet else node.cpu_manager_options,
    )


@st.composite
def numa_policy_full_pcpus_nodes(draw: st.DrawFn, name: str) -> NodeSnapshot:
    """A count-test node, mostly FullPCPUsOnly under SingleNUMANode or Restricted, now
    and then without a bind policy (the single-NUMA case)."""
    node = draw(whole_core_nodes(name))
    labels = dict(node.labels)
    labels[LABEL_NUMA_TOPOLOGY_POLICY] = draw(
        st.sampled_from(["SingleNUMANode", "SingleNUMANode", "Restricted", "BestEffort"])
    )
    if draw(st.integers(0, 4)) == 0:
        labels.pop(LABEL_CPU_BIND_POLICY, None)
        return replace(node, labels=labels, cpu_manager_policy="", cpu_manager_options={})
    return replace(node, labels=labels)


@st.composite
def restricted_spread_nodes(draw: st.DrawFn, name: str) -> NodeSnapshot:
    """A count-test node, mostly Restricted, mostly SpreadByPCPUs (else no bind policy)."""
    node = draw(case_nodes(name))
    labels = dict(node.labels)
    labels[LABEL_NUMA_TOPOLOGY_POLICY] = draw(
        st.sampled_from(["Restricted", "Restricted", "SingleNUMANode"])
    )
    if draw(st.integers(0, 3)) > 0:
        labels[LABEL_CPU_BIND_POLICY] = "SpreadByPCPUs"
    return replace(node, labels=labels)


@st.composite
def large_binding_pods(draw: st.DrawFn) -> PodSpec:
    """`binding_pods`, now and then asking for more than most nodes hold."""
    spec = draw(binding_pods())
    if draw(st.booleans()):
        return spec
    cpu = draw(st.sampled_from(["4", "6", "8", "12", "16"]))
    memory = draw(st.sampled_from(["1Gi", "9Gi", "40Gi", "100Gi"]))
    amounts = {"cpu": cpu, "memory": memory}
    return pod(container("c", amounts), name="p", labels=dict(spec.labels),
               annotations=dict(spec.annotations), priority=9000)  # fmt: skip


@st.composite
def case_pods(draw: st.DrawFn) -> PodSpec:
    """Mostly pods that bind no cpus; now and then a NUMA spec, a bind policy, an
    affinity, or a request the NUMA nodes do not publish."""
    resources = {
        "cpu": draw(st.sampled_from(["100m", "500m", "500m", "1", "1500m", "2", "3"])),
        "memory": draw(st.sampled_from(["256Mi", "1Gi", "1Gi", "3Gi", "9Gi"])),
    }
    if draw(st.integers(0, 9)) == 0:
        resources["example.com/dev"] = "1"
    labels = {"app": draw(st.sampled_from(["x", "z", "z"]))}
    qos = draw(st.sampled_from(["LS", "LS", "", "", "LSR", "LSR"]))
    if qos:
        labels[LABEL_KOORD_QOS] = qos
    annotations: dict[str, str] = {}
    if draw(st.integers(0, 5)) == 0:
        annotations[ANN_KOORD_RESOURCE_SPEC] = json.dumps({"preferredCPUBindPolicy": "FullPCPUs"})
    if draw(st.integers(0, 5)) == 0:
        numa_spec = {
            "numaTopologyPolicy": draw(st.sampled_from(["SingleNUMANode", "Restricted", ""])),
            "singleNUMANodeExclusive": draw(st.sampled_from(["Required", "Preferred"])),
        }
        annotations[ANN_KOORD_NUMA_SPEC] = json.dumps(numa_spec)
    if draw(st.integers(0, 9)) == 0:
        annotations[ANN_KOORD_RESERVATION_AFFINITY] = "{}"
    return pod(container("c", resources), name="p", labels=labels, annotations=annotations,
               priority=draw(st.sampled_from([None, 9000, 5000])))  # fmt: skip


@st.composite
def clusters(
    draw: st.DrawFn, kind: Callable[[str], st.SearchStrategy[NodeSnapshot]] = case_nodes
) -> tuple[tuple[NodeSnapshot, ...], tuple[ReservationSnapshot, ...]]:
    nodes = tuple(draw(kind(f"k{index}")) for index in range(draw(st.integers(1, 4))))
    held = tuple(r for node in nodes for r in draw(reservations(node)))
    return nodes, tuple(replace(r, name=f"{r.node_name}-{r.name}") for r in held)


def judgement(
    nodes: tuple[NodeSnapshot, ...],
    held: tuple[ReservationSnapshot, ...],
    spec: PodSpec,
    config: KoordConfig,
) -> Judgement:
    configs = SystemConfigs(koordinator=config)
    return Judgement(NRTIndex(nodes), held, spec, Scheduler.KOORDINATOR, configs, detailed=0)


def on_node(
    held: tuple[ReservationSnapshot, ...], node: NodeSnapshot
) -> tuple[ReservationSnapshot, ...]:
    return tuple(r for r in held if r.node_name == node.name)


def row_kind(judged: Judgement, config: KoordConfig, row: int) -> str:
    """What the columns made of the row, for the statistics."""
    columns = columns_of(judged.index, config)
    kinds = [
        kind
        for kind, flags in (
            ("whole cores", columns.whole_cores),
            ("Restricted", columns.restricted),
            ("SpreadByPCPUs", columns.spread),
            ("FullPCPUsOnly", columns.sums_case & columns.case),
        )
        if flags[row]
    ]
    return f" ({', '.join(kinds)})" if kinds else ""


def koord_verdicts(judged: Judgement) -> ColumnVerdicts | None:
    """What Koordinator's columns decided in `judged`."""
    columns = judged.columns[Scheduler.KOORDINATOR]
    assert isinstance(columns, KoordinatorColumns)
    return columns.verdicts


def assert_verdicts_equal_the_reference(
    cluster: tuple[tuple[NodeSnapshot, ...], tuple[ReservationSnapshot, ...]],
    spec: PodSpec,
    config: KoordConfig,
) -> None:
    nodes, held = cluster
    judged = judgement(nodes, held, spec, config)
    verdicts = judged.columns[Scheduler.KOORDINATOR].verdicts
    decided = verdicts.decided if verdicts is not None else None
    binds = ", binding cpus" if koordinator_pod.prefilter(spec, config).request_cpu_bind else ""
    for row, node in enumerate(nodes):
        got = judged.verdict(row)
        # the shared filters, then the reference koord-scheduler: Filter and Score, and
        # Reserve as well on the row given detail (the best one), which may then refuse
        want = judge_node(
            node, spec, Scheduler.KOORDINATOR, judged.configs, on_node(held, node),
            allocate=got.detailed,
        )  # fmt: skip
        event(f"decided by the columns: {decided is not None and bool(decided[row])}{binds}"
              f"{row_kind(judged, config, row)}")  # fmt: skip
        nothing = (
            koord_verdicts(judged) is not None and koord_verdicts(judged).nothing_fits[row] >= 0
        )
        event(f"no NUMA mask can take it, by the sums: {nothing}")
        assert (got.fits, got.score, got.numa_zones, got.reasons, got.notes) == (
            want.fits, want.score, want.numa_zones, want.reasons, want.notes,
        )  # fmt: skip


def assert_counts_equal_filling_copy_by_copy(
    cluster: tuple[tuple[NodeSnapshot, ...], tuple[ReservationSnapshot, ...]],
    spec: PodSpec,
    config: KoordConfig,
) -> None:
    nodes, held = cluster
    judged = judgement(nodes, held, spec, config)
    counts = dict(judged.fill_all(40))
    binds = ", binding cpus" if koordinator_pod.prefilter(spec, config).request_cpu_bind else ""
    for row, node in enumerate(nodes):
        if judged.fits[row]:
            counted = koord_verdicts(judged) is not None and koord_verdicts(judged).counted[row]
            decided = bool(judged.columns[Scheduler.KOORDINATOR].decided(judged)[row])
            event(f"decided on columns: {decided}, counted: {bool(counted and decided)}{binds}"
                  f"{row_kind(judged, config, row)}")  # fmt: skip
            assert counts[node.name] == judged.fill_copy_by_copy(row, 40, fast=False)


@st.composite
def binding_pods(draw: st.DrawFn) -> PodSpec:
    """LSR pods of whole cpus, which bind them (preferred FullPCPUs by default), and LS
    ones, which a node's bind policy binds; now and then a bind or exclusive policy of
    their own, or a NUMA spec."""
    resources = {
        "cpu": draw(st.sampled_from(["1", "2", "2", "3", "4", "6"])),
        "memory": draw(st.sampled_from(["256Mi", "1Gi", "3Gi", "9Gi"])),
    }
    qos = draw(st.sampled_from(["LSR", "LSR", "LSR", "LS"]))  # LS: bound by a node's policy
    labels = {LABEL_KOORD_QOS: qos, "app": draw(st.sampled_from(["x", "z", "z"]))}
    annotations: dict[str, str] = {}
    spec = draw(st.sampled_from([
        None, None, None, {"preferredCPUBindPolicy": "SpreadByPCPUs"},
        {"preferredCPUBindPolicy": "FullPCPUs"}, {"requiredCPUBindPolicy": "FullPCPUs"},
        {"preferredCPUExclusivePolicy": "PCPULevel"}, {"preferredCPUExclusivePolicy": "None"},
        {"requiredCPUBindPolicy": "SpreadByPCPUs"},
    ]))  # fmt: skip
    if spec is not None:
        annotations[ANN_KOORD_RESOURCE_SPEC] = json.dumps(spec)
    if draw(st.integers(0, 5)) == 0:
        annotations[ANN_KOORD_NUMA_SPEC] = json.dumps({"numaTopologyPolicy": "SingleNUMANode"})
    return pod(container("c", resources), name="p", labels=labels, annotations=annotations,
               priority=9000)  # fmt: skip


# (nodes, pods): nodes bent towards each case, and the pods it takes
KINDS = {
    "single-NUMA nodes, any pod": (case_nodes, case_pods),
    "single-NUMA nodes, pods binding cpus": (case_nodes, binding_pods),
    "nodes binding whole cores, pods binding cpus": (whole_core_nodes, binding_pods),
    "FullPCPUsOnly under a NUMA policy, large pods": (
        numa_policy_full_pcpus_nodes,
        large_binding_pods,
    ),
    "FullPCPUsOnly under a NUMA policy, pods binding cpus": (
        numa_policy_full_pcpus_nodes,
        binding_pods,
    ),
    "Restricted and SpreadByPCPUs nodes, any pod": (restricted_spread_nodes, case_pods),
    "Restricted and SpreadByPCPUs nodes, large pods": (restricted_spread_nodes, large_binding_pods),
}
Kind = tuple[
    Callable[[str], st.SearchStrategy[NodeSnapshot]], Callable[[], st.SearchStrategy[PodSpec]]
]


@pytest.mark.parametrize("kind", list(KINDS.values()), ids=list(KINDS))
@KOORD_SETTINGS
@given(data=st.data(), config=KOORD_CONFIGS)
def test_every_verdict_equals_the_reference(
    kind: Kind, data: st.DataObject, config: KoordConfig
) -> None:
    nodes, pods = kind
    assert_verdicts_equal_the_reference(data.draw(clusters(nodes)), data.draw(pods()), config)


@pytest.mark.parametrize("kind", list(KINDS.values()), ids=list(KINDS))
@KOORD_SETTINGS
@given(data=st.data(), config=KOORD_CONFIGS)
def test_every_count_equals_filling_copy_by_copy(
    kind: Kind, data: st.DataObject, config: KoordConfig
) -> None:
    nodes, pods = kind
    assert_counts_equal_filling_copy_by_copy(data.draw(clusters(nodes)), data.draw(pods()), config)


def two_numa_node(name: str = "k0", free_memory: tuple[int, int] = (4, 8)) -> NodeSnapshot:
    """Two NUMA nodes of 4 cpus and 8 GiB each, SingleNUMANode by label."""
    rows = [(cpu, cpu, 0, cpu // 4) for cpu in range(8)]
    zones = tuple(
        Zone(numa, f"node-{numa}", {
            "cpu": ResourceAmounts(4000, 4000, 4000),
            "memory": ResourceAmounts(8 * GI, 8 * GI, free_memory[numa] * GI),
        })
        for numa in (0, 1)
    )  # fmt: skip
    return NodeSnapshot(
        name=name,
        labels={LABEL_NUMA_TOPOLOGY_POLICY: "SingleNUMANode"},
        flavour=Flavour.KOORDINATOR,
        allocatable={"cpu": 8000, "memory": 16 * GI, "pods": 110},
        requested={"cpu": 0, "pods": 0},
        zones=zones,
        cpus=tuple(rows),
    )


SMALL = pod(container("c", {"cpu": "500m", "memory": "1Gi"}), name="p",
            labels={LABEL_KOORD_QOS: "LS"})  # fmt: skip


def test_a_small_pod_on_a_single_numa_node_is_decided_by_the_columns() -> None:
    judged = judgement((two_numa_node(),), (), SMALL, KoordConfig())
    assert koord_verdicts(judged) is not None and koord_verdicts(judged).decided.tolist() == [True]
    verdict = judged.verdict(0)
    want = koordinator.evaluate(two_numa_node(), SMALL)
    assert (verdict.fits, verdict.score, verdict.numa_zones) == (True, want.score, want.numa_zones)
    assert dict(judged.fill_all(100)) == {"k0": judged.fill_copy_by_copy(0, 100, fast=False)}


def test_a_changed_node_is_read_again_not_served_from_the_old_columns() -> None:
    index = NRTIndex((two_numa_node(),))
    configs = SystemConfigs()
    first = Judgement(index, (), SMALL, Scheduler.KOORDINATOR, configs, detailed=0)
    assert koord_verdicts(first) is not None and bool(koord_verdicts(first).decided[0])
    index.update(0, two_numa_node(free_memory=(0, 1)))  # memory full: 1 GiB left on NUMA 1
    second = Judgement(index, (), SMALL, Scheduler.KOORDINATOR, configs, detailed=0)
    want = koordinator.evaluate(index.nodes[0], SMALL)
    assert second.verdict(0).numa_zones == want.numa_zones
    assert dict(second.fill_all(100)) == {"k0": second.fill_copy_by_copy(0, 100, fast=False)}
    assert columns_of(index, KoordConfig()).current(0, index.nodes[0], ())


def test_a_pod_matching_a_reservation_owner_is_left_to_the_reference() -> None:
    reservation = ReservationSnapshot(
        name="r", uid="uid-r", node_name="k0", phase=ReservationPhase.AVAILABLE,
        owners=(ReservationOwner(label_selector=LabelSelector({"app": "x"})),),
        allocatable={"cpu": 1000},
    )  # fmt: skip
    owner = replace(SMALL, labels={**SMALL.labels, "app": "x"})
    judged = judgement((two_numa_node(),), (reservation,), owner, KoordConfig())
    assert koord_verdicts(judged) is None or not koord_verdicts(judged).decided.any()
    assert 0 in judged.exact
    stranger = judgement((two_numa_node(),), (reservation,), SMALL, KoordConfig())
    assert koord_verdicts(stranger) is not None and np.array_equal(
        koord_verdicts(stranger).decided, [True]
    )


def test_nodes_with_a_bind_policy_refuse_a_fractional_pod_with_one_shared_verdict() -> None:
    bound = replace(two_numa_node(), labels={LABEL_CPU_BIND_POLICY: "FullPCPUsOnly"})
    nodes = (replace(bound, name="k0"), replace(bound, name="k1"), two_numa_node("k2"))
    judged = judgement(nodes, (), SMALL, KoordConfig())
    assert judged.exact[0] is judged.exact[1]  # decided once, before any NodeRun
    for row, node in enumerate(nodes):
        want = judge_node(node, SMALL, Scheduler.KOORDINATOR, judged.configs, ())
        got = judged.verdict(row)
        assert (got.fits, got.score, got.reasons) == (want.fits, want.score, want.reasons)
    assert [judged.verdict(row).fits for row in range(3)] == [False, False, True]


def test_no_resource_weights_score_zero_as_the_reference_does() -> None:
    config = KoordConfig(resource_weights={})
    nodes = (two_numa_node("k0"), replace(two_numa_node("k1"), zones=two_numa_node().zones[:1]))
    judged = judgement(nodes, (), SMALL, config)
    assert koord_verdicts(judged) is not None and koord_verdicts(judged).decided.tolist() == [
        True,
        True,
    ]
    for row, node in enumerate(nodes):
        want = judge_node(node, SMALL, Scheduler.KOORDINATOR, judged.configs, ())
        got = judged.verdict(row)
        assert (got.fits, got.score, got.numa_zones) == (want.fits, want.score, want.numa_zones)


def test_a_node_whose_bind_policy_was_removed_takes_the_fractional_pod() -> None:
    bound = replace(two_numa_node(), labels={LABEL_CPU_BIND_POLICY: "SpreadByPCPUs"})
    index = NRTIndex((bound,))
    configs = SystemConfigs()
    assert not Judgement(index, (), SMALL, Scheduler.KOORDINATOR, configs, detailed=0).fits[0]
    index.update(0, two_numa_node())  # the label is gone: the quick refusal no longer applies
    judged = Judgement(index, (), SMALL, Scheduler.KOORDINATOR, configs, detailed=0)
    want = judge_node(index.nodes[0], SMALL, Scheduler.KOORDINATOR, configs, ())
    assert (judged.verdict(0).fits, judged.verdict(0).numa_zones) == (True, want.numa_zones)


def test_reservations_grouped_for_one_question_serve_the_next_only_if_they_are_the_same() -> None:
    """The grouping is kept with the index for the very tuple of reservations; another
    tuple (a refreshed snapshot's) is grouped again, so a new reservation is seen."""
    reservation = ReservationSnapshot(
        name="r", uid="uid-r", node_name="k0", phase=ReservationPhase.AVAILABLE,
        owners=(ReservationOwner(label_selector=LabelSelector({"app": "x"})),),
        allocatable={"cpu": 1000},
    )  # fmt: skip
    owner = replace(SMALL, labels={**SMALL.labels, "app": "x"})
    index, configs = NRTIndex((two_numa_node(),)), SystemConfigs()
    first = Judgement(index, (), owner, Scheduler.KOORDINATOR, configs, detailed=0)
    assert koord_verdicts(first) is not None and koord_verdicts(first).decided.tolist() == [True]
    assert first.reservations_on(index.nodes[0]) == ()
    held = (reservation,)
    again = Judgement(index, held, owner, Scheduler.KOORDINATOR, configs, detailed=0)
    assert again.reservations_on(index.nodes[0]) == held  # not the empty grouping kept
    assert 0 in again.exact  # the owner's reservation sends it to the reference
    third = Judgement(index, held, SMALL, Scheduler.KOORDINATOR, configs, detailed=0)
    assert third._reservations_by_node() is again._reservations_by_node()


def test_a_pod_asking_for_too_many_names_to_group_is_left_to_the_reference() -> None:
    """Rows no mask can take are grouped by a bit per requested name; past 62 names the
    groups would collide, so the rows go to the reference one by one. (20 GiB passes the
    node's 32 GiB but not its two NUMA nodes' 8 GiB each.)"""
    many = {f"example.com/r{index}": "1" for index in range(63)}
    nodes = tuple(
        replace(node, allocatable={**node.allocatable, "memory": 32 * GI, **dict.fromkeys(many, 9)})
        for node in (two_numa_node("k0"), two_numa_node("k1"))
    )
    huge = pod(container("c", {"cpu": "1", "memory": "20Gi", **many}), name="p",
               labels={LABEL_KOORD_QOS: "LS"})  # fmt: skip
    judged = judgement(nodes, (), huge, KoordConfig())
    assert koord_verdicts(judged) is not None
    assert koord_verdicts(judged).nothing_fits.tolist() == [-1, -1]
    want = judge_node(nodes[0], huge, Scheduler.KOORDINATOR, judged.configs, ())
    assert not want.fits and (judged.verdict(0).reasons, judged.verdict(1).reasons) == (
        want.reasons, want.reasons,
    )  # fmt: skip
    fewer = pod(container("c", {"cpu": "1", "memory": "20Gi"}), name="p",
                labels={LABEL_KOORD_QOS: "LS"})  # fmt: skip
    grouped = judgement(nodes, (), fewer, KoordConfig())
    assert koord_verdicts(grouped) is not None
    assert koord_verdicts(grouped).nothing_fits.tolist() == [3, 3]  # cpu and memory published
    assert grouped.exact[0] is grouped.exact[1]  # one verdict: the reference's on k0
    assert grouped.exact[0].reasons == want.reasons


LSR = pod(container("c", {"cpu": "2", "memory": "1Gi"}), name="p",
          labels={LABEL_KOORD_QOS: "LSR"}, priority=9000)  # fmt: skip


def test_restricted_spread_nodes_are_judged_on_columns_and_counted_by_the_reference() -> None:
    """A single NUMA node takes the pod: Filter and Score on the columns (the books
    trimmed to one cpu per core); under Restricted copies may go on into two NUMA
    nodes once no single one takes another, so the reference counts them."""
    labels = {LABEL_NUMA_TOPOLOGY_POLICY: "Restricted", LABEL_CPU_BIND_POLICY: "SpreadByPCPUs"}
    node = replace(two_numa_node(), labels=labels)
    judged = judgement((node,), (), LSR, KoordConfig())
    assert koord_verdicts(judged) is not None
    assert koord_verdicts(judged).decided.tolist() == [True]
    assert koord_verdicts(judged).counted.tolist() == [False]
    want = judge_node(node, LSR, Scheduler.KOORDINATOR, judged.configs, ())
    got = judged.verdict(0)
    assert (got.fits, got.score, got.numa_zones) == (True, want.score, want.numa_zones)
    counted = judged.fill_copy_by_copy(0, 100, fast=False)
    assert dict(judged.fill_all(100)) == {"k0": counted} and counted == 4  # 8 cpus, 2 a copy


def test_full_pcpus_nodes_under_a_numa_policy_are_judged_and_counted_on_columns() -> None:
    """FullPCPUsOnly under SingleNUMANode: the books keep whole free cores, a single
    NUMA node takes each copy whole cores at a time, so the columns decide the node and
    count its copies (under Restricted the reference counts them). Cpus that are no
    whole number of cores are refused by the bind check: left to the reference."""
    smt = tuple((cpu, cpu // 2, 0, cpu // 4) for cpu in range(8))  # 2 cpus a core
    full = {LABEL_NUMA_TOPOLOGY_POLICY: "SingleNUMANode", LABEL_CPU_BIND_POLICY: "FullPCPUsOnly"}
    node = replace(two_numa_node(), labels=full, cpus=smt)
    judged = judgement((node,), (), LSR, KoordConfig())
    assert koord_verdicts(judged) is not None
    assert (koord_verdicts(judged).decided.tolist(), koord_verdicts(judged).counted.tolist()) == (
        [True], [True],
    )  # fmt: skip
    want = judge_node(node, LSR, Scheduler.KOORDINATOR, judged.configs, ())
    got = judged.verdict(0)
    assert (got.fits, got.score, got.numa_zones) == (True, want.score, want.numa_zones)
    counted = judged.fill_copy_by_copy(0, 100, fast=False)
    assert dict(judged.fill_all(100)) == {"k0": counted} and counted == 4  # a core a copy
    restricted = replace(node, labels={**full, LABEL_NUMA_TOPOLOGY_POLICY: "Restricted"})
    judged = judgement((restricted,), (), LSR, KoordConfig())
    assert koord_verdicts(judged) is not None
    assert (koord_verdicts(judged).decided.tolist(), koord_verdicts(judged).counted.tolist()) == (
        [True], [False],
    )  # fmt: skip
    odd = pod(container("c", {"cpu": "3", "memory": "1Gi"}), name="p",
              labels={LABEL_KOORD_QOS: "LSR"}, priority=9000)  # fmt: skip
    judged = judgement((node,), (), odd, KoordConfig())
    assert koord_verdicts(judged) is not None and koord_verdicts(judged).decided.tolist() == [False]
    want = judge_node(node, odd, Scheduler.KOORDINATOR, judged.configs, ())
    assert not want.fits and judged.verdict(0).reasons == want.reasons
