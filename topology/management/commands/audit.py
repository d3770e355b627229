"""manage.py audit: does the engine agree with where pods really landed? From kubectl
dumps (no database) or a cluster's mirror (issue 32)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from topology.management.commands.diagnose import add_source_arguments, facts_of_options
from topology.services.audit.replay import audit_pods
from topology.services.audit.report import audit_report
from topology.services.mirror.loading import LoadError


class Command(BaseCommand):
    help = (
        "Replay every running pod whose placement is published on its node as it was just "
        "before the pod arrived, and say whether the engine agrees: the node feasible, "
        "the same NUMA zones, the same cpuset."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        add_source_arguments(parser, "pods, nodes, NRTs (Reservations, ...)")
        parser.add_argument("--format", choices=("json", "table"), default="json")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            facts = facts_of_options(options, self.stderr)
        except LoadError as error:
            raise CommandError(str(error)) from None
        report = audit_report(audit_pods(facts), data_age_seconds=facts.data_age_seconds)
        if options["format"] == "json":
            self.stdout.write(json.dumps(report, indent=2))
        else:
            self.stdout.write("\n".join(table_lines(report)))


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "-"


def table_lines(report: dict[str, Any]) -> list[str]:
    """A reading for people; the JSON is the contract."""
    age = report["data_age_seconds"]
    lines = [f"data age: {'unknown (a dump)' if age is None else f'{age:.0f} s'}", ""]
    lines.append(f"{'system':<20}{'judged':>8}{'agree':>8}{'rate':>9}{'node':>6}"
                 f"{'zones':>7}{'cpuset':>8}{'not judgeable':>15}")  # fmt: skip
    for system, rate in report["rates"].items():
        lines.append(
            f"{system:<20}{rate['judged']:>8}{rate['agree']:>8}"
            f"{_percent(rate['agree'], rate['judged']):>9}{rate['node_infeasible']:>6}"
            f"{rate['zones_differ']:>7}{rate['cpuset_differs']:>8}{rate['not_judgeable']:>15}"
        )
    lines.append("")
    for pod in report["pods"]:
        if pod["verdict"] == "agree":
            continue
        what = ", ".join(pod["differs"]) or pod["why"]
        lines.append(f"{pod['namespace']}/{pod['name']} on {pod['node']} "
                     f"[{pod['system'] or '-'}]: {pod['verdict']} ({what})")  # fmt: skip
    lines.append("")
    lines.append(f"note: {report['approximation']}")
    return lines
