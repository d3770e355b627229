"""The incremental diagnosis (`diagnosis.incremental`) against its reference.

Offline: `diagnose_pods_kept` on snapshots that keep unchanged nodes as the same objects
(what the snapshot cache does) must equal `diagnose_pods`, and work out again only the
nodes that changed. On the database: `refresh_diagnoses` must leave exactly what the
reference computes from the mirror, rewrite only rows that changed, and (PostgreSQL,
where snapshots are refreshed node by node) read again only the pods of changed nodes.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from scheduler_api.engine import ClusterSnapshot
from topology.demo import generate_demo_objects
from topology.models import Cluster, Finding, Pod, PodDiagnosis
from topology.parsers import MirroredKind
from topology.parsers.pod import parse_pod
from topology.services.diagnosis import incremental
from topology.services.diagnosis import pods as pods_module
from topology.services.diagnosis.facts import ClusterFacts
from topology.services.diagnosis.findings import find_all
from topology.services.diagnosis.incremental import Kept, diagnose_pods_kept
from topology.services.diagnosis.mirror import facts_from_mirror
from topology.services.diagnosis.offline import facts_from_objects
from topology.services.diagnosis.pods import diagnose_pods
from topology.services.diagnosis.refresh import VOLATILE, refresh_diagnoses
from topology.services.mirror.exporter import pod_object
from topology.services.mirror.importer import import_objects
from topology.services.mirror.writers import write_records

Objects = list[dict[str, Any]]


def demo_with_shapes(extra: int = 6) -> Objects:
    """The demo (its Pending and rejected pods) plus Pending copies in three sizes."""
    objects = generate_demo_objects(nodes=12, seed=5, cluster="incr")
    template = next(o for o in objects if o["metadata"].get("name") == "wide-join-0")
    for index in range(extra):
        copied = copy.deepcopy(template)
        copied["metadata"]["name"] = f"wide-join-x{index}"
        copied["metadata"]["uid"] = f"x-{index}"
        request = copied["spec"]["containers"][0]["resources"]["requests"]
        cpu = str(int(request["cpu"]) - 2 * (index % 3))
        copied["spec"]["containers"][0]["resources"] = {
            "requests": {**request, "cpu": cpu},
            "limits": {**request, "cpu": cpu},
        }
        objects.append(copied)
    return objects


def facts_of(objects: Objects) -> ClusterFacts:
    loaded = facts_from_objects(objects)
    assert loaded.errors == []
    return loaded.facts


def keeping_unchanged(before: ClusterSnapshot, after: ClusterFacts) -> ClusterFacts:
    """`after` with each node equal to one in `before` as that very object, as the
    snapshot cache refreshes a snapshot."""
    old = {node.name: node for node in before.nodes}
    nodes = tuple(old[n.name] if old.get(n.name) == n else n for n in after.snapshot.nodes)
    return dataclasses.replace(after, snapshot=dataclasses.replace(after.snapshot, nodes=nodes))


def free_one_node(objects: Objects) -> tuple[Objects, str]:
    """The objects with one bound running pod gone; its node's name."""
    changed = copy.deepcopy(objects)
    gone = next(
        o
        for o in changed
        if o["kind"] == "Pod"
        and o["spec"].get("nodeName")
        and o.get("status", {}).get("phase") == "Running"
    )
    changed.remove(gone)
    return changed, gone["spec"]["nodeName"]


@pytest.fixture
def counted_outcomes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = pods_module.node_outcome

    def counted(node: Any, verdict: Any, request: Any) -> Any:
        calls.append(verdict.node)
        return real(node, verdict, request)

    monkeypatch.setattr(incremental, "node_outcome", counted)
    return calls


def test_a_cold_run_equals_the_reference() -> None:
    facts = facts_of(demo_with_shapes())
    assert diagnose_pods_kept(facts, Kept()) == diagnose_pods(facts)


def test_after_one_node_changed_only_it_is_worked_out_again(counted_outcomes: list[str]) -> None:
    objects = demo_with_shapes()
    first = facts_of(objects)
    kept = Kept()
    diagnose_pods_kept(first, kept)
    shapes = len(kept.shapes)
    assert shapes >= 3
    counted_outcomes.clear()
    changed, node = free_one_node(objects)
    second = keeping_unchanged(first.snapshot, facts_of(changed))
    second = dataclasses.replace(second, snapshot=dataclasses.replace(
        second.snapshot, reservations=first.snapshot.reservations
    ))  # fmt: skip
    assert diagnose_pods_kept(second, kept) == diagnose_pods(second)
    assert set(counted_outcomes) == {node}
    assert len(counted_outcomes) == shapes  # once per shape, on the changed node only


def test_other_reservations_or_profiles_start_afresh(counted_outcomes: list[str]) -> None:
    facts = facts_of(demo_with_shapes())
    kept = Kept()
    diagnose_pods_kept(facts, kept)
    nodes = len(facts.snapshot.nodes)
    counted_outcomes.clear()
    moved = dataclasses.replace(
        facts,
        snapshot=dataclasses.replace(
            facts.snapshot, reservations=tuple(list(facts.snapshot.reservations))
        ),
    )
    assert diagnose_pods_kept(moved, kept) == diagnose_pods(moved)
    assert len(counted_outcomes) == nodes * len(kept.shapes)


def test_shapes_no_pod_has_any_more_are_let_go() -> None:
    objects = demo_with_shapes()
    kept = Kept()
    diagnose_pods_kept(facts_of(objects), kept)
    before = len(kept.shapes)
    fewer = [o for o in objects if not o["metadata"].get("name", "").startswith("wide-join-x")]
    diagnose_pods_kept(facts_of(fewer), kept)
    assert len(kept.shapes) < before


# --- on the database ------------------------------------------------------------------------


@pytest.fixture
def mirrored(settings: Any) -> Cluster:
    settings.WHATIF_SNAPSHOT_CACHE_SIZE = 2
    incremental.forget()
    assert import_objects(cluster_name="incr", objects=demo_with_shapes()).ok
    return Cluster.objects.get(name="incr")


def stored_diagnoses(cluster: Cluster) -> dict[str, dict[str, Any]]:
    return {
        f"{row.namespace}/{row.name}": {k: v for k, v in row.body.items() if k not in VOLATILE}
        for row in PodDiagnosis.objects.filter(cluster=cluster)
    }


def reference_diagnoses(cluster: Cluster) -> dict[str, dict[str, Any]]:
    import orjson

    found = diagnose_pods(facts_from_mirror(cluster))
    return {
        f"{d['namespace']}/{d['name']}": orjson.loads(
            orjson.dumps({k: v for k, v in d.items() if k not in VOLATILE})
        )
        for d in found
    }


def stored_findings(cluster: Cluster) -> list[tuple[str, str, str, str]]:
    rows = Finding.objects.filter(cluster=cluster)
    return sorted((r.kind, r.node_name, r.object, r.message) for r in rows)


def reference_findings(cluster: Cluster) -> list[tuple[str, str, str, str]]:
    found = find_all(facts_from_mirror(cluster))
    return sorted((str(f.kind), f.node or "", f.object or "", f.message) for f in found)


def free_a_pod(cluster: Cluster) -> str:
    """A running pod on some node deleted through the sync's writer; the node's name."""
    from topology.services.mirror.removal import remove_objects

    pod = Pod.objects.filter(cluster=cluster, phase="Running").exclude(node_name="").first()
    assert pod is not None
    remove_objects(cluster, MirroredKind.POD, [(pod.namespace, pod.name)])
    return pod.node_name


@pytest.mark.django_db
def test_a_refresh_stores_what_the_reference_computes(mirrored: Cluster) -> None:
    refresh_diagnoses(mirrored)
    assert stored_diagnoses(mirrored) == reference_diagnoses(mirrored)
    assert stored_findings(mirrored) == reference_findings(mirrored)
    free_a_pod(mirrored)
    refresh_diagnoses(mirrored)
    assert stored_diagnoses(mirrored) == reference_diagnoses(mirrored)
    assert stored_findings(mirrored) == reference_findings(mirrored)


@pytest.mark.django_db
def test_rows_that_did_not_change_are_not_rewritten(mirrored: Cluster) -> None:
    refresh_diagnoses(mirrored)
    before = {r.pk: r.body for r in PodDiagnosis.objects.filter(cluster=mirrored)}
    version = Cluster.objects.get(pk=mirrored.pk).mirror_version
    pod = Pod.objects.filter(cluster=mirrored).exclude(node_name="").first()
    assert pod is not None
    relabelled = pod_object(pod)
    relabelled["metadata"].setdefault("labels", {})["touched"] = "yes"
    relabelled["metadata"]["resourceVersion"] = "touched-1"
    write_records(mirrored, MirroredKind.POD, [parse_pod(relabelled)], timezone.now())
    refresh_diagnoses(mirrored)
    after = PodDiagnosis.objects.filter(cluster=mirrored)
    assert {r.pk: r.body for r in after} == before  # same rows, same bodies
    assert {r.mirror_version for r in after} == {version}  # not rewritten
    cluster = Cluster.objects.get(pk=mirrored.pk)
    assert cluster.mirror_version > version
    assert {r.as_json(cluster)["mirror_version"] for r in after} == {cluster.mirror_version}
    assert all("data_age_seconds" in r.as_json(cluster) for r in after)


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="node fingerprints need PostgreSQL")
def test_only_the_changed_node_pods_are_read_again(
    mirrored: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    refresh_diagnoses(mirrored)
    read: list[str] = []
    real = incremental._read_pods_of

    def counted(cluster: Cluster, nodes: list[Any]) -> Any:
        read.extend(node.name for node in nodes)
        return real(cluster, nodes)

    monkeypatch.setattr(incremental, "_read_pods_of", counted)
    node = free_a_pod(mirrored)
    refresh_diagnoses(mirrored)
    assert read == [node]
    assert stored_diagnoses(mirrored) == reference_diagnoses(mirrored)


def test_a_change_that_moves_no_outcome_reuses_each_shape_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    objects = demo_with_shapes()
    first = facts_of(objects)
    kept = Kept()
    diagnose_pods_kept(first, kept)
    judged_nodes: list[int] = []
    real = pods_module.place

    def counted(snapshot: Any, *args: Any, **kwargs: Any) -> Any:
        judged_nodes.append(len(snapshot.nodes))
        return real(snapshot, *args, **kwargs)

    monkeypatch.setattr(pods_module, "place", counted)
    relabelled = copy.deepcopy(objects)
    node = next(o for o in relabelled if o["kind"] == "Node")
    node["metadata"]["labels"]["team"] = "payments"  # read by no scheduler here
    second = keeping_unchanged(first.snapshot, facts_of(relabelled))
    second = dataclasses.replace(second, snapshot=dataclasses.replace(
        second.snapshot, reservations=first.snapshot.reservations
    ))  # fmt: skip
    found = diagnose_pods_kept(second, kept)
    assert judged_nodes == [1] * len(kept.shapes)  # only the relabelled node, per shape
    monkeypatch.setattr(pods_module, "place", real)
    assert found == diagnose_pods(second)
