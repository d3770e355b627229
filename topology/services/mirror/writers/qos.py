"""The slo-controller-config ConfigMap: one per cluster, with its strategies and resctrl rows."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from topology.models import Cluster, QoSConfig, QoSStrategy, ResctrlSetting
from topology.parsers.qos_config import QoSConfigRecord
from topology.services.mirror.hashing import record_hash
from topology.services.mirror.writers.common import BatchResult, Outcome, assign, latest_by_key


@transaction.atomic(savepoint=False)
def write_qos_configs(
    cluster: Cluster, records: list[QoSConfigRecord], now: datetime
) -> BatchResult:
    """Upsert the cluster's QoS config (key: the ConfigMap name); a cluster holds one."""
    result = BatchResult()
    for name, record in latest_by_key(records, lambda r: r.name).items():
        result.outcomes[(name,)] = _write_one(cluster, record, now)
    return result


def _write_one(cluster: Cluster, record: QoSConfigRecord, now: datetime) -> Outcome:
    config = QoSConfig.objects.filter(cluster=cluster).first()
    digest = record_hash(record)
    if config is not None and config.content_hash == digest:
        return Outcome.UNCHANGED
    outcome = Outcome.UPDATED if config else Outcome.CREATED
    config = config or QoSConfig(cluster=cluster)
    assign(
        config,
        {
            "namespace": record.namespace,
            "name": record.name,
            "uid": record.uid,
            "resource_version": record.resource_version,
            "observed_at": now,
            "content_hash": digest,
            "data": record.data,
        },
    )
    config.save()
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
