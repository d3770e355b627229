"""A cluster's scheduler configuration ConfigMap, mirrored as a SchedulerConfiguration row.

Rows the sync keeps carry `synced_from` (namespace/name); documents uploaded in admin
have none and are never touched here.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.db.models import QuerySet

from topology.models import Cluster, SchedulerConfiguration
from topology.parsers.scheduler_config import SchedulerConfigRecord
from topology.services.mirror.hashing import record_hash
from topology.services.mirror.writers.common import BatchResult, Outcome, assign, latest_by_key


@transaction.atomic(savepoint=False)
def write_scheduler_configs(
    cluster: Cluster, records: list[SchedulerConfigRecord], now: datetime
) -> BatchResult:
    """Upsert one row per ConfigMap (key: its name, as for every kind but pods)."""
    result = BatchResult()
    for name, record in latest_by_key(records, lambda r: r.name).items():
        result.outcomes[(name,)] = _write_one(cluster, record)
    return result


def _write_one(cluster: Cluster, record: SchedulerConfigRecord) -> Outcome:
    row = synced_configs(cluster).filter(name=record.name).first()
    digest = record_hash(record)
    if row is not None and row.content_hash == digest:
        return Outcome.UNCHANGED
    outcome = Outcome.UPDATED if row else Outcome.CREATED
    row = row or SchedulerConfiguration(cluster=cluster, name=record.name)
    assign(
        row,
        {
            "synced_from": record.reference,
            "document": record.document,
            "uid": record.uid,
            "resource_version": record.resource_version,
            "content_hash": digest,
        },
    )
    row.save()
    return outcome


def synced_configs(cluster: Cluster) -> QuerySet[SchedulerConfiguration]:
    """The cluster's documents the sync keeps (never those uploaded in admin)."""
    return SchedulerConfiguration.objects.filter(cluster=cluster).exclude(synced_from="")
