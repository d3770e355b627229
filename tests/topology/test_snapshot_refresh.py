"""After a mirror change the cached snapshot is refreshed node by node, equal to a full read.

Every scenario changes the mirror through the same writers the sync and the import
use, then holds the refreshed snapshot to one read from scratch, node by node, and
checks that untouched nodes were kept (the same objects), not read again.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from scheduler_api.engine.model.snapshot import ClusterSnapshot, Flavour
from topology.adapters import cluster_snapshot
from topology.demo import generate_demo_objects
from topology.models import Cluster
from topology.parsers import MirroredKind
from topology.services.mirror.importer import import_objects
from topology.services.mirror.removal import remove_objects
from topology.services.whatif import snapshot_cache
from topology.services.whatif.snapshot_cache import cached_cluster_snapshot

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="node fingerprints need PostgreSQL"
    ),
]
Objects = list[dict[str, Any]]


@pytest.fixture
def cache_on(settings) -> None:
    settings.WHATIF_SNAPSHOT_CACHE_SIZE = 2


@pytest.fixture
def demo() -> Objects:
    objects = generate_demo_objects(nodes=12, seed=3, cluster="refresh")
    assert import_objects(cluster_name="refresh", objects=objects).ok
    return objects


def cluster() -> Cluster:
    return Cluster.objects.get(name="refresh")


def of_kind(objects: Objects, kind: str) -> Objects:
    """The objects of a kind, in place: a change edits them, then the list is imported."""
    return [o for o in objects if o["kind"] == kind]


def name_of(obj: dict[str, Any]) -> str:
    return str(obj["metadata"]["name"])


def node_of(flavours: set[Flavour]) -> str:
    return next(n.name for n in cluster_snapshot(cluster()).nodes if n.flavour in flavours)


def reimport(objects: Objects) -> None:
    """The whole list again, as a periodic re-import does: unchanged objects write nothing."""
    summary = import_objects(cluster_name="refresh", objects=copy.deepcopy(objects))
    assert summary.ok, summary.errors


def assert_refreshed_like_a_full_read(before: ClusterSnapshot, touched: set[str]) -> None:
    refreshed = cached_cluster_snapshot(cluster())
    full = cluster_snapshot(cluster())
    assert [n.name for n in refreshed.nodes] == [n.name for n in full.nodes]
    for mine, theirs in zip(refreshed.nodes, full.nodes, strict=True):
        assert mine == theirs, mine.name
    assert refreshed.reservations == full.reservations
    old = {n.name: n for n in before.nodes}
    for node in refreshed.nodes:
        if node.name in old and node.name not in touched:
            assert node is old[node.name], f"{node.name} was read again"
    kept = {r.name: r for r in before.reservations}
    for reservation in refreshed.reservations:
        if kept.get(reservation.name) == reservation:
            assert reservation is kept[reservation.name], "an unchanged reservation was replaced"


def run_scenario(demo: Objects, change: Callable[[Objects], set[str]]) -> None:
    before = cached_cluster_snapshot(cluster())
    touched = change(demo)
    reimport(demo)
    assert_refreshed_like_a_full_read(before, touched)


def _relabel_node(demo: Objects) -> set[str]:
    node = of_kind(demo, "Node")[0]
    node["metadata"]["labels"]["team"] = "payments"
    return {name_of(node)}


def _resize_a_pod(demo: Objects) -> set[str]:
    pod = next(p for p in of_kind(demo, "Pod") if p["spec"].get("nodeName"))
    for container in pod["spec"]["containers"]:
        container.setdefault("resources", {}).setdefault("requests", {})["memory"] = "3Gi"
    return {pod["spec"]["nodeName"]}


def _move_a_pod(demo: Objects) -> set[str]:
    """A pod seen on another node (deleted and recreated under its name)."""
    pod = next(p for p in of_kind(demo, "Pod") if p["spec"].get("nodeName"))
    old, new = pod["spec"]["nodeName"], name_of(of_kind(demo, "Node")[-1])
    assert old != new
    pod["spec"]["nodeName"] = new
    return {old, new}


def _remove_pods_of_each_flavour(demo: Objects) -> set[str]:
    """Pods gone through `remove_objects`, as a DELETED event removes them."""
    touched, keys = set(), []
    for flavours in ({Flavour.CRANE}, {Flavour.KOORDINATOR}, {Flavour.UPSTREAM_V1ALPHA2}):
        name = node_of(flavours)
        pods = [p for p in of_kind(demo, "Pod") if p["spec"].get("nodeName") == name][:2]
        keys += [(p["metadata"]["namespace"], name_of(p)) for p in pods]
        for pod in pods:
            demo.remove(pod)
        touched.add(name)
    remove_objects(cluster(), MirroredKind.POD, keys)
    return touched


def _change_nrts(demo: Objects) -> set[str]:
    """One NRT of each API group: a zone's CPU amount changes."""
    changed = {}
    for nrt in of_kind(demo, "NodeResourceTopology"):
        changed.setdefault(nrt["apiVersion"], nrt)
    for nrt in changed.values():
        zone = nrt["zones"][0]
        if isinstance(zone["resources"], list):  # topology.node.k8s.io
            cpu = next(r for r in zone["resources"] if r["name"] == "cpu")
            cpu["available"] = "1"
        else:  # topology.crane.io
            zone["resources"]["allocatable"]["cpu"] = "1"
    assert len(changed) >= 2
    return {name_of(nrt) for nrt in changed.values()}


def _remove_a_node_and_add_one(demo: Objects) -> set[str]:
    gone = of_kind(demo, "Node")[1]
    demo.remove(gone)
    for pod in [p for p in of_kind(demo, "Pod") if p["spec"].get("nodeName") == name_of(gone)]:
        demo.remove(pod)
    for nrt in [t for t in of_kind(demo, "NodeResourceTopology") if name_of(t) == name_of(gone)]:
        demo.remove(nrt)
    new = copy.deepcopy(of_kind(demo, "Node")[2])
    new["metadata"].update(name="zz-new-node", uid="new-node-uid")
    demo.append(new)
    return {"zz-new-node"}


def _cordon_and_reserve(demo: Objects) -> set[str]:
    name = node_of({Flavour.KOORDINATOR})
    node = next(n for n in of_kind(demo, "Node") if name_of(n) == name)
    node.setdefault("spec", {})["unschedulable"] = True
    node["metadata"].setdefault("annotations", {})["node.koordinator.sh/reservation"] = (
        '{"resources":{"cpu":"2"},"reservedCPUs":"0-1"}'
    )
    return {name}


def _change_a_reservation(demo: Objects) -> set[str]:
    reservation = of_kind(demo, "Reservation")[0]
    reservation.setdefault("metadata", {}).setdefault("labels", {})["team"] = "batch"
    spec = reservation.setdefault("spec", {})
    spec["allocateOnce"] = not spec.get("allocateOnce", True)
    return set()


@pytest.mark.parametrize(
    "change",
    [
        _relabel_node,
        _resize_a_pod,
        _move_a_pod,
        _remove_pods_of_each_flavour,
        _change_nrts,
        _remove_a_node_and_add_one,
        _cordon_and_reserve,
        _change_a_reservation,
    ],
)
def test_a_refresh_equals_a_full_read(cache_on, demo, change) -> None:
    run_scenario(demo, change)


def test_changes_one_after_another(cache_on, demo) -> None:
    for change in (_relabel_node, _resize_a_pod, _remove_pods_of_each_flavour, _change_nrts):
        run_scenario(demo, change)


def test_only_the_changed_node_is_read_again(cache_on, demo) -> None:
    first = cached_cluster_snapshot(cluster())
    _relabel_node(demo)
    reimport(demo)
    again = cached_cluster_snapshot(cluster())
    assert again is not first
    kept = sum(1 for a, b in zip(first.nodes, again.nodes, strict=True) if a is b)
    assert kept == len(first.nodes) - 1


def test_an_unchanged_reimport_keeps_the_snapshot(cache_on, demo) -> None:
    first = cached_cluster_snapshot(cluster())
    reimport(demo)
    assert cached_cluster_snapshot(cluster()) is first


def test_unchanged_reservations_are_not_read_again(cache_on, demo, monkeypatch) -> None:
    first = cached_cluster_snapshot(cluster())
    assert first.reservations
    reads: list[int] = []
    real = snapshot_cache.reservation_snapshots
    monkeypatch.setattr(
        snapshot_cache, "reservation_snapshots", lambda c: reads.append(1) or real(c)
    )
    _relabel_node(demo)
    reimport(demo)
    assert cached_cluster_snapshot(cluster()).reservations is first.reservations
    assert not reads
    _change_a_reservation(demo)
    reimport(demo)
    assert cached_cluster_snapshot(cluster()).reservations != first.reservations
    assert reads == [1]


def test_each_snapshot_built_is_prepared_once(cache_on, demo, monkeypatch) -> None:
    prepared: list[ClusterSnapshot] = []
    real = snapshot_cache.prepare
    monkeypatch.setattr(snapshot_cache, "prepare", lambda s: prepared.append(s) or real(s))
    first = cached_cluster_snapshot(cluster())
    assert cached_cluster_snapshot(cluster()) is first
    _relabel_node(demo)
    reimport(demo)
    again = cached_cluster_snapshot(cluster())
    assert len(prepared) == 2 and prepared[0] is first and prepared[1] is again
