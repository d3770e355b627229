"""The cluster overview page and the JSON its live refresh polls."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils import timezone

from topology.access import Action, requires
from topology.figures.encode import payload_json
from topology.figures.history import trend_chart
from topology.figures.overview import free_distribution, zone_heatmap
from topology.filtersets import has_legacy_names, with_current_names
from topology.selectors.overview import overview_data
from topology.services.observability.history import HistoryRange, cluster_history
from topology.views.common import get_cluster, json_response, page_context, query_without

SORTABLE = (
    ("name", "Node"),
    ("flavour", "Flavour"),
    ("policy", "Policy / scope"),
    ("max_free_cpus_in_one_zone", "Most free in one zone"),
    ("largest_exclusive_pod", "Largest exclusive pod"),
    ("nrt_changed", "NRT changed"),
)
"""Column headers, by the `ordering` names the API uses too."""
NUMERIC_COLUMNS = frozenset({"max_free_cpus_in_one_zone", "largest_exclusive_pod"})
PARTIALS = {
    "overview-summary": "topology/partials/overview_summary.html",
    "node-table": "topology/partials/node_table.html",
}


def sort_links(request: HttpRequest) -> list[dict[str, object]]:
    """Column headers that sort by their column, and flip the order when already sorted by it."""
    current = with_current_names(request.GET).get("ordering", "")
    base = query_without(request, "page", "sort", "ordering")
    links = []
    for key, label in SORTABLE:
        aria = {key: "ascending", f"-{key}": "descending"}.get(current, "none")
        target = f"-{key}" if current == key else key
        href = f"?{base}&ordering={target}" if base else f"?ordering={target}"
        numeric = key in NUMERIC_COLUMNS
        links.append({"label": label, "href": href, "aria": aria, "numeric": numeric})
    return links


def _context(request: HttpRequest, cluster_name: str) -> dict[str, Any]:
    cluster = get_cluster(cluster_name)
    data = overview_data(cluster, request.GET)
    return page_context(
        cluster,
        "overview",
        data=data,
        figures={
            "zone-heatmap": zone_heatmap(data.rows),
            "free-distribution": free_distribution(data.summary.distribution),
        },
        page_query=query_without(request, "page"),
        sort_links=sort_links(request),
        live_query=request.GET.urlencode(),
    )


@requires(Action.READ_NODES)
def overview(request: HttpRequest, cluster: str) -> HttpResponse:
    if has_legacy_names(request.GET):
        # a link kept from before the names were the API's: the same page, new names
        return HttpResponseRedirect(f"{request.path}?{with_current_names(request.GET).urlencode()}")
    context = _context(request, cluster)
    samples = cluster_history(context["cluster"], HistoryRange.for_chart())
    if samples:  # not in the live refresh: the trend moves once per figures run
        context["figures"]["trend"] = trend_chart(samples)
    context["trend_points"] = len(samples)
    context["history_days"] = settings.TOPOLENS_HISTORY_DAYS
    return render(request, "topology/overview.html", context)


@requires(Action.READ_NODES)
def overview_live(request: HttpRequest, cluster: str) -> HttpResponse:
    context = _context(request, cluster)
    html = {key: render_to_string(name, context, request) for key, name in PARTIALS.items()}
    html["data-age"] = render_to_string("topology/partials/data_age.html", context, request)
    data = {"html": html, "generated_at": timezone.now()}
    return json_response(payload_json(context["figures"], data))
