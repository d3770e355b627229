"""The home page (the first cluster's overview) and the cluster switcher."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.urls import reverse

from topology.access import Action, requires
from topology.models import Cluster
from topology.views.common import get_cluster, page_context

# The switcher keeps the reader on the same kind of page in the other cluster.
SECTIONS = {
    "overview": "topology:overview",
    "reservations": "topology:reservations",
    "qos": "topology:qos",
    "whatif": "topology:whatif",
}


@requires(Action.READ_CLUSTERS)
def home(request: HttpRequest) -> HttpResponse:
    first = Cluster.objects.order_by("name").first()
    if first is None:
        return render(request, "topology/empty.html", page_context(None, "overview"))
    return redirect("topology:overview", cluster=first.name)


@requires(Action.READ_CLUSTERS)
def switch_cluster(request: HttpRequest) -> HttpResponse:
    cluster = get_cluster(request.GET.get("cluster", ""))
    section = SECTIONS.get(request.GET.get("section", ""), SECTIONS["overview"])
    return redirect(reverse(section, kwargs={"cluster": cluster.name}))


def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask for /favicon.ico on every page, the admin's login page included. The
    static name is looked up per request: collected files carry a content hash."""
    return HttpResponsePermanentRedirect(static("topology/favicon.svg"))
