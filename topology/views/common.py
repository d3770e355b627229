"""What every dashboard page shares: the cluster, the switcher and the data age."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404

from topology.models import Cluster
from topology.selectors.clusters import clusters_for_switcher, data_age

JSON_HEADERS = {"Cache-Control": "no-store"}
LIVE_INTERVAL_SECONDS = 15


def get_cluster(name: str) -> Cluster:
    return get_object_or_404(Cluster, name=name)


def page_context(cluster: Cluster | None, section: str, **extra: Any) -> dict[str, Any]:
    """The base template's needs: clusters for the switcher, the section, the data age.

    Pages about every cluster (sync health) keep the navigation of the first one.
    """
    clusters = list(clusters_for_switcher())
    nav_cluster = cluster or (clusters[0] if clusters else None)
    return {
        "clusters": clusters,
        "cluster": cluster,
        "nav_cluster": nav_cluster,
        "section": section,
        "data_age": data_age(cluster) if cluster is not None else None,
        "live_interval": LIVE_INTERVAL_SECONDS,
        **extra,
    }


def json_response(body: str) -> HttpResponse:
    return HttpResponse(body, content_type="application/json", headers=JSON_HEADERS)


def query_without(request: HttpRequest, *names: str) -> str:
    """The current query string minus `names`, for links that change one parameter."""
    params = request.GET.copy()
    for name in names:
        params.pop(name, None)
    return params.urlencode()
