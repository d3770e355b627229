"""Every fast path of the engine, the reference it mirrors, and the tests that prove they
agree (issue 29). A module under any `fast/` that is not here fails
`test_registry.py`; so does an entry whose reference or agreement test does not exist.

`mirrors`: dotted names (module.function) of the reference functions whose answers the
fast path must give. `agreement`: the property tests ("file::test") that draw clusters
and pods and compare the two on every node; they run again with the cross-check switch
on (`scripts/test.sh`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FastPath:
    module: str
    mirrors: tuple[str, ...]
    agreement: tuple[str, ...]


E = "scheduler_api.engine."
KOORD_VECTOR = "tests/engine/test_koordinator_vector.py::"
KOORD_COUNT = "tests/engine/test_koordinator_count.py::"
KOORD_FAST = "tests/engine/test_koordinator_fast_paths.py::"
KOORD_MASKS = "tests/engine/test_koordinator_masks.py::"
COUNTS = "tests/engine/test_capacity_counts.py::"
KUBELET_HINTS = "tests/engine/test_kubelet_hints_fast.py::"
MEMORY_HINTS = "tests/engine/test_kubelet_memory_hints_fast.py::"
FILL = E + "whatif.judge.Judgement.fill_copy_by_copy"

FAST_PATHS = (
    FastPath(
        E + "schedulerplugins.fast.vector",
        (E + "schedulerplugins.reference.match.filter_node",
         E + "schedulerplugins.reference.match.score_node",
         E + "model.kubernetes.node_fit_reasons"),
        ("tests/engine/test_whatif_properties.py::test_the_bulk_verdicts_equal_the_reference_node_by_node",),
    ),
    FastPath(
        E + "schedulerplugins.fast.count",
        (FILL,),
        (COUNTS + "test_scheduler_plugins_counts_equal_filling_copy_by_copy",),
    ),
    FastPath(
        E + "schedulerplugins.fast.count_vector",
        (E + "schedulerplugins.fast.count.fill_count", E + "model.kubernetes.node_fit_count"),
        ("tests/engine/test_nrt_count_vector.py::test_every_row_is_counted_as_nrt_count_counts_it",),
    ),
    FastPath(
        E + "crane.fast.count",
        (FILL,),
        (COUNTS + "test_crane_counts_equal_filling_copy_by_copy",),
    ),
    FastPath(
        E + "crane.fast.vector",
        (E + "crane.reference.plugin.evaluate",),
        ("tests/engine/test_crane_vector.py::test_every_crane_row_equals_the_reference",
         "tests/engine/test_crane_vector.py::test_wide_aware_nodes_equal_the_reference",
         "tests/engine/test_crane_vector.py::test_wide_greedy_nodes_equal_the_reference"),
    ),
    FastPath(
        E + "koordinator.fast.filter_score",
        (E + "koordinator.reference.plugin.evaluate", E + "koordinator.reference.plugin.allocate"),
        (KOORD_COUNT + "test_counting_filter_and_score_equal_the_reference",
         KOORD_COUNT + "test_counting_filter_then_a_real_reserve_equals_the_reference_allocation",
         KOORD_FAST + "test_counting_filter_and_score_equal_the_reference_on_roomy_nodes"),
    ),
    FastPath(
        E + "koordinator.fast.books",
        (E + "koordinator.reference.state.node_view",),
        (KOORD_FAST + "test_kept_books_stay_the_books_after_a_capacity_count",
         KOORD_COUNT + "test_counting_filter_and_score_equal_the_reference"),
    ),
    FastPath(
        E + "koordinator.fast.masks",
        (E + "koordinator.reference.numa.allocate_by_hint",),
        (KOORD_MASKS + "test_masks_that_allocate_on_arrays_are_those_distribute_places_whole",
         KOORD_MASKS + "test_a_whole_walk_on_arrays_gives_the_loops_hints"),
    ),
    FastPath(
        E + "koordinator.fast.spread",
        (E + "koordinator.reference.numa.distribute",),
        (KOORD_FAST + "test_the_spreader_distributes_as_distribute_does",),
    ),
    FastPath(
        E + "koordinator.fast.takes",
        (E + "koordinator.reference.plugin.allocate",),
        (KOORD_COUNT + "test_picking_takes_the_cpus_reserve_takes",
         KOORD_FAST + "test_pick_spread_takes_what_take_cpus_takes"),
    ),
    FastPath(
        E + "koordinator.fast.count",
        (FILL,),
        (KOORD_COUNT + "test_the_fast_capacity_count_equals_filling_copy_by_copy",
         KOORD_COUNT + "test_spread_counts_one_after_another_equal_filling_copy_by_copy"),
    ),
    FastPath(
        E + "koordinator.fast.vector",
        (E + "koordinator.reference.plugin.evaluate", FILL),
        (KOORD_VECTOR + "test_every_verdict_equals_the_reference",
         KOORD_VECTOR + "test_every_count_equals_filling_copy_by_copy"),
    ),
    FastPath(
        E + "kubelet.fast.hints",
        (E + "kubelet.reference.cpumanager.cpu_hints",),
        (KUBELET_HINTS + "test_counted_cpu_hints_equal_the_reference",
         KUBELET_HINTS + "test_the_whatif_admission_on_counted_hints_is_the_reference"),
    ),
    FastPath(
        E + "kubelet.fast.memory_hints",
        (E + "kubelet.reference.memorymanager.calculate_hints",),
        (MEMORY_HINTS + "test_summed_memory_hints_equal_the_reference",
         MEMORY_HINTS + "test_the_admission_on_summed_memory_hints_is_the_reference"),
    ),
)  # fmt: skip
