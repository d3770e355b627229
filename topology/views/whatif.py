"""What-if placement: the form, the ranked answer with the would-be-picked cores, and
the same pod under each scheduler side by side. Both pages are GET forms, so the
inputs live in the URL and an answer can be shared; a bad input is a form error."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from topology.access import Action, requires
from topology.figures.coremap import core_map, legend_entries
from topology.forms.whatif import WhatIfForms
from topology.services.rate_limits import Decision, take
from topology.services.whatif.compare import compare_page
from topology.services.whatif.page import NodeFocus, whatif_page
from topology.services.whatif.service import WhatIfInputError
from topology.views.common import get_cluster, page_context, query_without


def cores_figures(focus: NodeFocus | None) -> dict[str, go.Figure]:
    if focus is None or not focus.state.has_detail:
        return {}
    return {"core-map": core_map(focus.state, focus.zone_names, highlight=focus.highlight)}


def _links(request: HttpRequest) -> dict[str, str]:
    """Query strings that keep the question and change one thing."""
    return {
        "question_query": query_without(request, "page", "cores"),
        "cores_query": query_without(request, "cores"),
        "page_query": query_without(request, "page"),
        "compare_query": query_without(request, "page", "cores", "scheduler"),
    }


def throttled(request: HttpRequest) -> Decision:
    """The what-if's rate limit, the API's counter for the same user (`rate_limits`)."""
    return take("whatif", f"user-{request.user.pk}")


def too_many(decision: Decision) -> HttpResponse:
    message = (
        "Too many what-ifs: the same per-user limit as the API applies "
        f"({settings.API_THROTTLE_RATES['whatif']}). Try again in {decision.retry_after} s."
    )
    response = HttpResponse(message, status=429, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(decision.retry_after)
    return response


@requires(Action.RUN_WHATIF)
def whatif(request: HttpRequest, cluster: str) -> HttpResponse:
    selected = get_cluster(cluster)
    forms = WhatIfForms(request.GET)
    result = None
    if forms.is_valid():
        decision = throttled(request)
        if not decision.allowed:
            return too_many(decision)
        try:
            result = whatif_page(
                cluster=selected,
                question=forms.question(),
                page_number=request.GET.get("page"),
                cores=request.GET.get("cores") or None,
            )
        except WhatIfInputError as error:
            forms.add_input_errors(error)
    focus = result.cores if result else None
    extra: dict[str, Any] = {"legend": legend_entries(focus.state)} if focus else {}
    context = page_context(
        selected,
        "whatif",
        forms=forms,
        result=result,
        figures=cores_figures(focus),
        **extra,
        **_links(request),
    )
    return render(request, "topology/whatif.html", context)


@requires(Action.RUN_WHATIF)
def whatif_compare(request: HttpRequest, cluster: str) -> HttpResponse:
    selected = get_cluster(cluster)
    forms = WhatIfForms(request.GET)
    result = None
    if forms.is_valid():
        decision = throttled(request)
        if not decision.allowed:
            return too_many(decision)
        try:
            result = compare_page(cluster=selected, question=forms.question())
        except WhatIfInputError as error:
            forms.add_input_errors(error)
    context = page_context(selected, "whatif", forms=forms, result=result, **_links(request))
    return render(request, "topology/whatif_compare.html", context)
