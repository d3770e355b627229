"""Dashboard views: thin, they call selectors and render."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from topology.models import Cluster
from topology.selectors import clusters_with_counts, nodes_for_overview, zone_cpu


def overview(request: HttpRequest) -> HttpResponse:
    clusters = list(clusters_with_counts())
    selected = None
    if clusters:
        name = request.GET.get("cluster") or clusters[0].name
        selected = get_object_or_404(Cluster, name=name)
    rows = []
    if selected is not None:
        rows = [(node, zone_cpu(node)) for node in nodes_for_overview(selected)]
    context = {"clusters": clusters, "cluster": selected, "rows": rows}
    return render(request, "topology/overview.html", context)
