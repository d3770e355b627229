"""Koordinator Reservations: a list (filterable by phase) and a detail page."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from topology.access import Action, requires
from topology.choices import ReservationPhase
from topology.selectors.reservations import reservation_detail, reservation_rows, reservations
from topology.views.common import get_cluster, page_context, query_without

PAGE_SIZE = 100


@requires(Action.READ_RESERVATIONS)
def reservation_list(request: HttpRequest, cluster: str) -> HttpResponse:
    selected = get_cluster(cluster)
    phase = request.GET.get("phase", "")
    page = Paginator(reservations(selected, phase), PAGE_SIZE).get_page(request.GET.get("page"))
    context = page_context(
        selected,
        "reservations",
        page=page,
        rows=reservation_rows(list(page.object_list)),
        phases=ReservationPhase,
        phase=phase,
        page_query=query_without(request, "page"),
    )
    return render(request, "topology/reservation_list.html", context)


@requires(Action.READ_RESERVATIONS)
def reservation_page(request: HttpRequest, cluster: str, name: str) -> HttpResponse:
    selected = get_cluster(cluster)
    row, conditions = reservation_detail(selected, name)
    context = page_context(selected, "reservations", row=row, conditions=conditions)
    return render(request, "topology/reservation_detail.html", context)
