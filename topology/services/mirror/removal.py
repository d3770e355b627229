"""Remove mirrored objects that vanished from the cluster, and list what the mirror holds.

Shared by the import (a covering re-import reconciles a kind) and the sync (a full
list reconciles a collection; a DELETED event removes one object). Keys are those of
`writers.record_key`: (namespace, name) for pods and events, (name,) otherwise.

Warning events about pods are retained, never removed here (`RETAINED_KINDS`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from django.db import transaction
from django.db.models import QuerySet

from topology.choices import AllocationSource
from topology.models import (
    Cluster,
    Node,
    NodeTopology,
    Pod,
    PodAllocation,
    PodEvent,
    QoSConfig,
    Reservation,
    ResourceClaim,
    ResourceSlice,
)
from topology.parsers import NAMESPACED_KINDS, MirroredKind
from topology.services.mirror.version import bump_mirror_version
from topology.services.mirror.writers import POD_SOURCES
from topology.services.mirror.writers.common import namespaced
from topology.services.mirror.writers.scheduler_configs import synced_configs

Key = tuple[str, ...]
# Kinds whose rows outlive their objects. An Event is evidence of what happened to a
# pod: the API server expires it after about an hour (--event-ttl), and a relist that
# no longer holds it, or its DELETED watch event, must not erase why a pod was refused.
# The sync's two removal paths (the end of a full list, a DELETED event) and a covering
# re-import all end in `remove_objects`, which leaves these alone; the housekeeping
# job bounds them instead (`services.mirror.events.prune_pod_events`).
RETAINED_KINDS = frozenset({MirroredKind.EVENT})


def stored_versions(
    cluster: Cluster,
    kind: MirroredKind,
    *,
    keys: Collection[Key] | None = None,
    api_group: str = "",
) -> dict[Key, str]:
    """Key → stored resourceVersion (NRTs: "apiVersion resourceVersion", since one object
    read through another version is another record). `keys` narrows the query."""
    rows = _scoped(cluster, kind, api_group)
    if keys is not None and kind in NAMESPACED_KINDS:
        rows = rows.filter(namespaced(keys))  # type: ignore[arg-type]
    elif keys is not None:
        field = "node__name" if kind is MirroredKind.TOPOLOGY else "name"
        rows = rows.filter(**{f"{field}__in": [key[-1] for key in keys]})
    if kind is MirroredKind.TOPOLOGY:
        versions = {
            (name,): f"{api} {rv}"
            for name, api, rv in rows.values_list("node__name", "api_version", "resource_version")
        }
    elif kind in NAMESPACED_KINDS:
        triples = rows.values_list("namespace", "name", "resource_version")
        versions = {(ns, name): rv for ns, name, rv in triples}
    else:
        versions = {(name,): rv for name, rv in rows.values_list("name", "resource_version")}
    return versions if keys is None else {k: v for k, v in versions.items() if k in keys}


def mirrored_keys(cluster: Cluster, kind: MirroredKind, *, api_group: str = "") -> set[Key]:
    return set(stored_versions(cluster, kind, api_group=api_group))


@transaction.atomic
def remove_objects(cluster: Cluster, kind: MirroredKind, keys: Collection[Key]) -> int:
    """Delete these mirrored objects with what hangs off them; returns how many it
    deleted. Retained kinds (events) are kept: nothing is deleted, 0 is returned."""
    if not keys or kind in RETAINED_KINDS:
        return 0
    names = [key[-1] for key in keys]
    pinned = 0
    if kind in (MirroredKind.NODE, MirroredKind.TOPOLOGY):
        # kubelet-pinned allocations come from the NRT, so they go with it (and its Node).
        pinned, _ = PodAllocation.objects.filter(
            cluster=cluster, node_name__in=names, source=AllocationSource.KUBELET
        ).delete()
    if kind is MirroredKind.POD:
        removed = _remove_pods(cluster, set(keys))
    elif kind in NAMESPACED_KINDS:  # DRA claims: by (namespace, name), never by name alone
        rows = _scoped(cluster, kind, "").filter(namespaced(set(keys)))  # type: ignore[arg-type]
        victims = list(rows.values_list("pk", flat=True))
        rows.model.objects.filter(pk__in=victims).delete()
        removed = len(victims)
    else:
        rows = _scoped(cluster, kind, "")
        field = "node__name" if kind is MirroredKind.TOPOLOGY else "name"
        victims = list(rows.filter(**{f"{field}__in": names}).values_list("pk", flat=True))
        rows.model.objects.filter(pk__in=victims).delete()
        removed = len(victims)
    if removed or pinned:
        bump_mirror_version(cluster)
    return removed


def _remove_pods(cluster: Cluster, keys: set[Key]) -> int:
    pods = list(
        Pod.objects.filter(namespaced(keys), cluster=cluster).values_list("pk", flat=True)  # type: ignore[arg-type]
    )
    PodAllocation.objects.filter(pod__in=pods, source__in=POD_SOURCES).delete()
    Pod.objects.filter(pk__in=pods).delete()
    return len(pods)


def _scoped(cluster: Cluster, kind: MirroredKind, api_group: str) -> QuerySet[Any]:
    """The mirror's rows of a kind; NRTs optionally of one API group only."""
    if kind is MirroredKind.NODE:
        return Node.objects.filter(cluster=cluster).order_by()
    if kind is MirroredKind.TOPOLOGY:
        rows = NodeTopology.objects.filter(node__cluster=cluster).order_by()
        return rows.filter(api_version__startswith=f"{api_group}/") if api_group else rows
    if kind is MirroredKind.POD:
        return Pod.objects.filter(cluster=cluster).order_by()
    if kind is MirroredKind.RESERVATION:
        return Reservation.objects.filter(cluster=cluster).order_by()
    if kind is MirroredKind.SCHEDULER_CONFIG:
        return synced_configs(cluster).order_by()
    if kind is MirroredKind.EVENT:
        return PodEvent.objects.filter(cluster=cluster).order_by()
    if kind is MirroredKind.RESOURCE_SLICE:
        return ResourceSlice.objects.filter(cluster=cluster).order_by()
    if kind is MirroredKind.RESOURCE_CLAIM:
        return ResourceClaim.objects.filter(cluster=cluster).order_by()
    return QoSConfig.objects.filter(cluster=cluster).order_by()
