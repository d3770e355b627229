"""cpu_hints and resource_hints against kubelet's topology_hints_test.go (ported as data)."""

from __future__ import annotations

import pytest

from scheduler_api.engine.kubelet.reference.cpu_topology import CPUTopology
from scheduler_api.engine.kubelet.reference.cpumanager import (
    StaticPolicyOptions,
    cpu_hints,
    hints_by_resource,
    resource_hints,
)
from scheduler_api.engine.kubelet.reference.topologymanager import TopologyHint, merge_hints
from tests.engine.data_cpu_topologies import (
    TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT,
    TOPO_HINTS_TEST_MACHINE,
    parse_cpuset,
)
from tests.engine.data_topology_manager import ANY_N, ANY_P, N, P

HINTS_MACHINE = CPUTopology.from_cpus(TOPO_HINTS_TEST_MACHINE)
MULTI_NUMA = CPUTopology.from_cpus(TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT)


def _sorted(hints: list[TopologyHint]) -> list[TopologyHint]:
    return sorted(hints, key=lambda h: (len(h.numa or ()), sorted(h.numa or ()), h.preferred))


@pytest.mark.parametrize(
    ("available", "count", "expected"),
    [  # returnTestCases: NUMA 0 = 0-2,6-8 and NUMA 1 = 3-5,9-11
        pytest.param(
            "2-11", 2, [P(0), P(1), N(0, 1)], id="request-2-cpus-4-free-on-numa0-6-on-numa1"
        ),
        pytest.param("2-11", 5, [P(1), N(0, 1)], id="request-5-cpus-4-free-on-numa0-6-on-numa1"),
        pytest.param("2-11", 7, [P(0, 1)], id="request-7-cpus-4-free-on-numa0-6-on-numa1"),
        pytest.param("2-11", 11, [], id="request-11-cpus-4-free-on-numa0-6-on-numa1"),
        pytest.param("0,3", 2, [N(0, 1)], id="request-2-cpus-1-free-on-each-numa"),
        pytest.param("0-3", 5, [], id="request-more-cpus-than-available"),
        # "Regenerate ... if already allocated": kubelet feeds the allocated set back in.
        pytest.param("0,6", 2, [P(0), N(0, 1)], id="regenerate-single-node-numa-hints-1-of-2"),
        pytest.param("3,9", 2, [P(1), N(0, 1)], id="regenerate-single-node-numa-hints-2-of-2"),
        pytest.param("0-10", 11, [P(0, 1)], id="regenerate-cross-numa-hints"),
    ],
)
def test_cpu_hints_match_kubelet(available: str, count: int, expected: list[TopologyHint]) -> None:
    assert _sorted(cpu_hints(HINTS_MACHINE, parse_cpuset(available), count)) == _sorted(expected)


ALL_WITH_NUMA0 = [N(0, 1), N(0, 2), N(0, 3), N(0, 1, 2), N(0, 1, 3), N(0, 2, 3), N(0, 1, 2, 3)]


@pytest.mark.parametrize(
    ("available", "count", "align_by_socket", "expected"),
    [  # TestGetPodTopologyHintsWithPolicyOptions
        pytest.param(
            "2,3,11",
            2,
            False,
            [P(0), *ALL_WITH_NUMA0],
            id="align-by-socket-off-only-numa0-preferred",
        ),
        pytest.param(
            "2,3,11",
            2,
            True,
            [P(0), P(0, 1), *ALL_WITH_NUMA0[1:]],
            id="align-by-socket-on-socket0-numa-pair-preferred",
        ),
        pytest.param(
            "0-28,40-57",
            41,
            True,
            [P(0, 1, 2), P(0, 1, 2, 3)],
            id="align-by-socket-two-sockets-needed",
        ),
    ],
)
def test_cpu_hints_with_align_by_socket(
    available: str, count: int, align_by_socket: bool, expected: list[TopologyHint]
) -> None:
    options = StaticPolicyOptions(align_by_socket=align_by_socket)
    hints = cpu_hints(MULTI_NUMA, parse_cpuset(available), count, options=options)
    assert _sorted(hints) == _sorted(expected)


def test_reusable_cpus_pin_the_hint_to_their_numa_node() -> None:
    # An init container's CPU 3 (NUMA 1) is reusable: masks without NUMA 1 are dropped,
    # and {1} alone has too few CPUs (the reusable one plus none free there).
    assert cpu_hints(HINTS_MACHINE, parse_cpuset("0-2"), 3, reusable={3}) == [N(0, 1)]


def test_reserved_cpus_do_not_count_as_available() -> None:
    assert cpu_hints(HINTS_MACHINE, parse_cpuset("0-2"), 3, reserved={0}) == []


def test_zero_cpus_is_no_preference_and_negative_is_refused() -> None:
    assert cpu_hints(HINTS_MACHINE, parse_cpuset("0-11"), 0) == [ANY_P]
    with pytest.raises(ValueError, match="cannot be negative"):
        cpu_hints(HINTS_MACHINE, parse_cpuset("0-11"), -1)


@pytest.mark.parametrize(
    ("free", "total", "amount", "expected"),
    [
        pytest.param({0: 5, 1: 10}, {0: 10, 1: 10}, 6, [P(1), N(0, 1)], id="fits-on-one-node-only"),
        pytest.param(
            {0: 5, 1: 5}, {0: 10, 1: 10}, 6, [N(0, 1)], id="could-fit-one-node-but-free-is-split"
        ),
        pytest.param({0: 10, 1: 10}, {0: 10, 1: 10}, 12, [P(0, 1)], id="needs-both-nodes"),
        pytest.param({0: 7, 1: 8}, {0: 10, 1: 10}, 16, [], id="not-enough-free-anywhere"),
        pytest.param({0: 4}, {0: 4, 1: 4}, 4, [P(0), N(0, 1)], id="missing-free-counts-as-zero"),
        pytest.param({0: 1, 1: 1}, {0: 1, 1: 1}, 0, [ANY_P], id="zero-request-no-preference"),
        pytest.param(
            {0: 2, 1: 2, 2: 2},
            {0: 4, 1: 4, 2: 4},
            4,
            [N(0, 1), N(0, 2), N(1, 2), N(0, 1, 2)],
            id="three-nodes-fragmented",
        ),
    ],
)
def test_resource_hints_follow_memory_and_device_managers(
    free: dict[int, int], total: dict[int, int], amount: int, expected: list[TopologyHint]
) -> None:
    assert _sorted(resource_hints(free, total, amount)) == _sorted(expected)


@pytest.mark.parametrize(
    ("free", "total", "amount", "message"),
    [
        pytest.param({2: 1}, {0: 1}, 1, "no total", id="free-for-unknown-node"),
        pytest.param({0: -1}, {0: 1}, 1, "must not be negative", id="negative-amount"),
        pytest.param({0: 1}, {0: 1}, -1, "cannot be negative", id="negative-request"),
    ],
)
def test_resource_hints_refuse_bad_input(
    free: dict[int, int], total: dict[int, int], amount: int, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        resource_hints(free, total, amount)


def test_generated_hints_feed_merge_hints_with_kubelets_meaning() -> None:
    # formats.md section 5: 4 CPUs + 1 GPU on NUMA 1.
    gpu = resource_hints({0: 0, 1: 1}, {0: 1, 1: 1}, 1)
    assert _sorted(gpu) == [P(1), N(0, 1)]  # the device manager also offers the wider mask
    cpus = cpu_hints(HINTS_MACHINE, parse_cpuset("0-11"), 4)
    merged = merge_hints(hints_by_resource({"cpu": cpus, "gpu": gpu}), [0, 1], "restricted")
    assert merged == (P(1), True)
    # NUMA 1 down to 3 free CPUs: formats.md's GPU hint [{N1}] gives {N1, not preferred}; the
    # full device-manager list ties {N0} and {N1} at the target width and the lower mask wins.
    cpus = cpu_hints(HINTS_MACHINE, parse_cpuset("0-2,6-8,3,4,5"), 4)
    assert cpus == [P(0), N(0, 1)]
    assert merge_hints([cpus, [P(1)]], [0, 1], "restricted") == (N(1), False)
    assert merge_hints([cpus, gpu], [0, 1], "restricted") == (N(0), False)


def test_hints_by_resource_marks_an_unsatisfiable_resource() -> None:
    assert hints_by_resource({"cpu": [], "memory": [P(0)]}) == [[ANY_N], [P(0)]]
