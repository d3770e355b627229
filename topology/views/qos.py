"""QoS: the stored config, effective strategies, schemata lines and warnings."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from topology.access import Action, requires
from topology.figures.qos import l3_ways
from topology.selectors.qos import qos_page
from topology.services.policies.qos_draft import pending_qos_draft
from topology.views.common import get_cluster, page_context


@requires(Action.READ_QOS)
def qos(request: HttpRequest, cluster: str) -> HttpResponse:
    selected = get_cluster(cluster)
    data = qos_page(selected)
    groups = [(f"l3-ways-{index}", group) for index, group in enumerate(data.groups)]
    figures = {
        key: l3_ways(group.classes, group.schemata, group.ways)
        for key, group in groups
        if group.ways
    }
    context = page_context(
        selected,
        "qos",
        data=data,
        groups=groups,
        figures=figures,
        draft=pending_qos_draft(selected),
    )
    return render(request, "topology/qos.html", context)
