"""Upsert one parsed record into the mirror; each call is atomic on its own.

Every writer compares the record's content hash with the stored one first, so
re-importing an unchanged object writes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum
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
    QoSConfig,
    QoSStrategy,
    ResctrlSetting,
    Reservation,
    Zone,
    ZoneResource,
    encode_cpus,
)
from topology.parsers.cpulist import format_cpulist
from topology.parsers.koordlet import KoordletRecord
from topology.parsers.node import NodeRecord, NodeReservationRecord
from topology.parsers.nrt import TopologyRecord
from topology.parsers.pod import AllocationRecord, PodRecord
from topology.parsers.qos_config import QoSConfigRecord
from topology.parsers.reservation import ReservationRecord
from topology.policies import resolve_policy
from topology.services.hashing import record_hash

POD_SOURCES = (AllocationSource.CRANE, AllocationSource.KOORDINATOR)


class Outcome(StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"


class MissingNodeError(LookupError):
    """An object that needs its Node, which the mirror does not hold."""


def _outcome(existing: Any, digest: str) -> Outcome | None:
    if existing is not None and existing.content_hash == digest:
        return Outcome.UNCHANGED
    return None


def _save(model: type, existing: Any, values: dict[str, Any]) -> tuple[Any, Outcome]:
    if existing is None:
        return model.objects.create(**values), Outcome.CREATED
    for key, value in values.items():
        setattr(existing, key, value)
    existing.save()
    return existing, Outcome.UPDATED


@transaction.atomic
def upsert_node(cluster: Cluster, record: NodeRecord, now: datetime) -> Outcome:
    existing = Node.objects.filter(cluster=cluster, name=record.name).first()
    digest = record_hash(record)
    if unchanged := _outcome(existing, digest):
        return unchanged
    node, outcome = _save(
        Node,
        existing,
        {
            "cluster": cluster,
            "name": record.name,
            "uid": record.uid,
            "resource_version": record.resource_version,
            "observed_at": now,
            "content_hash": digest,
            "labels": record.labels,
            "annotations": record.annotations,
            "capacity": record.capacity,
            "allocatable": record.allocatable,
            "unschedulable": record.unschedulable,
        },
    )
    _write_node_reservation(node, record.reservation)
    if outcome is Outcome.CREATED:
        _link_to_node(cluster, node)
    elif hasattr(node, "topology"):
        _refresh_koordinator_policy(node)
    return outcome


def _write_node_reservation(node: Node, reservation: NodeReservationRecord | None) -> None:
    if reservation is None:
        NodeCPUReservation.objects.filter(node=node).delete()
        return
    NodeCPUReservation.objects.update_or_create(
        node=node,
        defaults={
            "resources": reservation.resources,
            "reserved_cpus": format_cpulist(reservation.reserved_cpus or ()),
            "apply_policy": reservation.apply_policy,
            "raw": reservation.raw,
        },
    )


def _link_to_node(cluster: Cluster, node: Node) -> None:
    """Objects that named this node before it was mirrored now point at it."""
    Pod.objects.filter(cluster=cluster, node_name=node.name, node__isnull=True).update(node=node)
    PodAllocation.objects.filter(cluster=cluster, node_name=node.name, node__isnull=True).update(
        node=node
    )
    Reservation.objects.filter(cluster=cluster, node_name=node.name, node__isnull=True).update(
        node=node
    )


def _refresh_koordinator_policy(node: Node) -> None:
    """The Koordinator policy label lives on the Node and beats the NRT value."""
    topology = node.topology
    resolved = resolve_policy(
        topology.flavour,
        topology_policies=topology.topology_policies,
        attributes=topology.attributes,
        crane_topology_policy=topology.crane_topology_policy,
        node_labels=node.labels,
    )
    if (topology.tm_policy, topology.tm_scope) != (resolved.policy, resolved.scope):
        topology.tm_policy, topology.tm_scope = resolved.policy, resolved.scope
        topology.save(update_fields=["tm_policy", "tm_scope"])


@transaction.atomic
def upsert_topology(cluster: Cluster, record: TopologyRecord, now: datetime) -> Outcome:
    node = Node.objects.filter(cluster=cluster, name=record.name).first()
    if node is None:
        raise MissingNodeError(
            f"NodeResourceTopology {record.name}: no Node named {record.name!r} in cluster "
            f"{cluster.name!r}; import the Node with it"
        )
    existing = NodeTopology.objects.filter(node=node).first()
    digest = record_hash(record)
    if unchanged := _outcome(existing, digest):
        return unchanged
    topology, outcome = _save(NodeTopology, existing, _topology_values(node, record, now, digest))
    _replace_zones(topology, record)
    _replace_kubelet_allocations(cluster, node, record.koordlet)
    if record.koordlet and record.koordlet.node_reservation and hasattr(node, "cpu_reservation"):
        resolved = record.koordlet.node_reservation.reserved_cpus or ()
        node.cpu_reservation.resolved_cpus = format_cpulist(resolved)
        node.cpu_reservation.save(update_fields=["resolved_cpus"])
    return outcome


def _topology_values(
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


def _replace_zones(topology: NodeTopology, record: TopologyRecord) -> None:
    topology.zones.all().delete()
    for zone_record in record.zones:
        zone = Zone.objects.create(
            topology=topology,
            name=zone_record.name,
            zone_type=zone_record.zone_type,
            numa_id=zone_record.numa_id,
            parent=zone_record.parent,
            costs=zone_record.costs,
            attributes=zone_record.attributes,
            reserved_cpus=zone_record.reserved_cpus,
        )
        ZoneResource.objects.bulk_create(
            ZoneResource(
                zone=zone,
                name=r.name,
                capacity=r.capacity,
                allocatable=r.allocatable,
                available=r.available,
            )
            for r in zone_record.resources
        )


def _replace_kubelet_allocations(
    cluster: Cluster, node: Node, koordlet: KoordletRecord | None
) -> None:
    PodAllocation.objects.filter(
        cluster=cluster, node_name=node.name, source=AllocationSource.KUBELET
    ).delete()
    allocs = koordlet.pod_cpu_allocs if koordlet else ()
    pods = {
        (p.namespace, p.name): p
        for p in Pod.objects.filter(cluster=cluster, node_name=node.name).only(
            "id", "namespace", "name"
        )
    }
    PodAllocation.objects.bulk_create(
        PodAllocation(
            cluster=cluster,
            node=node,
            node_name=node.name,
            pod=pods.get((a.namespace, a.name)),
            namespace=a.namespace,
            pod_name=a.name,
            pod_uid=a.uid,
            source=AllocationSource.KUBELET,
            cpuset=format_cpulist(a.cpuset),
        )
        for a in allocs
    )


@transaction.atomic
def upsert_pod(cluster: Cluster, record: PodRecord, now: datetime) -> Outcome:
    existing = Pod.objects.filter(
        cluster=cluster, namespace=record.namespace, name=record.name
    ).first()
    digest = record_hash(record)
    if unchanged := _outcome(existing, digest):
        return unchanged
    node = Node.objects.filter(cluster=cluster, name=record.node_name).first()
    pod, outcome = _save(
        Pod,
        existing,
        {
            "cluster": cluster,
            "node": node,
            "node_name": record.node_name,
            "namespace": record.namespace,
            "name": record.name,
            "uid": record.uid,
            "resource_version": record.resource_version,
            "observed_at": now,
            "content_hash": digest,
            "phase": record.phase,
            "qos_class": record.qos_class,
            "scheduler_name": record.scheduler_name,
            "priority": record.priority,
            "labels": record.labels,
            "annotations": record.annotations,
            "owner_references": record.owner_references,
            "containers": [c.as_dict() for c in record.containers],
            "init_containers": [c.as_dict() for c in record.init_containers],
            "overhead": record.overhead,
        },
    )
    _replace_pod_allocations(pod, node, record.allocations)
    PodAllocation.objects.filter(
        cluster=cluster, namespace=pod.namespace, pod_name=pod.name, pod__isnull=True
    ).update(pod=pod)
    return outcome


def _replace_pod_allocations(
    pod: Pod, node: Node | None, allocations: tuple[AllocationRecord, ...]
) -> None:
    PodAllocation.objects.filter(
        cluster=pod.cluster, namespace=pod.namespace, pod_name=pod.name, source__in=POD_SOURCES
    ).delete()
    PodAllocation.objects.bulk_create(
        PodAllocation(
            cluster=pod.cluster,
            node=node,
            node_name=pod.node_name,
            pod=pod,
            namespace=pod.namespace,
            pod_name=pod.name,
            pod_uid=pod.uid,
            source=a.source,
            cpuset=format_cpulist(a.cpuset) if a.cpuset is not None else "",
            numa_resources={str(k): v for k, v in a.numa_resources.items()},
            raw=a.raw,
        )
        for a in allocations
    )


@transaction.atomic
def upsert_reservation(cluster: Cluster, record: ReservationRecord, now: datetime) -> Outcome:
    existing = Reservation.objects.filter(cluster=cluster, name=record.name).first()
    digest = record_hash(record)
    if unchanged := _outcome(existing, digest):
        return unchanged
    allocation = record.allocation
    _reservation, outcome = _save(
        Reservation,
        existing,
        {
            "cluster": cluster,
            "name": record.name,
            "uid": record.uid,
            "resource_version": record.resource_version,
            "observed_at": now,
            "content_hash": digest,
            "node": Node.objects.filter(cluster=cluster, name=record.node_name).first()
            if record.node_name
            else None,
            "node_name": record.node_name,
            "template_namespace": record.template_namespace,
            "template_labels": record.template_labels,
            "containers": [c.as_dict() for c in record.containers],
            "owners": record.owners,
            "ttl_seconds": record.ttl_seconds,
            "expires": record.expires,
            "allocate_once": record.allocate_once,
            "allocate_policy": record.allocate_policy,
            "unschedulable": record.unschedulable,
            "pre_allocation": record.pre_allocation,
            "phase": record.phase,
            "allocatable": record.allocatable,
            "allocated": record.allocated,
            "current_owners": record.current_owners,
            "cpuset": format_cpulist(allocation.cpuset or ()) if allocation else "",
            "numa_resources": {str(k): v for k, v in allocation.numa_resources.items()}
            if allocation
            else {},
            "raw": record.raw,
        },
    )
    return outcome


@transaction.atomic
def upsert_qos_config(cluster: Cluster, record: QoSConfigRecord, now: datetime) -> Outcome:
    existing = QoSConfig.objects.filter(cluster=cluster).first()
    digest = record_hash(record)
    if unchanged := _outcome(existing, digest):
        return unchanged
    config, outcome = _save(
        QoSConfig,
        existing,
        {
            "cluster": cluster,
            "namespace": record.namespace,
            "name": record.name,
            "uid": record.uid,
            "resource_version": record.resource_version,
            "observed_at": now,
            "content_hash": digest,
            "data": record.data,
        },
    )
    config.strategies.all().delete()
    for strategy_record in record.strategies:
        strategy = QoSStrategy.objects.create(
            config=config,
            position=strategy_record.position,
            name=strategy_record.name,
            node_selector=strategy_record.node_selector,
            body=strategy_record.body,
        )
        ResctrlSetting.objects.bulk_create(
            ResctrlSetting(
                strategy=strategy,
                qos_class=r.qos_class,
                enable=r.enable,
                cat_range_start_percent=r.cat_range_start_percent,
                cat_range_end_percent=r.cat_range_end_percent,
                mba_percent=r.mba_percent,
                extra=r.extra,
            )
            for r in strategy_record.resctrl
        )
    return outcome
