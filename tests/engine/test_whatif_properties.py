"""Property tests: the bulk path agrees with the reference, and placing never over-commits."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from scheduler_api.engine.model.snapshot import (
    ClusterSnapshot,
    Flavour,
    PodSpec,
)
from scheduler_api.engine.schedulerplugins.fast.vector import NO_SCORE
from scheduler_api.engine.whatif.evaluate import NodeVerdict, WhatIfResult, evaluate, place
from scheduler_api.engine.whatif.families import judge_node
from tests.engine.conformance.strategies import (
    WHATIF_SETTINGS,
    clusters,
    pods,
)
from tests.engine.test_koordinator import koord_node

SCORING = st.sampled_from(
    [None, "LeastAllocated", "MostAllocated", "BalancedAllocation", "LeastNUMANodes"]
)
WEIGHTS = st.sampled_from([None, {"cpu": 3, "memory": 1}, {"example.com/dev": 5}])


@WHATIF_SETTINGS
@given(clusters(), pods(), st.sampled_from(["auto", "scheduler-plugins"]), SCORING, WEIGHTS)
def test_the_bulk_verdicts_equal_the_reference_node_by_node(
    snapshot: ClusterSnapshot, pod: PodSpec, scheduler: str, scoring: str | None, weights: object
) -> None:
    result = evaluate(snapshot, pod, scheduler=scheduler, scoring=scoring, weights=weights)  # type: ignore[arg-type]
    judgement = result._judgement
    # the answer's verdicts, built in one pass, are each row's own verdict
    again = evaluate(
        snapshot, pod, scheduler=scheduler, scoring=scoring, weights=weights
    )._judgement  # type: ignore[arg-type]
    assert result.nodes == tuple(again.verdict(row) for row in again.order())
    assert_shared_verdicts_agree(evaluate(
        snapshot, pod, scheduler=scheduler, scoring=scoring, weights=weights  # type: ignore[arg-type]
    ), result.nodes)  # fmt: skip
    for row, node in enumerate(snapshot.nodes):
        reference = judge_node(node, pod, judgement.system(row), judgement.configs, ())
        assert bool(judgement.fits[row]) == reference.fits, node
        want = NO_SCORE if reference.score is None or not reference.fits else reference.score
        assert int(judgement.score[row]) == want, node
        verdict = judgement.verdict(row)
        if not verdict.detailed:  # detail adds the kubelet's cpuset; the rest is the same
            assert verdict.fits == reference.fits, node
            assert verdict.score == reference.score, node
            assert verdict.reasons == reference.reasons, node
            assert verdict.numa_zones == reference.numa_zones, node
            assert verdict.notes == reference.notes, node
            assert dict(verdict.annotations) == dict(reference.annotations), node


def assert_shared_verdicts_agree(result: WhatIfResult, reference: tuple[NodeVerdict, ...]) -> None:
    """`result.shared_verdicts()` describes `reference` (the verdicts, best first): names,
    fits and scores by row, and rows under one key differ only in node and score."""
    shared = result.shared_verdicts()
    assert len(shared.order) == len(reference)
    by_key: dict[object, NodeVerdict] = {}
    for row, verdict in zip(shared.order, reference, strict=True):
        assert shared.verdict(row) == verdict
        assert shared.names[row] == verdict.node
        key = shared.keys[row]
        if key is None:
            continue
        assert (shared.fits[row], shared.scores[row]) == (verdict.fits, verdict.score)
        alike = verdict._replace(node="", score=None)
        assert by_key.setdefault(key, alike) == alike, verdict


def _zone_debits_within_available(snapshot: ClusterSnapshot, pod: PodSpec, result) -> None:  # type: ignore[no-untyped-def]
    """No zone hands out more than it had: sum the debits of every placement."""
    taken: Counter[tuple[str, int, str]] = Counter()
    for placement in result.placements:
        if placement.node is None or len(placement.numa_zones) != 1:
            continue
        for container in pod.containers:
            for res, amount in container.requests.items():
                taken[(placement.node, placement.numa_zones[0], res)] += amount
    for (name, numa, res), amount in taken.items():
        node = snapshot.node(name)
        assert node is not None
        same_id = [z for z in node.zones if z.numa_id == numa]
        if len(same_id) != 1:
            continue  # a malformed NRT with a duplicate NUMA id: upstream ORs the zones
        zone = same_id[0]
        if res not in zone.resources or pod.qos_class.value != "Guaranteed":
            continue
        # scheduler-plugins books against NRT `available`; Koordinator against allocatable.
        koordinator = node.flavour is Flavour.KOORDINATOR
        held = zone.resources[res]
        assert amount <= (held.allocatable if koordinator else held.available), (name, numa, res)


@WHATIF_SETTINGS
@given(clusters(), pods(), st.integers(1, 12), SCORING)
def test_place_never_fits_more_than_evaluate_allows(
    snapshot: ClusterSnapshot, pod: PodSpec, replicas: int, scoring: str | None
) -> None:
    first = evaluate(snapshot, pod, scoring=scoring)
    result = place(snapshot, pod, replicas, scoring=scoring)
    fitting = {v.node for v in first.nodes if v.fits}
    placed = Counter(p.node for p in result.placements if p.node is not None)
    assert set(placed) <= fitting
    assert result.capacity is not None
    assert sum(placed.values()) <= result.capacity.total
    for name, count in placed.items():
        assert count <= result.capacity.per_node[name]
    for system in result.systems:  # each system places apart: its first replica, its best
        group = [p for p in result.placements if p.system is system]
        best = first.best_of(system)
        if group and group[0].node is not None:
            assert best is not None and group[0].node == best.node
    _zone_debits_within_available(snapshot, pod, result)


@st.composite
def koordinator_clusters(draw: st.DrawFn) -> ClusterSnapshot:
    built = []
    for index in range(draw(st.integers(1, 3))):
        policy = draw(st.sampled_from([("SingleNUMANodePodLevel",), ("None",), ("Restricted",)]))
        node = koord_node(
            cpus_per_numa=draw(st.sampled_from([4, 8])),
            numas=draw(st.integers(1, 3)),
            threads=draw(st.sampled_from([1, 2])),
            policies=policy,
        )
        built.append(replace(node, name=f"k{index}", allocatable={**node.allocatable, "pods": 50}))
    return ClusterSnapshot(tuple(built))


@WHATIF_SETTINGS
@given(koordinator_clusters(), st.sampled_from([1, 2, 4]), st.integers(1, 10))
def test_koordinator_cpusets_are_disjoint_and_inside_their_numa_zones(
    snapshot: ClusterSnapshot, cpus: int, replicas: int
) -> None:
    from tests.engine.test_koordinator import lsr_pod

    result = place(snapshot, lsr_pod(str(cpus)), replicas, capacity=False)
    handed: dict[str, set[int]] = {}
    for placement in result.placements:
        if placement.node is None:
            continue
        assert placement.cpuset is not None and len(placement.cpuset) == cpus
        seen = handed.setdefault(placement.node, set())
        assert not seen & placement.cpuset, "a CPU was handed out twice"
        seen |= placement.cpuset
        node = snapshot.node(placement.node)
        assert node is not None
        numa_of = {cpu: numa for cpu, _, _, numa in node.cpus}
        zones_used = {numa_of[c] for c in placement.cpuset}
        if placement.numa_zones:
            assert zones_used <= set(placement.numa_zones)
        if node.topology_policies == ("SingleNUMANodePodLevel",):
            assert len(zones_used) == 1


@WHATIF_SETTINGS
@given(
    st.integers(1, 4),
    st.sampled_from([2, 4, 6]),
    st.sets(st.integers(0, 23)),
    st.sets(st.integers(0, 23), max_size=3),
    st.integers(1, 12),
)
def test_the_single_numa_shortcut_merges_like_every_mask(
    numas: int, per_numa: int, taken: set[int], reused: set[int], count: int
) -> None:
    from scheduler_api.engine.kubelet.reference.admission import _StaticPolicy
    from scheduler_api.engine.kubelet.reference.cpu_topology import CPUTopology
    from scheduler_api.engine.kubelet.reference.cpumanager import (
        StaticPolicyOptions,
        cpu_hints,
        hints_by_resource,
    )
    from scheduler_api.engine.kubelet.reference.topologymanager import merge_hints
    from scheduler_api.engine.model.snapshot import TopologyManagerPolicy

    rows = [(c, c // 2, 0, c // per_numa) for c in range(numas * per_numa)]
    topology = CPUTopology.from_cpus(rows)
    free = topology.cpus() - taken
    reuse = frozenset(reused) & (topology.cpus() - free)  # an init container's: not free
    policy = TopologyManagerPolicy.SINGLE_NUMA_NODE
    every = cpu_hints(topology, free, count, reuse)
    want, admitted = merge_hints(
        hints_by_resource({"cpu": every}), list(topology.numa_nodes()), policy
    )
    static = _StaticPolicy(topology, StaticPolicyOptions(), policy, frozenset(), None)
    got = static.hint(free, reuse, count)
    assert (got == want) if admitted else not isinstance(got, type(want))
