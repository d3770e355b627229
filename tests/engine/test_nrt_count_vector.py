"""The column count of copies agrees with `nrt_count.fill_count` on every row."""

from __future__ import annotations

from hypothesis import find, given
from hypothesis import strategies as st

from scheduler_api.engine.model.decided import UNDECIDED
from scheduler_api.engine.model.kubernetes import pod_request
from scheduler_api.engine.model.snapshot import ClusterSnapshot, ContainerSpec, PodSpec
from scheduler_api.engine.schedulerplugins.fast import count as nrt_count
from scheduler_api.engine.schedulerplugins.fast.count_vector import fill_counts
from scheduler_api.engine.schedulerplugins.fast.vector import NRTIndex
from tests.engine.conformance.strategies import WHATIF_SETTINGS, clusters, pods

LIMIT = 50


def _check(snapshot: ClusterSnapshot, pod: PodSpec, limit: int) -> list[int | None]:
    index, request = NRTIndex(snapshot.nodes), pod_request(pod)
    counted = fill_counts(index, pod, request, limit)
    expected = [nrt_count.fill_count(node, pod, request, limit) for node in snapshot.nodes]
    for row, node in enumerate(snapshot.nodes):
        want = UNDECIDED if expected[row] is None else expected[row]
        assert int(counted[row]) == want, (node, pod)
    return expected


@WHATIF_SETTINGS
@given(clusters(), pods(), st.sampled_from([1, 3, LIMIT]))
def test_every_row_is_counted_as_nrt_count_counts_it(
    snapshot: ClusterSnapshot, pod: PodSpec, limit: int
) -> None:
    _check(snapshot, pod, limit)


@WHATIF_SETTINGS
@given(clusters())
def test_best_effort_and_host_level_only_requests_agree_too(snapshot: ClusterSnapshot) -> None:
    best_effort = PodSpec("ns", "be", containers=(ContainerSpec("c", {}, {}),))
    devices = PodSpec("ns", "dev", containers=(ContainerSpec("c", {"example.com/dev": 1}, {}),))
    storage = PodSpec(
        "ns", "disk", containers=(ContainerSpec("c", {"ephemeral-storage": 2**30}, {}),)
    )
    for pod in (best_effort, devices, storage):
        _check(snapshot, pod, LIMIT)


def test_the_generated_cases_reach_the_zone_arithmetic() -> None:
    """Some generated node is limited by its zones, not only by the node-level cap."""
    found = find(
        st.tuples(clusters(), pods()),
        lambda case: any(
            nrt_count.fill_count(node, case[1], pod_request(case[1]), LIMIT) not in (None, 0, LIMIT)
            for node in case[0].nodes
        ),
    )
    _check(found[0], found[1], LIMIT)
