"""Keep a cluster's stored diagnoses and findings in step with its mirror.

Every write to the mirror asks for a refresh (`enqueue.enqueue_diagnosis`, from
`bump_mirror_version`); requests coalesce on the cluster row (`diagnosis_queued_at`): while
one refresh is queued, more writes queue nothing, and the refresh that runs reads the
mirror as it is then. The refresh changes the cluster's rows in one transaction (only
those whose content changed, and the cluster's last-refresh fields), so a reader sees
either the old set or the new one.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import orjson
from django.db import transaction
from django.utils import timezone

from topology.choices import Severity
from topology.models import Cluster, Finding, PodDiagnosis
from topology.services.audit.predictions import follow_predictions
from topology.services.audit.store import refresh_agreement
from topology.services.diagnosis.facts import ClusterFacts
from topology.services.diagnosis.findings import Finding as CheckFinding
from topology.services.diagnosis.incremental import (
    diagnose_pods_kept,
    facts_from_mirror_kept,
    find_all_kept,
    forget,
    kept_for,
)
from topology.services.sync.enqueue import enqueue_diagnosis

logger = logging.getLogger(__name__)

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
    """Diagnose the cluster's Pending and rejected pods and run its data checks.

    Reads and judges only what changed since this process's last refresh of the
    cluster (`incremental`), and writes only the rows whose content changed."""
    Cluster.objects.filter(pk=cluster.pk).update(diagnosis_queued_at=None)  # new writes re-ask
    version = Cluster.objects.values_list("mirror_version", flat=True).get(pk=cluster.pk)
    kept = kept_for(cluster)
    try:
        facts = facts_from_mirror_kept(cluster, kept)
        pods = diagnose_pods_kept(facts, kept)
        findings = find_all_kept(facts, kept)
    except BaseException:
        forget(cluster.pk)  # nothing half-kept from a refresh that failed
        raise
    now = timezone.now()
    with transaction.atomic():
        _write_diagnoses(cluster, pods, now, version)
        _write_findings(cluster, findings, now)
        serious = sum(1 for f in findings if f.severity in SERIOUS)
        Cluster.objects.filter(pk=cluster.pk).update(
            diagnosed_version=version,
            diagnosed_at=now,
            diagnosed_data_age_seconds=facts.data_age_seconds,
            diagnosed_stale=_stale(facts),
            problem_count=len(pods) + serious,
        )
    _audit(cluster, facts)
    return Refreshed(len(pods), len(findings), version)


def _audit(cluster: Cluster, facts: ClusterFacts) -> None:
    """The agreement audit and the tracked predictions' follow-up on the same facts
    (`services.audit.store`, `services.audit.predictions`); a failure of either is
    logged and leaves the diagnoses stored."""
    try:
        refresh_agreement(cluster, facts)
    except Exception:
        logger.exception("agreement audit of cluster %s failed", cluster.name)
    try:
        follow_predictions(cluster, facts)
    except Exception:
        logger.exception("following up the predictions of cluster %s failed", cluster.name)


# A diagnosis's data age changes at every refresh: it is kept on the cluster (its last
# refresh), out of the stored body, so that a diagnosis that did not change is not written
# (rewriting every row at every refresh left the table full of dead rows).
VOLATILE = ("stale_data", "data_age_seconds")
DIAGNOSIS_COLUMNS = ("state", "reason", "node_name", "scheduler", "fits_now", "body")


def _write_diagnoses(
    cluster: Cluster, bodies: list[dict[str, Any]], now: datetime, version: int
) -> None:
    stored = {
        (namespace, name): (pk, body)
        for pk, namespace, name, body in PodDiagnosis.objects.filter(cluster=cluster).values_list(
            "pk", "namespace", "name", "body"
        )
    }
    created, changed = [], []
    for full in bodies:
        row = _diagnosis_row(cluster, _as_stored(full), now, version)
        before = stored.pop((row.namespace, row.name), None)
        if before is None:
            created.append(row)
        elif before[1] != row.body:
            row.pk = before[0]
            changed.append(row)
    PodDiagnosis.objects.filter(pk__in=[pk for pk, _ in stored.values()]).delete()
    PodDiagnosis.objects.bulk_update(changed, DIAGNOSIS_COLUMNS, batch_size=200)
    PodDiagnosis.objects.bulk_create(created, batch_size=500)


def _stale(facts: ClusterFacts) -> bool:
    """`pods._header`'s rule: the mirror is older than the freshness threshold."""
    age = facts.data_age_seconds
    return age is not None and age > facts.stale_after_seconds


def _as_stored(body: dict[str, Any]) -> dict[str, Any]:
    """The body as the database gives it back (JSON types), without the data age."""
    return orjson.loads(orjson.dumps({k: v for k, v in body.items() if k not in VOLATILE}))


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


FINDING_COLUMNS = ("severity", "evidence")


def _write_findings(cluster: Cluster, findings: list[CheckFinding], now: datetime) -> None:
    """The findings now: those gone deleted, new ones added, changed ones updated (a
    finding's `computed_at` is when it last changed; the cluster's `diagnosed_at` when
    it was last confirmed)."""
    stored = {
        (row.kind, row.node_name, row.object, row.message): row
        for row in Finding.objects.filter(cluster=cluster)
    }
    created, changed = [], []
    for found in findings:
        evidence = orjson.loads(orjson.dumps(found.evidence))
        key = (str(found.kind), found.node or "", found.object or "", found.message)
        row = stored.pop(key, None)
        if row is None:
            created.append(_finding_row(cluster, found, evidence, now))
        elif (row.severity, row.evidence) != (found.severity, evidence):
            row.severity, row.evidence = found.severity, evidence
            changed.append(row)
    Finding.objects.filter(pk__in=[row.pk for row in stored.values()]).delete()
    Finding.objects.bulk_update(changed, FINDING_COLUMNS, batch_size=500)
    Finding.objects.bulk_create(created, batch_size=500)


def _finding_row(
    cluster: Cluster, found: CheckFinding, evidence: dict[str, Any], now: datetime
) -> Finding:
    return Finding(
        cluster=cluster,
        kind=found.kind,
        severity=found.severity,
        node_name=found.node or "",
        object=found.object or "",
        message=found.message,
        evidence=evidence,
        computed_at=now,
    )
