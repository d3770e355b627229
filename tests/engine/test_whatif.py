"""Cluster what-if: ranking, reasons, the shared filters, kubelet pinning, placing replicas."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scheduler_api.engine.crane.reference import plugin as crane
from scheduler_api.engine.koordinator.reference import state as koordinator_state
from scheduler_api.engine.model.results import Reason, ReasonCheck, reason_text
from scheduler_api.engine.model.snapshot import (
    AllocationSource,
    ClusterSnapshot,
    Flavour,
    NodeSnapshot,
    PodAllocation,
    ResourceAmounts,
    TopologyManagerPolicy,
)
from scheduler_api.engine.whatif.capacity import node_capacity
from scheduler_api.engine.whatif.evaluate import Scheduler, evaluate, place, prepare
from scheduler_api.engine.whatif.families import judge_node
from scheduler_api.engine.whatif.systems import SystemConfigs
from tests.engine.data_nrt_builders import guaranteed, nrt_node, nrt_zone, pod, requests_only
from tests.engine.test_koordinator import koord_node, lsr_pod

GI = 2**30
SNN_POD = {"topologyManagerPolicy": "single-numa-node", "topologyManagerScope": "pod"}


def two_zone_node(name: str, free0: str, free1: str, **extra: object) -> NodeSnapshot:
    zones = [
        nrt_zone(0, {"cpu": ("8", free0), "memory": ("16Gi", "16Gi")}),
        nrt_zone(1, {"cpu": ("8", free1), "memory": ("16Gi", "16Gi")}),
    ]
    node = nrt_node(name, zones, attributes=SNN_POD, extra_allocatable={"pods": "110"})
    return replace(node, **extra)  # type: ignore[arg-type]


def test_nodes_come_ranked_by_verdict_then_score_then_name() -> None:
    snapshot = ClusterSnapshot(
        (two_zone_node("b", "6", "6"), two_zone_node("a", "6", "6"), two_zone_node("c", "2", "2"))
    )
    result = evaluate(snapshot, guaranteed({"cpu": "4", "memory": "1Gi"}))
    assert result.ranking == ("a", "b", "c")
    assert [(v.node, v.fits) for v in result.nodes] == [("a", True), ("b", True), ("c", False)]
    assert result.fit_count == 2
    assert result.best is not None and result.best.node == "a" and result.best.numa_zones == (0,)


def test_a_miss_says_which_zone_is_short_of_what_and_by_how_much() -> None:
    snapshot = ClusterSnapshot((two_zone_node("node-3", "6", "2"),))
    verdict = evaluate(snapshot, guaranteed({"cpu": "8", "memory": "1Gi"})).verdict("node-3")
    assert not verdict.fits
    assert [str(r) for r in verdict.reasons] == [
        "cpu short by 2 CPUs on zone 0; single-numa-node",
        "cpu short by 6 CPUs on zone 1; single-numa-node",
    ]


def test_node_resources_fit_and_cordon_run_before_the_topology_plugin() -> None:
    full = two_zone_node("full", "8", "8", requested={"cpu": 15_000, "pods": 3})
    cordoned = two_zone_node("cordoned", "8", "8", unschedulable=True)
    result = evaluate(ClusterSnapshot((full, cordoned)), guaranteed({"cpu": "2", "memory": "1Gi"}))
    assert [r.check for r in result.verdict("full").reasons] == [ReasonCheck.NODE_RESOURCES_FIT]
    assert str(result.verdict("full").reasons[0]) == "cpu short by 1 CPU; node-resources-fit"
    assert result.verdict("cordoned").reasons[0].check is ReasonCheck.NODE_UNSCHEDULABLE


def test_every_system_refuses_at_the_shared_filters_as_judging_one_node_does() -> None:
    """The shared filters' refusals are read off the columns for every system at once;
    each equals `judge_node`'s, and equal reasons share one verdict."""
    request = {"cpu": 15_000, "pods": 3}
    nodes = []
    for flavour in (Flavour.UPSTREAM_V1ALPHA2, Flavour.CRANE, Flavour.KOORDINATOR):
        for name, extra in (
            ("full", {"requested": request}),
            ("full-again", {"requested": request}),
            ("no-pods-left", {"allocatable": {"cpu": 16_000, "memory": 64 * GI, "pods": 3},
                              "requested": {"pods": 3}}),
            ("cordoned", {"unschedulable": True}),
        ):  # fmt: skip
            node = two_zone_node(f"{flavour.value}-{name}", "8", "8", **extra)
            nodes.append(replace(node, flavour=flavour))
    snapshot, spec = ClusterSnapshot(tuple(nodes)), guaranteed({"cpu": "2", "memory": "1Gi"})
    result = evaluate(snapshot, spec)
    configs = SystemConfigs()
    for node in nodes:
        got = result.verdict(node.name)
        want = judge_node(node, spec, got.system, configs, ())
        assert not want.fits and (got.fits, got.reasons) == (want.fits, want.reasons)
    assert result.fit_count == 0
    judged = result._judgement
    names = ("upstream-v1alpha2-full", "koordinator-full", "crane-full-again")
    rows = [judged.row_of(name) for name in names]
    assert len({id(judged.exact[row]) for row in rows}) == 1


def test_auto_judges_each_node_by_the_system_its_nrt_flavour_names() -> None:
    koord = replace(koord_node(), name="koord")
    crane_node = replace(two_zone_node("crane", "8", "8"), flavour=Flavour.CRANE)
    snapshot = ClusterSnapshot((koord, crane_node, two_zone_node("upstream", "8", "8")))
    result = evaluate(snapshot, lsr_pod("4"))
    systems = {v.node: v.system for v in result.nodes}
    assert systems == {
        "koord": Scheduler.KOORDINATOR,
        "crane": Scheduler.CRANE,
        "upstream": Scheduler.SCHEDULER_PLUGINS,
    }
    forced = evaluate(snapshot, lsr_pod("4"), scheduler="koordinator")
    assert {v.system for v in forced.nodes} == {Scheduler.KOORDINATOR}


def test_after_prepare_no_question_builds_books_or_zones(monkeypatch) -> None:
    """What `prepare` builds is what the questions read: none of it is built again."""
    koord = replace(koord_node(), name="koord")
    crane_node = replace(two_zone_node("crane", "8", "8"), flavour=Flavour.CRANE)
    snapshot = ClusterSnapshot((koord, crane_node, two_zone_node("upstream", "8", "8")))
    prepare(snapshot)

    def built_again(*args: object) -> None:
        raise AssertionError("built by a question, not by prepare")

    for module, name in ((koordinator_state, "node_view"), (crane, "claimed_zones")):
        monkeypatch.setattr(module, name, built_again)
    for asked in (lsr_pod("4"), lsr_pod("1", qos="LS"), guaranteed({"cpu": "2"})):
        assert place(snapshot, asked, 0).fit_count >= 1  # judged and counted, none bound


def test_the_best_koordinator_node_gets_its_exact_cpuset_and_annotation() -> None:
    snapshot = ClusterSnapshot((replace(koord_node(), name="koord"),))
    best = evaluate(snapshot, lsr_pod("4")).best
    assert best is not None and best.detailed
    assert best.cpuset == frozenset({0, 1, 2, 3})
    assert "scheduling.koordinator.sh/resource-status" in best.annotations


def test_behind_scheduler_plugins_the_kubelet_pins_cpus_in_the_chosen_zone() -> None:
    base = koord_node(threads=2)
    zones = tuple(
        replace(z, resources={**z.resources, "memory": ResourceAmounts(GI * 64, GI * 64, GI * 64)})
        for z in base.zones
    )
    pinned = PodAllocation(
        "ns", "pinned", "u1", AllocationSource.KUBELET, cpuset=frozenset(range(0, 30))
    )
    node = replace(
        base,
        name="static",
        zones=zones,
        cpu_manager_policy="static",
        nrt_attributes=SNN_POD,
        allocations=(pinned,),
    )
    snapshot = ClusterSnapshot((node,))
    spec = guaranteed({"cpu": "4", "memory": "1Gi"})
    best = evaluate(snapshot, spec, scheduler="scheduler-plugins").best
    assert best is not None and best.cpuset is not None
    assert len(best.cpuset) == 4 and not best.cpuset & set(range(30))
    # zone 0 has only 2 CPUs left unpinned: the hint is zone 1, and so are the CPUs.
    assert {cpu // 32 for cpu in best.cpuset} == {1}


def test_bad_options_are_refused_with_a_message() -> None:
    snapshot = ClusterSnapshot((two_zone_node("a", "8", "8"),))
    with pytest.raises(ValueError, match="unknown scheduler"):
        evaluate(snapshot, guaranteed({"cpu": "1"}), scheduler="volcano")
    with pytest.raises(ValueError, match="unknown scoring"):
        evaluate(snapshot, guaranteed({"cpu": "1"}), scoring="Random")
    with pytest.raises(ValueError, match="weight"):
        evaluate(snapshot, guaranteed({"cpu": "1"}), weights={"cpu": 0})
    with pytest.raises(ValueError, match="replicas"):
        place(snapshot, guaranteed({"cpu": "1"}), -1)


def test_replicas_see_the_ones_before_and_stop_when_nothing_is_left() -> None:
    snapshot = ClusterSnapshot((two_zone_node("a", "8", "4"), two_zone_node("b", "4", "0")))
    result = place(snapshot, guaranteed({"cpu": "4", "memory": "1Gi"}), 5, scoring="MostAllocated")
    placed = [(p.node, p.numa_zones) for p in result.placements]
    # kubelet's choice is the lowest NUMA id that fits; the plugin scores a node by its
    # smallest non-zero zone score, so "a" (28) beats "b" (3: its empty zone scores low).
    assert placed == [("a", (0,)), ("a", (0,)), ("a", (1,)), ("b", (0,)), (None, ())]
    assert result.capacity is not None
    assert dict(result.capacity.per_node) == {"a": 3, "b": 1} and result.capacity.total == 4


def test_least_allocated_spreads_where_most_allocated_packs() -> None:
    snapshot = ClusterSnapshot((two_zone_node("a", "8", "8"), two_zone_node("b", "6", "6")))
    spec = guaranteed({"cpu": "2", "memory": "1Gi"})
    spread = place(snapshot, spec, 2, scoring="LeastAllocated", capacity=False)
    packed = place(snapshot, spec, 2, scoring="MostAllocated", capacity=False)
    assert [p.node for p in spread.placements] == ["a", "a"]
    assert [p.node for p in packed.placements] == ["b", "b"]


def test_a_burstable_pod_is_not_held_to_a_numa_zone() -> None:
    snapshot = ClusterSnapshot((two_zone_node("a", "1", "1"),))
    burstable = pod(requests_only("c", {"cpu": "1500m"}))
    verdict = evaluate(snapshot, burstable).verdict("a")
    assert verdict.fits and verdict.score == 100


def test_what_if_never_changes_the_snapshot() -> None:
    snapshot = ClusterSnapshot((two_zone_node("a", "8", "8"),))
    before = repr(snapshot)
    place(snapshot, guaranteed({"cpu": "2", "memory": "1Gi"}), 3)
    assert repr(snapshot) == before


def test_capacity_figures_follow_each_topology_manager_policy() -> None:
    node = two_zone_node("a", "6", "3")
    figures = node_capacity(node)
    assert dict(figures.free_cpus) == {0: 6, 1: 3}
    assert figures.largest_exclusive_pod[TopologyManagerPolicy.SINGLE_NUMA_NODE] == 6
    assert figures.largest_exclusive_pod[TopologyManagerPolicy.BEST_EFFORT] == 9
    # 9 CPUs need two zones (8 each); both together have 9 free: restricted admits 9.
    assert figures.largest_exclusive_pod[TopologyManagerPolicy.RESTRICTED] == 9
    assert figures.own_policy is TopologyManagerPolicy.SINGLE_NUMA_NODE
    tight = node_capacity(two_zone_node("b", "7", "2"))
    # 8 CPUs fit one zone by capacity, but no zone has 8 free: restricted stops at 7.
    assert tight.largest_exclusive_pod[TopologyManagerPolicy.RESTRICTED] == 9


def test_a_reasons_text_is_kept_for_the_whole_reason() -> None:
    """Kept texts are keyed by every field: reasons differing in one read differently."""
    fit = Reason(ReasonCheck.NODE_RESOURCES_FIT, None, "cpu", 1500)
    more = Reason(ReasonCheck.NODE_RESOURCES_FIT, None, "cpu", 2500)
    zoned = Reason(ReasonCheck.INSUFFICIENT_NUMA, 1, "cpu", 1500)
    named = Reason(ReasonCheck.INSUFFICIENT_NUMA, 1, "cpu", 1500, container="app")
    reasons = (fit, more, zoned, named, fit, zoned)
    assert [reason_text(r) for r in reasons] == [str(r) for r in reasons]
    assert len({reason_text(r) for r in reasons}) == 4


@pytest.mark.parametrize(
    ("resource", "short", "text"),
    [
        ("cpu", 92_850, "cpu short by 92.85 CPUs"),
        ("cpu", 1000, "cpu short by 1 CPU"),
        ("memory", 14_139_474 * 1024, "memory short by 13.5Gi"),
        ("memory", 2 * GI, "memory short by 2Gi"),
    ],  # fmt: skip
)
def test_a_shortfall_is_written_in_units_a_person_reads(resource: str, short: int, text: str):
    """Issue 27: "cpu short by 92850m", "memory short by 14139474Ki"."""
    reason = Reason(ReasonCheck.NODE_RESOURCES_FIT, None, resource, short)
    assert str(reason) == f"{text}; node-resources-fit"
