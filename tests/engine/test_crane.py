"""crane-scheduler: upstream filter/score tables, the topology-result rendering, Go 1.17 sort."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduler_api.engine.crane.fast import count as crane_count
from scheduler_api.engine.crane.reference import plugin as crane
from scheduler_api.engine.crane.reference.plugin import CraneConfig, go117_sort_slice
from scheduler_api.engine.model.results import ReasonCheck
from scheduler_api.engine.model.snapshot import (
    ANN_CRANE_AWARENESS,
    ANN_CRANE_CPU_POLICY,
    ANN_CRANE_RESULT,
    AllocationSource,
    ClusterSnapshot,
    Flavour,
    NodeSnapshot,
    OwnerRef,
    PodAllocation,
    PodSpec,
    ResourceAmounts,
    Zone,
)
from scheduler_api.engine.whatif.evaluate import place
from tests.engine.data_nrt_builders import amount, container, pod

GI = 2**30
CPU_ONLY = CraneConfig()
CPU_AND_MEMORY = CraneConfig(frozenset({"cpu", "memory"}))


def crane_node(
    held: Sequence[dict[int, Any]] = (),
    *,
    topology_policy: str = "SingleNUMANodePodLevel",
    cpu_policy: str = "Static",
    zones: Sequence[tuple[str, int, int]] = (("node1", 2500, 4 * GI), ("node2", 3900, 4 * GI)),
) -> NodeSnapshot:
    """The upstream test NRT: node1 2.5 cpu, node2 3.9 cpu, 4Gi each.

    `held` lists the topology-results of pods already on the node, as {zone id: millicpu}
    or {zone id: {resource: amount}}.
    """
    published = tuple(
        Zone(
            int(name.removeprefix("node")),
            name,
            {"cpu": ResourceAmounts(cpu, cpu, cpu), "memory": ResourceAmounts(mem, mem, mem)},
        )
        for name, cpu, mem in zones
    )
    allocations = tuple(
        PodAllocation("ns", f"held-{i}", f"uid-{i}", AllocationSource.CRANE,
                      numa_resources={z: c if isinstance(c, dict) else {"cpu": c}
                                      for z, c in result.items()})
        for i, result in enumerate(held)
    )  # fmt: skip
    return NodeSnapshot(
        name="master",
        flavour=Flavour.CRANE,
        zones=published,
        allocations=allocations,
        crane_cpu_manager_policy=cpu_policy,
        crane_topology_policy=topology_policy,
    )


def crane_pod(
    cpu: str, memory: str = "1Gi", *, aware: bool | None = None, policy: str | None = None
) -> PodSpec:
    annotations = {ANN_CRANE_CPU_POLICY: policy} if policy is not None else {}
    if aware is not None:
        annotations[ANN_CRANE_AWARENESS] = "true" if aware else "false"
    return pod(container("c", {"cpu": cpu, "memory": memory}), annotations=annotations)


NOT_ENOUGH = crane.ERR_NUMA_NOT_ENOUGH
FILTER_CASES = [
    pytest.param(crane_pod("1", aware=True), crane_node([{1: 1000}, {2: 1000}]), CPU_ONLY, None,
                 id="enough-resource-of-node1-and-node2"),
    pytest.param(crane_pod("1", aware=True), crane_node([{1: 2000}, {2: 4000}]), CPU_ONLY,
                 NOT_ENOUGH, id="no-enough-cpu-resource"),
    pytest.param(crane_pod("2", aware=True), crane_node([{1: 1000}, {2: 3000}]), CPU_ONLY,
                 NOT_ENOUGH, id="no-enough-cpu-resource-in-one-numa-node"),
    pytest.param(crane_pod("2", "2Gi", aware=True),
                 crane_node([{1: {"cpu": 1000, "memory": 3 * GI}},
                             {2: {"cpu": 1000, "memory": 3 * GI}}]),
                 CPU_AND_MEMORY, NOT_ENOUGH, id="no-enough-memory-resource-in-one-numa-node"),
    pytest.param(crane_pod("1", aware=True), crane_node([{1: 1000}], cpu_policy="None"),
                 CPU_ONLY, None, id="crane-agent-policy-is-not-static"),
    pytest.param(crane_pod("2"), crane_node([{1: 1000}, {2: 3000}]), CPU_ONLY, NOT_ENOUGH,
                 id="no-enough-cpu-in-one-numa-with-default-single-numa-policy"),
    pytest.param(crane_pod("2"), crane_node([{1: 1000}, {2: 3000}], topology_policy="None"),
                 CPU_ONLY, None, id="enough-cpu-in-node-with-default-none-policy"),
    pytest.param(crane_pod("2"), crane_node([{1: 1000}, {1: 1000, 2: 1000}]), CPU_ONLY, None,
                 id="enough-cpu-in-one-numa-node-with-cross-numa-pods"),
    pytest.param(crane_pod("2"), crane_node([{1: 1000}, {1: 1000, 2: 2000}]), CPU_ONLY,
                 NOT_ENOUGH, id="no-enough-cpu-in-one-numa-node-with-cross-numa-pods"),
    pytest.param(crane_pod("2", aware=False), crane_node([{1: 1000}, {2: 3000}]), CPU_ONLY, None,
                 id="pod-annotation-false-beats-node-policy"),
    pytest.param(crane_pod("2", aware=True), crane_node([{1: 1000}, {2: 3000}],
                                                         topology_policy="None"),
                 CPU_ONLY, NOT_ENOUGH, id="pod-annotation-true-beats-node-policy"),
]  # fmt: skip


@pytest.mark.parametrize(("pod_spec", "node", "conf", "want"), FILTER_CASES)
def test_filter_matches_upstream_table(
    pod_spec: PodSpec, node: NodeSnapshot, conf: CraneConfig, want: str | None
) -> None:
    result = crane.evaluate(node, pod_spec, config=conf)
    assert (None if result.fits else result.reasons[0].message) == want


def test_refusal_lists_each_zone_shortfall_in_millicores() -> None:
    result = crane.evaluate(crane_node([{1: 1000}, {2: 3000}]), crane_pod("2", aware=True))
    assert [(r.numa_id, r.resource, r.short_by) for r in result.reasons] == [
        (1, "cpu", 500),
        (2, "cpu", 1100),
    ]
    assert result.reasons[0].check is ReasonCheck.INSUFFICIENT_NUMA


SCORE_CASES = [
    pytest.param(crane_pod("1", aware=True), crane_node([{1: 1000}, {2: 1000}]), 100,
                 id="enough-resource-of-node1-and-node2"),
    pytest.param(crane_pod("2"), crane_node([{1: 1000, 2: 1000}, {2: 1000}],
                                            topology_policy="None"), 50,
                 id="enough-cpu-in-one-numa-node-with-cross-numa-pods"),
]  # fmt: skip


@pytest.mark.parametrize(("pod_spec", "node", "want"), SCORE_CASES)
def test_score_matches_upstream_table(pod_spec: PodSpec, node: NodeSnapshot, want: int) -> None:
    assert crane.evaluate(node, pod_spec).score == want


def test_greedy_fill_floors_allocatable_to_whole_cpus_and_sorts_by_name() -> None:
    node = crane_node([{1: 1000, 2: 1000}, {2: 1000}], topology_policy="None")
    result = crane.evaluate(node, crane_pod("2"))
    assert result.annotations[ANN_CRANE_RESULT] == (
        '[{"name":"node1","type":"Node","resources":{"capacity":{"cpu":"1"}}},'
        '{"name":"node2","type":"Node","resources":{"capacity":{"cpu":"1"}}}]'
    )
    assert result.numa_zones == (1, 2)


def test_aware_result_names_the_freest_zone() -> None:
    result = crane.evaluate(crane_node([{1: 1000}, {2: 1000}]), crane_pod("1", aware=True))
    assert json.loads(result.annotations[ANN_CRANE_RESULT]) == [
        {"name": "node2", "type": "Node", "resources": {"capacity": {"cpu": "1"}}}
    ]


def test_topology_result_writes_memory_from_millicpu() -> None:
    """formats.md open question 4: ResourceListIgnoreZeroResources uses r.MilliCPU for memory."""
    node = crane_node(zones=(("node0", 16000, 64 * GI),))
    result = crane.evaluate(node, crane_pod("2", "4Gi", aware=True), config=CPU_AND_MEMORY)
    assert result.annotations[ANN_CRANE_RESULT] == (
        '[{"name":"node0","type":"Node","resources":{"capacity":{"cpu":"2","memory":"2000"}}}]'
    )


@pytest.mark.parametrize(
    ("pod_spec", "note"),
    [
        pytest.param(crane_pod("2", policy="none"), "pinnable",
                     id="cpu-policy-none-is-not-checked"),
        pytest.param(crane_pod("1500m"), "pinnable", id="fractional-cpu-is-not-checked"),
        pytest.param(pod(container("c", {"cpu": "2"}, {"cpu": "4"})), "pinnable",
                     id="request-below-limit-is-not-checked"),
        pytest.param(PodSpec("ns", "ds", containers=(container("c", {"cpu": "2"}),),
                             owner_refs=(OwnerRef("apps/v1", "DaemonSet", "ds", "u"),)),
                     "pinnable", id="daemonset-pods-are-not-checked"),
    ],
)  # fmt: skip
def test_pods_crane_would_not_pin_pass_with_score_zero(pod_spec: PodSpec, note: str) -> None:
    result = crane.evaluate(crane_node([{1: 2500}, {2: 3900}]), pod_spec)
    assert result.fits and result.score == 0 and note in result.notes[0]


@pytest.mark.parametrize("policy", ["exclusive", "numa", "immovable", "bogus"])
def test_other_cpu_policies_are_placed(policy: str) -> None:
    result = crane.evaluate(crane_node(), crane_pod("1", aware=True, policy=policy))
    assert result.fits and result.score == 100


def test_a_node_without_crane_nrt_refuses_pinnable_pods() -> None:
    node = NodeSnapshot(name="n", flavour=Flavour.UPSTREAM_V1ALPHA2)
    result = crane.evaluate(node, crane_pod("1"))
    assert not result.fits and result.reasons[0].message == crane.ERR_NO_NRT


def test_awareness_annotation_parses_like_go() -> None:
    node = crane_node([{1: 1000}, {2: 3000}])
    for text, fits in (("TRUE", False), ("0", True), ("yes", False)):
        spec = pod(container("c", {"cpu": "2"}), annotations={ANN_CRANE_AWARENESS: text})
        assert crane.evaluate(node, spec).fits is fits, text


def test_an_empty_greedy_result_refuses_the_pod_as_reserve_would() -> None:
    node = crane_node([{1: 2500}, {2: 3900}], topology_policy="None")
    result = crane.evaluate(node, crane_pod("1"))
    assert not result.fits and result.score is None
    (reason,) = result.reasons
    assert reason.check is ReasonCheck.SCHEDULER_ERROR
    assert reason.message.startswith("node(s) topology result is empty")


def test_copies_of_a_greedy_pod_stop_at_the_first_empty_result() -> None:
    node = replace(
        crane_node(topology_policy="None"), allocatable={"cpu": 16000, "memory": 64 * GI}
    )
    # zones give 2 and 3 whole cores: copies place 2 (node2), 2 (node1), then the last
    # whole core of node2; a fourth copy finds nothing left and gets an empty result
    result = place(ClusterSnapshot((node,)), crane_pod("2"), 0)
    assert result.capacity is not None and result.capacity.per_node == {"master": 3}


def test_copies_of_a_greedy_pod_with_zones_to_spare_are_counted_at_once() -> None:
    node = replace(
        crane_node(topology_policy="None", zones=(("node0", 64000, GI), ("node1", 64000, GI))),
        allocatable={"cpu": 16000, "memory": 64 * GI},
    )
    config, request = CraneConfig(), {"cpu": 2000}
    assert crane_count.fill_count(node, crane_pod("2"), config, request, 100) == 8
    dry = replace(node, zones=crane_node(topology_policy="None").zones)
    assert crane_count.fill_count(dry, crane_pod("2"), config, request, 100) is None


# --- Go 1.17 sort.Slice ------------------------------------------------------------------


def test_go117_sort_moves_ties_with_its_gap_6_pass() -> None:
    """Zones 1-7 tie at 9 free cpus; the gap-6 pass swaps zone 6 ahead of zone 0 first."""
    frees = [5, 9, 9, 9, 9, 9, 9, 9]
    order = list(range(8))
    go117_sort_slice(order, lambda a, b: frees[a] > frees[b])
    assert order == [6, 1, 2, 3, 4, 5, 7, 0]


def test_aware_pod_lands_where_go_117_puts_the_tie() -> None:
    zones = [(f"node{i}", 5000 if i == 0 else 9000, 64 * GI) for i in range(8)]
    result = crane.evaluate(crane_node(zones=zones), crane_pod("1", aware=True))
    assert result.numa_zones == (6,)


@given(st.lists(st.integers(min_value=0, max_value=20), max_size=60))
def test_go117_sort_orders_like_any_sort(values: list[int]) -> None:
    data = list(values)
    go117_sort_slice(data, lambda a, b: a < b)
    assert data == sorted(values)


def test_go117_sort_handles_long_inputs_with_heap_fallback() -> None:
    rng = random.Random(7)
    data = [rng.randrange(5) for _ in range(500)]
    go117_sort_slice(data, lambda a, b: a > b)
    assert data == sorted(data, reverse=True)


# --- real sample -------------------------------------------------------------------------


def node_from_sample(items: list[dict[str, Any]]) -> NodeSnapshot:
    """Minimal parse of node-crane.json (the real parsers live in topology/)."""
    nrt = next(i for i in items if i["kind"] == "NodeResourceTopology")
    zones = tuple(
        Zone(
            int(z["name"].removeprefix("node")),
            z["name"],
            {r: ResourceAmounts(amount(r, z["resources"]["capacity"][r]),
                                amount(r, q), amount(r, q))
             for r, q in z["resources"]["allocatable"].items()},
        )
        for z in nrt["zones"]
    )  # fmt: skip
    allocations = []
    for item in items:
        raw = item.get("metadata", {}).get("annotations", {}).get(ANN_CRANE_RESULT)
        if item["kind"] == "Pod" and raw:
            per_zone = {
                int(z["name"].removeprefix("node")): {
                    r: amount(r, q) for r, q in z["resources"]["capacity"].items()
                }
                for z in json.loads(raw)
            }
            meta = item["metadata"]
            allocations.append(
                PodAllocation(
                    meta["namespace"], meta["name"], meta["uid"], AllocationSource.CRANE,
                    numa_resources=per_zone,
                )
            )  # fmt: skip
    policy = nrt["craneManagerPolicy"]
    return NodeSnapshot(
        name=nrt["metadata"]["name"],
        flavour=Flavour.CRANE,
        zones=zones,
        allocations=tuple(allocations),
        crane_cpu_manager_policy=policy["cpuManagerPolicy"],
        crane_topology_policy=policy["topologyManagerPolicy"],
    )


@pytest.fixture
def worker_02(load_sample: Any) -> NodeSnapshot:
    return node_from_sample(load_sample("node-crane.json")["items"])


def test_sample_node_puts_an_exclusive_pod_on_the_first_of_the_freest_zones(
    worker_02: NodeSnapshot,
) -> None:
    # free cpus: node0 18, node1 20, node2 20, node3 6, node4 16, node5 20, node6 14, node7 20
    spec = crane_pod("4", "8Gi", policy="exclusive")
    result = crane.evaluate(worker_02, spec)
    assert result.fits and result.score == 100 and result.numa_zones == (1,)
    assert result.annotations[ANN_CRANE_RESULT] == (
        '[{"name":"node1","type":"Node","resources":{"capacity":{"cpu":"4"}}}]'
    )


def test_sample_node_refuses_a_pod_larger_than_any_zone(worker_02: NodeSnapshot) -> None:
    result = crane.evaluate(worker_02, crane_pod("24", "8Gi"))
    assert not result.fits
    assert len(result.reasons) == 8
