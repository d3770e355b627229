"""Capacity on Static Memory Manager nodes: where the kubelet admits every copy
scheduler-plugins binds (`admits_what_scheduler_plugins_binds`), the copies are counted
as the scheduler alone counts them instead of filled one by one with the kubelet's
admission of each. Both must give the reference fill's number (every copy judged,
admitted and assumed), which is what these properties hold them to."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import event, given

from scheduler_api.engine.model.snapshot import (
    ContainerSpec,
    Flavour,
    NodeSnapshot,
    PodSpec,
    ResourceAmounts,
    TopologyManagerPolicy,
    Zone,
)
from scheduler_api.engine.schedulerplugins.fast.vector import NRTIndex
from scheduler_api.engine.whatif.admission import admits_what_scheduler_plugins_binds
from scheduler_api.engine.whatif.judge import Judgement
from scheduler_api.engine.whatif.systems import Scheduler, SystemConfigs
from tests.engine.conformance.strategies import (
    CAPACITY_SETTINGS,
    GI,
    memory_manager_nodes,
    memory_pods,
)

LIMIT = 40


def counts(node: NodeSnapshot, pod: PodSpec) -> tuple[int, int]:
    """(what the what-if's capacity gives, what the reference fill gives)."""
    system = Scheduler.SCHEDULER_PLUGINS
    judgement = Judgement(NRTIndex((node,)), (), pod, system, SystemConfigs(), detailed=3)
    reference = judgement.fill_copy_by_copy(0, LIMIT, fast=False)
    fresh = Judgement(NRTIndex((node,)), (), pod, system, SystemConfigs(), detailed=3)
    return dict(fresh.fill_all(LIMIT)).get(node.name, 0), reference


@CAPACITY_SETTINGS
@given(memory_manager_nodes(), memory_pods())
def test_capacity_on_a_memory_manager_node_equals_the_reference_fill(
    node: NodeSnapshot, pod: PodSpec
) -> None:
    follows = admits_what_scheduler_plugins_binds(node, pod, Scheduler.SCHEDULER_PLUGINS)
    got, want = counts(node, pod)
    event(f"counted by the scheduler alone: {follows}; copies: {min(want, 3)}")
    assert got == want


def _roomy_node() -> NodeSnapshot:
    """Four NUMA nodes of 8 GiB (1 GiB reserved each), 2-5 GiB free, single-numa-node."""
    zones = tuple(
        Zone(n, f"node-{n}", {
            "cpu": ResourceAmounts(8000, 8000, 8000),
            "memory": ResourceAmounts(9 * GI, 8 * GI, (2 + n) * GI),
        })
        for n in range(4)
    )  # fmt: skip
    return NodeSnapshot(
        name="mm1", flavour=Flavour.UPSTREAM_V1ALPHA2, zones=zones,
        allocatable={"cpu": 32000, "memory": 32 * GI, "pods": 110},
        nrt_attributes={"topologyManagerPolicy": "single-numa-node",
                        "topologyManagerScope": "pod", "memoryManagerPolicy": "Static"},
    )  # fmt: skip


def test_the_scheduler_alone_counts_a_guaranteed_pod_of_fractional_cpus() -> None:
    """The case the fast path is for (the demo's Memory Manager node): a small Guaranteed
    pod under single-numa-node fills each NUMA node's free memory; and only there."""
    node = _roomy_node()
    amounts = {"cpu": 250, "memory": GI}
    pod = PodSpec("ns", "p", containers=(ContainerSpec("c", amounts, amounts),))
    assert admits_what_scheduler_plugins_binds(node, pod, Scheduler.SCHEDULER_PLUGINS)
    got, want = counts(node, pod)
    assert got == want == 2 + 3 + 4 + 5  # 1 GiB copies in each NUMA node's free memory
    whole = {"cpu": 1000, "memory": GI // 4}
    exclusive = PodSpec("ns", "p", containers=(ContainerSpec("c", whole, whole),))
    cpu_static = replace(node, cpu_manager_policy="static", cpus=((0, 0, 0, 0),))
    assert not admits_what_scheduler_plugins_binds(
        cpu_static, exclusive, Scheduler.SCHEDULER_PLUGINS
    )
    restricted = replace(node, tm_policy=TopologyManagerPolicy.RESTRICTED)
    assert not admits_what_scheduler_plugins_binds(restricted, pod, Scheduler.SCHEDULER_PLUGINS)
    assert not admits_what_scheduler_plugins_binds(node, pod, Scheduler.DEFAULT)
