"""NodeResourceTopologies of every flavour: the topology row, its zones, kubelet-pinned CPUs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any

from django.db import transaction

from topology.choices import AllocationSource, CPUTopologySource
from topology.models import (
    Cluster,
    Node,
    NodeCPUReservation,
    NodeTopology,
    Pod,
    PodAllocation,
    Zone,
    ZoneResource,
    encode_cpus,
)
from topology.parsers.cpulist import format_cpulist
from topology.parsers.koordlet import KoordletRecord
from topology.parsers.nrt import TopologyRecord
from topology.policies import resolve_policy
from topology.services.mirror.hashing import EncodedRecord, encode_record
from topology.services.mirror.writers.bulk import bulk_update
from topology.services.mirror.writers.common import BatchResult, Outcome, latest_by_key, namespaced
from topology.services.mirror.writers.rows import JsonText, insert_rows, update_rows

# The record's fields whose JSON text a row takes (`topology_row`): all a caller that
# brings its own EncodedRecord must encode (see `hashing.encode_columns`).
TOPOLOGY_JSON_FIELDS = ("topology_policies", "attributes", "crane_reserved", "raw")
# Every column topology_row sets, in its order (node_id first).
TOPOLOGY_COLUMNS = (
    "node_id",
    "uid",
    "resource_version",
    "observed_at",
    "content_hash",
    "flavour",
    "api_version",
    "tm_policy",
    "tm_scope",
    "tm_max_numa_nodes",
    "tm_options",
    "topology_policies",
    "attributes",
    "pods_fingerprint",
    "pods_fingerprint_method",
    "cpu_manager_policy",
    "cpu_manager_options",
    "kubelet_reserved_cpus",
    "crane_cpu_manager_policy",
    "crane_topology_policy",
    "crane_reserved",
    "koordlet",
    "cpu_topology_source",
    "cpu_count",
    "cpu_table",
    "raw",
)
_ZONE_COLUMNS = (
    "topology_id",
    "name",
    "zone_type",
    "numa_id",
    "parent",
    "costs",
    "attributes",
    "reserved_cpus",
)
_ZONE_RESOURCE_COLUMNS = ("zone_id", "name", "capacity", "allocatable", "available")
_KUBELET_ALLOCATION_COLUMNS = (
    "cluster_id",
    "node_id",
    "node_name",
    "pod_id",
    "namespace",
    "pod_name",
    "pod_uid",
    "source",
    "cpuset",
)


@dataclass(frozen=True)
class _MirroredNode:
    pk: int
    name: str
    labels: dict[str, str]


@dataclass
class _Changes:
    """Rows to insert, rows to update (by topology id), and every written NRT's record."""

    created: list[tuple[Any, ...]] = field(default_factory=list)
    updated: list[tuple[int, tuple[Any, ...]]] = field(default_factory=list)
    records: list[tuple[_MirroredNode, TopologyRecord]] = field(default_factory=list)


Changed = list[tuple[_MirroredNode, int, TopologyRecord]]  # (node, topology id, record)


@transaction.atomic(savepoint=False)
def write_topologies(
    cluster: Cluster,
    records: list[TopologyRecord],
    now: datetime,
    *,
    encodings: Mapping[tuple[str, ...], EncodedRecord] | None = None,
) -> BatchResult:
    """Upsert NRTs (keys: node names). One whose Node is not mirrored is an error, not a row.

    Rows are plain tuples, never model instances: an NRT of 384 CPUs brings 8 zones and
    16 zone resources, and a cold resync writes 5,000 of them. `encodings`: see
    write_records.
    """
    latest = latest_by_key(records, lambda r: r.name)
    nodes = _mirrored_nodes(cluster, list(latest))
    existing = _stored_hashes([node.pk for node in nodes.values()])
    result = BatchResult()
    changes = _Changes()
    for name, record in latest.items():
        node = nodes.get(name)
        if node is None:
            result.errors[(name,)] = (
                f"NodeResourceTopology {name}: no Node named {name!r} in cluster "
                f"{cluster.name!r}; import the Node with it"
            )
            continue
        encoded = (encodings or {}).get((name,)) or encode_record(record)
        found = existing.get(node.pk)
        if found is not None and found[1] == encoded.digest:
            result.outcomes[(name,)] = Outcome.UNCHANGED
            continue
        result.outcomes[(name,)] = Outcome.UPDATED if found else Outcome.CREATED
        row = topology_row(node.pk, node.labels, record, now, encoded)
        if found is None:
            changes.created.append(row)
        else:
            changes.updated.append((found[0], row))
        changes.records.append((node, record))
    changed = _write_rows(changes)
    _replace_zones(changed, replaced=[pk for pk, _ in changes.updated])
    _replace_kubelet_allocations(cluster, changed)
    _store_resolved_reservations(changed)
    return result


def _mirrored_nodes(cluster: Cluster, names: list[str]) -> dict[str, _MirroredNode]:
    rows = Node.objects.filter(cluster=cluster, name__in=names).order_by()
    return {
        name: _MirroredNode(pk, name, labels)
        for pk, name, labels in rows.values_list("pk", "name", "labels")
    }


def _stored_hashes(node_ids: list[int]) -> dict[int, tuple[int, str]]:
    """node id → (topology id, content hash) of the NRTs already mirrored."""
    if not node_ids:
        return {}
    rows = NodeTopology.objects.filter(node_id__in=node_ids).order_by()
    return {
        node_id: (pk, digest)
        for node_id, pk, digest in rows.values_list("node_id", "pk", "content_hash")
    }


def _write_rows(changes: _Changes) -> Changed:
    """Insert and update the topology rows; returns what was written, with the ids."""
    created_ids = insert_rows(NodeTopology, TOPOLOGY_COLUMNS, changes.created)
    update_rows(NodeTopology, TOPOLOGY_COLUMNS, changes.updated)
    topology_of = {row[0]: pk for pk, row in zip(created_ids, changes.created, strict=True)}
    topology_of.update({row[0]: pk for pk, row in changes.updated})  # row[0]: node_id
    return [(node, topology_of[node.pk], record) for node, record in changes.records]


def topology_row(
    node_id: int,
    node_labels: dict[str, str],
    record: TopologyRecord,
    now: datetime,
    encoded: EncodedRecord,
) -> tuple[Any, ...]:
    """The values of TOPOLOGY_COLUMNS, in order; JSON columns copied from the record
    reuse the hash's JSON text (`raw` alone is tens of kilobytes)."""
    json = encoded.fields
    resolved = resolve_policy(
        record.flavour,
        topology_policies=record.topology_policies,
        attributes=record.attributes,
        crane_topology_policy=record.crane_topology_policy,
        node_labels=node_labels,
    )
    koordlet = record.koordlet or KoordletRecord()
    return (
        node_id,
        record.uid,
        record.resource_version,
        now,
        encoded.digest,
        record.flavour,
        record.api_version,
        resolved.policy,
        resolved.scope,
        resolved.max_numa_nodes,
        resolved.options,
        JsonText(json["topology_policies"], record.topology_policies),
        JsonText(json["attributes"], record.attributes),
        record.pods_fingerprint[:128],
        record.pods_fingerprint_method[:64],
        koordlet.cpu_manager_policy,
        koordlet.cpu_manager_options,
        format_cpulist(koordlet.kubelet_reserved_cpus),
        record.crane_cpu_manager_policy,
        record.crane_topology_policy,
        JsonText(json["crane_reserved"], record.crane_reserved),
        _koordlet_extras(koordlet),
        CPUTopologySource.KOORDINATOR if koordlet.cpus else "",
        len(koordlet.cpus),
        _packed_cpus(koordlet.cpus),
        JsonText(json["raw"], record.raw),
    )


@lru_cache(maxsize=64)
def _packed_cpus(cpus: tuple[tuple[int, int, int, int], ...]) -> bytes:
    """encode_cpus, once per distinct CPU layout: the nodes of a cluster share a few."""
    return encode_cpus(cpus)


def _koordlet_extras(koordlet: KoordletRecord) -> dict[str, Any]:
    def pools(items: Iterable[Any]) -> list[dict[str, Any]]:
        return [
            {"socket": p.socket, "node": p.numa, "cpuset": format_cpulist(p.cpuset)} for p in items
        ]

    return {
        "cpu_shared_pools": pools(koordlet.shared_pools),
        "be_cpu_shared_pools": pools(koordlet.be_shared_pools),
        "cpu_basic_info": koordlet.cpu_basic_info,
        "system_qos_cpus": format_cpulist(koordlet.system_qos_cpus),
        "system_qos_exclusive": koordlet.system_qos_exclusive,
    }


def _replace_zones(changed: Changed, *, replaced: list[int]) -> None:
    """Zones and their resources of the written NRTs; `replaced`: the ids of updated
    topologies, whose old zones go first (a new topology id has none)."""
    if replaced:
        ZoneResource.objects.filter(zone__topology_id__in=replaced).delete()
        Zone.objects.filter(topology_id__in=replaced).delete()
    zone_rows = []
    resources = []
    for _, topology_id, record in changed:
        for zone in record.zones:
            zone_rows.append(
                (
                    topology_id,
                    zone.name,
                    zone.zone_type,
                    zone.numa_id,
                    zone.parent,
                    zone.costs,
                    zone.attributes,
                    zone.reserved_cpus,
                )
            )
            resources.append(zone.resources)
    zone_ids = insert_rows(Zone, _ZONE_COLUMNS, zone_rows)
    insert_rows(
        ZoneResource,
        _ZONE_RESOURCE_COLUMNS,
        [
            (zone_id, r.name, r.capacity, r.allocatable, r.available)
            for zone_id, zone_resources in zip(zone_ids, resources, strict=True)
            for r in zone_resources
        ],
        ids=False,
    )


def _replace_kubelet_allocations(cluster: Cluster, changed: Changed) -> None:
    """koordlet's pod-cpu-allocs: the CPUs kubelet pinned, linked to pods already mirrored.

    A pod runs on one node, so one claim per pod is kept (see `_one_claim_per_pod`).
    """
    names = [node.name for node, _, _ in changed]
    if not names:
        return
    PodAllocation.objects.filter(
        cluster=cluster, node_name__in=names, source=AllocationSource.KUBELET
    ).delete()
    allocations = [
        (node, a)
        for node, _, record in changed
        for a in (record.koordlet.pod_cpu_allocs if record.koordlet else ())
    ]
    if not allocations:
        return
    pods = {
        (node_name, namespace, name): pk
        for pk, node_name, namespace, name in Pod.objects.filter(
            cluster=cluster, node_name__in=names
        )
        .order_by()
        .values_list("pk", "node_name", "namespace", "name")
    }
    claims = _one_claim_per_pod(cluster, allocations, pods)
    insert_rows(
        PodAllocation,
        _KUBELET_ALLOCATION_COLUMNS,
        [
            (
                cluster.pk,
                node.pk,
                node.name,
                pod_pk,
                a.namespace,
                a.name,
                a.uid,
                AllocationSource.KUBELET,
                format_cpulist(a.cpuset),
            )
            for node, a, pod_pk in claims
        ],
        ids=False,
    )


def _one_claim_per_pod(
    cluster: Cluster,
    allocations: list[tuple[Node, Any]],
    pods: dict[tuple[str, str, str], int],
) -> list[tuple[Node, Any, int | None]]:
    """Two koordlets may both list a pod (one of them stale, e.g. after a reschedule).

    The claim from the node the pod is mirrored on wins, within the batch and over a row
    another node's NRT wrote earlier; otherwise the first claim stands and an existing
    row elsewhere is kept. Never two rows for one pod: the mirror's key forbids it.
    """
    chosen: dict[tuple[str, str], tuple[Node, Any, int | None]] = {}
    for node, a in allocations:
        key = (a.namespace, a.name)
        pod_pk = pods.get((node.name, *key))
        if key not in chosen or (chosen[key][2] is None and pod_pk is not None):
            chosen[key] = (node, a, pod_pk)
    elsewhere = PodAllocation.objects.filter(
        namespaced(chosen, "pod_name"), cluster=cluster, source=AllocationSource.KUBELET
    )
    beaten = [key for key in elsewhere.values_list("namespace", "pod_name") if chosen[key][2]]
    if beaten:
        elsewhere.filter(namespaced(beaten, "pod_name")).delete()
    held = set(elsewhere.values_list("namespace", "pod_name"))
    return [claim for key, claim in chosen.items() if key not in held]


def _store_resolved_reservations(changed: Changed) -> None:
    """koordlet re-emits the Node's CPU reservation with the CPUs kubelet actually chose."""
    resolved = {
        node.pk: format_cpulist(record.koordlet.node_reservation.reserved_cpus or ())
        for node, _, record in changed
        if record.koordlet and record.koordlet.node_reservation
    }
    if not resolved:
        return
    rows = list(NodeCPUReservation.objects.filter(node_id__in=list(resolved)))
    for row in rows:
        row.resolved_cpus = resolved[row.node_id]
    bulk_update(rows, ["resolved_cpus"])
