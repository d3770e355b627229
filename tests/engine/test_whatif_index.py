"""An index refreshed row by row equals one built afresh from the same nodes."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from scheduler_api.engine.model.snapshot import ClusterSnapshot, NodeSnapshot
from scheduler_api.engine.schedulerplugins.fast.vector import NRTIndex, distinct_rows
from scheduler_api.engine.whatif.evaluate import evaluate
from tests.engine.conformance.strategies import WHATIF_SETTINGS, clusters, nodes, pods

ROWS = ("visible", "single_numa", "pod_scope", "duplicate_numa", "unschedulable", "name_rank")


def assert_same_index(mine: NRTIndex, fresh: NRTIndex) -> None:
    """Equal where it matters; a refreshed index may be wider (zones or resources that
    no node has any more), its extra columns then hold nothing."""
    assert mine.nodes == fresh.nodes
    for name in ROWS:
        assert np.array_equal(getattr(mine, name), getattr(fresh, name)), name
    width = fresh.width
    assert np.array_equal(mine.zone_valid[:, :width], fresh.zone_valid)
    assert not mine.zone_valid[:, width:].any()
    assert np.array_equal(mine.zone_numa[:, :width], fresh.zone_numa)
    for name in mine.resources:
        available, has = mine.zone_amounts(name)
        want_available, want_has = fresh.zone_amounts(name)
        assert np.array_equal(has[:, :width], want_has), name
        assert not has[:, width:].any(), name
        assert np.array_equal(np.where(has, available, 0)[:, :width], want_available), name
        assert np.array_equal(mine.node_free(name), fresh.node_free(name)), name
    assert set(fresh.resources) <= set(mine.resources)
    assert mine.flavours == fresh.flavours
    assert mine.topology_managers == fresh.topology_managers
    assert mine.row_of == fresh.row_of


@st.composite
def changed(draw: st.DrawFn, snapshot: ClusterSnapshot) -> tuple[NodeSnapshot, ...]:
    """Some nodes replaced by others of the same name (new zones, policy, flavour...)."""
    result = list(snapshot.nodes)
    for row in draw(st.sets(st.integers(0, len(result) - 1))):
        result[row] = replace(draw(nodes(result[row].name)))
    return tuple(result)


@WHATIF_SETTINGS
@given(st.data(), clusters())
def test_a_refreshed_index_equals_a_fresh_one(data: st.DataObject, snapshot) -> None:
    before = NRTIndex(snapshot.nodes)
    before.node_free("cpu")  # columns built on demand are refreshed too
    after = data.draw(changed(snapshot))
    refreshed = before.refreshed(after)
    if refreshed is None:  # a changed node needs columns the old index lacks
        return
    assert_same_index(refreshed, NRTIndex(after))
    assert before.nodes == list(snapshot.nodes)  # the old index is left as it was


def test_other_names_or_order_build_anew() -> None:
    first, second = NodeSnapshot(name="a"), NodeSnapshot(name="b")
    index = NRTIndex((first, second))
    assert index.refreshed((second, first)) is None
    assert index.refreshed((first,)) is None
    assert index.refreshed((first, NodeSnapshot(name="c"))) is None


@WHATIF_SETTINGS
@given(st.data(), clusters(), pods())
def test_what_ifs_on_a_refreshed_snapshot_answer_as_on_a_fresh_one(
    data: st.DataObject, snapshot: ClusterSnapshot, pod
) -> None:
    evaluate(snapshot, pod)  # its index is now the latest one kept
    after = replace(snapshot, nodes=data.draw(changed(snapshot)))
    mine = evaluate(after, pod)
    fresh = evaluate(replace(after, nodes=tuple(replace(n) for n in after.nodes)), pod)
    assert mine.nodes == fresh.nodes


@given(
    st.integers(1, 4).flatmap(
        lambda width: st.lists(
            st.lists(st.integers(-3, 3) | st.integers(0, 2**40), min_size=width, max_size=width),
            min_size=1,
            max_size=40,
        )
    )
)
def test_distinct_rows_are_numpys_unique_rows(rows: list[list[int]]) -> None:
    keys = np.array(rows, np.int64)
    distinct, group = distinct_rows(keys)
    expected, inverse = np.unique(keys, axis=0, return_inverse=True)
    assert distinct.tolist() == expected.tolist()
    assert group.tolist() == np.asarray(inverse).reshape(-1).tolist()
