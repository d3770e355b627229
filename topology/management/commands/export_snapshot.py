"""manage.py export_snapshot --cluster NAME [-o FILE]: the mirror as a Kubernetes List."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from topology.models import Cluster
from topology.services.mirror.exporter import stream_list_json


class Command(BaseCommand):
    help = "Write a cluster's mirror as a Kubernetes v1 List (JSON) to stdout or a file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cluster", required=True)
        parser.add_argument("-o", "--output", type=Path, help="file to write (default stdout)")

    def handle(self, *args: Any, cluster: str, output: Path | None, **options: Any) -> None:
        found = Cluster.objects.filter(name=cluster).first()
        if found is None:
            known = ", ".join(Cluster.objects.values_list("name", flat=True)) or "none"
            raise CommandError(f"no cluster named {cluster!r} (known: {known})")
        if output is None:
            for chunk in stream_list_json(found):
                sys.stdout.write(chunk)
            return
        tmp = output.with_suffix(output.suffix + ".tmp")
        with tmp.open("w") as handle:
            for chunk in stream_list_json(found):
                handle.write(chunk)
        tmp.replace(output)
        self.stderr.write(f"wrote {output}")
