"""Keep a cluster's stored diagnoses and findings in step with its mirror.

Every write to the mirror asks for a refresh (`enqueue.enqueue_diagnosis`, from
`bump_mirror_version`); requests coalesce on the cluster row (`diagnosis_queued_at`): while
one refresh is queued, more writes queue nothing, and the refresh that runs reads the
mirror as it is then. The refresh replaces the cluster's rows in one transaction, so a
reader sees either the old set or the new one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from topology.choices import Severity
from topology.models import Cluster, Finding, PodDiagnosis
from topology.services.diagnosis.findings import find_all
from topology.services.diagnosis.mirror import facts_from_mirror
from topology.services.diagnosis.pods import diagnose_pods
from topology.services.sync.enqueue import enqueue_diagnosis

LOST_AFTER = timedelta(minutes=5)  # a request older than this is queued again
SERIOUS = frozenset({Severity.WARNING, Severity.ERROR})  # the findings the badge counts


@dataclass(frozen=True)
class Refreshed:
    diagnoses: int
    findings: int
    version: int


def requeue_lost(now: datetime | None = None) -> int:
    """Housekeeping: requests whose task never ran (a broker restart) are sent again."""
    cutoff = (now or timezone.now()) - LOST_AFTER
    lost = list(Cluster.objects.filter(diagnosis_queued_at__lt=cutoff).values_list("pk", flat=True))
    for cluster_id in lost:
        Cluster.objects.filter(pk=cluster_id).update(diagnosis_queued_at=None)
        enqueue_diagnosis(cluster_id)
    return len(lost)


def refresh_diagnoses(cluster: Cluster) -> Refreshed:
    """Diagnose the cluster's Pending and rejected pods and run its data checks."""
    Cluster.objects.filter(pk=cluster.pk).update(diagnosis_queued_at=None)  # new writes re-ask
    version = Cluster.objects.values_list("mirror_version", flat=True).get(pk=cluster.pk)
    facts = facts_from_mirror(cluster)
    pods = diagnose_pods(facts)
    findings = find_all(facts)
    now = timezone.now()
    with transaction.atomic():
        PodDiagnosis.objects.filter(cluster=cluster).delete()
        PodDiagnosis.objects.bulk_create(
            [_diagnosis_row(cluster, body, now, version) for body in pods], batch_size=500
        )
        Finding.objects.filter(cluster=cluster).delete()
        Finding.objects.bulk_create(
            [
                Finding(
                    cluster=cluster,
                    kind=f.kind,
                    severity=f.severity,
                    node_name=f.node or "",
                    object=f.object or "",
                    message=f.message,
                    evidence=f.evidence,
                    computed_at=now,
                )
                for f in findings
            ],
            batch_size=500,
        )
        serious = sum(1 for f in findings if f.severity in SERIOUS)
        Cluster.objects.filter(pk=cluster.pk).update(
            diagnosed_version=version, diagnosed_at=now, problem_count=len(pods) + serious
        )
    return Refreshed(len(pods), len(findings), version)


def _diagnosis_row(
    cluster: Cluster, body: dict[str, Any], now: datetime, version: int
) -> PodDiagnosis:
    return PodDiagnosis(
        cluster=cluster,
        namespace=body["namespace"],
        name=body["name"],
        state=body["state"],
        reason=body["reason"][:128],
        node_name=body["node"] or "",
        scheduler=body["scheduler"],
        fits_now=body["fits_now"],
        body=body,
        computed_at=now,
        mirror_version=version,
    )
