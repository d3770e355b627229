"""manage.py whatif: where would this pod land, from kubectl dumps (no database) or the mirror."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from scheduler_api.engine.results import format_cpuset
from topology.adapters import snapshot_from_objects
from topology.models import Cluster
from topology.parsers import ObjectParseError
from topology.services.loading import LoadError, load_objects
from topology.services.whatif import (
    SCHEDULERS,
    SCORING_STRATEGIES,
    WhatIfInputError,
    parse_weights,
    run_on_snapshot,
    run_whatif,
)


class Command(BaseCommand):
    help = (
        "Simulate placing a pod: rank every node with its verdict, score, NUMA zones, cpuset "
        "and reasons; place --replicas copies one after another and count how many fit."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        source = parser.add_mutually_exclusive_group(required=True)
        dumps = "kubectl -o json/yaml dumps of nodes, pods, NRTs and reservations"
        source.add_argument("--objects", nargs="+", type=Path, metavar="FILE", help=dumps)
        source.add_argument("--cluster", help="use this cluster's mirror instead")
        parser.add_argument("--pod", required=True, type=Path, help="Pod manifest (JSON or YAML)")
        parser.add_argument("--replicas", type=int, default=1)
        parser.add_argument("--scheduler", default="auto", choices=SCHEDULERS)
        parser.add_argument("--scoring", choices=SCORING_STRATEGIES, default=None)
        parser.add_argument("--weights", default="", help="resource weights, e.g. cpu=1,memory=2")
        parser.add_argument(
            "--no-capacity",
            dest="capacity",
            action="store_false",
            help="do not count how many more copies each node could take (capacity: null)",
        )
        parser.add_argument("--format", choices=("json", "table"), default="json")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            answer = self._run(options)
        except (LoadError, ObjectParseError, WhatIfInputError) as error:
            raise CommandError(str(error)) from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(answer, indent=2))
        else:
            self.stdout.write("\n".join(table_lines(answer)))

    def _run(self, options: dict[str, Any]) -> dict[str, Any]:
        pods = load_objects(options["pod"])
        if len(pods) != 1:
            raise CommandError(f"{options['pod']}: expected one Pod, found {len(pods)} objects")
        settings = {
            "replicas": options["replicas"],
            "scheduler": options["scheduler"],
            "scoring": options["scoring"],
            "weights": parse_weights(options["weights"]) or None,
            "capacity": options["capacity"],
        }
        if options["cluster"]:
            cluster = Cluster.objects.filter(name=options["cluster"]).first()
            if cluster is None:
                raise CommandError(f"no cluster named {options['cluster']!r} in the mirror")
            return run_whatif(cluster=cluster, pod=pods[0], **settings)
        objects = [obj for path in options["objects"] for obj in load_objects(path)]
        return run_on_snapshot(snapshot_from_objects(objects), pods[0], **settings)


def table_lines(answer: dict[str, Any]) -> list[str]:
    """A ranked table for people; the JSON is the contract."""
    lines = [f"scheduler {answer['scheduler']}, scoring {answer['scoring']}"]
    header = f"{'#':>3}  {'node':<28} {'system':<17} {'fits':<4} {'score':>5}  {'zones':<8} cpuset"
    lines.append(header)
    for rank, node in enumerate(answer["nodes"], 1):
        cpuset = format_cpuset(node["cpuset"]) if node["cpuset"] is not None else "-"
        zones = ",".join(map(str, node["numa_zones"])) or "-"
        score = "-" if node["score"] is None else str(node["score"])
        lines.append(
            f"{rank:>3}  {node['node']:<28} {node['system']:<17} "
            f"{'yes' if node['fits'] else 'no':<4} {score:>5}  {zones:<8} {cpuset}"
        )
        lines.extend(f"{'':>5}- {reason}" for reason in node["reasons"])
    placed = [p for p in answer["placements"] if p["node"]]
    lines.append(f"placed {len(placed)} of {len(answer['placements'])} replicas")
    capacity = answer["capacity"]
    if capacity is None:
        lines.append("capacity: not counted (--no-capacity)")
    else:
        lines.append(f"capacity: {capacity['total']} more fit in total")
    return lines
