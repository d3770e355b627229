"""Diagnosis facts from a cluster's mirror: the what-if's snapshot (same data, same
profiles, same data-age rule) plus the pods, events and NRT facts only a diagnosis reads."""

from __future__ import annotations

from django.utils import timezone

from topology.adapters import stored_pod_spec
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
    snapshot = mirror_snapshot(cluster)
    return ClusterFacts(
        snapshot=snapshot,
        pods=tuple(_pods(cluster)),
        events=tuple(_events(cluster)),
        nrts=tuple(_nrts(cluster)),
        profiles=cluster_profiles(cluster),
        now=snapshot.taken_at or timezone.now(),
        data_age_seconds=snapshot.data_age_seconds,
        stale_after_seconds=STALE_AFTER.total_seconds(),
    )


def _pods(cluster: Cluster) -> list[PodFacts]:
    """Every mirrored pod: the import and the sync keep no finished pod but those the
    kubelet rejected (`PodRecord.finished`)."""
    rows = Pod.objects.filter(cluster=cluster).order_by("namespace", "name")
    return [_pod_facts(pod) for pod in rows.iterator(2000)]


def _pod_facts(pod: Pod) -> PodFacts:
    return PodFacts(
        namespace=pod.namespace,
        name=pod.name,
        uid=pod.uid,
        node_name=pod.node_name,
        phase=pod.phase,
        scheduler_name=pod.scheduler_name,
        spec=stored_pod_spec(pod),
        created_at=pod.created_at,
        status=pod.status or {},
        rejected=rejected_at_admission(pod.phase, (pod.status or {}).get("reason", "")),
    )


def _events(cluster: Cluster, pod: tuple[str, str] | None = None) -> list[EventFacts]:
    """Folded by pod and reason as `kubectl get events` shows them (`selectors.events`)."""
    if pod is not None:
        summaries = pod_events(cluster, *pod)
    else:
        summaries = [s for found in latest_events_by_pod(cluster).values() for s in found]
    return [EventFacts.of(summary) for summary in summaries]


def _nrts(cluster: Cluster) -> list[NRTFacts]:
    rows = NodeTopology.objects.filter(node__cluster=cluster).select_related("node")
    facts = [
        NRTFacts(
            node_name=row.node.name,
            flavour=row.flavour,
            pods_fingerprint=row.pods_fingerprint,
            pods_fingerprint_method=row.pods_fingerprint_method,
            updated_at=row.observed_at,
        )
        for row in rows.only(
            "node__name", "flavour", "pods_fingerprint", "pods_fingerprint_method", "observed_at"
        )
    ]
    orphans = SyncError.objects.filter(
        cluster=cluster, resource__in=NRT_RESOURCES, message__contains=NO_NODE
    ).values_list("object_name", flat=True)
    facts += [NRTFacts(node_name=name, flavour="", has_node=False) for name in orphans]
    return facts


def pod_facts_from_mirror(cluster: Cluster, namespace: str, name: str) -> ClusterFacts | None:
    """The facts one pod's diagnosis reads (the snapshot, that pod, its events); None when
    the mirror has no such pod."""
    pod = Pod.objects.filter(cluster=cluster, namespace=namespace, name=name).first()
    if pod is None:
        return None
    snapshot = mirror_snapshot(cluster)
    return ClusterFacts(
        snapshot=snapshot,
        pods=(_pod_facts(pod),),
        events=tuple(_events(cluster, pod=(namespace, name))),
        profiles=cluster_profiles(cluster),
        now=snapshot.taken_at or timezone.now(),
        data_age_seconds=snapshot.data_age_seconds,
        stale_after_seconds=STALE_AFTER.total_seconds(),
    )
