"""merge_hints and the policy classes against kubelet's topologymanager test tables."""

from __future__ import annotations

import re

import pytest

from scheduler_api.engine.kubelet.reference.bitmask import NUMAMask
from scheduler_api.engine.kubelet.reference.topologymanager import (
    HintMerger,
    MaskHint,
    NUMAInfo,
    PolicyName,
    TopologyHint,
    filter_single_numa_hints,
    max_of_min_affinity_counts,
    merge_hints,
)
from tests.engine import data_topology_manager as data
from tests.engine.data_topology_manager import ANY_N, ANY_P, N, P, Providers


def _id(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _params(cases: list[data.MergeCase]) -> list[object]:
    return [pytest.param(providers, expected, id=_id(name)) for name, providers, expected in cases]


def _canonical(hint: TopologyHint) -> TopologyHint:
    """Upstream's all-NUMA expectation is reported as ``None`` here."""
    return TopologyHint(None, hint.preferred) if hint.numa == data.ALL else hint


BEST_EFFORT_TABLE = data.COMMON + data.BEST_EFFORT + data.NO_POLICY_OPTIONS


@pytest.mark.parametrize(("providers", "expected"), _params(BEST_EFFORT_TABLE))
def test_best_effort_merge_matches_kubelet(providers: Providers, expected: TopologyHint) -> None:
    assert merge_hints(providers, data.FOUR_NODES, "best-effort") == (_canonical(expected), True)


@pytest.mark.parametrize(("providers", "expected"), _params(BEST_EFFORT_TABLE))
def test_restricted_merge_matches_kubelet_and_admits_only_preferred(
    providers: Providers, expected: TopologyHint
) -> None:
    hint = _canonical(expected)
    assert merge_hints(providers, data.FOUR_NODES, "restricted") == (hint, hint.preferred)


@pytest.mark.parametrize(
    ("providers", "expected"), _params(data.COMMON + data.BEST_EFFORT + data.CLOSEST)
)
def test_best_effort_prefer_closest_matches_kubelet(
    providers: Providers, expected: TopologyHint
) -> None:
    result = merge_hints(
        providers,
        data.EIGHT_NODES,
        "best-effort",
        prefer_closest=True,
        distances=data.DISTANCES_EIGHT,
    )
    assert result == (_canonical(expected), True)


@pytest.mark.parametrize("numa_nodes", [[0, 1], data.FOUR_NODES], ids=["two-nodes", "four-nodes"])
@pytest.mark.parametrize(("providers", "expected"), _params(data.COMMON + data.SINGLE_NUMA_NODE))
def test_single_numa_node_merge_matches_kubelet(
    providers: Providers, expected: TopologyHint, numa_nodes: list[int]
) -> None:
    assert merge_hints(providers, numa_nodes, "single-numa-node") == (expected, expected.preferred)


def test_single_numa_node_ignores_prefer_closest() -> None:
    providers = [[P(1), P(0)], [P(0), P(1)]]
    result = merge_hints(providers, [0, 1], "single-numa-node", prefer_closest=True)
    assert result == (P(0), True)


def test_single_numa_node_reports_a_one_node_machine_as_any_numa() -> None:
    assert merge_hints([[P(0)]], [0], "single-numa-node") == (ANY_P, True)


@pytest.mark.parametrize(
    "providers", [[], [[P(0)], [P(1)]], [[ANY_N]]], ids=["none", "conflict", "unsatisfiable"]
)
def test_none_policy_admits_everything_with_no_affinity(providers: Providers) -> None:
    assert merge_hints(providers, [0, 1], "none") == (ANY_P, True)


@pytest.mark.parametrize(
    ("description", "target", "current", "candidate", "winner"),
    [pytest.param(*case, id=_id(case[0])) for case in data.COMPARE_NARROWEST],
)
def test_compare_hints_narrowest(
    description: str,
    target: int,
    current: data.HintSpec | None,
    candidate: data.HintSpec,
    winner: str,
) -> None:
    merger = HintMerger(NUMAInfo((0,)), [], PolicyName.BEST_EFFORT)
    merger.best_non_preferred_affinity_count = target
    cur = None if current is None else MaskHint(NUMAMask.of(current[0]), current[1])
    cand = MaskHint(NUMAMask.of(candidate[0]), candidate[1])
    result = merger.compare(cur, cand)
    assert result is (cur if winner == "current" else cand)


@pytest.mark.parametrize(("hints", "expected"), data.MAX_OF_MIN, ids=lambda v: str(v))
def test_max_of_min_affinity_counts(hints: list[list[tuple[int, ...]]], expected: int) -> None:
    masks = [[MaskHint(NUMAMask.of(nodes), True) for nodes in provider] for provider in hints]
    assert max_of_min_affinity_counts(masks) == expected


def _mask_hints(spec: data.FilterSpec) -> list[list[MaskHint]]:
    return [
        [MaskHint(None if n is None else NUMAMask.of(n), p) for n, p in provider]
        for provider in spec
    ]


@pytest.mark.parametrize(
    ("providers", "kept"),
    [pytest.param(given, kept, id=_id(name)) for name, given, kept in data.SINGLE_NUMA_FILTER],
)
def test_single_numa_node_filter_hints(providers: data.FilterSpec, kept: data.FilterSpec) -> None:
    assert filter_single_numa_hints(_mask_hints(providers)) == _mask_hints(kept)


# formats.md section 5 worked example: 2 NUMA nodes, 4 CPUs and 1 GPU on NUMA 1.
CPU_ALL_FREE = [P(0), P(1), N(0, 1)]
CPU_THREE_FREE_ON_N1 = [P(0), N(0, 1)]
GPU_ON_N1 = [P(1)]


@pytest.mark.parametrize(
    ("policy", "cpu", "expected"),
    [
        pytest.param("best-effort", CPU_ALL_FREE, (P(1), True), id="best-effort-aligned-on-n1"),
        pytest.param("restricted", CPU_ALL_FREE, (P(1), True), id="restricted-aligned-on-n1"),
        pytest.param(
            "single-numa-node", CPU_ALL_FREE, (P(1), True), id="single-numa-aligned-on-n1"
        ),
        pytest.param(
            "best-effort", CPU_THREE_FREE_ON_N1, (N(1), True), id="best-effort-admits-misaligned"
        ),
        pytest.param(
            "restricted", CPU_THREE_FREE_ON_N1, (N(1), False), id="restricted-rejects-misaligned"
        ),
        # single-numa-node never sees {N0N1}: the merge finds nothing and reports nil.
        pytest.param(
            "single-numa-node",
            CPU_THREE_FREE_ON_N1,
            (ANY_N, False),
            id="single-numa-rejects-with-nil",
        ),
    ],
)
def test_formats_md_cpu_and_gpu_example(
    policy: str, cpu: list[TopologyHint], expected: tuple[TopologyHint, bool]
) -> None:
    assert merge_hints([cpu, GPU_ON_N1], [0, 1], policy) == expected


def test_preferred_needs_identical_masks_even_when_every_hint_is_preferred() -> None:
    # Newer kubelet: {0} and {0,1} are both preferred but differ, so {0} is not preferred.
    assert merge_hints([[P(0)], [P(0, 1)]], [0, 1], "restricted") == (N(0), False)


def test_prefer_closest_picks_the_lower_mean_distance_among_equal_widths() -> None:
    providers = [[P(0, 2), P(0, 1)]]
    plain = merge_hints(providers, data.FOUR_NODES, "best-effort")
    closest = merge_hints(
        [[P(1, 2), P(2, 3)]],
        data.FOUR_NODES,
        "restricted",
        prefer_closest=True,
        distances=data.DISTANCES_FOUR,
    )
    assert plain == (P(0, 1), True)
    assert closest == (P(2, 3), True)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param(
            dict(policy="strict"), "unknown topology manager policy 'strict'", id="unknown-policy"
        ),
        pytest.param(dict(numa_nodes=[]), "numa_nodes is empty", id="no-numa-nodes"),
        pytest.param(dict(numa_nodes=[0, 0]), "duplicates", id="duplicate-numa-nodes"),
        pytest.param(dict(numa_nodes=[64]), "outside the bitmask range", id="numa-id-too-large"),
        pytest.param(dict(prefer_closest=True), "needs a distance", id="closest-without-distances"),
    ],
)
def test_invalid_arguments_raise_value_error(kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = dict(
        provider_hints=[[P(0)]], numa_nodes=[0, 1], policy="best-effort"
    )
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=message):
        merge_hints(**arguments)  # type: ignore[arg-type]


def test_policy_accepts_the_enum_as_well_as_the_string() -> None:
    assert merge_hints([[P(1)]], [0, 1], PolicyName.RESTRICTED) == (P(1), True)


def test_hint_numa_is_normalised_to_a_frozenset() -> None:
    hint = TopologyHint({1, 0}, True)  # type: ignore[arg-type]
    assert hint.numa == frozenset({0, 1}) and isinstance(hint.numa, frozenset)
