"""manage.py import_objects --cluster NAME FILE...: upsert kubectl JSON / YAML into the mirror."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from topology.models import Cluster
from topology.services.mirror.figures import recompute_figures
from topology.services.mirror.importer import import_objects
from topology.services.mirror.loading import LoadError, load_objects


class Command(BaseCommand):
    help = (
        "Import `kubectl get ... -o json` output (a List or one object) or multi-document "
        "YAML into a cluster's mirror, creating the cluster if needed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cluster", required=True, help="cluster name (created if new)")
        parser.add_argument("files", nargs="+", type=Path, metavar="FILE")

    def handle(self, *args: Any, cluster: str, files: list[Path], **options: Any) -> None:
        objects: list[dict[str, Any]] = []
        try:
            for path in files:
                objects.extend(load_objects(path))
        except LoadError as exc:
            raise CommandError(str(exc)) from None
        summary = import_objects(cluster_name=cluster, objects=objects)
        for line in summary.lines():
            self.stdout.write(line)
        for error in summary.errors:
            self.stderr.write(f"error: {error}")
        self.stdout.write(
            f"cluster {cluster}: {summary.total('created')} created, "
            f"{summary.total('updated')} updated, {summary.total('unchanged')} unchanged, "
            f"{summary.total('removed')} removed, {len(summary.errors)} errors"
        )
        stored = Cluster.objects.filter(name=cluster).first()
        if stored is not None:
            recompute_figures(cluster_id=stored.pk)
        if not summary.ok:
            raise CommandError(f"{len(summary.errors)} object(s) failed to import")
