"""kubelet topologymanager test tables (``policy_test.go`` and per-policy files) as data.

Provider encoding for :func:`merge_hints`: one inner list per resource. kubelet's
nil provider, empty map and ``resource: nil`` all become ``[]`` (no
preference); ``resource: {}`` (no possible affinity) becomes ``[ANY_N]``.
Expected hints are written as upstream writes them; ``ALL`` stands for the
machine's every-NUMA mask, which ``merge_hints`` reports as ``None``.
"""

from __future__ import annotations

from scheduler_api.engine.kubelet.reference.topologymanager import TopologyHint

ALL = frozenset(range(64))  # stands for upstream's "NewTestBitMask(numaNodes...)"


def P(*nodes: int) -> TopologyHint:  # noqa: N802 - reads like upstream's table rows
    """A preferred hint on ``nodes``."""
    return TopologyHint(frozenset(nodes), True)


def N(*nodes: int) -> TopologyHint:  # noqa: N802
    """A non-preferred hint on ``nodes``."""
    return TopologyHint(frozenset(nodes), False)


def ALL_HINT(preferred: bool) -> TopologyHint:  # noqa: N802
    return TopologyHint(ALL, preferred)


ANY_P = TopologyHint(None, True)
ANY_N = TopologyHint(None, False)

Providers = list[list[TopologyHint]]
MergeCase = tuple[str, Providers, TopologyHint]

FOUR_NODES = [0, 1, 2, 3]
EIGHT_NODES = list(range(8))

# commonNUMAInfoFourNodes / commonNUMAInfoEightNodes distance tables (row 7 is asymmetric upstream).
DISTANCES_FOUR = {
    0: {0: 10, 1: 11, 2: 12, 3: 12},
    1: {0: 11, 1: 10, 2: 12, 3: 12},
    2: {0: 12, 1: 12, 2: 10, 3: 11},
    3: {0: 12, 1: 12, 2: 11, 3: 10},
}
_EIGHT_ROWS = [
    [10, 11, 12, 12, 30, 30, 30, 30],
    [11, 10, 12, 12, 30, 30, 30, 30],
    [12, 12, 10, 11, 30, 30, 30, 30],
    [12, 12, 11, 10, 30, 30, 30, 30],
    [30, 30, 30, 30, 10, 11, 12, 12],
    [30, 30, 30, 30, 11, 10, 12, 12],
    [30, 30, 30, 30, 12, 12, 10, 11],
    [30, 30, 30, 30, 12, 12, 13, 10],
]
DISTANCES_EIGHT = {a: dict(enumerate(row)) for a, row in enumerate(_EIGHT_ROWS)}

# commonPolicyMergeTestCases: every policy but none.
COMMON: list[MergeCase] = [
    ("Two providers, 1 hint each, same mask, both preferred 1/2", [[P(0)], [P(0)]], P(0)),
    ("Two providers, 1 hint each, same mask, both preferred 2/2", [[P(1)], [P(1)]], P(1)),
    ("Two providers, 1 no hints, 1 single hint preferred 1/2", [[], [P(0)]], P(0)),
    ("Two providers, 1 no hints, 1 single hint preferred 2/2", [[], [P(1)]], P(1)),
    (
        "Two providers, 1 with 2 hints, 1 with single hint matching 1/2",
        [[P(0), P(1)], [P(0)]],
        P(0),
    ),
    (
        "Two providers, 1 with 2 hints, 1 with single hint matching 2/2",
        [[P(0), P(1)], [P(1)]],
        P(1),
    ),
    (
        "Two providers, both with 2 hints, matching narrower preferred hint from both",
        [[P(0), P(1)], [P(0), N(0, 1)]],
        P(0),
    ),
    (
        "Ensure less narrow preferred hints are chosen over narrower non-preferred hints",
        [[P(1), N(0, 1)], [P(0), P(1), N(0, 1)]],
        P(1),
    ),
    ("Multiple resources, same provider", [[P(1), N(0, 1)], [P(0), P(1), N(0, 1)]], P(1)),
]

# bestEffortPolicy.mergeTestCases (restricted embeds best-effort, so it runs them too).
BEST_EFFORT: list[MergeCase] = [
    (
        "Two providers, 2 hints each, same mask (some with different bits), same preferred",
        [[P(0, 1), P(0, 2)], [P(0, 1), P(0, 2)]],
        P(0, 1),
    ),
    ("TopologyHint not set", [], ALL_HINT(True)),
    ("HintProvider returns empty non-nil map[string][]TopologyHint", [[]], ALL_HINT(True)),
    ("HintProvider returns -nil map[string][]TopologyHint from provider", [[]], ALL_HINT(True)),
    (
        "HintProvider returns empty non-nil map[string][]TopologyHint from provider",
        [[ANY_N]],
        ALL_HINT(False),
    ),
    (
        "Single TopologyHint with Preferred as true and NUMANodeAffinity as nil",
        [[ANY_P]],
        ALL_HINT(True),
    ),
    (
        "Single TopologyHint with Preferred as false and NUMANodeAffinity as nil",
        [[ANY_N]],
        ALL_HINT(False),
    ),
    ("Two providers, 1 hint each, no common mask", [[P(0)], [P(1)]], ALL_HINT(False)),
    ("Two providers, 1 hint each, same mask, 1 preferred, 1 not 1/2", [[P(0)], [N(0)]], N(0)),
    ("Two providers, 1 hint each, same mask, 1 preferred, 1 not 2/2", [[P(1)], [N(1)]], N(1)),
    ("Two providers, 1 hint each, 1 wider mask, both preferred 1/2", [[P(0)], [P(0, 1)]], N(0)),
    (
        "Two providers, 1 with 2 hints, 1 with single non-preferred hint matching",
        [[P(0), P(1)], [N(0, 1)]],
        N(0),
    ),
    ("Two providers, 1 hint each, 1 wider mask, both preferred 2/2", [[P(1)], [P(0, 1)]], N(1)),
    ("bestNonPreferredAffinityCount (1)", [[N(0, 1, 2, 3), N(0, 1)], [N(0, 1)]], N(0, 1)),
    ("bestNonPreferredAffinityCount (2)", [[N(0, 1, 2, 3), N(0, 1)], [N(0, 3)]], N(0, 3)),
    ("bestNonPreferredAffinityCount (3)", [[N(0, 1, 2, 3), N(0, 1)], [N(1, 2)]], N(1, 2)),
    ("bestNonPreferredAffinityCount (4)", [[N(0, 1, 2, 3), N(0, 1)], [N(2, 3)]], N(2, 3)),
]

_CASE_5 = [[N(0, 1, 2, 3), N(0, 1)], [N(1, 2), N(2, 3)]]
_CASE_6 = [[N(0, 1, 2, 3), N(0, 1)], [N(1, 2, 3), N(1, 2), N(1, 3), N(2, 3)]]

# bestEffortPolicy.mergeTestCasesNoPolicies: plain narrowest ordering.
NO_POLICY_OPTIONS: list[MergeCase] = [
    ("bestNonPreferredAffinityCount (5)", _CASE_5, N(1, 2)),
    ("bestNonPreferredAffinityCount (6)", _CASE_6, N(1, 2)),
]

# bestEffortPolicy.mergeTestCasesClosestNUMA: prefer-closest-numa-nodes on eight nodes.
CLOSEST: list[MergeCase] = [
    (
        "Two providers, 2 hints each, same mask (some with different bits), same preferred, "
        "closest",
        [[P(0, 4), P(0, 2)], [P(0, 4), P(0, 2)]],
        P(0, 2),
    ),
    ("Two providers, 2 hints each, different mask", [[P(4), P(0, 2)], [P(4), P(0, 2)]], P(4)),
    ("bestNonPreferredAffinityCount (5) (closest)", _CASE_5, N(2, 3)),
    ("bestNonPreferredAffinityCount (6) (closest)", _CASE_6, N(2, 3)),
]

# singleNumaNodePolicy.mergeTestCases: kubelet reports these masks as nil.
SINGLE_NUMA_NODE: list[MergeCase] = [
    ("TopologyHint not set", [], ANY_P),
    ("HintProvider returns empty non-nil map[string][]TopologyHint", [[]], ANY_P),
    ("HintProvider returns -nil map[string][]TopologyHint from provider", [[]], ANY_P),
    (
        "HintProvider returns empty non-nil map[string][]TopologyHint from provider",
        [[ANY_N]],
        ANY_N,
    ),
    ("Single TopologyHint with Preferred as true and NUMANodeAffinity as nil", [[ANY_P]], ANY_P),
    ("Single TopologyHint with Preferred as false and NUMANodeAffinity as nil", [[ANY_N]], ANY_N),
    ("Two providers, 1 hint each, no common mask", [[P(0)], [P(1)]], ANY_N),
    ("Two providers, 1 hint each, same mask, 1 preferred, 1 not 1/2", [[P(0)], [N(0)]], ANY_N),
    ("Two providers, 1 hint each, same mask, 1 preferred, 1 not 2/2", [[P(1)], [N(1)]], ANY_N),
    (
        "Two providers, 1 with 2 hints, 1 with single non-preferred hint matching",
        [[P(0), P(1)], [N(0, 1)]],
        ANY_N,
    ),
    ("Single NUMA hint generation", [[P(0, 1)], [P(0), P(1), N(0, 1)]], ANY_N),
    ("One no-preference provider", [[P(0), P(1), N(0, 1)], []], P(0)),
]

# TestCompareHintsNarrowest: (description, target width, current, candidate, winner).
# A hint is (nodes, preferred); () is an empty (non-nil) mask; None is "no current".
HintSpec = tuple[tuple[int, ...], bool]
CompareCase = tuple[str, int, HintSpec | None, HintSpec, str]
T, F = True, False
COMPARE_NARROWEST: list[CompareCase] = [
    ("candidate.NUMANodeAffinity.Count() == 0 (1)", -1, None, ((), F), "current"),
    ("candidate.NUMANodeAffinity.Count() == 0 (2)", -1, ((), T), ((), F), "current"),
    ("current == nil (1)", -1, None, ((0,), T), "candidate"),
    ("current == nil (2)", -1, None, ((0,), F), "candidate"),
    ("!current.Preferred && candidate.Preferred", -1, ((0,), F), ((0,), T), "candidate"),
    ("current.Preferred && !candidate.Preferred", -1, ((0,), T), ((0,), F), "current"),
    ("current.Preferred && candidate.Preferred (1)", -1, ((0,), T), ((0,), T), "current"),
    ("current.Preferred && candidate.Preferred (2)", -1, ((0, 1), T), ((0,), T), "candidate"),
    ("current.Preferred && candidate.Preferred (3)", -1, ((0,), T), ((0, 1), T), "current"),
    ("!current.Preferred && !candidate.Preferred (1.1)", 1, ((0, 1), F), ((0, 1), F), "current"),
    ("!current.Preferred && !candidate.Preferred (1.2)", 1, ((1, 2), F), ((0, 1), F), "candidate"),
    ("!current.Preferred && !candidate.Preferred (1.3)", 1, ((0, 1), F), ((1, 2), F), "current"),
    ("!current.Preferred && !candidate.Preferred (2.1)", 2, ((0, 1), F), ((0,), F), "current"),
    ("!current.Preferred && !candidate.Preferred (2.2)", 2, ((0, 1), F), ((0, 1), F), "current"),
    ("!current.Preferred && !candidate.Preferred (2.3)", 2, ((1, 2), F), ((0, 1), F), "candidate"),
    ("!current.Preferred && !candidate.Preferred (2.4)", 2, ((0, 1), F), ((1, 2), F), "current"),
    ("!current.Preferred && !candidate.Preferred (3a)", 2, ((0,), F), ((0, 1, 2), F), "current"),
    ("!current.Preferred && !candidate.Preferred (3b)", 2, ((0,), F), ((0, 1), F), "candidate"),
    ("!current.Preferred && !candidate.Preferred (3ca.1)", 3, ((0,), F), ((0, 1), F), "candidate"),
    ("!current.Preferred && !candidate.Preferred (3ca.2)", 3, ((0,), F), ((1, 2), F), "candidate"),
    (
        "!current.Preferred && !candidate.Preferred (3ca.3)",
        4,
        ((0, 1), F),
        ((1, 2, 3), F),
        "candidate",
    ),
    ("!current.Preferred && !candidate.Preferred (3cb)", 4, ((1, 2, 3), F), ((0, 1), F), "current"),
    (
        "!current.Preferred && !candidate.Preferred (3cc.1)",
        4,
        ((0, 1, 2), F),
        ((0, 1, 2), F),
        "current",
    ),
    (
        "!current.Preferred && !candidate.Preferred (3cc.2)",
        4,
        ((0, 1, 2), F),
        ((1, 2, 3), F),
        "current",
    ),
    (
        "!current.Preferred && !candidate.Preferred (3cc.3)",
        4,
        ((1, 2, 3), F),
        ((0, 1, 2), F),
        "candidate",
    ),
]

# TestMaxOfMinAffinityCounts: providers as lists of node tuples (all preferred).
MAX_OF_MIN: list[tuple[list[list[tuple[int, ...]]], int]] = [
    ([], 0),
    ([[()]], 0),
    ([[(0,)]], 1),
    ([[(0, 1)]], 2),
    ([[(0, 1), (0, 1, 2)]], 2),
    ([[(0, 1), (0, 1, 2)], [(0, 1, 2)]], 3),
    ([[(0, 1), (0, 1, 2)], [(0, 1, 2), (0, 1, 2, 3)]], 3),
]

# TestPolicySingleNumaNodeFilterHints: (description, providers, kept), hints as (nodes|None, pref).
FilterSpec = list[list[tuple[tuple[int, ...] | None, bool]]]
SINGLE_NUMA_FILTER: list[tuple[str, FilterSpec, FilterSpec]] = [
    ("filter empty resources", [], []),
    ("filter hints with nil socket mask 1/2", [[(None, F)], [(None, T)]], [[], [(None, T)]]),
    (
        "filter hints with nil socket mask 2/2",
        [[((0,), T), (None, F)], [((1,), T), (None, T)]],
        [[((0,), T)], [((1,), T), (None, T)]],
    ),
    (
        "filter hints with empty resource socket mask",
        [[((1,), T), ((0,), T), (None, F)], []],
        [[((1,), T), ((0,), T)], []],
    ),
    (
        "filter hints with wide sockemask",
        [
            [((0,), T), ((1,), T), ((1, 2), F), ((0, 1, 2), F), (None, F)],
            [((1, 2), F), ((0, 1, 2), F), ((0, 2), F), ((3,), F)],
            [((1, 2), F), ((0, 1, 2), F), ((0, 2), F)],
        ],
        [[((0,), T), ((1,), T)], [], []],
    ),
]
