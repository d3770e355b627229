"""The Agreement page (issue 32): does the engine agree with where pods really landed?"""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from topology.access import Action, may, requires
from topology.figures.agreement import rate_history
from topology.figures.coremap import core_map, legend_entries
from topology.models import PodAgreement
from topology.selectors.agreement import agreement_rows, cpus_of_zones, rate_rows
from topology.selectors.common import page_notice
from topology.selectors.node_detail import node_detail
from topology.selectors.predictions import held_text, recent_predictions
from topology.services.audit.replay import APPROXIMATION
from topology.services.audit.summary import agreement_summary
from topology.views.common import get_cluster, page_context, query_without

PAGE_SIZE = 100


@requires(Action.READ_AGREEMENT)
def agreement(request: HttpRequest, cluster: str) -> HttpResponse:
    selected = get_cluster(cluster)
    summary = agreement_summary(selected)
    pods = agreement_rows(selected, request.GET)
    page = Paginator(pods.qs, PAGE_SIZE).get_page(request.GET.get("page"))
    figures = {"agreement-history": rate_history(summary["history"])} if summary["history"] else {}
    context = page_context(
        selected,
        "agreement",
        summary=summary,
        rates=rate_rows(summary["rates"]),
        pods=pods,
        page=page,
        page_notice=page_notice(request.GET.get("page"), page),
        page_query=query_without(request, "page"),
        figures=figures,
        may_read_predictions=may(request.user, Action.READ_PREDICTIONS),
        held_text=held_text(summary["predictions"]),
        predictions=(
            recent_predictions(selected) if may(request.user, Action.READ_PREDICTIONS) else []
        ),
    )
    return render(request, "topology/agreement.html", context)


@requires(Action.READ_AGREEMENT)
def agreement_pod(request: HttpRequest, cluster: str, namespace: str, name: str) -> HttpResponse:
    """One pod's audit: where it landed and where the engine would put it, side by side on
    the node's core map (a placement without a cpuset shows its NUMA zones' CPUs)."""
    selected = get_cluster(cluster)
    row = PodAgreement.objects.filter(cluster=selected, namespace=namespace, name=name).first()
    if row is None:
        raise Http404(f"no audit of pod {namespace}/{name} in cluster {selected.name}")
    body = row.body
    figures, legend = {}, []
    try:
        detail = node_detail(selected, row.node_name)
    except Http404:
        detail = None
    if detail is not None and detail.cpu_state.has_detail:
        state, names = detail.cpu_state, detail.zone_names
        maps = (
            ("real-map", body["real"], "where the pod landed"),
            ("engine-map", body["engine"], "where Topolens would put it"),
        )
        for key, placed, label in maps:
            cpus = placed.get("cpuset")
            if cpus is None:
                cpus = cpus_of_zones(state.cpus, placed.get("numa_zones") or ())
            figures[key] = core_map(state, names, highlight=cpus, highlight_label=label)
        legend = legend_entries(state)
    context = page_context(
        selected, "agreement", audit=row, body=body, figures=figures, legend=legend,
        has_map=bool(figures), approximation=APPROXIMATION,
    )  # fmt: skip
    return render(request, "topology/agreement_pod.html", context)
