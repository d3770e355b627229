"""A whole hint walk on arrays (`koordinator_masks`) equals the walk mask by mask.

Held against `distribute` itself (which masks it places whole) and against the loop in
`HintWalk.hints` (the very hints, scores and preferences); end to end against the
reference Filter and Score in `test_koordinator_fast_paths`, with the array walk forced
on every node it applies to.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

from hypothesis import event, given
from hypothesis import strategies as st

from scheduler_api.engine.koordinator.fast import filter_score as koordinator_fast
from scheduler_api.engine.koordinator.fast.books import books_of, layout_of
from scheduler_api.engine.koordinator.fast.filter_score import HintWalk, countable
from scheduler_api.engine.koordinator.fast.masks import allocating_rows, mask_table
from scheduler_api.engine.koordinator.fast.spread import Spreader
from scheduler_api.engine.koordinator.reference.cpu import KoordCPUTopology
from scheduler_api.engine.koordinator.reference.merge import Hint, provider_summary
from scheduler_api.engine.koordinator.reference.numa import (
    NodeContext,
    ResourceOptions,
    distribute,
    positional_orders,
    positional_sort,
    with_hint,
)
from scheduler_api.engine.koordinator.reference.plugin import NO_RESTORE, resource_options
from scheduler_api.engine.koordinator.reference.state import KoordConfig, NodeAllocation, NodeView
from scheduler_api.engine.model.snapshot import CPUBindPolicy
from tests.engine.conformance.strategies import (
    KOORD_CONFIGS,
    KOORD_SETTINGS,
    KoordCase,
    koord_run,
    roomy_cases,
)

Totals = dict[int, dict[str, int]]
Question = tuple[ResourceOptions, Totals, tuple[int, ...], frozenset[int]]


@contextmanager
def array_walks(min_numa_nodes: int) -> Iterator[None]:
    """Whole walks on arrays from `min_numa_nodes` NUMA nodes on (99: never)."""
    with mock.patch.object(koordinator_fast, "ARRAY_WALK_MIN_NUMA_NODES", min_numa_nodes):
        yield


@st.composite
def mask_questions(draw: st.DrawFn) -> Question:
    """Requests binding no cpus, amounts per NUMA node (ids with gaps, names missing
    here and there, amounts near even shares so distribute's order matters), barred ids."""
    numa_ids = tuple(sorted(draw(st.sets(st.integers(0, 9), min_size=1, max_size=8))))
    names = ["cpu", "memory", "example.com/gpu"]
    requests = {name: draw(st.sampled_from([0, 500, 1000, 3000, 7000, 9000])) for name in names}
    totals = {
        numa: {
            name: draw(st.sampled_from([0, 300, 1000, 1500, 2000, 2500, 3500, 4000, 9000]))
            for name in names
            if draw(st.integers(0, 6))
        }
        for numa in numa_ids
    }
    opts = ResourceOptions(
        requests=requests, num_cpus_needed=0, request_cpu_bind=False,
        required_cpu_bind_policy=False, cpu_bind_policy=CPUBindPolicy.DEFAULT,
        cpu_exclusive_policy="", numa_allocate_strategy="",
    )  # fmt: skip
    barred = draw(st.sets(st.sampled_from(numa_ids), max_size=1)) if draw(st.booleans()) else ()
    return opts, totals, numa_ids, frozenset(barred)


@KOORD_SETTINGS
@given(mask_questions())
def test_masks_that_allocate_on_arrays_are_those_distribute_places_whole(
    question: Question,
) -> None:
    opts, totals, numa_ids, barred = question
    view = NodeView(True, KoordCPUTopology.from_rows(((0, 0, 0, 0),)), frozenset(), "", (), "", {})
    ctx = NodeContext(view, NodeAllocation(), NO_RESTORE, KoordConfig())
    table = mask_table(numa_ids, barred)
    want = [
        row
        for row, mask in enumerate(table.masks)
        if not distribute(ctx, with_hint(opts, mask.numas), totals)[1]
    ]
    assert allocating_rows(table, Spreader(opts, totals, 1), [], [], numa_ids) == want
    event(f"{len(want)} of {len(table.masks)} masks allocate")


@KOORD_SETTINGS
@given(mask_questions(), st.integers(0, 12000))
def test_masks_whose_sums_fall_short_do_not_allocate(question: Question, need: int) -> None:
    """The walk's sums (`_hopeful`) bound what may allocate, on top of distribute."""
    opts, totals, numa_ids, barred = question
    table = mask_table(numa_ids, barred)
    row = [totals[numa].get("memory", 0) for numa in numa_ids]
    spreader = Spreader(opts, totals, 1)
    placed = set(allocating_rows(table, spreader, [], [], numa_ids))
    got = allocating_rows(table, spreader, [row], [need], numa_ids)
    assert got == [
        k
        for k, mask in enumerate(table.masks)
        if k in placed and sum(totals[numa].get("memory", 0) for numa in mask.ids) >= need
    ]


@KOORD_SETTINGS
@given(st.lists(st.integers(0, 4), max_size=12), st.sets(st.integers(0, 12), max_size=12))
def test_positional_orders_are_the_positional_sort_of_every_width(
    amounts: list[int], ids: set[int]
) -> None:
    totals = {numa: {"cpu": amount} for numa, amount in zip(sorted(ids), amounts, strict=False)}
    count = len(amounts)
    want = [positional_sort(list(range(width)), totals, "cpu") for width in range(1, count + 1)]
    assert positional_orders(count, totals, "cpu") == want


@KOORD_SETTINGS
@given(roomy_cases(), KOORD_CONFIGS)
def test_a_whole_walk_on_arrays_gives_the_loops_hints(case: KoordCase, config: KoordConfig) -> None:
    run = koord_run(case, config)
    if run is None:
        return
    layout = layout_of(run)
    if not countable(run, layout):
        return
    opts = resource_options(run, None)
    books = books_of(run, opts, layout)
    with array_walks(99):
        want = HintWalk(run, opts, books, layout).hints(stop_early=False)
    with array_walks(1):
        walk = HintWalk(run, opts, books, layout)
        got = walk.hints(stop_early=False)
    assert got == want
    event(f"on arrays: {walk.uniform and not opts.request_cpu_bind}")


def test_a_refusal_quotes_each_resources_masks_even_when_lists_differ() -> None:
    """Equal lists are written out once; a different one after them is written anew."""
    wide = [Hint(frozenset({0}), True), Hint(frozenset({0, 1}), False)]
    same = [Hint(frozenset({0}), True), Hint(frozenset({0, 1}), False)]  # equal, not identical
    other = [Hint(frozenset({1}), True)]
    providers = [{"cpu": wide, "memory": same, "example.com/gpu": other, "pods": []}]
    assert provider_summary(providers) == [
        "cpu prefer [01] among [01 11]",
        "example.com/gpu prefer [10] among [10]",
        "memory prefer [01] among [01 11]",
    ]


def test_orders_of_every_width_after_a_walk_spread_one_width_alone() -> None:
    """A spreader that kept only the widest order (one wide spread) still gives every
    width's order, each the positional sort of that width."""
    opts = ResourceOptions(
        requests={"memory": 10}, num_cpus_needed=0, request_cpu_bind=False,
        required_cpu_bind_policy=False, cpu_bind_policy=CPUBindPolicy.DEFAULT,
        cpu_exclusive_policy="", numa_allocate_strategy="",
    )  # fmt: skip
    totals = {numa: {"memory": 5 - numa % 3} for numa in range(6)}
    spreader = Spreader(opts, totals, 1)
    spreader.spread(list(range(6)))
    want = [positional_sort(list(range(width)), totals, "memory") for width in range(1, 7)]
    assert spreader.orders("memory", 6) == want
