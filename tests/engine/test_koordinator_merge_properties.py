"""The merge's diagonal shortcut folds to the same hint as every permutation would."""

from __future__ import annotations

from itertools import combinations, product

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler_api.engine.koordinator.reference.merge import (
    Hint,
    fold_diagonal,
    fold_permutations,
    merge_filtered,
)

STATUSES = st.lists(st.sampled_from(["idle", "single", "shared"]), min_size=0, max_size=4)


@st.composite
def hint_lists(draw: st.DrawFn) -> tuple[list[int], list[list[Hint]]]:
    numa_nodes = list(range(draw(st.integers(1, 4))))
    masks = [frozenset(c) for size in range(1, 5) for c in combinations(range(5), size)]
    chosen = draw(st.lists(st.sampled_from(masks), unique=True, max_size=6))
    base = [
        Hint(mask, draw(st.booleans()), draw(st.integers(0, 3)), draw(st.booleans()))
        for mask in chosen
    ]
    if draw(st.integers(0, 5)) == 0 and base:
        base[0] = Hint(None, True)  # a "no preference" hint: no shortcut
    lists = [list(base) for _ in range(draw(st.integers(1, 3)))]
    if draw(st.integers(0, 4)) == 0 and len(lists) > 1:
        lists[-1] = lists[-1][:-1]  # lists that differ: no shortcut
    return numa_nodes, lists


@settings(max_examples=400, deadline=None)
@given(hint_lists(), st.sampled_from(["", "Required"]), STATUSES)
def test_the_diagonal_shortcut_merges_like_every_permutation(
    case: tuple[list[int], list[list[Hint]]], exclusive: str, statuses: list[str]
) -> None:
    numa_nodes, lists = case
    every = fold_permutations(numa_nodes, product(*lists), exclusive, statuses)
    assert merge_filtered(numa_nodes, lists, exclusive, statuses) == every


@settings(max_examples=400, deadline=None)
@given(hint_lists(), st.sampled_from(["", "Required"]), STATUSES, st.integers(1, 3))
def test_the_diagonal_fold_merges_each_repeated_hint_as_merge_permutation_does(
    case: tuple[list[int], list[list[Hint]]], exclusive: str, statuses: list[str], width: int
) -> None:
    numa_nodes, lists = case
    hints = [h for h in lists[0] if h.mask is not None]
    every = fold_permutations(numa_nodes, ([h] * width for h in hints), exclusive, statuses)
    assert fold_diagonal(numa_nodes, hints, width, exclusive, statuses) == every
