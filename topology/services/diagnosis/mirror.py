"""Diagnosis facts from a cluster's mirror: the what-if's snapshot (same data, same
profiles, same data-age rule) plus the pods, events and NRT facts only a diagnosis reads."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from scheduler_api.engine import ClusterSnapshot, PodSpec
from topology.adapters import stored_pod_specs
from topology.choices import SyncResource
from topology.domain.pod_phases import rejected_at_admission
from topology.models import Cluster, NodeTopology, Pod, SyncError
from topology.selectors.events import latest_events_by_pod, pod_events
from topology.selectors.sync import STALE_AFTER
from topology.services.diagnosis.facts import ClusterFacts, EventFacts, NRTFacts, PodFacts
from topology.services.whatif.scheduler_profiles import cluster_profiles
from topology.services.whatif.service import mirror_snapshot

NRT_RESOURCES = (SyncResource.NRT_UPSTREAM, SyncResource.NRT_CRANE)
NO_NODE = "no Node named"  # the sync's error for an NRT whose node it does not have


def facts_from_mirror(cluster: Cluster) -> ClusterFacts:
    return facts_with_pods(cluster, mirror_snapshot(cluster), all_pod_facts(cluster))


def facts_with_pods(
    cluster: Cluster, snapshot: ClusterSnapshot, pods: Iterable[PodFacts]
) -> ClusterFacts:
    """The facts of `snapshot` with `pods` (every mirrored pod, read whole or kept)."""
    return ClusterFacts(
        snapshot=snapshot,
        pods=tuple(pods),
        events=tuple(_events(cluster)),
        nrts=tuple(_nrts(cluster)),
        profiles=cluster_profiles(cluster),
        now=snapshot.taken_at or timezone.now(),
        data_age_seconds=snapshot.data_age_seconds,
        stale_after_seconds=STALE_AFTER.total_seconds(),
    )


def all_pod_facts(cluster: Cluster) -> list[PodFacts]:
    """Every mirrored pod: the import and the sync keep no finished pod but those the
    kubelet rejected (`PodRecord.finished`)."""
    return pod_facts_of(Pod.objects.filter(cluster=cluster).order_by("namespace", "name"))


POD_FACT_FIELDS = ("phase", "scheduler_name", "created_at", "status")


def pod_facts_of(rows: QuerySet[Pod]) -> list[PodFacts]:
    return [_pod_facts(row, spec) for row, spec in stored_pod_specs(rows, POD_FACT_FIELDS)]


def _pod_facts(row: dict[str, Any], spec: Callable[[], PodSpec]) -> PodFacts:
    status = row["status"] or {}
    return PodFacts(
        namespace=row["namespace"],
        name=row["name"],
        uid=row["uid"],
        node_name=row["node_name"],
        phase=row["phase"],
        scheduler_name=row["scheduler_name"],
        spec_source=spec,
        created_at=row["created_at"],
        status=status,
        rejected=rejected_at_admission(row["phase"], status.get("reason", "")),
    )


def _events(cluster: Cluster, pod: tuple[str, str] | None = None) -> list[EventFacts]:
    """Folded by pod and reason as `kubectl get events` shows them (`selectors.events`)."""
    if pod is not None:
        summaries = pod_events(cluster, *pod)
    else:
        summaries = [s for found in latest_events_by_pod(cluster).values() for s in found]
    return [EventFacts.of(summary) for summary in summaries]


def _nrts(cluster: Cluster) -> list[NRTFacts]:
    rows = NodeTopology.objects.filter(node__cluster=cluster).values_list(
        "node__name", "flavour", "pods_fingerprint", "pods_fingerprint_method", "observed_at"
    )
    facts = [
        NRTFacts(name, flavour, printed, method, updated_at=at)
        for name, flavour, printed, method, at in rows
    ]
    orphans = SyncError.objects.filter(
        cluster=cluster, resource__in=NRT_RESOURCES, message__contains=NO_NODE
    ).values_list("object_name", flat=True)
    facts += [NRTFacts(node_name=name, flavour="", has_node=False) for name in orphans]
    return facts


def pod_facts_from_mirror(cluster: Cluster, namespace: str, name: str) -> ClusterFacts | None:
    """The facts one pod's diagnosis reads (the snapshot, that pod, its events); None when
    the mirror has no such pod."""
    found = pod_facts_of(Pod.objects.filter(cluster=cluster, namespace=namespace, name=name))
    if not found:
        return None
    snapshot = mirror_snapshot(cluster)
    return ClusterFacts(
        snapshot=snapshot,
        pods=(found[0],),
        events=tuple(_events(cluster, pod=(namespace, name))),
        profiles=cluster_profiles(cluster),
        now=snapshot.taken_at or timezone.now(),
        data_age_seconds=snapshot.data_age_seconds,
        stale_after_seconds=STALE_AFTER.total_seconds(),
    )
