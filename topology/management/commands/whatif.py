"""manage.py whatif: where would this pod land, from kubectl dumps (no database) or the mirror."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from scheduler_api.engine import ProfileError, SchedulerProfile, format_cpuset
from topology.adapters import snapshot_from_objects
from topology.models import Cluster
from topology.parsers import ObjectParseError
from topology.parsers.scheduler_config import profiles_from_text
from topology.services.mirror.loading import LoadError, load_objects
from topology.services.whatif.question import (
    SCHEDULERS,
    SCORING_STRATEGIES,
    WhatIfInputError,
    WhatIfQuestion,
    parse_weights,
)
from topology.services.whatif.service import ask, judge_question, mirror_snapshot


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
        parser.add_argument(
            "--scheduler",
            default="auto",
            choices=SCHEDULERS,
            help="auto: the profile the pod's schedulerName picks, else the system whose "
            "labels the pod carries, else each node's own (ranked apart); a system name "
            "overrides the profile's system",
        )
        parser.add_argument(
            "--scheduler-name",
            default=None,
            help="the pod's schedulerName (overrides the manifest's); picks the profile",
        )
        parser.add_argument(
            "--scheduler-config",
            type=Path,
            default=None,
            metavar="FILE",
            help="KubeSchedulerConfiguration (or the ConfigMap holding it) whose profiles "
            "map schedulerNames to systems; with --cluster it replaces the stored ones",
        )
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
        question = WhatIfQuestion.from_inputs(
            pods[0],
            replicas=options["replicas"],
            scheduler=options["scheduler"],
            scoring=options["scoring"],
            weights=parse_weights(options["weights"]) or None,
            capacity=options["capacity"],
            scheduler_name=options["scheduler_name"],
        )
        profiles = profiles_file(options["scheduler_config"])
        if options["cluster"]:
            cluster = Cluster.objects.filter(name=options["cluster"]).first()
            if cluster is None:
                raise CommandError(f"no cluster named {options['cluster']!r} in the mirror")
            if profiles is None:
                return ask(cluster, question)
            return judge_question(mirror_snapshot(cluster), question, profiles=profiles)
        objects = [obj for path in options["objects"] for obj in load_objects(path)]
        snapshot = snapshot_from_objects(objects)
        return judge_question(snapshot, question, profiles=profiles or ())


def profiles_file(path: Path | None) -> tuple[SchedulerProfile, ...] | None:
    if path is None:
        return None
    try:
        return profiles_from_text(path.read_text(), source=path.name)
    except OSError as error:
        raise CommandError(f"{path}: {error.strerror}") from None
    except ProfileError as error:
        raise CommandError(f"{path}: {error}") from None


def _fits_text(node: dict[str, Any]) -> str:
    if node["fits"]:
        return "yes"
    return "rejected" if node.get("scheduler_fits") else "no"


def rule_set_counts(nodes: list[dict[str, Any]]) -> dict[str, int]:
    """How many nodes each of the answer's rule lists judged."""
    counts: dict[str, int] = {}
    for node in nodes:
        counts[node["rules"]] = counts.get(node["rules"], 0) + 1
    return counts


def table_lines(answer: dict[str, Any]) -> list[str]:
    """A table ranked within each system for people; the JSON is the contract."""
    judged = answer["judged_by"]
    age = answer["data_age_seconds"]
    lines = [
        f"judged by {judged['system']}"
        + (f" (profile {judged['profile']})" if judged["profile"] else "")
        + f", scoring {answer['scoring']}, data age "
        + ("unknown" if age is None else f"{age:.0f} s"),
        f"  {judged['how']}",
        *(f"  {rule}" for rule in judged.get("pod_level_resources", ())),
    ]
    header = (
        f"{'#':>3}  {'node':<28} {'system':<17} {'fits':<8} {'score':>5}  {'rules':<5} "
        f"{'zones':<8} cpuset"
    )
    rank, system = 0, None
    for node in answer["nodes"]:
        if node["system"] != system:
            system, rank = node["system"], 0
            lines += [f"-- judged by {system} (ranked among its own nodes)", header]
        rank += 1
        cpuset = format_cpuset(node["cpuset"]) if node["cpuset"] is not None else "-"
        zones = ",".join(map(str, node["numa_zones"])) or "-"
        score = "-" if node["score"] is None else str(node["score"])
        rules = node["rules"]
        lines.append(
            f"{rank:>3}  {node['node']:<28} {node['system']:<17} "
            f"{_fits_text(node):<8} {score:>5}  {rules:<5} {zones:<8} {cpuset}"
        )
        lines.extend(f"{'':>5}- {reason}" for reason in node["reasons"])
    lines.append("rules that judged the nodes (the rules column):")
    counts = rule_set_counts(answer["nodes"])
    for rule_set, rules in answer["rules"].items():
        count = counts.get(rule_set, 0)
        lines.append(f"  {rule_set} ({count} node{'s' if count != 1 else ''}):")
        lines.extend(f"    {rule}" for rule in rules)
    for group in answer["groups"]:
        placed = [p for p in group["placements"] if p["node"]]
        lines.append(
            f"{group['system']}: {group['fits']} nodes fit, {group['rejected_by_kubelet']} "
            f"bound then rejected by the kubelet; placed {len(placed)} of "
            f"{len(group['placements'])} replicas"
        )
    capacity = answer["capacity"]
    if capacity is None:
        lines.append("capacity: not counted (--no-capacity)")
    else:
        lines.append(f"capacity: {capacity['total']} more fit in total")
    return lines
