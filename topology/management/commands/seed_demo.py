"""manage.py seed_demo: generate a realistic cluster and import it through the real parsers."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from topology.demo import generate_demo_objects
from topology.models import Cluster
from topology.services.diagnosis.refresh import refresh_diagnoses
from topology.services.mirror.figures import recompute_figures
from topology.services.mirror.importer import import_objects
from topology.services.observability.history import seed_demo_history


class Command(BaseCommand):
    help = (
        "Generate a demo cluster as real Kubernetes objects (deterministic for a seed) and "
        "import it like any kubectl dump."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cluster", default="demo")
        parser.add_argument("--nodes", type=int, default=40)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--if-empty", action="store_true", help="do nothing when any cluster is mirrored"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["if_empty"] and Cluster.objects.exists():
            self.stdout.write("a cluster is already mirrored; not seeding the demo again")
            return
        try:
            objects = generate_demo_objects(
                nodes=options["nodes"], seed=options["seed"], cluster=options["cluster"]
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        summary = import_objects(cluster_name=options["cluster"], objects=objects)
        for line in summary.lines():
            self.stdout.write(line)
        if not summary.ok:
            for error in summary.errors:
                self.stderr.write(f"error: {error}")
            raise CommandError("the demo generator produced objects the parsers refused")
        seeded = Cluster.objects.get(name=options["cluster"])
        figures = recompute_figures(cluster_id=seeded.pk)
        self.stdout.write(f"figures recomputed for {figures} nodes")
        past = seed_demo_history(seeded, seed=options["seed"])
        self.stdout.write(f"a plausible past of {past} figure samples written (synthetic)")
        diagnosed = refresh_diagnoses(seeded)
        self.stdout.write(f"diagnosed {diagnosed.diagnoses} pods, {diagnosed.findings} findings")
        cluster, nodes, seed = options["cluster"], options["nodes"], options["seed"]
        self.stdout.write(f"seeded cluster {cluster!r}: {nodes} nodes, seed {seed}")
