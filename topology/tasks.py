"""Celery tasks: thin interfaces that take ids, call services, and are safe to repeat.

Queues: watch loops run for minutes and go to the "watch" queue (see
CELERY_TASK_ROUTES), so they never hold up the short tasks on the default queue.
Every enqueue goes through `transaction.on_commit`, so a task never runs before the
rows it needs are committed.
"""

from __future__ import annotations

import logging
from pathlib import Path

from celery import shared_task
from django.utils import timezone

from topology.models import Cluster, SyncLease
from topology.services.audit.predictions import prune_predictions
from topology.services.diagnosis.refresh import refresh_diagnoses as refresh_diagnoses_service
from topology.services.diagnosis.refresh import requeue_lost as requeue_lost_diagnoses
from topology.services.mirror.events import prune_pod_events
from topology.services.mirror.figures import recompute_figures as recompute_figures_service
from topology.services.mirror.importer import import_objects
from topology.services.mirror.loading import load_objects
from topology.services.observability.history import prune_history
from topology.services.observability.metrics import warm_metrics
from topology.services.policies.writeback.lost import recover_lost_applies
from topology.services.policies.writeback.run import run_apply as run_apply_service
from topology.services.sync.clusters import synced_cluster_ids
from topology.services.sync.enqueue import enqueue_figures, enqueue_watch
from topology.services.sync.schedules import ensure_schedules as ensure_schedules_service
from topology.sync import lease
from topology.sync.client import credentials_of
from topology.sync.errors import SyncConnectError
from topology.sync.session import ClusterSync
from topology.sync.settings import SyncSettings

logger = logging.getLogger(__name__)


@shared_task(name="topology.import_files")
def import_files(cluster_name: str, paths: list[str]) -> dict[str, object]:
    """Import kubectl dumps into a cluster's mirror; idempotent, so safe to retry."""
    objects = [obj for path in paths for obj in load_objects(Path(path))]
    summary = import_objects(cluster_name=cluster_name, objects=objects)
    return {
        "created": summary.total("created"),
        "updated": summary.total("updated"),
        "unchanged": summary.total("unchanged"),
        "removed": summary.total("removed"),
        "errors": summary.errors,
    }


@shared_task(name="topology.sync_cluster")
def sync_cluster(cluster_id: int) -> dict[str, object]:
    """A full resync. A live watch session re-lists in its own order, so it is asked to;
    otherwise the list runs here, under the cluster's lease."""
    cluster = _connected(cluster_id)
    if cluster is None:
        return {"skipped": "no enabled connection"}
    if lease.request_resync(cluster_id):
        return {"requested": "the live watch session re-lists"}
    settings = SyncSettings.load()
    owner = lease.new_owner("resync")
    if not lease.acquire(cluster_id, owner, settings.lease_seconds):
        return {"skipped": "another session holds the cluster"}
    try:
        session = ClusterSync(
            cluster,
            credentials_of(cluster.connection),
            settings,
            owner=owner,
            after_full_list=enqueue_figures,
        )
        return session.run_once().as_dict()
    except SyncConnectError as exc:
        return {"error": str(exc)}
    finally:
        lease.release(cluster_id, owner)


@shared_task(name="topology.watch_cluster")
def watch_cluster(cluster_id: int) -> dict[str, object]:
    """List, then watch for a session's length; then hand over to a fresh task.

    Bounded sessions let workers restart and deploy without losing a cluster: the next
    task (or the minute-by-minute housekeeping) takes the lease and lists again.
    """
    SyncLease.objects.filter(cluster_id=cluster_id).update(watch_enqueued_at=None)
    cluster = _connected(cluster_id)
    if cluster is None:
        return {"skipped": "no enabled connection"}
    settings = SyncSettings.load()
    owner = lease.new_owner("watch")
    if not lease.acquire(cluster_id, owner, settings.lease_seconds):
        return {"skipped": "already watched"}
    try:
        session = ClusterSync(
            cluster,
            credentials_of(cluster.connection),
            settings,
            owner=owner,
            after_full_list=enqueue_figures,
        )
        report = session.run_watch(duration=settings.session_seconds).as_dict()
        retry_in = None
    except SyncConnectError as exc:
        # Again in a minute (housekeeping would too, but beat may not be running).
        report, retry_in = {"error": str(exc)}, 60.0
    finally:
        lease.release(cluster_id, owner)
    enqueue_watch(cluster_id, delay=retry_in)
    return report


@shared_task(name="topology.recompute_figures")
def recompute_figures(cluster_id: int) -> int:
    """Derived per-node figures (free CPUs per zone, largest placeable pod) from the mirror,
    then `/metrics`' per-node part rendered for them (`observability.metrics.warm_metrics`)."""
    if not Cluster.objects.filter(pk=cluster_id).exists():
        return 0
    written = recompute_figures_service(cluster_id=cluster_id)
    warm_metrics()  # the next scrape finds the per-node part rendered (a shared cache)
    return written


@shared_task(name="topology.ensure_schedules")
def ensure_schedules() -> dict[str, int]:
    """Housekeeping, every minute: beat entries per cluster, a watch per cluster, the
    tasks of applies that look lost sent again (`recover_lost_applies`), mirrored
    pod events past their retention pruned (`prune_pod_events`), and tracked
    predictions past their window settled, old ones deleted (`prune_predictions`), and
    figures history past its retention deleted (`prune_history`)."""
    settings = SyncSettings.load()
    changed = ensure_schedules_service(
        resync_seconds=settings.resync_interval, figures_seconds=settings.figures_interval
    )
    started = 0
    for cluster_id in synced_cluster_ids():
        if not lease.live_owner(cluster_id) and _not_queued(cluster_id, settings):
            enqueue_watch(cluster_id)
            started += 1
    lost = recover_lost_applies()
    prune_pod_events()  # logs what it pruned
    prune_predictions()
    prune_history()
    requeue_lost_diagnoses()
    return {
        "schedules_changed": changed,
        "watches_started": started,
        "applies_requeued": lost.requeued,
        "applies_expired": lost.expired,
    }


@shared_task(name="topology.refresh_diagnoses")
def refresh_diagnoses(cluster_id: int) -> dict[str, object]:
    """Diagnose the cluster's Pending and rejected pods and check its topology data; many
    mirror writes share one run (`enqueue_diagnosis`)."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return {"skipped": "no such cluster"}
    done = refresh_diagnoses_service(cluster)
    return {"diagnoses": done.diagnoses, "findings": done.findings, "version": done.version}


@shared_task(name="topology.run_apply")
def run_apply(record_id: int) -> dict[str, object]:
    """Send one audited write-back (node policy, QoS ConfigMap, Reservation) to its
    cluster; a row already finished is left alone, so a repeated delivery writes once."""
    record = run_apply_service(record_id=record_id)
    if record is None:
        return {"skipped": "no such apply"}
    return {"status": record.status, "message": record.message}


def _connected(cluster_id: int) -> Cluster | None:
    cluster = Cluster.objects.select_related("connection").filter(pk=cluster_id).first()
    if cluster is None or not hasattr(cluster, "connection") or not cluster.connection.enabled:
        return None
    return cluster


def _not_queued(cluster_id: int, settings: SyncSettings) -> bool:
    """A watch task queued recently (and not started yet) will take the cluster."""
    queued = (
        SyncLease.objects.filter(cluster_id=cluster_id)
        .values_list("watch_enqueued_at", flat=True)
        .first()
    )
    if queued is None:
        return True
    return (timezone.now() - queued).total_seconds() > max(120.0, 2 * settings.lease_seconds)
