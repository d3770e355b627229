"""Crane on many nodes at once: every row it decides equals the reference's verdict and count.

`crane_vector` judges one node per group whose verdict cannot depend on its zones (a
pod the plugin skips, a node without a Crane NRT, a node whose crane cpuManagerPolicy
is not Static) and gives that verdict to the whole group; on topology-aware nodes it
picks the zone Go's sort puts first and counts each zone's copies on arrays. On random
clusters of the count tests' Crane nodes, and of wide aware nodes whose free cpu ties
(Go's sort reorders ties from 7 zones on), a what-if's verdict on every node must be
the reference's (`judge_node`: the shared filters, then `crane.evaluate`), and every
fitting node's count the copy-by-copy fill's. CAPACITY_EXAMPLES=1000 for a deeper run.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import event, given
from hypothesis import strategies as st

from scheduler_api.engine.crane.fast.vector import aware_verdicts, greedy_verdicts, shared_verdicts
from scheduler_api.engine.model.snapshot import (
    AllocationSource,
    ClusterSnapshot,
    ContainerSpec,
    Flavour,
    NodeSnapshot,
    OwnerRef,
    PodAllocation,
    PodSpec,
    ResourceAmounts,
    Zone,
)
from scheduler_api.engine.schedulerplugins.fast.count_vector import node_fit_counts
from scheduler_api.engine.schedulerplugins.fast.vector import NO_SCORE, node_fit
from scheduler_api.engine.whatif.evaluate import evaluate, place
from scheduler_api.engine.whatif.families import judge_node
from scheduler_api.engine.whatif.judge import SYSTEM_CODES, Judgement
from scheduler_api.engine.whatif.systems import Scheduler
from tests.engine.conformance.strategies import (
    CAPACITY_LIMIT,
    CAPACITY_SETTINGS,
    crane_nodes,
    crane_pods,
)

GI = 2**30
DAEMONSET = OwnerRef(api_version="apps/v1", kind="DaemonSet", name="ds", uid="ds-uid")
SMALL = ContainerSpec("app", {"cpu": 500, "memory": GI}, {"cpu": 500, "memory": GI})
WHOLE = ContainerSpec("app", {"cpu": 2000, "memory": GI}, {"cpu": 2000, "memory": GI})


@st.composite
def clusters(draw: st.DrawFn) -> ClusterSnapshot:
    count = draw(st.integers(1, 4))
    return ClusterSnapshot(tuple(replace(draw(crane_nodes()), name=f"c{i}") for i in range(count)))


@st.composite
def any_pods(draw: st.DrawFn) -> PodSpec:
    """The count tests' Crane pods, sometimes a DaemonSet's (which the plugin skips)."""
    pod = draw(crane_pods())
    if draw(st.integers(0, 4)) == 0:
        pod = replace(pod, owner_refs=(DAEMONSET,))
    return pod


def _shared_groups(judgement: Judgement) -> int:
    crane = judgement.systems == SYSTEM_CODES[Scheduler.CRANE]
    rows = crane & node_fit(judgement.index, judgement.request_of(Scheduler.CRANE))
    config = judgement.configs.crane
    return len(shared_verdicts(judgement.index, judgement.pod, rows, config))


def _aware_rows(judgement: Judgement) -> int:
    crane = judgement.systems == SYSTEM_CODES[Scheduler.CRANE]
    rows = crane & node_fit(judgement.index, judgement.request_of(Scheduler.CRANE))
    found = aware_verdicts(judgement.index, judgement.pod, rows, judgement.configs.crane)
    return 0 if found is None else int(found.decided.sum())


def _greedy_rows(judgement: Judgement) -> int:
    crane = judgement.systems == SYSTEM_CODES[Scheduler.CRANE]
    rows = crane & node_fit(judgement.index, judgement.request_of(Scheduler.CRANE))
    found = greedy_verdicts(judgement.index, judgement.pod, rows, judgement.configs.crane)
    return 0 if found is None else int(found.decided.sum())


def _assert_rows_equal_the_reference(judgement: Judgement, snapshot: ClusterSnapshot) -> None:
    counts = dict(judgement.fill_all(CAPACITY_LIMIT))
    for row, node in enumerate(snapshot.nodes):
        reference = judge_node(
            node, judgement.pod, judgement.system(row), judgement.configs, (),
        )  # fmt: skip
        verdict = judgement.verdict(row)
        assert (verdict.fits, verdict.reasons, verdict.notes) == (
            reference.fits, reference.reasons, reference.notes,
        ), node  # fmt: skip
        assert verdict.numa_zones == reference.numa_zones, node
        assert dict(verdict.annotations) == dict(reference.annotations), node
        if not verdict.detailed:
            assert verdict.score == reference.score, node
        want = NO_SCORE if reference.score is None or not reference.fits else reference.score
        assert int(judgement.score[row]) == want, node
        if reference.fits:
            assert counts[node.name] == judgement.fill_copy_by_copy(
                row, CAPACITY_LIMIT, fast=False
            ), node


@CAPACITY_SETTINGS
@given(clusters(), any_pods(), st.sampled_from(["auto", "crane"]))
def test_every_crane_row_equals_the_reference(
    snapshot: ClusterSnapshot, pod: PodSpec, scheduler: str
) -> None:
    judgement = evaluate(snapshot, pod, scheduler=scheduler)._judgement
    event(f"groups sharing a verdict: {_shared_groups(judgement)}")
    event(f"rows decided on their zones: {min(_aware_rows(judgement), 2)}+")
    event(f"greedy rows decided on their zones: {min(_greedy_rows(judgement), 2)}+")
    _assert_rows_equal_the_reference(judgement, snapshot)


def _crane_node(
    name: str, policy: str = "Static", flavour: Flavour = Flavour.CRANE
) -> NodeSnapshot:
    """A node with no zones: 7 cpus and 9 pods free."""
    return NodeSnapshot(
        name=name,
        flavour=flavour,
        crane_cpu_manager_policy=policy,
        allocatable={"cpu": 8000, "memory": 16 * GI, "pods": 10},
        requested={"cpu": 1000, "memory": GI, "pods": 1},
    )


def test_a_pod_the_plugin_skips_shares_one_verdict_and_counts_by_the_node_filters() -> None:
    snapshot = ClusterSnapshot(tuple(_crane_node(f"c{i}") for i in range(3)))
    pod = PodSpec("ns", "small", containers=(SMALL,))
    judgement = evaluate(snapshot, pod, scheduler="crane")._judgement
    results = {id(judgement.exact[row]) for row in range(3)}
    assert len(results) == 1  # judged once, shared by the three rows
    verdict = judgement.verdict(0)
    assert (verdict.fits, verdict.score) == (True, 0)
    assert verdict.notes == ("no container with pinnable cpus: not checked",)
    # 7000m cpu free at 500m a copy is 14, but only 9 pods are left
    assert dict(judgement.fill_all(CAPACITY_LIMIT)) == {"c0": 9, "c1": 9, "c2": 9}


def test_nodes_without_a_crane_nrt_or_static_policy_share_their_groups_verdicts() -> None:
    nodes = (
        _crane_node("plain", flavour=Flavour.UPSTREAM_V1ALPHA2),
        _crane_node("none-policy", policy="None"),
        _crane_node("static"),
    )
    pod = PodSpec("ns", "whole", containers=(WHOLE,))
    judgement = evaluate(ClusterSnapshot(nodes), pod, scheduler="crane")._judgement
    assert not judgement.verdict(0).fits  # no Crane NRT
    assert judgement.verdict(1).notes == ("crane cpuManagerPolicy is not Static",)
    assert judgement.columns[Scheduler.CRANE].counted.tolist() == [False, True, False]
    _assert_rows_equal_the_reference(judgement, ClusterSnapshot(nodes))


def test_a_bound_replica_is_judged_again_on_its_own_books() -> None:
    snapshot = ClusterSnapshot((_crane_node("c0"),))
    pod = PodSpec("ns", "small", containers=(SMALL,))
    result = place(snapshot, pod, 9, scheduler="crane")
    assert [p.node for p in result.placements] == ["c0"] * 9
    assert place(snapshot, pod, 10, scheduler="crane").placements[-1].node is None
    assert result.capacity is not None and result.capacity.per_node == {"c0": 9}


@st.composite
def wide_crane_nodes(draw: st.DrawFn, name: str, aware: bool = True) -> NodeSnapshot:
    """Topology-aware (or, with `aware` False, greedy) Static Crane nodes of 5-13 zones
    whose free cpu ties often: Go's sort.Slice reorders ties in its Shell pass from 7
    candidates, and pivots above 12. Greedy nodes' zones now and then hold part of a
    core (the fill rounds it off), little memory, or less than their claims."""
    count = draw(st.integers(5, 13))
    zones = []
    for numa in range(count):
        cpu = draw(st.sampled_from([4000, 8000] if aware else [4000, 8000, 4500, 2500]))
        used = draw(st.sampled_from([0, 2000, 4000]))
        memory = 16 * GI if aware else draw(st.sampled_from([16 * GI, GI, GI // 2]))
        resources = {
            "cpu": ResourceAmounts(cpu, cpu, cpu - used),
            "memory": ResourceAmounts(memory, memory, memory),
        }
        zones.append(Zone(numa, f"node-{numa}", resources))
    claims = tuple(
        PodAllocation("ns", f"held-{i}", f"uid-{i}", AllocationSource.CRANE,
                      numa_resources={zone.numa_id: {"cpu": draw(st.sampled_from([2000, 4000]))}})
        for i, zone in enumerate(zones) if draw(st.booleans())
    )  # fmt: skip
    total = sum(z.resources["cpu"].capacity for z in zones)
    # the node's own books count the claims now and then (its filters' limit is lower)
    claimed = sum(amount["cpu"] for c in claims for amount in c.numa_resources.values())
    requested = {"pods": 0, "cpu": claimed} if draw(st.booleans()) else {"pods": 0}
    return NodeSnapshot(
        name=name,
        flavour=Flavour.CRANE,
        crane_cpu_manager_policy="Static",
        crane_topology_policy="SingleNUMANodePodLevel" if aware else "None",
        allocatable={"cpu": total, "memory": count * 16 * GI, "pods": 110},
        requested=requested,
        zones=tuple(zones),
        allocations=claims,
    )


@CAPACITY_SETTINGS
@given(st.data(), st.sampled_from([1000, 2000, 4000]))
def test_wide_aware_nodes_equal_the_reference(data: st.DataObject, cpu: int) -> None:
    count = data.draw(st.integers(1, 3))
    nodes = tuple(data.draw(wide_crane_nodes(f"w{i}")) for i in range(count))
    whole = ContainerSpec("app", {"cpu": cpu, "memory": GI}, {"cpu": cpu, "memory": GI})
    pod = PodSpec("ns", "whole", containers=(whole,))
    judgement = evaluate(ClusterSnapshot(nodes), pod, scheduler="crane")._judgement
    event(f"rows decided on their zones: {_aware_rows(judgement)}")
    _assert_rows_equal_the_reference(judgement, ClusterSnapshot(nodes))


@CAPACITY_SETTINGS
@given(st.data(), st.sampled_from([1000, 2000, 4000, 6000]))
def test_wide_greedy_nodes_equal_the_reference(data: st.DataObject, cpu: int) -> None:
    count = data.draw(st.integers(1, 3))
    nodes = tuple(data.draw(wide_crane_nodes(f"w{i}", aware=False)) for i in range(count))
    whole = ContainerSpec("app", {"cpu": cpu, "memory": GI}, {"cpu": cpu, "memory": GI})
    pod = PodSpec("ns", "whole", containers=(whole,))
    judgement = evaluate(ClusterSnapshot(nodes), pod, scheduler="crane")._judgement
    event(f"greedy rows decided on their zones: {_greedy_rows(judgement)}")
    cap = node_fit_counts(judgement.index, judgement.request_of(Scheduler.CRANE), CAPACITY_LIMIT)
    never_empty = judgement.columns[Scheduler.CRANE].never_empty
    counted = (never_empty >= 0) & (cap <= never_empty)
    event(f"greedy rows counted on the columns: {int(counted.sum())}")
    _assert_rows_equal_the_reference(judgement, ClusterSnapshot(nodes))
