"""manage.py diagnose: why pods are Pending or rejected, and whether the topology data is
true, from kubectl dumps (no database) or a cluster's mirror."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import (
    BaseCommand,
    CommandError,
    CommandParser,
    OutputWrapper,
)

from topology.management.commands.whatif import profiles_file
from topology.models import Cluster
from topology.services.diagnosis.facts import ClusterFacts
from topology.services.diagnosis.mirror import facts_from_mirror
from topology.services.diagnosis.offline import facts_from_objects
from topology.services.diagnosis.report import UnknownPod, diagnosis_report
from topology.services.mirror.loading import LoadError, load_objects


class Command(BaseCommand):
    help = (
        "Diagnose every Pending pod and every pod the kubelet rejected (which scheduler "
        "judges it, where it fits now, why nodes refuse it, the nearest misses, the "
        "kubelet's admission replayed) and check the published topology data."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        add_source_arguments(parser, "pods (with status), events, nodes, NRTs")
        parser.add_argument("--pod", default=None, metavar="NAMESPACE/NAME", help="one pod only")
        parser.add_argument("--format", choices=("json", "table"), default="json")

    def handle(self, *args: Any, **options: Any) -> None:
        pod = options["pod"]
        if pod is not None and pod.count("/") != 1:
            raise CommandError(f"--pod {pod!r}: expected NAMESPACE/NAME")
        try:
            report = diagnosis_report(self._facts(options), only=pod)
        except (LoadError, UnknownPod) as error:
            raise CommandError(str(error)) from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(report, indent=2))
        else:
            self.stdout.write("\n".join(table_lines(report)))

    def _facts(self, options: dict[str, Any]) -> ClusterFacts:
        return facts_of_options(options, self.stderr)


def add_source_arguments(parser: CommandParser, dumped: str) -> None:
    """--objects FILE... | --cluster NAME, and --scheduler-config (`facts_of_options`
    reads them); `dumped`: what the dumps hold."""
    source = parser.add_mutually_exclusive_group(required=True)
    dumps = f"kubectl -o json/yaml dumps: {dumped}"
    source.add_argument("--objects", nargs="+", type=Path, metavar="FILE", help=dumps)
    source.add_argument("--cluster", help="use this cluster's mirror instead")
    parser.add_argument(
        "--scheduler-config",
        type=Path,
        default=None,
        metavar="FILE",
        help="KubeSchedulerConfiguration whose profiles map schedulerNames to systems "
        "(with --objects; a cluster uses its stored profiles)",
    )


def facts_of_options(options: dict[str, Any], stderr: OutputWrapper) -> ClusterFacts:
    """The facts `--cluster` (the mirror) or `--objects` (dumps, with
    `--scheduler-config`) name; objects a dump could not read are said on `stderr`.
    `manage.py audit` reads the same options."""
    if options["cluster"]:
        cluster = Cluster.objects.filter(name=options["cluster"]).first()
        if cluster is None:
            raise CommandError(f"no cluster named {options['cluster']!r} in the mirror")
        return facts_from_mirror(cluster)
    objects = [obj for path in options["objects"] for obj in load_objects(path)]
    loaded = facts_from_objects(objects, profiles=profiles_file(options["scheduler_config"]) or ())
    for error in loaded.errors:
        stderr.write(f"skipped: {error}")
    return loaded.facts


def table_lines(report: dict[str, Any]) -> list[str]:
    """A reading for people; the JSON is the contract."""
    age = report["data_age_seconds"]
    lines = [f"data age: {'unknown (a dump)' if age is None else f'{age:.0f} s'}"]
    for pod in report["pods"]:
        lines.append(
            f"{pod['namespace']}/{pod['name']}: {pod['state']} ({pod['reason'] or 'no reason'}), "
            f"judged by {pod['scheduler'] or '-'}, fits on {pod['fits_now']} nodes now"
            + (" [stale data]" if pod["stale_data"] else "")
        )
        if pod["why"]:
            lines.append(f"    {pod['why']}")
        if pod.get("fits_on"):
            lines.append(f"    fits now on: {', '.join(pod['fits_on'])} (best first)")
        lines += [
            f"    refused by {r['check']} on {r['nodes']} node{'s' if r['nodes'] != 1 else ''}, "
            f"e.g. {r['example']}"
            for r in pod["refusals"]
        ]
        lines += [f"    nearest: {m['change']}" for m in pod["nearest"]]
        if pod["alignment_only"]:
            lines.append("    the amounts are there, not aligned on one NUMA zone")
        admission = pod["admission"]
        if admission:
            lines.append(f"    kubelet on {admission['node']} ({admission.get('policy')}):")
            lines += [
                f"      {p['resource']}: {len(p['hints'])} hints, "
                + ("accepted" if p["accepted"] else "NONE THE POLICY ACCEPTS")
                for p in admission["providers"]
            ]
    lines.append(f"findings: {len(report['findings'])}")
    lines += [
        f"  [{f['severity']}] {f['kind']} {f['node'] or f['object'] or ''}: {f['message']}"
        for f in report["findings"]
    ]
    return lines
