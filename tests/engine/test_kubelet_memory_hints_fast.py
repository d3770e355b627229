"""The summed Memory Manager hints (`kubelet.fast.memory_hints`) give the reference's
`calculate_hints`, and the kubelet admission that runs on them admits and refuses what
the reference's admission does."""

from __future__ import annotations

from hypothesis import given

from scheduler_api.engine.kubelet.fast.hints import cpu_hints_counted
from scheduler_api.engine.kubelet.fast.memory_hints import calculate_hints_counted
from scheduler_api.engine.kubelet.reference.admission import kubelet_pinning
from scheduler_api.engine.kubelet.reference.bitmask import NUMAMask
from scheduler_api.engine.kubelet.reference.memorymanager import (
    MachineState,
    MemoryTable,
    NUMANodeState,
    calculate_hints,
)
from scheduler_api.engine.model.snapshot import NodeSnapshot, PodSpec
from tests.engine.conformance.strategies import (
    KUBELET_SETTINGS,
    MemoryHintCase,
    memory_hint_cases,
    memory_manager_nodes,
    memory_pods,
)

GI = 1 << 30


@KUBELET_SETTINGS
@given(memory_hint_cases())
def test_summed_memory_hints_equal_the_reference(case: MemoryHintCase) -> None:
    """The same hints in the same order (and no hints where the reference has none) on
    machines of 1-8 NUMA nodes, with nodes held alone, grouped, and reusable memory."""
    want = calculate_hints(case.state, case.requested, case.reusable)
    assert calculate_hints_counted(case.state, case.requested, case.reusable) == want


def table(gib: int, free: int) -> tuple[tuple[str, MemoryTable], ...]:
    return (("memory", MemoryTable(gib * GI, 0, gib * GI, 0, free * GI)),)


def test_an_eight_numa_machine_with_a_group_and_a_node_held_alone() -> None:
    """The case the fast path is for: 8 NUMA nodes, nodes 0-1 a group holding memory,
    node 2 holding memory alone; 4 GiB free per node, 6 GiB asked."""
    nodes = {n: NUMANodeState(table(8, 4), (n,)) for n in range(8)}
    nodes[0] = NUMANodeState(table(8, 4), (0, 1), 1)
    nodes[1] = NUMANodeState(table(8, 4), (0, 1), 1)
    nodes[2] = NUMANodeState(table(8, 4), (2,), 1)
    state = MachineState.of(nodes)
    requested = {"memory": 6 * GI}
    want = calculate_hints(state, requested)
    assert calculate_hints_counted(state, requested) == want
    masks = [sorted(hint.numa or ()) for hint in want["memory"]]
    assert [0, 1] in masks and [2, 3] not in masks and [0, 1, 3] not in masks
    reuse = {NUMAMask.of((4,)): {"memory": 2 * GI}}
    assert calculate_hints_counted(state, requested, reuse) == calculate_hints(
        state, requested, reuse
    )


@KUBELET_SETTINGS
@given(memory_manager_nodes(), memory_pods())
def test_the_admission_on_summed_memory_hints_is_the_reference(
    node: NodeSnapshot, pod: PodSpec
) -> None:
    """`kubelet_pinning` with both fast hint paths says what the reference says."""
    want = kubelet_pinning(node, pod)
    fast = kubelet_pinning(node, pod, hints=cpu_hints_counted, memory_hints=calculate_hints_counted)
    assert fast == want
