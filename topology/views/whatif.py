"""What-if placement: the form, the ranked answer with the would-be-picked cores, and
the same pod under each scheduler side by side. Both pages are GET forms, so the
inputs live in the URL and an answer can be shared; a bad input is a form error."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from topology.access import Action, requires
from topology.figures.coremap import core_map, legend_entries
from topology.forms.whatif import WhatIfForms
from topology.services.audit.predictions import MatchKeys, record_prediction, window_text
from topology.services.observability.metrics import WHATIF_REQUESTS, WHATIF_SECONDS
from topology.services.rate_limits import Decision, take
from topology.services.whatif.compare import compare_page
from topology.services.whatif.page import NodeFocus, whatif_page
from topology.services.whatif.service import WhatIfInputError, ask
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
            with WHATIF_SECONDS.labels("dashboard").time():
                result = whatif_page(
                    cluster=selected,
                    question=forms.question(),
                    page_number=request.GET.get("page"),
                    cores=request.GET.get("cores") or None,
                )
            WHATIF_REQUESTS.labels("dashboard").inc()
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
        track_window=window_text(),
        track_target=MatchKeys.of_manifest(result.question.pod).text if result else "",
        **extra,
        **_links(request),
    )
    return render(request, "topology/whatif.html", context)


@requires(Action.RUN_WHATIF)
@require_POST
def whatif_track(request: HttpRequest, cluster: str) -> HttpResponse:
    """Track the what-if whose form query the page posts (`query`): the same question is
    answered again (from the answer cache when the mirror did not change), its prediction
    stored for follow-up (`services.audit.predictions`), and the page shown again."""
    selected = get_cluster(cluster)
    query = QueryDict(request.POST.get("query", ""))
    forms = WhatIfForms(query)
    back = f"{reverse('topology:whatif', args=[selected.name])}?{query.urlencode()}"
    if not forms.is_valid():
        messages.error(request, "Nothing tracked: the question has errors (shown below).")
        return redirect(back)
    decision = throttled(request)
    if not decision.allowed:
        return too_many(decision)
    try:
        question = forms.question()
        answer = ask(selected, question)
    except WhatIfInputError:
        messages.error(request, "Nothing tracked: the question has errors (shown below).")
        return redirect(back)
    row = record_prediction(
        cluster=selected, question=question, answer=answer, user=request.user, source="dashboard"
    )
    messages.success(
        request,
        f"Prediction {row.pk} is tracked: pods of {row.matched_by} that land by "
        f"{row.expires_at:%Y-%m-%d %H:%M} UTC are compared with it (Agreement page).",
    )
    return redirect(back)


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
