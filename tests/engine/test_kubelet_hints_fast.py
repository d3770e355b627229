"""The counted CPU hints (`kubelet.fast.hints`) give the reference's hints, and the
kubelet admission that runs on them pins what the reference's admission pins."""

from __future__ import annotations

from hypothesis import given

from scheduler_api.engine.kubelet.fast.hints import cpu_hints_counted
from scheduler_api.engine.kubelet.reference.admission import kubelet_pinning
from scheduler_api.engine.kubelet.reference.cpu_topology import CPUTopology
from scheduler_api.engine.kubelet.reference.cpumanager import CPUHints, cpu_hints
from scheduler_api.engine.kubelet.reference.topologymanager import TopologyHint
from scheduler_api.engine.model.snapshot import NodeSnapshot, PodSpec
from scheduler_api.engine.whatif.admission import Admission, pinned_admission
from tests.engine.conformance.strategies import (
    KUBELET_SETTINGS,
    CPUHintCase,
    cpu_hint_cases,
    kubelet_static_nodes,
    pods,
)


def outcome(hints: CPUHints, case: CPUHintCase) -> list[TopologyHint] | tuple[type, str]:
    """The hints, or the error's type and message."""
    topology = CPUTopology.from_cpus(case.rows)
    try:
        return hints(
            topology, case.available, case.count, case.reusable,
            options=case.options, reserved=case.reserved,
        )  # fmt: skip
    except Exception as error:  # the error's type and message are compared too
        return type(error), str(error)


@KUBELET_SETTINGS
@given(cpu_hint_cases())
def test_counted_cpu_hints_equal_the_reference(case: CPUHintCase) -> None:
    """The same hints in the same order, or the same error, on machines of 1-8 NUMA nodes
    (some with NUMA ids apart, some with more sockets than NUMA nodes), any options."""
    assert outcome(cpu_hints_counted, case) == outcome(cpu_hints, case)


def test_counted_cpu_hints_on_an_eight_numa_node_machine() -> None:
    """The case the fast path is for: 128 CPUs on 8 NUMA nodes, half of them free."""
    rows = [(cpu, cpu % 64, cpu % 64 // 32, cpu % 64 // 8) for cpu in range(128)]
    topology = CPUTopology.from_cpus(rows)
    free = frozenset(range(0, 128, 2))
    for count in (1, 8, 20, 64, 65):
        want = cpu_hints(topology, free, count, {1, 9})
        assert cpu_hints_counted(topology, free, count, {1, 9}) == want
    assert len(cpu_hints_counted(topology, free, 20)) == 219


@KUBELET_SETTINGS
@given(kubelet_static_nodes(), pods())
def test_the_whatif_admission_on_counted_hints_is_the_reference(
    node: NodeSnapshot, pod: PodSpec
) -> None:
    """`pinned_admission` (counted hints) says what the reference's `kubelet_pinning`
    (its own hints) says: the same cpuset, or the same refusal."""
    want = kubelet_pinning(node, pod)
    assert kubelet_pinning(node, pod, hints=cpu_hints_counted) == want
    got = pinned_admission(node, pod)
    if want.reason is None:
        assert got == Admission(True, got.reason, cpuset=want.cpuset)
    else:
        assert (got.admitted, got.reason) == (False, want.reason.message or str(want.reason.check))
