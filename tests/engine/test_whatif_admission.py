"""Two stages, as in reality: the scheduler binds, then the kubelet admits or rejects.

"fits" means both. A node the scheduler would pick but the kubelet would reject is
shown as rejected, never receives a replica and is never counted in capacity.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler_api.engine.model.results import ReasonCheck
from scheduler_api.engine.model.snapshot import (
    AllocationSource,
    ClusterSnapshot,
    NodeSnapshot,
    PodAllocation,
    ResourceAmounts,
    TopologyManagerPolicy,
    TopologyManagerScope,
)
from scheduler_api.engine.whatif.admission import (
    NO_CPU_LAYOUT,
    NO_EXCLUSIVE_CPUS,
    pinned_admission,
)
from scheduler_api.engine.whatif.cache import kubelet_admission
from scheduler_api.engine.whatif.evaluate import evaluate, place
from tests.engine.data_nrt_builders import guaranteed, requests_only
from tests.engine.data_nrt_builders import pod as burstable_pod
from tests.engine.test_koordinator import koord_node

GI = 2**30
SP = "scheduler-plugins"
SNN_POD = {"topologyManagerPolicy": "single-numa-node", "topologyManagerScope": "pod"}


def kubelet_node(name: str, *, full_pcpus_only: bool = False, **extra: object) -> NodeSnapshot:
    """Two NUMA zones of 16 CPUs (8 cores × 2 threads), the kubelet's static policy."""
    base = koord_node(16, 2, threads=2)
    zones = tuple(
        replace(z, resources={**z.resources, "memory": ResourceAmounts(GI * 64, GI * 64, GI * 64)})
        for z in base.zones
    )
    options = {"full-pcpus-only": "true"} if full_pcpus_only else {}
    node = replace(
        base,
        name=name,
        zones=zones,
        cpu_manager_policy="static",
        cpu_manager_options=options,
        nrt_attributes=SNN_POD,
    )
    return replace(node, **extra)  # type: ignore[arg-type]


def odd_pod() -> object:
    """8 + 1 whole CPUs: an odd count, which full-pcpus-only refuses on SMT cores."""
    return guaranteed({"cpu": "9", "memory": "1Gi"})


def test_a_node_the_kubelet_rejects_is_bound_then_rejected_not_fitting() -> None:
    snapshot = ClusterSnapshot((kubelet_node("smt", full_pcpus_only=True),))
    verdict = evaluate(snapshot, odd_pod(), scheduler="scheduler-plugins").verdict("smt")
    assert verdict.scheduler_fits and not verdict.fits
    assert verdict.admission is not None and not verdict.admission.admitted
    assert "SMT" in verdict.admission.reason
    assert verdict.reasons[-1].check is ReasonCheck.KUBELET_ADMISSION
    assert any("rejected by the kubelet" in note for note in verdict.notes)
    assert verdict.score is not None  # the scheduler would still rank it


def test_rejected_nodes_rank_after_fitting_ones_and_before_refused_ones() -> None:
    rejected = kubelet_node("a-rejected", full_pcpus_only=True)
    fitting = kubelet_node("b-fits")
    cordoned = kubelet_node("0-cordoned", unschedulable=True)
    snapshot = ClusterSnapshot((rejected, fitting, cordoned))
    result = evaluate(snapshot, odd_pod(), scheduler="scheduler-plugins")
    assert result.ranking == ("b-fits", "a-rejected", "0-cordoned")
    assert result.fit_count == 1
    assert result.best is not None and result.best.node == "b-fits"


def test_no_replica_goes_to_a_node_the_kubelet_rejects_and_it_counts_no_capacity() -> None:
    snapshot = ClusterSnapshot((kubelet_node("smt", full_pcpus_only=True),))
    result = place(snapshot, odd_pod(), 2, scheduler="scheduler-plugins")
    assert [p.node for p in result.placements] == [None, None]
    assert result.capacity is not None and result.capacity.total == 0
    assert "smt" not in result.capacity.per_node


def test_capacity_counts_only_the_copies_the_kubelet_admits() -> None:
    # 16 CPUs a zone; pod scope single-numa-node: 4 CPUs a copy, 4 copies a zone.
    snapshot = ClusterSnapshot((kubelet_node("n"),))
    result = place(snapshot, guaranteed({"cpu": "4", "memory": "1Gi"}), 0, scheduler=SP)
    assert result.capacity is not None and result.capacity.per_node == {"n": 8}
    # 6 CPUs a copy: 2 copies a zone, the 4 CPUs left on each zone take none.
    result = place(snapshot, guaranteed({"cpu": "6", "memory": "1Gi"}), 0, scheduler=SP)
    assert result.capacity is not None and result.capacity.per_node == {"n": 4}


def test_an_admitted_node_shows_the_cpuset_the_kubelet_would_pin_even_below_the_top() -> None:
    snapshot = ClusterSnapshot((kubelet_node("a"), kubelet_node("b")))
    pod = guaranteed({"cpu": "4", "memory": "1Gi"})
    result = evaluate(snapshot, pod, scheduler=SP, detailed=0)
    for verdict in result.nodes:
        assert verdict.fits and verdict.admission is not None and verdict.admission.checked
        assert verdict.cpuset is not None and len(verdict.cpuset) == 4


def test_where_the_kubelet_cannot_be_reproduced_the_admission_says_it_was_not_checked() -> None:
    node = kubelet_node("no-layout", cpus=(), cpu_manager_policy="")
    snapshot = ClusterSnapshot((node,))
    verdict = evaluate(snapshot, odd_pod(), scheduler="scheduler-plugins").verdict("no-layout")
    assert verdict.fits and verdict.admission == NO_CPU_LAYOUT
    assert not verdict.admission.checked


def test_a_pod_without_exclusive_cpus_is_admitted_by_rule() -> None:
    snapshot = ClusterSnapshot((kubelet_node("smt", full_pcpus_only=True),))
    pod = burstable_pod(requests_only("app", {"cpu": "9", "memory": "1Gi"}))
    verdict = evaluate(snapshot, pod, scheduler="scheduler-plugins").verdict("smt")
    assert verdict.fits and verdict.admission == NO_EXCLUSIVE_CPUS


def test_a_node_the_scheduler_refuses_has_no_admission() -> None:
    snapshot = ClusterSnapshot((kubelet_node("cordoned", unschedulable=True),))
    verdict = evaluate(snapshot, odd_pod(), scheduler="scheduler-plugins").verdict("cordoned")
    assert not verdict.scheduler_fits and verdict.admission is None


def test_the_default_scheduler_binds_past_the_node_filters_and_the_kubelet_decides() -> None:
    snapshot = ClusterSnapshot((kubelet_node("smt", full_pcpus_only=True), kubelet_node("ok")))
    result = place(snapshot, odd_pod(), 1, scheduler="default")
    smt, ok = result.verdict("smt"), result.verdict("ok")
    assert smt.scheduler_fits and not smt.fits
    assert ok.fits and ok.score is None and ok.cpuset is not None and len(ok.cpuset) == 9
    assert [p.node for p in result.placements] == ["ok"]


POLICIES = [TopologyManagerPolicy.SINGLE_NUMA_NODE, TopologyManagerPolicy.RESTRICTED,
            TopologyManagerPolicy.BEST_EFFORT, TopologyManagerPolicy.NONE]  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(
    variants=st.lists(
        st.tuples(
            st.booleans(),  # full-pcpus-only
            st.frozensets(st.integers(0, 31), max_size=12),  # CPUs the kubelet pinned
            st.frozensets(st.integers(0, 3), max_size=2),  # reserved CPUs
            st.sampled_from(POLICIES),
            st.sampled_from(list(TopologyManagerScope)),
        ),
        min_size=1,
        max_size=6,
    ),
    cpus=st.lists(st.integers(1, 12), min_size=1, max_size=3),
)
def test_remembered_admissions_equal_the_reference(variants, cpus) -> None:
    """Nodes sharing one CPU table, varied in what the kubelet reads: the remembered
    answer (keyed by `kubelet_node_key`) is always the reference's for that node."""
    base = kubelet_node("n")
    pod = guaranteed({"cpu": str(cpus[0]), "memory": "1Gi"}, count=len(cpus))
    for full, pinned, reserved, policy, scope in variants:
        held = PodAllocation("ns", "held", "held", AllocationSource.KUBELET, cpuset=pinned)
        node = replace(
            base,
            cpu_manager_options={"full-pcpus-only": "true"} if full else {},
            allocations=(held,) if pinned else (),
            kubelet_reserved_cpus=reserved,
            tm_policy=policy,
            tm_scope=scope,
        )
        assert kubelet_admission(node, pod) == pinned_admission(node, pod)
