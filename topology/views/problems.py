"""The Problems page (Pending and rejected pods, data-truth findings) and a pod's diagnosis."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.dateparse import parse_datetime

from topology.access import Action, requires
from topology.selectors.common import page_notice
from topology.selectors.problems import diagnoses, findings, grouped, whatif_query
from topology.services.diagnosis.lookup import NoSuchPod, NothingToDiagnose, pod_diagnosis
from topology.views.common import get_cluster, page_context, query_without

PAGE_SIZE = 100


@requires(Action.READ_DIAGNOSES)
def problems(request: HttpRequest, cluster: str) -> HttpResponse:
    selected = get_cluster(cluster)
    pods = diagnoses(selected, request.GET)
    found = findings(selected, request.GET)
    groups = grouped(found.qs)
    page = Paginator(pods.qs, PAGE_SIZE).get_page(request.GET.get("page"))
    context = page_context(
        selected,
        "problems",
        pods=pods,
        findings=found,
        groups=groups,
        finding_count=sum(group.total for group in groups),
        page=page,
        page_notice=page_notice(request.GET.get("page"), page),
        page_query=query_without(request, "page"),
    )
    return render(request, "topology/problems.html", context)


@requires(Action.READ_DIAGNOSES)
def pod_diagnosis_page(
    request: HttpRequest, cluster: str, namespace: str, name: str
) -> HttpResponse:
    selected = get_cluster(cluster)
    try:
        diagnosis = pod_diagnosis(selected, namespace, name)
    except (NoSuchPod, NothingToDiagnose) as error:
        raise Http404(str(error)) from error
    computed = parse_datetime(str(diagnosis.get("computed_at") or ""))
    context = page_context(
        selected,
        "problems",
        diagnosis=diagnosis,
        computed_at=computed,
        whatif_query=whatif_query(selected, namespace, name),
    )
    return render(request, "topology/pod_diagnosis.html", context)
