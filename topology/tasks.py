"""Celery tasks: thin interfaces that take plain arguments and call services."""

from __future__ import annotations

from pathlib import Path

from celery import shared_task

from topology.services.importer import import_objects
from topology.services.loading import load_objects


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
