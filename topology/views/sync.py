"""Sync health of every cluster."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from topology.access import Action, requires
from topology.selectors.sync import STALE_AFTER, cluster_syncs
from topology.views.common import page_context


@requires(Action.READ_SYNC)
def sync_health(request: HttpRequest) -> HttpResponse:
    stale_minutes = int(STALE_AFTER.total_seconds() // 60)
    context = page_context(None, "sync", syncs=cluster_syncs(), stale_minutes=stale_minutes)
    return render(request, "topology/sync.html", context)
