"""Pods and the CPU / NUMA allocations their annotations publish, a batch at a time."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import OuterRef, Subquery

from topology.models import Cluster, Node, Pod, PodAllocation
from topology.parsers.cpulist import format_cpulist
from topology.parsers.pod import PodRecord
from topology.services.hashing import record_hash
from topology.services.writers.bulk import bulk_insert, bulk_update
from topology.services.writers.common import (
    POD_SOURCES,
    BatchResult,
    Outcome,
    assign,
    latest_by_key,
    namespaced,
)

PodKey = tuple[str, str]
POD_FIELDS = [
    "node",
    "node_name",
    "uid",
    "resource_version",
    "observed_at",
    "content_hash",
    "phase",
    "qos_class",
    "scheduler_name",
    "priority",
    "labels",
    "annotations",
    "owner_references",
    "containers",
    "init_containers",
    "overhead",
]


@transaction.atomic
def write_pods(cluster: Cluster, records: list[PodRecord], now: datetime) -> BatchResult:
    """Upsert pods (keys: (namespace, name)) and replace the allocations they publish."""
    latest = latest_by_key(records, lambda r: (r.namespace, r.name))
    existing = _existing(cluster, latest)
    node_ids = dict(
        Node.objects.filter(
            cluster=cluster, name__in={r.node_name for r in latest.values() if r.node_name}
        )
        .order_by()
        .values_list("name", "pk")
    )
    result = BatchResult()
    created: list[Pod] = []
    updated: list[Pod] = []
    changed: list[tuple[Pod, PodRecord]] = []
    for key, record in latest.items():
        digest = record_hash(record)
        pod = existing.get(key)
        if pod is not None and pod.content_hash == digest:
            result.outcomes[key] = Outcome.UNCHANGED
            continue
        if pod is None:
            pod = Pod(cluster=cluster, namespace=record.namespace, name=record.name)
            created.append(pod)
            result.outcomes[key] = Outcome.CREATED
        else:
            updated.append(pod)
            result.outcomes[key] = Outcome.UPDATED
        assign(pod, _pod_values(record, node_ids.get(record.node_name), now, digest))
        changed.append((pod, record))
    bulk_insert(created)
    bulk_update(updated, POD_FIELDS)
    _replace_pod_allocations(cluster, changed)
    _link_allocations(cluster, [(pod.namespace, pod.name) for pod, _ in changed])
    return result


def _existing(cluster: Cluster, latest: dict[PodKey, PodRecord]) -> dict[PodKey, Pod]:
    rows = (
        Pod.objects.filter(namespaced(latest), cluster=cluster)
        .order_by()
        .only("id", "namespace", "name", "content_hash")
    )
    return {(p.namespace, p.name): p for p in rows}


def _pod_values(
    record: PodRecord, node_id: int | None, now: datetime, digest: str
) -> dict[str, Any]:
    return {
        "node_id": node_id,
        "node_name": record.node_name,
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
    }


def _replace_pod_allocations(cluster: Cluster, changed: list[tuple[Pod, PodRecord]]) -> None:
    keys = {(pod.namespace, pod.name) for pod, _ in changed}
    if keys:
        PodAllocation.objects.filter(
            namespaced(keys, "pod_name"), cluster=cluster, source__in=POD_SOURCES
        ).delete()
    bulk_insert(
        [
            PodAllocation(
                cluster=cluster,
                node_id=pod.node_id,
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
            for pod, record in changed
            for a in record.allocations
        ]
    )


def _link_allocations(cluster: Cluster, keys: list[PodKey]) -> None:
    """kubelet-pinned allocations (from the NRT) that named a pod before it was mirrored."""
    if not keys:
        return
    pod_id = Subquery(
        Pod.objects.filter(
            cluster=cluster, namespace=OuterRef("namespace"), name=OuterRef("pod_name")
        ).values("pk")[:1]
    )
    PodAllocation.objects.filter(
        namespaced(keys, "pod_name"), cluster=cluster, pod__isnull=True
    ).update(pod=pod_id)
