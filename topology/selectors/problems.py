"""What the Problems page and the node page read of the stored
diagnoses and findings (`topology.services.diagnosis.refresh` writes them)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.db.models import Count, Q, QuerySet
from django.db.models.fields.json import KeyTransform

from topology.choices import DiagnosisState, FindingKind
from topology.filtersets import DiagnosisFilterSet, FindingFilterSet
from topology.models import Cluster, Finding, Pod, PodDiagnosis
from topology.services.mirror.exporter import pod_object

FINDINGS_PREFIX = "f"  # the findings filter's query parameters: f-kind, f-severity, f-node


def diagnoses(cluster: Cluster, query: Mapping[str, Any]) -> DiagnosisFilterSet:
    """The page's rows: of each body only what the table shows (`profile`, `nearest`,
    `fits_on`), not the whole diagnosis (events, refusals, admission)."""
    rows = (
        PodDiagnosis.objects.filter(cluster=cluster)
        .defer("body")
        .annotate(
            profile=KeyTransform("profile", KeyTransform("judged_by", "body")),
            nearest=KeyTransform("nearest", "body"),
            fits_on=KeyTransform("fits_on", "body"),
        )
        .order_by("state", "namespace", "name")
    )
    return DiagnosisFilterSet(query, queryset=rows)


def findings(cluster: Cluster, query: Mapping[str, Any]) -> FindingFilterSet:
    rows = Finding.objects.filter(cluster=cluster).order_by("kind", "node_name", "object")
    return FindingFilterSet(query, queryset=rows, prefix=FINDINGS_PREFIX)


FINDINGS_SHOWN = 50  # per kind on the Problems page; the API lists them all


@dataclass(frozen=True)
class FindingGroup:
    kind: str
    label: str
    findings: list[Finding]  # the first FINDINGS_SHOWN of the kind
    total: int

    @property
    def cut(self) -> bool:
        return self.total > len(self.findings)


def grouped(rows: QuerySet[Finding], shown: int = FINDINGS_SHOWN) -> list[FindingGroup]:
    """Findings by kind, in the order the README explains the kinds, the first `shown`
    of each (a cluster-wide problem can give a finding per node: 5,000 rows would make
    the page slow and no easier to read; the filter and the API reach every one)."""
    totals = dict(rows.order_by().values_list("kind").annotate(count=Count("id")))
    labels = dict(FindingKind.choices)
    return [
        FindingGroup(
            kind,
            labels.get(kind, kind),
            list(rows.filter(kind=kind).defer("evidence")[:shown]),
            totals[kind],
        )
        for kind in FindingKind.values
        if totals.get(kind)
    ]


def node_problems(cluster: Cluster, node: str) -> tuple[list[Finding], list[dict[str, Any]]]:
    """A node's findings, and the diagnosed pods about it: rejected there, or nearest
    to fitting there. Of each diagnosis only its nearest misses are read, not its body."""
    found = list(Finding.objects.filter(cluster=cluster, node_name=node).order_by("kind", "object"))
    rows = (
        PodDiagnosis.objects.filter(cluster=cluster)
        .filter(Q(node_name=node) | Q(state=DiagnosisState.PENDING))
        .order_by("namespace", "name")
        .values("namespace", "name", "node_name", "reason", nearest=KeyTransform("nearest", "body"))
    )
    pods = [
        row
        for row in rows
        if row["node_name"] == node or any(m.get("node") == node for m in row["nearest"] or [])
    ]
    return found, pods


def whatif_query(cluster: Cluster, namespace: str, name: str) -> str | None:
    """The what-if form's query asking for this pod again (its manifest, unbound)."""
    pod = Pod.objects.filter(cluster=cluster, namespace=namespace, name=name).first()
    if pod is None:
        return None
    manifest = pod_object(pod)
    manifest["spec"].pop("nodeName", None)
    manifest.pop("status", None)
    return urlencode({"manifest": json.dumps(manifest)})
