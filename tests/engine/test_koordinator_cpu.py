"""Koordinator cpu_accumulator: upstream takeCPUs tables and topology quirks."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scheduler_api.engine.koordinator.reference.cpu import (
    KoordCPUTopology,
    filter_by_required_bind_policy,
    free_cpus,
    new_accumulator,
    satisfies_required_bind_policy,
    spread_cpus,
    take_cpus,
    take_preferred_cpus,
)
from scheduler_api.engine.koordinator.reference.state import (
    HeldAllocation,
    NodeAllocation,
    NodeView,
    available_cpus,
)
from scheduler_api.engine.model.errors import AllocationError
from scheduler_api.engine.model.results import format_cpuset
from tests.engine import data_koord_cpu as d


def take(shape: tuple[int, int, int, int], allocated: str, needed: int, bind: str, strategy: str,
         exclusive: str = "None", their_policy: str = "") -> str:  # fmt: skip
    topo = d.topology(*shape)
    held_cpus = d.cpus(allocated)
    held = {c: replace(topo.details[c], exclusive_policy=their_policy) for c in held_cpus}
    available = frozenset(topo.details) - held_cpus
    return format_cpuset(take_cpus(topo, 1, available, held, needed, bind, exclusive, strategy))


@pytest.mark.parametrize(("shape", "allocated", "needed", "want"), d.FULL_PCPUS_MOST)
def test_full_pcpus_most_allocated(
    shape: tuple[int, int, int, int], allocated: str, needed: int, want: str
) -> None:
    assert take(shape, allocated, needed, "FullPCPUs", "MostAllocated") == want


@pytest.mark.parametrize(("shape", "allocated", "needed", "want"), d.FULL_PCPUS_LEAST)
def test_full_pcpus_least_allocated(
    shape: tuple[int, int, int, int], allocated: str, needed: int, want: str
) -> None:
    assert take(shape, allocated, needed, "FullPCPUs", "LeastAllocated") == want


@pytest.mark.parametrize(("shape", "allocated", "needed", "want"), d.SPREAD_MOST)
def test_spread_by_pcpus_most_allocated(
    shape: tuple[int, int, int, int], allocated: str, needed: int, want: str
) -> None:
    assert take(shape, allocated, needed, "SpreadByPCPUs", "MostAllocated") == want


@pytest.mark.parametrize(("shape", "allocated", "needed", "want"), d.SPREAD_LEAST)
def test_spread_by_pcpus_least_allocated(
    shape: tuple[int, int, int, int], allocated: str, needed: int, want: str
) -> None:
    assert take(shape, allocated, needed, "SpreadByPCPUs", "LeastAllocated") == want


@pytest.mark.parametrize(
    ("shape", "allocated", "theirs", "bind", "own", "needed", "want"), d.EXCLUSIVE
)
def test_exclusive_policies(
    shape: tuple[int, int, int, int],
    allocated: str,
    theirs: str,
    bind: str,
    own: str,
    needed: int,
    want: str,
) -> None:
    assert take(shape, allocated, needed, bind, "MostAllocated", own, theirs) == want


@pytest.mark.parametrize("strategy", ["MostAllocated", "LeastAllocated"])
def test_free_cpus_spread_round_robins_the_cores(strategy: str) -> None:
    topo = d.topology(2, 2, 4, 2)
    acc = new_accumulator(topo, 1, frozenset(topo.details), {}, 8, "None", strategy)
    assert spread_cpus(acc, free_cpus(acc, False)) == [*range(0, 32, 2), *range(1, 32, 2)]


def test_max_ref_count_two_lets_pods_share_cores() -> None:
    """TestTakeCPUsWithMaxRefCount: 4 -> 0-3, 5 -> 0,4-7, 4 -> 2-5."""
    topo = d.topology(1, 1, 4, 2)
    view = NodeView(True, topo, frozenset(), "", (), "", {}, max_ref_count=2)
    state = NodeAllocation()
    got = []
    for i, needed in enumerate((4, 5, 4)):
        available, held = available_cpus(state, view)
        cpus = take_cpus(topo, 2, available, held, needed, "FullPCPUs", "None", "MostAllocated")
        got.append(format_cpuset(cpus))
        state.add(HeldAllocation(f"pod-{i}", cpus, "PCPULevel", {}), topo)
    assert got == ["0-3", "0,4-7", "2-5"]


def test_not_enough_cpus_raises_with_upstream_message() -> None:
    topo = d.topology(1, 1, 2, 2)
    with pytest.raises(AllocationError, match="not enough cpus available"):
        take_cpus(topo, 1, frozenset({0, 1}), {}, 3, "FullPCPUs", "None", "MostAllocated")


def test_preferred_cpus_are_taken_first() -> None:
    topo = d.topology(1, 1, 4, 2)
    got = take_preferred_cpus(
        topo, 1, frozenset(range(8)), frozenset({6, 7}), {}, 4, "FullPCPUs", "None", "MostAllocated"
    )
    assert {6, 7} <= got and len(got) == 4


def test_builder_shifts_numa_and_core_ids_by_socket() -> None:
    """Upstream quirk: CPUsInNUMANodes(1) is empty on a 2-socket machine."""
    rows = [(0, 0, 0, 0), (1, 0, 0, 0), (2, 0, 1, 1), (3, 0, 1, 1)]
    topo = KoordCPUTopology.from_rows(rows)
    assert topo.cpus_in_nodes(1) == frozenset()
    assert topo.cpus_in_nodes(1 << 16 | 1) == {2, 3}
    assert (topo.num_sockets, topo.num_nodes, topo.num_cores, topo.cpus_per_core()) == (2, 2, 2, 2)


def test_required_policy_filters_and_checks() -> None:
    topo = d.topology(1, 1, 4, 2)
    available = frozenset({0, 1, 2, 4, 5})
    assert filter_by_required_bind_policy("FullPCPUs", available, topo) == {0, 1, 4, 5}
    assert filter_by_required_bind_policy("SpreadByPCPUs", available, topo) == {0, 2, 4}
    assert satisfies_required_bind_policy("FullPCPUs", frozenset({0, 1}), topo)
    assert not satisfies_required_bind_policy("FullPCPUs", frozenset({0, 2}), topo)
    assert satisfies_required_bind_policy("SpreadByPCPUs", frozenset({0, 2}), topo)
