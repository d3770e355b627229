"""What-if capacity counted per zone equals filling the node copy by copy.

`nrt_count` (scheduler-plugins) and `crane_count` count the copies a node takes from
its zones; the reference assumes one copy after another and judges the grown node
again. On random nodes and pods both must agree wherever the count answers.
CAPACITY_EXAMPLES=1000 for a deeper local run.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import event, given
from hypothesis import strategies as st

from scheduler_api.engine.crane.reference.plugin import CraneConfig
from scheduler_api.engine.model.kubernetes import node_fit_count
from scheduler_api.engine.model.snapshot import (
    AllocationSource,
    ClusterSnapshot,
    Flavour,
    NodeSnapshot,
    PodAllocation,
    PodSpec,
    ResourceAmounts,
    Zone,
)
from scheduler_api.engine.whatif.evaluate import evaluate
from tests.engine.conformance.strategies import (
    CAPACITY_LIMIT,
    CAPACITY_SETTINGS,
    GI,
    crane_nodes,
    crane_pods,
    nodes,
    pods,
)


def _assert_counts_equal_the_reference(
    snapshot: ClusterSnapshot, pod: PodSpec, scheduler: str, crane: CraneConfig | None = None
) -> None:
    judgement = evaluate(snapshot, pod, scheduler=scheduler)._judgement
    if crane is not None:
        judgement.configs = replace(judgement.configs, crane=crane)
    for row, node in enumerate(snapshot.nodes):
        reference = judgement.fill_copy_by_copy(row, CAPACITY_LIMIT, fast=False)
        counted = judgement.count_copies(node, judgement.system(row), CAPACITY_LIMIT)
        event("counted" if counted is not None else "left to the reference")
        room = node_fit_count(node, judgement.request_of(judgement.system(row)), CAPACITY_LIMIT)
        limited = "zones limit" if reference < room else "node limit"
        event(f"copies: {'0' if reference == 0 else limited}")
        if counted is not None:
            assert counted == reference, node
        assert judgement.fill_node(row, CAPACITY_LIMIT) == (reference, node.name)


@st.composite
def upstream_nodes(draw: st.DrawFn) -> NodeSnapshot:
    node = draw(nodes("n0"))
    requested = node.requested if draw(st.booleans()) else {"pods": 0}
    allocatable = {**node.allocatable, "pods": draw(st.integers(1, 60))}
    return replace(node, allocatable=allocatable, requested=requested)


@CAPACITY_SETTINGS
@given(upstream_nodes(), pods(), st.sampled_from(["auto", "scheduler-plugins"]))
def test_scheduler_plugins_counts_equal_filling_copy_by_copy(
    node: NodeSnapshot, pod: PodSpec, scheduler: str
) -> None:
    _assert_counts_equal_the_reference(ClusterSnapshot((node,)), pod, scheduler)


@st.composite
def roomy_nodes(draw: st.DrawFn) -> NodeSnapshot:
    """single-numa-node with room on the node: the zones decide how many copies fit."""
    zones = []
    devices = draw(st.booleans())
    for numa in range(draw(st.integers(1, 4))):
        cpu = draw(st.integers(1, 16)) * 1000
        memory = draw(st.integers(1, 32)) * GI
        resources = {
            "cpu": ResourceAmounts(cpu, cpu, draw(st.integers(0, cpu))),
            "memory": ResourceAmounts(memory, memory, draw(st.integers(0, memory // GI)) * GI),
        }
        if devices:  # otherwise a requested device is host-level: the Filter skips it
            resources["example.com/dev"] = ResourceAmounts(4, 4, draw(st.integers(0, 4)))
        zones.append(Zone(numa, f"node-{numa}", resources))
    scope = draw(st.sampled_from(["pod", "container"]))
    return NodeSnapshot(
        name="r0",
        flavour=draw(st.sampled_from([Flavour.UPSTREAM_V1ALPHA2, Flavour.KOORDINATOR])),
        allocatable={"cpu": 10**6, "memory": 10**15, "pods": 500, "example.com/dev": 100},
        nrt_attributes={"topologyManagerPolicy": "single-numa-node", "topologyManagerScope": scope},
        zones=tuple(zones),
    )


@CAPACITY_SETTINGS
@given(roomy_nodes(), pods())
def test_scheduler_plugins_counts_each_zone_on_a_roomy_node(
    node: NodeSnapshot, pod: PodSpec
) -> None:
    _assert_counts_equal_the_reference(ClusterSnapshot((node,)), pod, "scheduler-plugins")


@CAPACITY_SETTINGS
@given(crane_nodes(), crane_pods(), st.sampled_from(["auto", "crane"]))
def test_crane_counts_equal_filling_copy_by_copy(
    node: NodeSnapshot, pod: PodSpec, scheduler: str
) -> None:
    _assert_counts_equal_the_reference(ClusterSnapshot((node,)), pod, scheduler)


@st.composite
def roomy_crane_nodes(draw: st.DrawFn) -> NodeSnapshot:
    """Static, topology-aware crane nodes with room on the node: the zones decide."""
    zones, claims = [], []
    for numa in range(draw(st.integers(1, 4))):
        cpu, memory = draw(st.integers(1, 16)) * 1000, draw(st.integers(1, 32)) * GI
        zones.append(
            Zone(
                numa,
                f"node-{numa}",
                {"cpu": ResourceAmounts(cpu, cpu, 0), "memory": ResourceAmounts(memory, memory, 0)},
            )
        )
        if draw(st.booleans()):
            claimed = {"cpu": draw(st.integers(0, cpu // 1000)) * 1000}
            claims.append(
                PodAllocation(
                    "ns",
                    f"held-{numa}",
                    f"uid-{numa}",
                    AllocationSource.CRANE,
                    numa_resources={numa: claimed},
                )
            )
    return NodeSnapshot(
        name="c0", flavour=Flavour.CRANE, zones=tuple(zones), allocations=tuple(claims),
        allocatable={"cpu": 10**6, "memory": 10**15, "pods": 500, "example.com/dev": 100},
        crane_cpu_manager_policy="Static",
        crane_topology_policy=draw(st.sampled_from(["SingleNUMANodePodLevel", ""])),
    )  # fmt: skip


CRANE_CONFIGS = st.sampled_from(
    [
        CraneConfig(),
        CraneConfig(frozenset({"cpu", "memory"})),
        CraneConfig(frozenset({"cpu", "example.com/dev"})),
    ]
)


@CAPACITY_SETTINGS
@given(roomy_crane_nodes(), crane_pods(), CRANE_CONFIGS)
def test_crane_counts_each_zone_on_a_roomy_node(
    node: NodeSnapshot, pod: PodSpec, config: CraneConfig
) -> None:
    _assert_counts_equal_the_reference(ClusterSnapshot((node,)), pod, "crane", config)
