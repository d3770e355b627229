"""NodeResourceTopologies of every flavour: the topology row, its zones, kubelet-pinned CPUs."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
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
from topology.services.hashing import record_hash
from topology.services.writers.bulk import bulk_insert, bulk_update
from topology.services.writers.common import BatchResult, Outcome, assign, latest_by_key

Changed = list[tuple[Node, NodeTopology, TopologyRecord]]
# Every field topology_values sets, for bulk_update.
TOPOLOGY_FIELDS = [
    "node",
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
]


@transaction.atomic
def write_topologies(cluster: Cluster, records: list[TopologyRecord], now: datetime) -> BatchResult:
    """Upsert NRTs (keys: node names). One whose Node is not mirrored is an error, not a row."""
    latest = latest_by_key(records, lambda r: r.name)
    nodes = {
        n.name: n for n in Node.objects.filter(cluster=cluster, name__in=list(latest)).order_by()
    }
    existing = {
        t.node_id: t
        for t in NodeTopology.objects.filter(node__in=list(nodes.values())).only(
            "id", "node_id", "content_hash"
        )
    }
    result = BatchResult()
    created: list[NodeTopology] = []
    updated: list[NodeTopology] = []
    changed: Changed = []
    for name, record in latest.items():
        node = nodes.get(name)
        if node is None:
            result.errors[(name,)] = (
                f"NodeResourceTopology {name}: no Node named {name!r} in cluster "
                f"{cluster.name!r}; import the Node with it"
            )
            continue
        digest = record_hash(record)
        topology = existing.get(node.pk)
        if topology is not None and topology.content_hash == digest:
            result.outcomes[(name,)] = Outcome.UNCHANGED
            continue
        result.outcomes[(name,)] = Outcome.UPDATED if topology else Outcome.CREATED
        if topology is None:
            topology = NodeTopology()
            created.append(topology)
        else:
            updated.append(topology)
        assign(topology, topology_values(node, record, now, digest))
        changed.append((node, topology, record))
    bulk_insert(created)
    bulk_update(updated, TOPOLOGY_FIELDS, batch_size=50)
    _replace_zones(changed)
    _replace_kubelet_allocations(cluster, changed)
    _store_resolved_reservations(changed)
    return result


def topology_values(
    node: Node, record: TopologyRecord, now: datetime, digest: str
) -> dict[str, Any]:
    resolved = resolve_policy(
        record.flavour,
        topology_policies=record.topology_policies,
        attributes=record.attributes,
        crane_topology_policy=record.crane_topology_policy,
        node_labels=node.labels,
    )
    koordlet = record.koordlet or KoordletRecord()
    return {
        "node": node,
        "uid": record.uid,
        "resource_version": record.resource_version,
        "observed_at": now,
        "content_hash": digest,
        "flavour": record.flavour,
        "api_version": record.api_version,
        "tm_policy": resolved.policy,
        "tm_scope": resolved.scope,
        "tm_max_numa_nodes": resolved.max_numa_nodes,
        "tm_options": resolved.options,
        "topology_policies": record.topology_policies,
        "attributes": record.attributes,
        "cpu_manager_policy": koordlet.cpu_manager_policy,
        "cpu_manager_options": koordlet.cpu_manager_options,
        "kubelet_reserved_cpus": format_cpulist(koordlet.kubelet_reserved_cpus),
        "crane_cpu_manager_policy": record.crane_cpu_manager_policy,
        "crane_topology_policy": record.crane_topology_policy,
        "crane_reserved": record.crane_reserved,
        "koordlet": _koordlet_extras(koordlet),
        "cpu_topology_source": CPUTopologySource.KOORDINATOR if koordlet.cpus else "",
        "cpu_count": len(koordlet.cpus),
        "cpu_table": encode_cpus(koordlet.cpus),
        "raw": record.raw,
    }


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


def _replace_zones(changed: Changed) -> None:
    topologies = [topology for _, topology, _ in changed]
    ZoneResource.objects.filter(zone__topology__in=topologies).delete()
    Zone.objects.filter(topology__in=topologies).delete()
    zones: list[Zone] = []
    resources: list[tuple[Zone, Any]] = []
    for _, topology, record in changed:
        for zone_record in record.zones:
            zone = Zone(
                topology=topology,
                name=zone_record.name,
                zone_type=zone_record.zone_type,
                numa_id=zone_record.numa_id,
                parent=zone_record.parent,
                costs=zone_record.costs,
                attributes=zone_record.attributes,
                reserved_cpus=zone_record.reserved_cpus,
            )
            zones.append(zone)
            resources += [(zone, r) for r in zone_record.resources]
    bulk_insert(zones)
    bulk_insert(
        [
            ZoneResource(
                zone=zone,
                name=r.name,
                capacity=r.capacity,
                allocatable=r.allocatable,
                available=r.available,
            )
            for zone, r in resources
        ]
    )


def _replace_kubelet_allocations(cluster: Cluster, changed: Changed) -> None:
    """koordlet's pod-cpu-allocs: the CPUs kubelet pinned, linked to pods already mirrored."""
    names = [node.name for node, _, _ in changed]
    PodAllocation.objects.filter(
        cluster=cluster, node_name__in=names, source=AllocationSource.KUBELET
    ).delete()
    pods = {
        (p.node_name, p.namespace, p.name): p.pk
        for p in Pod.objects.filter(cluster=cluster, node_name__in=names)
        .order_by()
        .only("id", "node_name", "namespace", "name")
    }
    bulk_insert(
        [
            PodAllocation(
                cluster=cluster,
                node=node,
                node_name=node.name,
                pod_id=pods.get((node.name, a.namespace, a.name)),
                namespace=a.namespace,
                pod_name=a.name,
                pod_uid=a.uid,
                source=AllocationSource.KUBELET,
                cpuset=format_cpulist(a.cpuset),
            )
            for node, _, record in changed
            for a in (record.koordlet.pod_cpu_allocs if record.koordlet else ())
        ]
    )


def _store_resolved_reservations(changed: Changed) -> None:
    """koordlet re-emits the Node's CPU reservation with the CPUs kubelet actually chose."""
    resolved = {
        node.pk: format_cpulist(record.koordlet.node_reservation.reserved_cpus or ())
        for node, _, record in changed
        if record.koordlet and record.koordlet.node_reservation
    }
    rows = list(NodeCPUReservation.objects.filter(node_id__in=list(resolved)))
    for row in rows:
        row.resolved_cpus = resolved[row.node_id]
    bulk_update(rows, ["resolved_cpus"])
