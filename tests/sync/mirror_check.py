"""Is the mirror equal to what the fake API server holds? Checked two ways:

1. field by field: every object the server serves (at the version the sync reads) is
   in the mirror with its uid, resourceVersion and the fields Topolens keeps, and the
   mirror holds nothing else;
2. as a whole: importing the same objects into a fresh cluster gives an equal mirror
   (zones, allocations, QoS strategies included), but for the content hashes of pods
   and NRTs: the sync stores the digest of their version (`hashing.version_digest`),
   which the field by field check checks, the import the digest of their content.
"""

from __future__ import annotations

import copy
from typing import Any

from django.db import transaction

from tests.sync.fakekube import FakeKubeServer
from tests.topology.mirror import mirror_state
from topology.domain.pod_phases import rejected_at_admission
from topology.models import Cluster, Node, NodeTopology, Pod, PodEvent, QoSConfig, Reservation
from topology.services.mirror.hashing import version_digest
from topology.services.mirror.importer import import_objects
from topology.sync.resources import QOS_CONFIGMAP, QOS_NAMESPACE

FINISHED = ("Succeeded", "Failed")


def _finished(pod: dict) -> bool:
    """Done pods are not mirrored; a pod the kubelet rejected at admission is."""
    status = pod.get("status", {})
    return status.get("phase") in FINISHED and not rejected_at_admission(
        status.get("phase", ""), status.get("reason", "")
    )


def served_objects(server: FakeKubeServer) -> list[dict[str, Any]]:
    """What the sync must mirror: each collection at its preferred version, active pods,
    and only the slo-controller-config ConfigMap."""
    objects = []
    for group, plural in server.cluster.collections:
        if plural == "namespaces":
            continue
        for obj in server.cluster.served(group, plural):
            metadata = obj["metadata"]
            if plural == "pods" and _finished(obj):
                continue
            if plural == "configmaps" and (metadata.get("namespace"), metadata["name"]) != (
                QOS_NAMESPACE,
                QOS_CONFIGMAP,
            ):
                continue
            objects.append(obj)
    return objects


def assert_mirror_matches(
    server: FakeKubeServer, cluster: Cluster, *, ignore: set[tuple[str, str]] = frozenset()
) -> None:
    """`ignore`: (kind, name) of objects the server holds malformed."""
    objects = [o for o in served_objects(server) if (o["kind"], _name(o)) not in ignore]
    _check_fields(cluster, objects, ignore)
    expected = _without_version_digests(_imported_twin_state(cluster, objects))
    actual = _without_version_digests(mirror_state(cluster))
    for part in expected:
        if ignore:
            actual[part] = [row for row in actual[part] if not _ignored(row, ignore)]
        assert actual[part] == expected[part], f"mirror differs in {part}"


def _without_version_digests(state: dict[str, Any]) -> dict[str, Any]:
    for part in ("pods", "topologies"):
        state[part] = [(key, {**row, "content_hash": "-"}) for key, row in state[part]]
    return state


class _Discard(Exception):
    pass


def _imported_twin_state(cluster: Cluster, objects: list[dict[str, Any]]) -> dict[str, Any]:
    """The mirror an import of the same objects gives, rolled back once read."""
    state: dict[str, Any] = {}
    try:
        with transaction.atomic():
            summary = import_objects(
                cluster_name=f"twin-{cluster.name}", objects=copy.deepcopy(objects)
            )
            assert summary.ok, summary.errors
            state = mirror_state(Cluster.objects.get(name=f"twin-{cluster.name}"))
            raise _Discard
    except _Discard:
        pass
    return state


def versions_match(
    server: FakeKubeServer, cluster: Cluster, *, ignore: set[tuple[str, str]] = frozenset()
) -> bool:
    """Cheap: the same objects at the same resourceVersions (a poll before the full check)."""
    ignored = {name for _, name in ignore}
    expected = {
        (o["kind"], o["metadata"].get("namespace", ""), _name(o)): o["metadata"]["resourceVersion"]
        for o in served_objects(server)
        if _name(o) not in ignored
    }
    actual: dict[tuple[str, str, str], str] = {}
    rows = [
        ("Node", "", Node.objects.filter(cluster=cluster).values_list("name", "resource_version")),
        (
            "NodeResourceTopology",
            "",
            NodeTopology.objects.filter(node__cluster=cluster).values_list(
                "node__name", "resource_version"
            ),
        ),
        (
            "Reservation",
            "",
            Reservation.objects.filter(cluster=cluster).values_list("name", "resource_version"),
        ),
    ]
    for kind, namespace, pairs in rows:
        actual.update({(kind, namespace, n): rv for n, rv in pairs if n not in ignored})
    for ns, name, rv in Pod.objects.filter(cluster=cluster).values_list(
        "namespace", "name", "resource_version"
    ):
        if name not in ignored:
            actual[("Pod", ns, name)] = rv
    for ns, name, rv in QoSConfig.objects.filter(cluster=cluster).values_list(
        "namespace", "name", "resource_version"
    ):
        actual[("ConfigMap", ns, name)] = rv
    for ns, name, rv in PodEvent.objects.filter(cluster=cluster).values_list(
        "namespace", "name", "resource_version"
    ):
        if name not in ignored:
            actual[("Event", ns, name)] = rv
    return actual == expected


def _name(obj: dict[str, Any]) -> str:
    return obj["metadata"]["name"]


def _ignored(row: Any, ignore: set[tuple[str, str]]) -> bool:
    """Rows of mirror_state start with the object's name, (namespace, name) or both."""
    names = {name for _, name in ignore}
    head = row[:2] if isinstance(row, tuple) else ()
    flat = [part for item in head for part in (item if isinstance(item, tuple) else (item,))]
    return any(isinstance(part, str) and part in names for part in flat)


def _check_fields(
    cluster: Cluster, objects: list[dict[str, Any]], ignore: set[tuple[str, str]]
) -> None:
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for obj in objects:
        by_kind.setdefault(obj["kind"], []).append(obj)
    ignored = {name for _, name in ignore}
    _nodes(cluster, by_kind.get("Node", []), ignored)
    _topologies(cluster, by_kind.get("NodeResourceTopology", []), ignored)
    _pods(cluster, by_kind.get("Pod", []), ignored)
    _reservations(cluster, by_kind.get("Reservation", []), ignored)
    _qos(cluster, by_kind.get("ConfigMap", []))


def _same_identity(row: Any, obj: dict[str, Any]) -> None:
    metadata = obj["metadata"]
    assert (row.uid, row.resource_version) == (metadata["uid"], metadata["resourceVersion"]), (
        f"{obj['kind']} {metadata['name']}: identity differs"
    )


def _digest_of_version(row: Any, version: str) -> None:
    assert row.content_hash == version_digest(row.uid, version), (
        f"{row}: content hash is not the digest of its version"
    )


def _nodes(cluster: Cluster, objects: list[dict[str, Any]], ignored: set[str]) -> None:
    rows = {n.name: n for n in Node.objects.filter(cluster=cluster).exclude(name__in=ignored)}
    assert set(rows) == {_name(o) for o in objects}
    for obj in objects:
        row = rows[_name(obj)]
        _same_identity(row, obj)
        assert row.labels == obj["metadata"].get("labels", {})
        assert row.unschedulable == obj.get("spec", {}).get("unschedulable", False)
        assert set(row.capacity) == set(obj["status"].get("capacity", {}))


def _topologies(cluster: Cluster, objects: list[dict[str, Any]], ignored: set[str]) -> None:
    rows = {
        t.node.name: t
        for t in NodeTopology.objects.filter(node__cluster=cluster)
        .exclude(node__name__in=ignored)
        .select_related("node")
        .prefetch_related("zones__resources")
    }
    assert set(rows) == {_name(o) for o in objects}
    for obj in objects:
        row = rows[_name(obj)]
        _same_identity(row, obj)
        assert row.api_version == obj["apiVersion"]
        _digest_of_version(row, f"{obj['apiVersion']} {obj['metadata']['resourceVersion']}")
        assert row.raw == obj
        zones = {z.name: z for z in row.zones.all()}
        assert set(zones) == {z["name"] for z in obj["zones"]}
        for zone in obj["zones"]:
            names = {r.name for r in zones[zone["name"]].resources.all()}
            expected = zone.get("resources") or []
            wanted = (
                {r["name"] for r in expected}
                if isinstance(expected, list)
                else set(expected.get("capacity", {}))
            )
            assert names == wanted, f"{_name(obj)} {zone['name']}: resources differ"


def _pods(cluster: Cluster, objects: list[dict[str, Any]], ignored: set[str]) -> None:
    rows = {
        (p.namespace, p.name): p
        for p in Pod.objects.filter(cluster=cluster).exclude(name__in=ignored)
    }
    assert set(rows) == {(o["metadata"].get("namespace", "default"), _name(o)) for o in objects}
    for obj in objects:
        row = rows[(obj["metadata"].get("namespace", "default"), _name(obj))]
        _same_identity(row, obj)
        _digest_of_version(row, obj["metadata"]["resourceVersion"])
        assert row.node_name == obj["spec"].get("nodeName", "")
        assert row.labels == obj["metadata"].get("labels", {})
        assert [c["name"] for c in row.containers] == [c["name"] for c in obj["spec"]["containers"]]


def _reservations(cluster: Cluster, objects: list[dict[str, Any]], ignored: set[str]) -> None:
    rows = {
        r.name: r for r in Reservation.objects.filter(cluster=cluster).exclude(name__in=ignored)
    }
    assert set(rows) == {_name(o) for o in objects}
    for obj in objects:
        _same_identity(rows[_name(obj)], obj)
        assert rows[_name(obj)].raw == obj


def _qos(cluster: Cluster, objects: list[dict[str, Any]]) -> None:
    rows = list(QoSConfig.objects.filter(cluster=cluster))
    assert [(r.namespace, r.name) for r in rows] == [
        (o["metadata"]["namespace"], _name(o)) for o in objects
    ]
    for row, obj in zip(rows, objects, strict=True):
        _same_identity(row, obj)
        assert set(row.data) | {"resource-qos-config"} >= set(obj["data"])
