"""The what-if's engine snapshot is reused while the mirror is unchanged, never after."""

from __future__ import annotations

import copy
import gc

import pytest

from tests.topology.helpers import sample_items
from topology.models import Cluster
from topology.parsers import MirroredKind
from topology.services.mirror.importer import import_objects
from topology.services.mirror.removal import remove_objects
from topology.services.whatif.service import mirror_snapshot
from topology.services.whatif.snapshot_cache import cached_cluster_snapshot

pytestmark = pytest.mark.django_db


@pytest.fixture
def cache_on(settings) -> None:
    settings.WHATIF_SNAPSHOT_CACHE_SIZE = 2


def version_of(cluster: Cluster) -> int:
    return Cluster.objects.get(pk=cluster.pk).mirror_version


def test_an_unchanged_mirror_is_read_once(cache_on, small, django_assert_num_queries):
    first = cached_cluster_snapshot(small)
    with django_assert_num_queries(1):  # the version, nothing else
        assert cached_cluster_snapshot(small) is first


def test_an_unchanged_reimport_keeps_the_version(small):
    before = version_of(small)
    import_objects(cluster_name="small", objects=sample_items("cluster-small.json"))
    assert version_of(small) == before


def test_a_changed_node_is_seen_at_once(cache_on, small):
    first = cached_cluster_snapshot(small)
    items = sample_items("cluster-small.json")
    node = copy.deepcopy(next(i for i in items if i["kind"] == "Node"))
    node["metadata"]["labels"]["team"] = "new"
    before = version_of(small)
    import_objects(cluster_name="small", objects=[node])
    assert version_of(small) > before
    again = cached_cluster_snapshot(small)
    assert again is not first
    changed = next(n for n in again.nodes if n.name == node["metadata"]["name"])
    assert changed.labels["team"] == "new"


def test_a_removed_node_is_seen_at_once(cache_on, small):
    first = cached_cluster_snapshot(small)
    gone = first.nodes[0].name
    assert remove_objects(small, MirroredKind.NODE, [(gone,)]) == 1
    assert gone not in {n.name for n in cached_cluster_snapshot(small).nodes}


def test_a_cached_snapshot_is_dated_when_it_is_used(cache_on, small):
    first = mirror_snapshot(small)
    second = mirror_snapshot(small)
    assert second.taken_at > first.taken_at
    assert second.data_age_seconds >= first.data_age_seconds
    Cluster.objects.filter(pk=small.pk).update(last_imported_at=None)
    small.refresh_from_db()
    assert first.data_as_of is not None
    assert mirror_snapshot(small).data_as_of is None


def test_the_cache_can_be_turned_off(settings, small):
    settings.WHATIF_SNAPSHOT_CACHE_SIZE = 0
    assert cached_cluster_snapshot(small) is not cached_cluster_snapshot(small)


@pytest.fixture
def collector_seen(monkeypatch) -> list[bool]:
    """Whether the cycle collector was on, each time the whole mirror was read."""
    from topology.services.whatif import snapshot_cache

    seen: list[bool] = []
    real = snapshot_cache.cluster_snapshot

    def reading(cluster: Cluster):
        seen.append(gc.isenabled())
        return real(cluster)

    monkeypatch.setattr(snapshot_cache, "cluster_snapshot", reading)
    return seen


def test_the_collector_is_off_while_the_whole_mirror_is_read(cache_on, small, collector_seen):
    assert gc.isenabled()
    cached_cluster_snapshot(small)
    assert collector_seen == [False]
    assert gc.isenabled()


def test_a_failed_read_turns_the_collector_on_again(cache_on, small, monkeypatch):
    from topology.services.whatif import snapshot_cache

    def failing(cluster: Cluster):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(snapshot_cache, "cluster_snapshot", failing)
    with pytest.raises(RuntimeError):
        cached_cluster_snapshot(small)
    assert gc.isenabled()


def test_a_collector_turned_off_before_stays_off(cache_on, small, collector_seen):
    gc.disable()
    try:
        cached_cluster_snapshot(small)
        assert collector_seen == [False] and not gc.isenabled()
    finally:
        gc.enable()
