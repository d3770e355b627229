"""Koordinator Reservations: a list (filterable by phase) and a detail page."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from topology.access import Action, requires
from topology.selectors.common import page_notice
from topology.selectors.reservations import reservation_detail, reservation_rows, reservations
from topology.views.common import get_cluster, page_context, query_without

PAGE_SIZE = 100


@requires(Action.READ_RESERVATIONS)
def reservation_list(request: HttpRequest, cluster: str) -> HttpResponse:
    selected = get_cluster(cluster)
    filterset = reservations(selected, request.GET)
    page = Paginator(filterset.qs, PAGE_SIZE).get_page(request.GET.get("page"))
    context = page_context(
        selected,
        "reservations",
        filterset=filterset,
        page=page,
        page_notice=page_notice(request.GET.get("page"), page),
        rows=reservation_rows(list(page.object_list)),
        page_query=query_without(request, "page"),
    )
    return render(request, "topology/reservation_list.html", context)


@requires(Action.READ_RESERVATIONS)
def reservation_page(request: HttpRequest, cluster: str, name: str) -> HttpResponse:
    selected = get_cluster(cluster)
    row, conditions = reservation_detail(selected, name)
    context = page_context(selected, "reservations", row=row, conditions=conditions)
    return render(request, "topology/reservation_detail.html", context)
