"""One node: the core map (or per-zone counts), zone bars, pods, policies, raw objects."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils import timezone

from topology.access import Action, requires
from topology.choices import CPUState
from topology.figures.coremap import core_map, legend_entries
from topology.figures.encode import payload_json
from topology.figures.history import zone_sparklines
from topology.figures.zones import zone_bars
from topology.selectors.node_detail import mark_pods, node_detail
from topology.selectors.problems import node_problems
from topology.services.observability.history import node_history, retention
from topology.views.common import get_cluster, json_response, page_context

PARTIALS = {
    "core-legend": "topology/partials/core_legend.html",
    "zone-counts": "topology/partials/zone_counts.html",
    "node-pods": "topology/partials/node_pods.html",
}


def _context(cluster_name: str, node_name: str) -> dict[str, Any]:
    cluster = get_cluster(cluster_name)
    detail = node_detail(cluster, node_name)
    legend = legend_entries(detail.cpu_state)
    marks = {e.label: (e.code, e.colour) for e in legend if e.state is CPUState.EXCLUSIVE}
    figures = {"zone-bars": zone_bars(detail.row.zones)}
    if detail.cpu_state.has_detail:
        figures["core-map"] = core_map(detail.cpu_state, detail.zone_names)
    node_findings, node_diagnoses = node_problems(cluster, node_name)
    return page_context(
        cluster,
        "overview",
        detail=detail,
        legend=legend,
        pods=mark_pods(detail.pods, marks),
        cpu_states=list(CPUState),
        figures=figures,
        node_findings=node_findings,
        node_diagnoses=node_diagnoses,
    )


@requires(Action.READ_NODE_TOPOLOGY)
def node_page(request: HttpRequest, cluster: str, node: str) -> HttpResponse:
    context = _context(cluster, node)
    since = timezone.now() - retention()
    samples = node_history(context["detail"].node.pk, since)
    if samples:  # not in the live refresh: an hourly series
        context["figures"]["zone-sparklines"] = zone_sparklines(samples)
    context["history_hours"] = len(samples)
    return render(request, "topology/node_detail.html", context)


@requires(Action.READ_NODE_TOPOLOGY)
def node_live(request: HttpRequest, cluster: str, node: str) -> HttpResponse:
    context = _context(cluster, node)
    html = {key: render_to_string(name, context, request) for key, name in PARTIALS.items()}
    html["data-age"] = render_to_string("topology/partials/data_age.html", context, request)
    data = {"html": html, "generated_at": timezone.now()}
    return json_response(payload_json(context["figures"], data))
