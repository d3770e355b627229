"""Both adapters give the engine the same cluster: from kubectl dumps and from the mirror."""

import dataclasses
from datetime import UTC, datetime

import pytest

from scheduler_api.engine.model.snapshot import AllocationSource, Flavour
from topology.adapters import cluster_snapshot, snapshot_from_objects
from topology.demo import generate_demo_objects
from topology.models import Cluster
from topology.services.mirror.importer import import_objects

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def demo_objects():
    return generate_demo_objects(nodes=12, seed=3)


def test_the_mirror_and_the_dump_give_equal_snapshots(demo_objects):
    import_objects(cluster_name="demo", objects=demo_objects)
    stored = cluster_snapshot(Cluster.objects.get(name="demo"))
    offline = snapshot_from_objects(demo_objects)
    assert [n.name for n in stored.nodes] == [n.name for n in offline.nodes]
    for mirrored, dumped in zip(stored.nodes, offline.nodes, strict=True):
        assert mirrored.zones == dumped.zones, mirrored.name
        assert dict(mirrored.requested) == dict(dumped.requested), mirrored.name
        key = lambda a: (a.namespace, a.name, a.source)  # noqa: E731
        assert sorted(mirrored.allocations, key=key) == sorted(dumped.allocations, key=key)
        assert mirrored == mirrored.__class__(
            **{**_fields(dumped), "allocations": mirrored.allocations}
        ), mirrored.name
    assert sorted(stored.reservations, key=lambda r: r.name) == sorted(
        offline.reservations, key=lambda r: r.name
    )


def _fields(node):
    """The constructor's arguments (init=False fields are private memos)."""
    return {f.name: getattr(node, f.name) for f in dataclasses.fields(node) if f.init}


def test_the_snapshot_carries_every_flavour_and_allocation_source(demo_objects):
    snapshot = snapshot_from_objects(demo_objects)
    assert {n.flavour for n in snapshot.nodes} >= {
        Flavour.UPSTREAM_V1ALPHA2,
        Flavour.CRANE,
        Flavour.KOORDINATOR,
    }
    sources = {a.source for n in snapshot.nodes for a in n.allocations}
    assert sources == {
        AllocationSource.CRANE,
        AllocationSource.KOORDINATOR,
        AllocationSource.KUBELET,
    }
    koord = next(n for n in snapshot.nodes if n.flavour is Flavour.KOORDINATOR)
    assert koord.cpus and koord.cpu_manager_policy
    assert all(n.requested.get("pods", 0) >= 1 for n in snapshot.nodes if n.allocations)


def test_the_mirror_snapshot_reports_the_age_of_its_data(demo_objects):
    import_objects(cluster_name="demo", objects=demo_objects)
    cluster = Cluster.objects.get(name="demo")
    snapshot = cluster_snapshot(cluster, data_as_of=datetime(2026, 1, 1, tzinfo=UTC))
    assert snapshot.data_age_seconds is not None and snapshot.data_age_seconds > 1e6
    assert snapshot_from_objects(demo_objects).data_age_seconds is None


def test_reading_the_mirror_needs_a_fixed_number_of_queries(
    demo_objects, django_assert_max_num_queries
):
    import_objects(cluster_name="demo", objects=demo_objects)
    cluster = Cluster.objects.get(name="demo")
    with django_assert_max_num_queries(9):  # 8 tables, and the DRA CPU driver's devices
        cluster_snapshot(cluster)
